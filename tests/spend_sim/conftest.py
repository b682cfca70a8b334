"""Fixtures of the simulator's billing tests: REST v2 requests held to the contract, and a bare world (no history)
served over HTTP, so that every amount a test reads is one it made."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, demo_world
from podtui.sim.server import SimApiServer
from podtui.sim.world import World
from tests.helpers.contract import check_response

# 2026-11-30 09:30 UTC, a Monday: half past an hour, so runs from here cross hour boundaries
HALF_PAST = 1796031000.0


class Billing:
    """GET requests to the simulator's REST v2, each answer checked against RunPod's contract."""

    def __init__(self, server: SimApiServer, key: str | None = None) -> None:
        key = server.api_key if key is None else key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.http = httpx.Client(base_url=server.url, headers=headers, timeout=10)

    def get(self, route: str, **params: Any) -> httpx.Response:
        r = self.http.get(route, params=params)
        template = route if not route.startswith("/v2/pods/") else "/v2/pods/{id}"
        found = check_response("GET", template, r.status_code, r.headers, r.content)
        assert found == [], f"GET {route} -> {r.status_code} {r.text[:300]}:\n" + "\n".join(found)
        return r

    def ok(self, route: str, **params: Any) -> dict[str, Any]:
        r = self.get(route, **params)
        assert r.status_code == 200, r.text
        body: dict[str, Any] = r.json()
        return body


@pytest.fixture(scope="module")
def demo_server() -> Iterator[SimApiServer]:
    """The demo account (with its generated month of history), clock frozen at SCREENSHOT_EPOCH: one per module, for
    tests that only read it (and leave no fault behind)."""
    world = demo_world(SimClock(start=SCREENSHOT_EPOCH, frozen=True), boot_s=30.0)
    server = SimApiServer(world, rate_limit=100_000).start()
    yield server
    server.stop()


@pytest.fixture
def billing(demo_server: SimApiServer) -> Iterator[Billing]:
    client = Billing(demo_server)
    yield client
    client.http.close()


@pytest.fixture
def bare() -> Iterator[SimApiServer]:
    """An account with nothing in it and no history, its clock frozen at HALF_PAST."""
    server = SimApiServer(World(SimClock(start=HALF_PAST, frozen=True), balance=100.0)).start()
    yield server
    server.stop()


@pytest.fixture
def bare_billing(bare: SimApiServer) -> Iterator[Billing]:
    client = Billing(bare)
    yield client
    client.http.close()
