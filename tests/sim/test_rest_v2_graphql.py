"""The simulator's GraphQL while RunPod retires it (docs/runpod-facts.md#api-lifecycle): whole ("full"), the
balance only for the account's key ("balance-only"), or gone ("retired"), each gone answer a 410 page; chosen by
PODTUI_SIM_GRAPHQL, the control endpoint or the "graphql_retired" fault. The GraphQL view of a world changed over
REST v2 stays what it was."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from podtui.sim.demo import demo_world
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

TRAIN, STARTING = DEMO_IDS["train"], DEMO_IDS["starting"]
BALANCE = "query podtuiBalance { myself { id clientBalance currentSpendPerHr spendLimit } }"
NOT_BALANCE = [
    "query { myself { pods { id } } }",
    "query { myself { id clientBalance pubKey } }",
    "query { gpuTypes { id } }",
    f'mutation {{ podStop(input: {{podId: "{TRAIN}"}}) {{ id }} }}',
    "query { myself { ...F } } fragment F on User { clientBalance }",
    "query { myself { id } } query Other { gpuTypes { id } }",
    "not graphql at all {",
]


def server(mode: str | None) -> SimApiServer:
    return SimApiServer(demo_world(), graphql_mode=mode).start()


@pytest.fixture
def balance_only() -> Iterator[SimApiServer]:
    sim = server("balance-only")
    yield sim
    sim.stop()


def ask(sim: SimApiServer, query: str, key: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key or sim.api_key}"}
    return httpx.post(f"{sim.url}/graphql", json={"query": query}, headers=headers, timeout=10)


def gone(r: httpx.Response) -> bool:
    return r.status_code == 410 and r.headers["content-type"] == "text/html" and "<html>" in r.text


def test_full_answers_everything_as_before() -> None:
    sim = server("full")
    try:
        pods = ask(sim, "query { myself { pods { id desiredStatus } } }").json()["data"]["myself"]["pods"]
        assert {p["id"]: p["desiredStatus"] for p in pods}[STARTING] == "CREATED"
        assert ask(sim, f'mutation {{ podStop(input: {{podId: "{TRAIN}"}}) {{ id }} }}').status_code == 200
        assert sim.world.pods[TRAIN].status == "EXITED"
    finally:
        sim.stop()


def test_balance_only_gives_the_account_its_balance_and_nothing_else(balance_only: SimApiServer) -> None:
    sim = balance_only
    r = ask(sim, BALANCE)
    assert r.status_code == 200
    assert r.json()["data"]["myself"] == {
        "id": "user_sim",
        "clientBalance": round(sim.world.balance, 6),
        "currentSpendPerHr": round(sim.world.spend_per_hr(), 6),
        "spendLimit": 80.0,
    }
    for query in NOT_BALANCE:
        assert gone(ask(sim, query)), query
    assert sim.world.pods[TRAIN].status == "RUNNING"
    assert sim.requests.count(BALANCE) == 1 and NOT_BALANCE[3] in sim.requests  # every document received
    assert ask(sim, BALANCE, key="rpa_WRONG").status_code == 401


def test_balance_only_still_serves_a_pods_own_key(balance_only: SimApiServer) -> None:
    sim = balance_only
    key = sim.world.pods[TRAIN].api_key
    r = ask(sim, f'{{ pod(input: {{podId: "{TRAIN}"}}) {{ runtime {{ gpus {{ gpuUtilPercent }} }} }} }}', key)
    assert r.status_code == 200 and r.json()["data"]["pod"]["runtime"]["gpus"]
    r = ask(sim, f'mutation {{ podStop(input: {{podId: "{TRAIN}"}}) {{ id desiredStatus }} }}', key)
    assert r.json() == {"data": {"podStop": {"id": TRAIN, "desiredStatus": "EXITED"}}}


def test_retired_is_410_for_everyone() -> None:
    sim = server("retired")
    try:
        assert gone(ask(sim, BALANCE))
        assert gone(ask(sim, BALANCE, key=sim.world.pods[TRAIN].api_key))
        assert gone(httpx.post(f"{sim.url}/graphql", json={"query": BALANCE}))  # no key at all
        assert httpx.get(f"{sim.url}/v2/pods", headers={"Authorization": f"Bearer {sim.api_key}"}).status_code == 200
    finally:
        sim.stop()


def test_the_mode_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, mode in (("retired", "retired"), ("balance-only", "balance-only"), ("", "full")):
        monkeypatch.setenv("PODTUI_SIM_GRAPHQL", value)
        unstarted = SimApiServer(demo_world())
        unstarted.stop()
        assert unstarted.graphql_mode == mode
    monkeypatch.setenv("PODTUI_SIM_GRAPHQL", "sometimes")
    with pytest.raises(ValueError, match="PODTUI_SIM_GRAPHQL"):
        SimApiServer(demo_world())


def test_the_fault_and_the_control_endpoint_retire_it(balance_only: SimApiServer) -> None:
    sim = balance_only
    sim.faults.add("graphql_retired", times=1)
    rest = httpx.get(f"{sim.url}/v2/pods", headers={"Authorization": f"Bearer {sim.api_key}"})
    assert rest.status_code == 200  # a REST request leaves the GraphQL fault where it is
    assert gone(ask(sim, BALANCE)) and ask(sim, BALANCE).status_code == 200
    control = {"graphql_mode": "retired"}
    r = httpx.post(f"{sim.url}/_sim/faults", json=control, headers={"Authorization": f"Bearer {sim.api_key}"})
    assert r.json() == {"ok": True} and gone(ask(sim, BALANCE))
    bad = {"graphql_mode": "gone"}
    r = httpx.post(f"{sim.url}/_sim/faults", json=bad, headers={"Authorization": f"Bearer {sim.api_key}"})
    assert r.status_code == 400 and sim.graphql_mode == "retired"


def test_the_graphql_view_of_a_world_changed_over_rest(sim: SimApiServer) -> None:
    with SimApiServer(sim.world, api_key=sim.api_key, graphql_mode="full") as full:
        http = httpx.Client(base_url=full.url, headers={"Authorization": f"Bearer {full.api_key}"}, timeout=10)
        assert http.post(f"/v2/pods/{TRAIN}/action", json={"action": "stop"}).status_code == 200
        sim.world.fail(DEMO_IDS["idle"])
        query = "query { myself { currentSpendPerHr pods { id desiredStatus costPerHr runtime { uptimeInSeconds } } } }"
        pods = {p["id"]: p for p in http.post("/graphql", json={"query": query}).json()["data"]["myself"]["pods"]}
        http.close()
    assert pods[TRAIN]["desiredStatus"] == "EXITED" and pods[DEMO_IDS["idle"]]["desiredStatus"] == "DEAD"
    assert pods[STARTING]["desiredStatus"] == "CREATED" and pods[STARTING]["runtime"] is None
