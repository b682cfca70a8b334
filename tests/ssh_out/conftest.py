"""`podtui ssh`, `podtui ssh-config` and the editors, run in this process against the whole simulator, as a user
whose home is the test's own (so ~/.ssh/config is the test's)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from podtui.cli.main import main


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


Cli = Callable[..., Result]


@pytest.fixture
def cli(full_cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """`podtui ARGS` in this process: the API key and the gateway in the environment, the key in config.toml."""
    for name in ("RUNPOD_API_KEY", "RUNPOD_API_BASE_URL", "PODTUI_SSH_GATEWAY"):
        monkeypatch.setenv(name, full_cli_env[name])
    capsys.readouterr()

    def run(*args: str) -> Result:
        code = main(list(args))
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


@pytest.fixture
def user_ssh_config(isolated_home: Path) -> Path:
    """The test user's ~/.ssh/config (not there until a test makes it)."""
    return isolated_home / ".ssh" / "config"
