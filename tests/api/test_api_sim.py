"""The real runpod SDK talking HTTP GraphQL to the simulator: the pods, the money, and the actions."""

from __future__ import annotations

import json
import urllib.request

import pytest

from podtui.core.api import ApiQueryError, InvalidInput, SdkApi
from podtui.core.pod import PodStatus
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS


def test_snapshot_of_the_demo_account(api: SdkApi) -> None:
    snap = api.fetch_snapshot()
    by_id = {p.id: p for p in snap.pods}
    assert set(DEMO_IDS.values()) == set(by_id)
    train, idle = by_id[DEMO_IDS["train"]], by_id[DEMO_IDS["idle"]]
    assert train.state == "RUNNING" and train.gpu_util is not None and train.gpu_util >= 90
    assert idle.gpu_util is not None and idle.gpu_util <= 2
    assert by_id[DEMO_IDS["stopped"]].state == "EXITED"
    assert by_id[DEMO_IDS["starting"]].state == "STARTING"
    assert by_id[DEMO_IDS["starting"]].runtime is None
    assert train.pod_host_id == f"{train.id}-6f3a91c2"
    assert train.reach == ("proxy", "direct")
    assert snap.account.balance == pytest.approx(23.87, abs=0.01)
    assert snap.account.spend_per_hr == pytest.approx(
        sum(p.cost_per_hr or 0 for p in snap.pods if p.state == "RUNNING"), abs=0.2
    )
    assert snap.problems == ()


def test_time_passes(api: SdkApi, sim: SimApiServer) -> None:
    before = {p.id: p for p in api.fetch_snapshot().pods}
    bal0 = api.fetch_snapshot().account.balance
    sim.world.clock.advance(3600)
    after = api.fetch_snapshot()
    t0, t1 = before[DEMO_IDS["train"]], next(p for p in after.pods if p.id == DEMO_IDS["train"])
    assert t1.uptime_s == (t0.uptime_s or 0) + 3600
    assert (t1.accrued_cost or 0) - (t0.accrued_cost or 0) == pytest.approx(0.22, abs=0.001)
    burn = after.account.spend_per_hr or 0
    assert (bal0 or 0) - (after.account.balance or 0) == pytest.approx(burn, rel=0.05)
    # the starting pod finished booting and has a runtime now
    assert next(p for p in after.pods if p.id == DEMO_IDS["starting"]).state == "RUNNING"


def test_stop_resume_terminate_cycle(api: SdkApi, sim: SimApiServer) -> None:
    pid = DEMO_IDS["train"]
    api.stop_pod(pid)
    pod = api.fetch_snapshot().find(pid)
    assert pod.status is PodStatus.EXITED and pod.live_runtime is None
    assert pod.runtime is not None  # the simulator keeps a stale runtime, as RunPod does
    assert pod.last_status_change and pod.last_status_change.startswith("Exited by user")

    api.resume_pod(pid, 1)
    pod = api.fetch_snapshot().find(pid)
    assert pod.status is PodStatus.CREATED and pod.runtime is None and pod.state == "STARTING"
    sim.world.clock.advance(31)
    pod = api.fetch_snapshot().find(pid)
    assert pod.state == "RUNNING" and pod.uptime_s == 1

    api.terminate_pod(pid)
    assert api.fetch_snapshot().find(pid).status is PodStatus.TERMINATED
    sim.world.clock.advance(2)
    assert pid not in {p.id for p in api.fetch_snapshot().pods}


def test_refusals_come_back_as_graphql_errors(api: SdkApi) -> None:
    with pytest.raises(ApiQueryError, match="already stopped"):
        api.stop_pod(DEMO_IDS["stopped"])
    with pytest.raises(ApiQueryError, match="not found"):
        api.stop_pod("nosuchpod")
    with pytest.raises(ApiQueryError, match="already running"):
        api.resume_pod(DEMO_IDS["train"], 1)


def test_id_with_a_quote_is_never_sent(api: SdkApi, sim: SimApiServer) -> None:
    api.fetch_snapshot()
    sent = len(sim.requests)
    for bad in ['abc"def', 'x") { id } podTerminate(input: {podId: "q7x2m9fk4r8t1a"}) { id', "a\nb"]:
        for call in (api.stop_pod, api.terminate_pod, lambda i: api.resume_pod(i, 1)):
            with pytest.raises(InvalidInput):
                call(bad)
    assert len(sim.requests) == sent
    assert len(api.fetch_snapshot().pods) == 5


def test_out_of_money_stops_everything_and_terminates_pods_without_network_volume(
    api: SdkApi, sim: SimApiServer
) -> None:
    sim.world.set_balance(0.01)
    sim.world.clock.advance(60)
    pods = {p.id: p for p in api.fetch_snapshot().pods}
    idle = pods[DEMO_IDS["idle"]]  # the only pod with a network volume
    assert idle.status is PodStatus.EXITED
    assert idle.last_status_change and "Insufficient balance" in idle.last_status_change
    assert pods[DEMO_IDS["train"]].status is PodStatus.TERMINATED
    assert api.fetch_snapshot().account.balance == 0


def test_http_auth_is_bearer(sim: SimApiServer) -> None:
    body = json.dumps({"query": "{ myself { id } }"}).encode()
    req = urllib.request.Request(
        f"{sim.url}/graphql", body, {"Content-Type": "application/json", "Authorization": f"Bearer {sim.api_key}"}
    )
    with urllib.request.urlopen(req) as r:
        assert json.load(r)["data"]["myself"]["id"] == "user_sim"
    req = urllib.request.Request(f"{sim.url}/graphql", body, {"Authorization": "Bearer wrong"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req)
    assert e.value.code == 401


def test_server_listens_on_loopback_only(sim: SimApiServer) -> None:
    assert sim.url.startswith("http://127.0.0.1:")


def test_sdk_canned_queries_work_too(sim: SimApiServer) -> None:
    """The SDK's own get_pods/get_pod queries validate against the simulated schema."""
    from podtui.core.api import sdk

    s = sdk.load()
    SdkApi(sim.api_key, sim.url)
    import runpod
    from runpod.api.ctl_commands import get_pod, get_pods

    runpod.api_key = sim.api_key
    try:
        pods = get_pods()
        assert {p["id"] for p in pods} == set(DEMO_IDS.values())
        assert get_pod(DEMO_IDS["train"])["machine"]["gpuDisplayName"] == "RTX 3090"
    finally:
        runpod.api_key = None
    assert s.graphql is not None
