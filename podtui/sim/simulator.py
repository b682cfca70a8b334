"""The whole simulated RunPod: the GraphQL API, the SSH gateway, and direct SSH for pods that expose it."""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from pathlib import Path

from podtui.sim.gateway import SimGateway
from podtui.sim.relay import SimRelay
from podtui.sim.server import SimApiServer
from podtui.sim.sshd import PodSshd, sshd_available
from podtui.sim.world import SimPod, World

log = logging.getLogger(__name__)


class Simulator:
    def __init__(self, world: World, root: Path | None = None, direct_ssh: bool | None = None) -> None:
        self.world = world
        self._own_root = root is None
        self.root = root or Path(tempfile.mkdtemp(prefix="podtui-sim-"))
        self.api = SimApiServer(world)
        self.relay = SimRelay()  # runpodctl send/receive on the pods meet here
        self._gateway: SimGateway | None = None
        self._ssh_ready = threading.Event()
        self._ssh_error: BaseException | None = None
        self.direct_ssh = sshd_available() if direct_ssh is None else direct_ssh
        self.authorized_keys = self.root / "authorized_keys"
        self.sshds: dict[str, PodSshd] = {}

    def _write_authorized_keys(self, text: str) -> None:
        self.authorized_keys.write_text(text.strip() + "\n" if text.strip() else "")
        self.authorized_keys.chmod(0o600)

    @property
    def gateway(self) -> SimGateway:
        self.wait_ssh_ready()
        assert self._gateway is not None
        return self._gateway

    def start(self, background_ssh: bool = False) -> Simulator:
        """Start the API at once; the SSH side (gateway, one sshd per direct pod) now or, for the demo, in
        the background, as a real pod's ports appear a moment after it is listed."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.relay.start()
        self.api.start()
        self._write_authorized_keys(self.world.pub_key)
        self.world.pub_key_listeners.append(self._write_authorized_keys)
        wanted = [p for p in self.world.pods.values() if p.direct_ssh_port is not None]
        for pod in wanted:
            pod.direct_ssh_port = None  # until its sshd listens
        if background_ssh:
            threading.Thread(target=self._start_ssh, args=(wanted,), name="sim-ssh-start", daemon=True).start()
        else:
            self._start_ssh(wanted)
            if self._ssh_error is not None:
                raise self._ssh_error
        return self

    def _start_ssh(self, wanted: list[SimPod]) -> None:
        try:
            self._gateway = SimGateway(self.world, self.root / "pods", self.api.url, self.api.api_key,
                                       relay_address=self.relay.address).start()
            for pod in wanted if self.direct_ssh else []:
                try:
                    sshd = PodSshd(self._gateway.machine(pod), self.authorized_keys).start()
                except (RuntimeError, OSError) as e:
                    log.warning("direct SSH for %s unavailable: %s", pod.name, e)
                    continue
                self.sshds[pod.id] = sshd
                with self.world.lock:
                    pod.public_ip, pod.direct_ssh_port = "127.0.0.1", sshd.port
        except BaseException as e:  # reported to whoever waits for SSH
            self._ssh_error = e
        finally:
            self._ssh_ready.set()

    def wait_ssh_ready(self, timeout_s: float = 30.0) -> None:
        if not self._ssh_ready.wait(timeout_s):
            raise RuntimeError("the simulated SSH side did not start")
        if self._ssh_error is not None:
            raise RuntimeError(f"the simulated SSH side failed to start: {self._ssh_error}")

    def stop(self) -> None:
        self._ssh_ready.wait(30)
        for sshd in self.sshds.values():
            sshd.stop()
        if self._gateway is not None:
            self._gateway.stop()
        self.api.stop()
        self.relay.stop()
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
