"""The simulator with its pods' HTTP services and RunPod's proxy, and an HTTP client for the proxy."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from podtui.sim.clock import SimClock
from podtui.sim.demo import demo_world
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS

EXTRA_PORT = 7860  # the idle pod exposes it as HTTP too: a service that is not Jupyter


@pytest.fixture
def web_sim(clock: SimClock, tmp_path: Path) -> Iterator[Simulator]:
    """API, gateway and the pods' services behind the proxy; no sshd (tests/services/test_forwarding.py has
    it). Its proxy gives up after 1 s, not RunPod's 100."""
    world = demo_world(clock, boot_s=30.0)
    world.pods[DEMO_IDS["idle"]].ports = f"8888/http,{EXTRA_PORT}/http,22/tcp"
    sim = Simulator(world, root=tmp_path / "sim", direct_ssh=False)
    sim.proxy.timeout_s = 1.0
    sim.start()
    yield sim
    sim.stop()


@pytest.fixture
def web(web_sim: Simulator) -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10.0) as client:
        yield client
