"""What the jobs' tests share: a pod by each route (the gateway's PTY, direct SSH's exec channel), shells opened on
it as a test needs them (a job outlives each)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

import pytest

from podtui.core.api import V2Api
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import RemoteShell, open_remote
from tests.helpers.sim import DEMO_IDS, needs_sshd

ROUTES = [
    pytest.param("idle", id="gateway"),  # eval-a100: RunPod's gateway only, a PTY shell
    pytest.param("train", id="direct", marks=needs_sshd),  # llama-lora-3090: direct SSH, an exec channel
]

OpenShell = Callable[[], AbstractContextManager[RemoteShell]]


@pytest.fixture(params=ROUTES)
def pod_key(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def pod(pod_key: str, sim_api: V2Api, ssh_settings: SshSettings) -> Pod:
    found = sim_api.fetch_snapshot().find(DEMO_IDS[pod_key])
    assert found is not None
    if pod_key == "train":  # its sshd starts beside the simulator: wait until the API names it
        deadline = time.monotonic() + 60
        while found.ssh_direct is None and time.monotonic() < deadline:
            time.sleep(0.2)
            found = sim_api.fetch_snapshot().find(DEMO_IDS[pod_key])
            assert found is not None
        assert found.ssh_direct is not None, "the direct pod's sshd never started"
    return found


@pytest.fixture
def open_shell(pod: Pod, ssh_settings: SshSettings) -> OpenShell:
    @contextmanager
    def opened() -> Iterator[RemoteShell]:
        with open_remote(pod, ssh_settings) as sh:
            yield sh

    return opened


@pytest.fixture
def shell(open_shell: OpenShell) -> Iterator[RemoteShell]:
    with open_shell() as sh:
        yield sh


Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def cli(full_cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """`podtui ARGS...` in this process against the whole simulator: (exit status, stdout, stderr)."""
    from podtui.cli.main import main

    for name in ("RUNPOD_API_KEY", "RUNPOD_API_BASE_URL", "PODTUI_SSH_GATEWAY"):
        monkeypatch.setenv(name, full_cli_env[name])

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run
