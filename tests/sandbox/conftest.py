"""What the sandbox tests share: a shell on a simulated pod by each way in, and a file of this machine's own."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import SdkApi
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.sim.podshell import PodMachine
from podtui.sim.simulator import Simulator
from podtui.sim.sshd import sshd_available
from tests.conftest import DEMO_IDS

needs_sshd = pytest.mark.skipif(not sshd_available(), reason="needs root and OpenSSH's sshd")

ROUTES = [
    pytest.param(("idle", "auto"), id="gateway-pty"),
    pytest.param(("train", "exec"), id="direct-exec", marks=needs_sshd),
    pytest.param(("train", "pty"), id="direct-pty", marks=needs_sshd),
]


def machine(sim: Simulator, key: str) -> PodMachine:
    return sim.gateway.machine(sim.world.pods[DEMO_IDS[key]])


@pytest.fixture(params=ROUTES)
def route(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def shell(route: tuple[str, str], full_sim: Simulator, sim_api: SdkApi,
          ssh_settings: SshSettings) -> Iterator[RemoteShell]:
    key, via = route
    pod = sim_api.fetch_snapshot().find(DEMO_IDS[key])
    assert pod is not None
    with open_remote(pod, ssh_settings, via=via) as sh:  # type: ignore[arg-type]
        yield sh


def out(sh: RemoteShell, command: str) -> str:
    result = sh.run(command, timeout_s=30)
    assert result.exit_code == 0, (command, result.output)
    return result.output


def none_got_through(sh: RemoteShell, attempts: list[str]) -> str:
    """Run each attempt in the pod, in a subshell of its own; returns "GOT THROUGH: ATTEMPT" for each that
    succeeded, one a line (nothing when none did)."""
    script = "; ".join(f"( {a} ) </dev/null >/dev/null 2>&1 && echo GOT-THROUGH-{i}" for i, a in enumerate(attempts))
    result = sh.run(script + "; echo TRIED-THEM-ALL", timeout_s=60)
    assert "TRIED-THEM-ALL" in result.output, result.output
    through = [int(line.split("-")[-1]) for line in result.output.splitlines() if line.startswith("GOT-THROUGH-")]
    return "".join(f"GOT THROUGH: {attempts[i]}\n" for i in through)


@pytest.fixture
def victim() -> Iterator[Path]:
    """A file of this machine's own, in a folder the pod sees (read-only) at the same path."""
    parent = next(d for d in ("/var/tmp", "/opt", "/srv", "/mnt") if os.access(d, os.W_OK))
    folder = Path(tempfile.mkdtemp(prefix="podtui-victim-", dir=parent))
    (folder / "data").write_text("precious\n")
    yield folder
    shutil.rmtree(folder)
