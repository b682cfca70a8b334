"""The simulated RunPod the SSH and transfer benchmarks run against: demo pods, a key registered on the account."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from podtui.core.api import V2Api
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.keys import KeyFile, generate_dedicated_key
from podtui.sim.demo import demo_world
from podtui.sim.simulator import Simulator


@dataclass
class Bench:
    tmp: Path
    sim: Simulator
    api: V2Api
    key: KeyFile
    settings: SshSettings

    def pod(self, name: str) -> Pod:
        pod = self.api.fetch_snapshot().find(name)
        assert pod is not None, name
        return pod

    def workspace(self, name: str) -> Path:
        """The folder that is the pod's /workspace."""
        return self.sim.gateway.machine(self.sim.world.pods[self.pod(name).id]).workspace


@contextmanager
def simulated() -> Iterator[Bench]:
    tmp = Path(tempfile.mkdtemp(prefix="podtui-bench-"))
    key = generate_dedicated_key(tmp / "key")
    world = demo_world()
    world.pub_key = key.public_line + " bench"
    with Simulator(world, root=tmp / "sim") as sim:
        settings = SshSettings(
            known_hosts=tmp / "kh", gateway=sim.gateway.address, key_path=key.path, use_agent=False, search_home=False
        )
        yield Bench(tmp, sim, V2Api(sim.api.api_key, sim.api.url), key, settings)


def sftp_batch(batch: str, key: Path, port: int, tmp: Path, extra: tuple[str, ...] = ()) -> None:
    """OpenSSH's `sftp` running `batch` against the pod's direct sshd on loopback: the baseline the SFTP and bulk
    benchmarks measure podtui against (docs/bulk-transfers.md)."""
    script = tmp / "batch"
    script.write_text(batch + "\n")
    known = f"UserKnownHostsFile={tmp / 'kh-openssh'}"
    options = ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", known]
    subprocess.run(
        ["sftp", "-q", "-b", str(script), "-i", str(key), "-P", str(port), *extra, *options, "root@127.0.0.1"],
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
