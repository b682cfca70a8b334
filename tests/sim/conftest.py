"""Fixtures of the simulator's own tests."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from podtui.sim.clock import SimClock
from podtui.sim.demo import demo_world
from podtui.sim.server import SimApiServer

RESTART_S = 6.0


@pytest.fixture
def v2(sim: SimApiServer) -> Iterator[httpx.Client]:
    """Raw REST v2 requests to the simulator with the account's key (every answer is held to the contract by the
    autouse fixture)."""
    with httpx.Client(base_url=sim.url, headers={"Authorization": f"Bearer {sim.api_key}"}, timeout=10) as client:
        yield client


@pytest.fixture
def slow_restarts(clock: SimClock) -> Iterator[SimApiServer]:
    """The demo account where a restart keeps a pod STARTING for RESTART_S simulated seconds."""
    server = SimApiServer(demo_world(clock, boot_s=30.0, restart_s=RESTART_S)).start()
    yield server
    server.stop()
