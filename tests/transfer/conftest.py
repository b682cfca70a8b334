"""Transfers between podtuis sharing one data dir: the history every podtui started with this home uses, a process
standing for another podtui, and `podtui` processes whose runpodctl is the simulator's."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.paths import Paths


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
