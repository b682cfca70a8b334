"""Transfers between podtuis sharing one data dir: the history every podtui started with this home uses, a process
standing for another podtui, `podtui` processes whose runpodctl is the simulator's, and the app with that runpodctl."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from podtui.core.paths import Paths
from podtui.ui.app import PodtuiApp


@pytest.fixture
def history_file(isolated_home: Path) -> Path:
    return Paths.default().data_dir / "transfers.json"  # what every podtui started with this home uses


@pytest.fixture
def other_podtui() -> Iterator[subprocess.Popen[bytes]]:
    """A process standing for another podtui that is alive."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def runpodctl_cli_env(full_cli_env: dict[str, str], runpodctl: Path) -> dict[str, str]:
    """A `podtui` process's environment (full_cli_env) with the simulator's runpodctl as its runpodctl."""
    return {**full_cli_env, "PODTUI_RUNPODCTL": str(runpodctl)}


@pytest.fixture
def runpodctl_app(
    make_full_app: Callable[..., PodtuiApp], runpodctl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], PodtuiApp]:
    """The app on the whole simulator, its runpodctl the simulator's (as in the demo), its history in tmp_path."""
    monkeypatch.setattr("podtui.transfer.routes.runpodctl.JOIN_PAUSE_S", 0.1)
    return lambda: make_full_app(
        transfer_history=tmp_path / "data" / "transfers.json",
        transfer_work_dir=tmp_path / "work",
        runpodctl=lambda: str(runpodctl),
    )
