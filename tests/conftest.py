"""Shared fixtures: an isolated home for every test, and a simulated RunPod reached over real HTTP."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from podtui.core.api import SdkApi
from podtui.core.paths import Paths
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.keys import KeyFile, generate_dedicated_key
from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, demo_world
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator
from tests.helpers.app import build_test_app
from tests.helpers.tmux import tmux  # noqa: F401  (a fixture for every test folder)

if TYPE_CHECKING:
    from podtui.ui.app import PodtuiApp

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


@pytest.fixture
def user_key(tmp_path: Path) -> KeyFile:
    return generate_dedicated_key(tmp_path / "keys" / "id_ed25519_runpod", comment="tester")


@pytest.fixture
def full_sim(clock: SimClock, tmp_path: Path, user_key: KeyFile) -> Iterator[Simulator]:
    """API, SSH gateway and (where this machine has OpenSSH and runs as root) direct SSH, with the
    user's key registered on the simulated account."""
    world = demo_world(clock, boot_s=30.0)
    world.pub_key = user_key.public_line + " tester"
    sim = Simulator(world, root=tmp_path / "sim").start()
    yield sim
    sim.stop()


@pytest.fixture
def sim_api(full_sim: Simulator) -> SdkApi:
    return SdkApi(full_sim.api.api_key, full_sim.api.url, timeout_s=5.0, clock=full_sim.world.clock.now)


@pytest.fixture
def ssh_settings(full_sim: Simulator, tmp_path: Path, user_key: KeyFile) -> SshSettings:
    return SshSettings(known_hosts=tmp_path / "known_hosts", gateway=full_sim.gateway.address,
                       key_path=user_key.path, use_agent=False, connect_timeout_s=5.0)


@pytest.fixture
def make_full_app(full_sim: Simulator, sim_api: SdkApi, ssh_settings: SshSettings) -> Callable[..., PodtuiApp]:
    """The app on the whole simulator (API, SSH gateway, pods with real shells), reaching pods with the test's key;
    `kw` as for make_app."""

    def make(**kw: Any) -> PodtuiApp:
        return build_test_app(sim_api, full_sim.world.clock.now, **{"ssh_settings": lambda: ssh_settings, **kw})

    return make


@pytest.fixture
def make_app(sim: SimApiServer) -> Callable[..., PodtuiApp]:
    """The app on the simulated API, for Pilot tests anywhere in the suite."""

    def make(**kw: Any) -> PodtuiApp:
        return build_test_app(SdkApi(sim.api_key, sim.url, timeout_s=3.0, clock=sim.world.clock.now),
                              sim.world.clock.now, **kw)

    return make
