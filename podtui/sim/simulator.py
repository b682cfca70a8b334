"""The whole simulated RunPod: the GraphQL API, the SSH gateway, and direct SSH for pods that expose it."""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from podtui.sim.gateway import SimGateway
from podtui.sim.server import SimApiServer
from podtui.sim.sshd import PodSshd, sshd_available
from podtui.sim.world import World

log = logging.getLogger(__name__)


class Simulator:
    def __init__(self, world: World, root: Path | None = None, direct_ssh: bool | None = None) -> None:
        self.world = world
        self._own_root = root is None
        self.root = root or Path(tempfile.mkdtemp(prefix="podtui-sim-"))
        self.api = SimApiServer(world)
        self.gateway = SimGateway(world, self.root / "pods", self.api.url, self.api.api_key)
        self.direct_ssh = sshd_available() if direct_ssh is None else direct_ssh
        self.authorized_keys = self.root / "authorized_keys"
        self.sshds: dict[str, PodSshd] = {}

    def _write_authorized_keys(self, text: str) -> None:
        self.authorized_keys.write_text(text.strip() + "\n" if text.strip() else "")
        self.authorized_keys.chmod(0o600)

    def start(self) -> Simulator:
        self.api.start()
        self.gateway.start()
        self._write_authorized_keys(self.world.pub_key)
        self.world.pub_key_listeners.append(self._write_authorized_keys)
        for pod in list(self.world.pods.values()):
            if pod.direct_ssh_port is None:
                continue
            if not self.direct_ssh:
                pod.direct_ssh_port = None  # no sshd here: the pod offers the gateway only
                continue
            try:
                sshd = PodSshd(self.gateway.machine(pod), self.authorized_keys).start()
            except (RuntimeError, OSError) as e:
                log.warning("direct SSH for %s unavailable: %s", pod.name, e)
                pod.direct_ssh_port = None
                continue
            self.sshds[pod.id] = sshd
            pod.public_ip, pod.direct_ssh_port = "127.0.0.1", sshd.port
        return self

    def stop(self) -> None:
        for sshd in self.sshds.values():
            sshd.stop()
        self.gateway.stop()
        self.api.stop()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
