"""The autouse watch (tests/conftest.py) sees what podtui's real REST v2 client sends the real simulator: a
request that breaks the contract is caught in words, and a clean run of podtui's calls leaves nothing to report."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from podtui.core.api import V2Api
from podtui.core.api.errors import ApiQueryError
from podtui.core.api.rest import USER_AGENT, RestV2
from podtui.sim import exchange
from podtui.sim.exchange import Exchange
from podtui.sim.server import SimApiServer
from tests.helpers.contract import ExchangeWatch
from tests.helpers.sim import DEMO_IDS


class Counter:
    """Counts the exchanges the simulator publishes: it publishes after answering, so a test waits for them."""

    def __init__(self) -> None:
        self.seen: list[Exchange] = []
        self._lock = threading.Lock()

    def __call__(self, ex: Exchange) -> None:
        with self._lock:
            self.seen.append(ex)

    def wait_for(self, done: Callable[[list[Exchange]], bool], timeout_s: float = 10.0) -> list[Exchange]:
        deadline = time.monotonic() + timeout_s
        while True:
            with self._lock:
                seen = list(self.seen)
            if done(seen) or time.monotonic() > deadline:
                return seen
            time.sleep(0.01)


@pytest.fixture
def published() -> Iterator[Counter]:
    counter = Counter()
    exchange.listeners.append(counter)
    yield counter
    exchange.listeners.remove(counter)


def test_podtui_sends_a_user_agent_the_watch_knows() -> None:
    assert USER_AGENT.startswith("podtui/")


def test_a_request_of_podtuis_that_breaks_the_contract_is_caught(
    sim: SimApiServer, rest_v2_contract: ExchangeWatch, published: Counter
) -> None:
    client = RestV2(sim.api_key, sim.url, timeout_s=5.0)
    try:
        with pytest.raises(ApiQueryError, match="bogus"):
            client.call("POST", f"/v2/pods/{DEMO_IDS['train']}/action", body={"action": "stop", "bogus": 1})
    finally:
        client.close()
    published.wait_for(lambda seen: any(ex.route == "/v2/pods/{id}/action" for ex in seen))
    found = list(rest_v2_contract.violations)
    rest_v2_contract.violations.clear()  # broken on purpose: the test, not its teardown, judges it
    assert len(found) == 1, found
    assert "POST /v2/pods/{id}/action: request body" in found[0] and "'bogus'" in found[0], found
    assert sim.api_key not in found[0]


def test_podtuis_calls_on_a_clean_run_keep_the_contract(
    sim: SimApiServer, rest_v2_contract: ExchangeWatch, published: Counter
) -> None:
    api = V2Api(sim.api_key, sim.url, timeout_s=5.0, clock=sim.world.clock.now)
    try:
        snapshot = api.fetch_snapshot()
        api.fetch_pod(DEMO_IDS["train"])
        api.stop_pod(DEMO_IDS["train"])
        api.start_pod(DEMO_IDS["stopped"])
        api.terminate_pod(DEMO_IDS["bursty"])
        api.gpu_types()
    finally:
        api.close()
    assert snapshot.pods

    def rest_of_podtuis(seen: list[Exchange]) -> list[Exchange]:
        return [ex for ex in seen if ex.path.startswith("/v2/") and ex.request_headers.get("User-Agent") == USER_AGENT]

    ours = rest_of_podtuis(published.wait_for(lambda seen: len(rest_of_podtuis(seen)) >= 6))
    assert len(ours) >= 6 and all(ex.route is not None for ex in ours), [ex.path for ex in ours]
    assert rest_v2_contract.violations == []
