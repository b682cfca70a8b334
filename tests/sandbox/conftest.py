"""What the sandbox tests share: a shell on a simulated pod by each way in, and a file of this machine's own."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS, needs_sshd

ROUTES = [
    pytest.param(("idle", "auto"), id="gateway-pty"),
    pytest.param(("train", "exec"), id="direct-exec", marks=needs_sshd),
    pytest.param(("train", "pty"), id="direct-pty", marks=needs_sshd),
]


@pytest.fixture(params=ROUTES)
def route(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def shell(
    route: tuple[str, str], full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> Iterator[RemoteShell]:
    key, via = route
    pod = sim_api.fetch_snapshot().find(DEMO_IDS[key])
    assert pod is not None
    with open_remote(pod, ssh_settings, via=via) as sh:  # type: ignore[arg-type]
        yield sh


@pytest.fixture
def victim() -> Iterator[Path]:
    """A file of this machine's own, in a folder the pod sees (read-only) at the same path."""
    parent = next(d for d in ("/var/tmp", "/opt", "/srv", "/mnt") if os.access(d, os.W_OK))
    folder = Path(tempfile.mkdtemp(prefix="podtui-victim-", dir=parent))
    (folder / "data").write_text("precious\n")
    yield folder
    shutil.rmtree(folder)
