"""podtui's API client against the simulator over real HTTP: the pods (REST v2), the balance (GraphQL), the
actions and RunPod's refusals; and the runpod SDK's own GraphQL, which legacy tools still use."""

from __future__ import annotations

import json
import urllib.request

import pytest

from podtui.core.api import (
    ApiConflict,
    ApiForbidden,
    ApiNotFound,
    ApiPaymentRequired,
    ApiQueryError,
    InvalidInput,
    V2Api,
)
from podtui.core.pod import PodStatus
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS


def test_snapshot_of_the_demo_account(api: V2Api) -> None:
    snap = api.fetch_snapshot()
    by_id = {p.id: p for p in snap.pods}
    assert set(DEMO_IDS.values()) == set(by_id)
    train, idle = by_id[DEMO_IDS["train"]], by_id[DEMO_IDS["idle"]]
    assert train.state == "RUNNING" and train.gpu_util is not None and train.gpu_util >= 90
    assert idle.gpu_util is not None and idle.gpu_util <= 2
    assert by_id[DEMO_IDS["stopped"]].state == "EXITED"
    starting = by_id[DEMO_IDS["starting"]]  # just created: no machine yet
    assert starting.state == "PROVISIONING" and starting.runtime is None and starting.locked
    assert starting.actions == {"terminate"}  # locked: neither stop nor restart
    assert train.actions == {"stop", "restart", "terminate"}
    assert by_id[DEMO_IDS["stopped"]].actions == {"start", "terminate"}
    # the API's own ssh block: the simulator's gateway is not listening here, the pod's own sshd is published
    assert train.ssh_proxy is None and train.ssh_direct is not None and train.ssh_direct.username == "root"
    assert train.reach == ("direct",)
    assert train.gpu_name == "NVIDIA GeForce RTX 3090" and train.location == "CA"
    assert by_id[DEMO_IDS["idle"]].location == "US-TX-3" and by_id[DEMO_IDS["idle"]].network_volume == "models-vol"
    assert snap.account.balance == pytest.approx(23.87, abs=0.01)
    assert snap.account.spend_per_hr == pytest.approx(
        sum(p.cost_per_hr or 0 for p in snap.pods if p.state == "RUNNING"), abs=0.2
    )
    assert snap.problems == () and snap.account.unknown_why is None


def test_time_passes(api: V2Api, sim: SimApiServer) -> None:
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
    booted = next(p for p in after.pods if p.id == DEMO_IDS["starting"])
    assert booted.state == "RUNNING" and booted.live_runtime is not None


def test_stop_start_restart_terminate_cycle(api: V2Api, sim: SimApiServer) -> None:
    pid = DEMO_IDS["train"]
    api.stop_pod(pid)
    pod = api.fetch_pod(pid)
    assert (
        pod.status is PodStatus.EXITED and pod.runtime is None and pod.started_at is not None
    )  # v2: no stale runtime; its last start kept
    assert pod.actions == {"start", "terminate"} and pod.cost_per_hr == 0

    api.start_pod(pid)
    pod = api.fetch_pod(pid)
    assert pod.status is PodStatus.PROVISIONING and pod.runtime is None and pod.actions == {"stop", "terminate"}
    sim.world.clock.advance(16)  # past half the boot: the container is being started
    assert api.fetch_pod(pid).status is PodStatus.STARTING
    sim.world.clock.advance(15)
    pod = api.fetch_pod(pid)
    assert pod.state == "RUNNING" and pod.uptime_s == 1 and pod.actions == {"stop", "restart", "terminate"}

    sim.world.clock.advance(100)
    api.restart_pod(pid)  # the container starts again on its machine: a new run
    pod = api.fetch_pod(pid)
    assert pod.status is PodStatus.RUNNING and pod.uptime_s == 0
    assert sim.rest_requests.count(f"POST /v2/pods/{pid}/action") == 3

    api.terminate_pod(pid)
    assert pid not in {p.id for p in api.fetch_snapshot().pods}  # gone from the list at once
    with pytest.raises(ApiNotFound, match="404"):
        api.fetch_pod(pid)
    assert f"DELETE /v2/pods/{pid}" in sim.rest_requests


def test_refusals_come_back_as_problem_answers(api: V2Api, sim: SimApiServer) -> None:
    stopped, train, locked = DEMO_IDS["stopped"], DEMO_IDS["train"], DEMO_IDS["starting"]
    with pytest.raises(ApiConflict, match=r"cannot stop pod .* while it is EXITED; valid now: start, terminate") as e:
        api.stop_pod(stopped)
    assert e.value.status == 409 and isinstance(e.value, ApiQueryError)  # said in words, with RunPod's status
    with pytest.raises(ApiNotFound, match=r"RunPod refused POST /v2/pods/nosuchpod/action \(404\): pod not found"):
        api.stop_pod("nosuchpod")
    with pytest.raises(ApiConflict, match=r"cannot start pod .* while it is RUNNING"):
        api.start_pod(train)
    with pytest.raises(ApiConflict, match="is locked"):
        api.stop_pod(locked)
    with pytest.raises(ApiConflict, match="is locked"):
        api.restart_pod(locked)
    pod_key = V2Api(sim.world.pods[train].api_key, sim.url, timeout_s=5.0)  # a pod's own key: its own pod only
    with pytest.raises(ApiForbidden, match=r"\(403\): this key belongs to a pod"):
        pod_key.stop_pod(DEMO_IDS["idle"])
    with pytest.raises(ApiForbidden):
        pod_key.fetch_snapshot()
    assert sim.world.pods[train].status == "RUNNING"
    assert sim.world.pods[DEMO_IDS["idle"]].status == "RUNNING" and sim.world.pods[stopped].status == "EXITED"


def test_an_id_that_would_change_the_url_is_never_sent(api: V2Api, sim: SimApiServer) -> None:
    api.fetch_snapshot()
    sent = (len(sim.rest_requests), len(sim.requests))
    bad_ids = [
        'abc"def',
        "a\nb",
        "../account/ssh-keys",
        f"{DEMO_IDS['train']}/action",
        f"{DEMO_IDS['train']}?x=1",
        f"{DEMO_IDS['train']}#",
        "%2e%2e",
        "a b",
        "",
        "x" * 65,
    ]
    for bad in bad_ids:
        for call in (api.stop_pod, api.terminate_pod, api.start_pod, api.restart_pod, api.fetch_pod):
            with pytest.raises(InvalidInput, match="refused to send id"):
                call(bad)
    assert (len(sim.rest_requests), len(sim.requests)) == sent
    assert len(api.fetch_snapshot().pods) == 5


def test_out_of_money_stops_everything_and_terminates_pods_without_network_volume(
    api: V2Api, sim: SimApiServer
) -> None:
    sim.world.set_balance(0.01)
    sim.world.clock.advance(60)
    pods = {p.id: p for p in api.fetch_snapshot().pods}
    idle = pods[DEMO_IDS["idle"]]  # the only pod with a network volume
    assert idle.status is PodStatus.EXITED and idle.actions == {"start", "terminate"}
    assert set(pods) == {DEMO_IDS["idle"]}  # every other pod was terminated: gone from the list
    assert api.fetch_snapshot().account.balance == 0
    with pytest.raises(ApiPaymentRequired, match="402"):
        api.start_pod(DEMO_IDS["idle"])


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


def test_sdk_canned_queries_work_too(sim: SimApiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's own get_pods/get_pod queries validate against the simulated schema: the legacy tools (runpodctl,
    nvidia-smi's stand-in, scripts with the SDK) still speak GraphQL, so the simulator's "full" mode serves the whole
    schema. podtui itself sends none of these (see tests/api/test_balance_without_graphql.py)."""
    from podtui.core.api import sdk

    sim.graphql_mode = "full"
    s = sdk.load()
    monkeypatch.setenv("RUNPOD_API_BASE_URL", sim.url)  # how a script with the SDK reaches it
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
    sim.graphql_mode = "balance-only"  # the balance alone, as the suite runs it: the SDK's own query is refused
    runpod.api_key = sim.api_key
    try:
        with pytest.raises(ValueError):  # the SDK reads the 410 page as JSON
            get_pods()
    finally:
        runpod.api_key = None


def test_a_pod_just_resumed_is_not_taken_for_one_stuck_since_its_creation(api: V2Api) -> None:
    """A resume keeps createdAt (days ago) and the last run's startedAt: neither dates this start."""
    from podtui.core.feed import starting_since

    api.start_pod(DEMO_IDS["stopped"])
    snap = api.fetch_snapshot()
    pod = snap.find(DEMO_IDS["stopped"])
    assert pod.is_starting and pod.created_at is not None and pod.created_at < snap.fetched_at - 86400
    assert starting_since(pod, snap.fetched_at, {}) == snap.fetched_at
