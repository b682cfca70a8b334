"""Shared fixtures: an isolated home for every test, and a simulated RunPod reached over real HTTP."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import SdkApi
from podtui.core.paths import Paths
from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, demo_world
from podtui.sim.server import SimApiServer

DEMO_IDS = {
    "train": "q7x2m9fk4r8t1a",  # llama-lora-3090, training
    "idle": "b3n8v1c6z0p5we",  # eval-a100, idle
    "stopped": "k5d0r2t9y7u3io",  # notebook-4090, EXITED
    "starting": "h1j4k8l2m6n0pq",  # sweep-h100x2, CREATED
    "bursty": "w9e3r5t7y1u2io",  # data-prep-a5000
}


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the real user's files, keys or RunPod settings."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
                     ("XDG_CACHE_HOME", "cache")):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.delenv("RUNPOD_API_KEY", raising=False)
    if "RUNPOD_API_BASE_URL" in os.environ:
        monkeypatch.setenv("RUNPOD_API_BASE_URL", os.environ["RUNPOD_API_BASE_URL"])  # restored afterwards
    else:
        monkeypatch.delenv("RUNPOD_API_BASE_URL", raising=False)
    return home


@pytest.fixture
def paths(isolated_home: Path) -> Paths:
    return Paths.default()


@pytest.fixture
def clock() -> SimClock:
    """Frozen at a fixed instant: figures on screen do not move unless a test moves them."""
    return SimClock(start=SCREENSHOT_EPOCH, frozen=True)


@pytest.fixture
def sim(clock: SimClock) -> Iterator[SimApiServer]:
    server = SimApiServer(demo_world(clock, boot_s=30.0)).start()
    yield server
    server.stop()


@pytest.fixture
def api(sim: SimApiServer) -> SdkApi:
    return SdkApi(sim.api_key, sim.url, timeout_s=5.0, clock=sim.world.clock.now)
