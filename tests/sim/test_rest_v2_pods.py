"""The simulator's REST v2 pods over real HTTP (docs/runpod-facts.md#rest-v2): the demo account's pods as v2
records, their statuses and the actions each allows, locked pods, a pod in ERROR, PATCH, DELETE and create with
RunPod's refusals (400 for an unknown GPU or no stock, 402 for the balance)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from podtui.sim.gpu_market import NO_STOCK
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

TRAIN, IDLE, STOPPED, STARTING = (DEMO_IDS[k] for k in ("train", "idle", "stopped", "starting"))
IMAGE = "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04"
R3090, R4090 = "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090"
PERSISTENT = {"size": 10, "path": "/w"}
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


@pytest.fixture
def http(sim: SimApiServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, headers={"Authorization": f"Bearer {sim.api_key}"}, timeout=10) as client:
        yield client


def pod(http: httpx.Client, pod_id: str) -> dict[str, Any]:
    r = http.get(f"/v2/pods/{pod_id}")
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def act(http: httpx.Client, pod_id: str, action: str) -> httpx.Response:
    return http.post(f"/v2/pods/{pod_id}/action", json={"action": action})


def problem(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = r.json()
    assert body["status"] == status and body["title"] and body["detail"]
    return body


def create(http: httpx.Client, **fields: Any) -> httpx.Response:
    body = {"name": "made", "image": IMAGE, "gpu": {"id": R3090, "count": 1}, "cloud": "COMMUNITY", **fields}
    return http.post("/v2/pods", json={k: v for k, v in body.items() if v is not None})


def test_the_list_has_every_pod_as_a_v2_record(http: httpx.Client, sim: SimApiServer) -> None:
    r = http.get("/v2/pods")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    pods = {p["id"]: p for p in r.json()["pods"]}
    assert set(pods) == set(DEMO_IDS.values())
    train = pods[TRAIN]
    assert train["status"] == "RUNNING" and train["actions"] == ["stop", "restart", "terminate"]
    assert train["gpu"] == {"id": R3090, "count": 1} and "cpu" not in train
    assert train["cost"] == 0.22 and train["locked"] is False
    assert train["env"] == sim.world.pods[TRAIN].env
    assert train["mounts"] == {"persistent": {"size": 50, "path": "/workspace"}}
    assert train["ports"] == ["8888/http", "22/tcp"]
    assert train["cudaVersion"] == "12.4" and train["template"] is None and train["registry"] is None
    assert train["globalNetworking"] == {"enabled": False} and train["args"] == "" and train["disk"] == 20
    assert RFC3339.fullmatch(train["createdAt"]) and RFC3339.fullmatch(train["startedAt"])
    runtime = train["runtime"]
    assert runtime["uptime"] == 2 * 3600 + 17 * 60 + 42
    assert [set(g) for g in runtime["gpus"]] == [{"util", "memoryUtil"}]
    assert all(isinstance(v, int) for g in runtime["gpus"] for v in g.values())
    assert isinstance(runtime["cpu"]["util"], int) and isinstance(runtime["memory"]["util"], int)
    assert {(p["private"], p["type"]) for p in runtime["ports"]} == {(8888, "http"), (22, "tcp")}
    idle = pods[IDLE]
    assert idle["mounts"] == {"network": [{"volumeId": "models-vol", "path": "/workspace"}]}
    assert idle["dataCenterId"] == "US-TX-3" and idle["gpu"]["id"] == "NVIDIA A100 80GB PCIe"


def test_a_stopped_pod_costs_nothing_and_has_no_runtime(http: httpx.Client) -> None:
    stopped = pod(http, STOPPED)
    assert stopped["status"] == "EXITED" and stopped["actions"] == ["start", "terminate"]
    assert (
        stopped["cost"] == 0 and stopped["runtime"] is None and RFC3339.fullmatch(stopped["startedAt"])
    )  # when it last ran
    assert stopped["ssh"] == {"proxy": None, "direct": None}


def test_a_booting_pod_is_provisioning_then_starting_then_running(http: httpx.Client, sim: SimApiServer) -> None:
    started = act(http, STOPPED, "start")
    assert started.status_code == 200, started.text
    assert started.json()["status"] == "PROVISIONING" and started.json()["actions"] == ["stop", "terminate"]
    assert started.json()["runtime"] is None and started.json()["cost"] == 0.40
    sim.world.clock.advance(16)  # past half of the 30 s boot
    assert pod(http, STOPPED)["status"] == "STARTING"
    sim.world.clock.advance(15)
    running = pod(http, STOPPED)
    assert running["status"] == "RUNNING" and running["runtime"]["uptime"] == 1
    assert running["actions"] == ["stop", "restart", "terminate"]


def test_actions_answer_the_pod_and_refuse_what_the_status_does_not_allow(
    http: httpx.Client, sim: SimApiServer
) -> None:
    sim.world.clock.advance(60)
    restarted = act(http, TRAIN, "restart")
    assert restarted.status_code == 200 and restarted.json()["runtime"]["uptime"] == 0
    found = problem(act(http, TRAIN, "start"), 409)
    assert "RUNNING" in found["detail"] and sim.world.pods[TRAIN].status == "RUNNING"
    stopped = act(http, TRAIN, "stop")
    assert stopped.status_code == 200 and stopped.json()["status"] == "EXITED"
    for action in ("stop", "restart"):
        assert "EXITED" in problem(act(http, TRAIN, action), 409)["detail"]
    gone = act(http, TRAIN, "terminate")
    assert gone.status_code == 204 and gone.content == b"" and "content-type" not in gone.headers
    problem(http.get(f"/v2/pods/{TRAIN}"), 404)
    problem(act(http, TRAIN, "start"), 404)
    assert TRAIN not in {p["id"] for p in http.get("/v2/pods").json()["pods"]}


def test_a_locked_pod_refuses_stop_and_restart_saying_so(http: httpx.Client, sim: SimApiServer) -> None:
    sweep = pod(http, STARTING)  # the demo's locked pod
    assert sweep["locked"] is True and sweep["status"] == "PROVISIONING" and sweep["actions"] == ["terminate"]
    assert "locked" in problem(act(http, STARTING, "stop"), 409)["detail"]
    locked = http.patch(f"/v2/pods/{TRAIN}", json={"locked": True})
    assert locked.status_code == 200 and locked.json()["actions"] == ["terminate"]
    for action in ("stop", "restart"):
        assert "locked" in problem(act(http, TRAIN, action), 409)["detail"]
    assert sim.world.pods[TRAIN].status == "RUNNING"
    assert http.patch(f"/v2/pods/{TRAIN}", json={"locked": False}).json()["locked"] is False
    assert act(http, TRAIN, "stop").json()["status"] == "EXITED"


def test_a_pod_whose_container_died_is_in_error_and_can_be_started(http: httpx.Client, sim: SimApiServer) -> None:
    sim.world.fail(TRAIN)
    failed = pod(http, TRAIN)
    assert failed["status"] == "ERROR" and failed["actions"] == ["start", "terminate"]
    assert failed["runtime"] is None and failed["cost"] == 0.22  # it still holds its machine
    assert act(http, TRAIN, "start").json()["status"] == "PROVISIONING"
    control = http.post("/_sim/faults", json={"fail_pod": IDLE})  # the same through the control endpoint
    assert control.status_code == 200 and pod(http, IDLE)["status"] == "ERROR"


def test_patch_changes_what_it_names(http: httpx.Client) -> None:
    changes = {"name": "renamed", "env": {"ONLY": "this"}, "ports": ["22/tcp"], "disk": 40, "args": "--x"}
    r = http.patch(f"/v2/pods/{TRAIN}", json=changes | {"mounts": {"persistent": {"size": 60, "path": "/data"}}})
    assert r.status_code == 200, r.text
    after = pod(http, TRAIN)
    assert {k: after[k] for k in changes} == changes  # env replaced whole, not merged
    assert after["mounts"] == {"persistent": {"size": 60, "path": "/data"}}
    assert after["image"] == "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04"
    assert {p["private"] for p in after["runtime"]["ports"]} == {22}


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"image": "not a valid image!"}, 400, "image"),
        ({"mounts": {"persistent": {"size": 20, "path": "/w"}}}, 400, "shrink"),
        ({"mounts": {"network": [{"volumeId": "models-vol", "path": "/w"}]}}, 400, "network mount cannot be added"),
        ({"templateId": "tpl123"}, 404, "tpl123"),
        ({"registry": "cred1"}, 400, "cred1"),
        ({"globalNetworking": True}, 400, "global networking"),
    ],
)
def test_patch_refuses_what_runpod_refuses(http: httpx.Client, body: dict[str, Any], status: int, said: str) -> None:
    before = pod(http, TRAIN)
    assert said in problem(http.patch(f"/v2/pods/{TRAIN}", json=body), status)["detail"]
    after = pod(http, TRAIN)
    assert (after["image"], after["mounts"]) == (before["image"], before["mounts"])


def test_delete_terminates_and_gives_the_gpus_back(http: httpx.Client, sim: SimApiServer) -> None:
    free = sim.world.gpu_types[R3090].free
    made = create(http, gpu={"id": R3090, "count": 4}).json()
    assert free["COMMUNITY"] == 60
    r = http.delete(f"/v2/pods/{made['id']}")
    assert r.status_code == 204 and r.content == b""
    assert free["COMMUNITY"] == 64
    problem(http.delete(f"/v2/pods/{made['id']}"), 404)


def test_create_answers_201_with_the_pod_provisioning(http: httpx.Client, sim: SimApiServer) -> None:
    r = create(
        http,
        gpu={"id": R3090, "count": 2},
        cloud="SECURE",
        disk=30,
        ports=["8888/http", "22/tcp"],
        env={"A": "1"},
        mounts={"persistent": {"size": 20, "path": "/workspace"}},
        startSsh=True,
        dataCenterIds=["EU-RO-1"],
    )
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["status"] == "PROVISIONING" and made["actions"] == ["stop", "terminate"]
    assert made["gpu"] == {"id": R3090, "count": 2} and made["cloud"] == "SECURE" and made["cost"] == 0.86
    assert made["env"] == {"A": "1"} and made["disk"] == 30 and made["dataCenterId"] == "EU-RO-1"
    assert made["mounts"] == {"persistent": {"size": 20, "path": "/workspace"}} and made["image"] == IMAGE
    assert made["startedAt"] is None and RFC3339.fullmatch(made["createdAt"])
    assert sim.world.gpu_types[R3090].free["SECURE"] == 14
    assert pod(http, made["id"])["name"] == "made"


def test_create_a_cpu_pod(http: httpx.Client) -> None:
    r = create(http, gpu=None, cpu={"id": "cpu3c", "vcpuCount": 4}, startJupyter=True, env={"B": "2"})
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["cpu"] == {"id": "cpu3c", "vcpuCount": 4, "memory": 8} and "gpu" not in made
    assert made["cudaVersion"] is None and made["cost"] == 0.12
    assert made["env"]["B"] == "2" and len(made["env"]["JUPYTER_PASSWORD"]) >= 12


@pytest.mark.parametrize(
    ("fields", "status", "said"),
    [
        ({"gpu": {"id": "NVIDIA Imaginary 9000"}}, 400, "no GPU types"),
        ({"gpu": {"id": R4090, "count": 1}, "cloud": "SECURE"}, 400, NO_STOCK),  # none free on secure cloud
        ({"gpu": {"id": R3090, "count": 9}}, 400, "gpuCount"),
        ({"gpu": {"id": R3090, "allowedCudaVersions": ["12.8"]}}, 400, NO_STOCK),
        ({"gpu": {"id": R3090, "allowedCudaVersions": ["12.4"], "minCudaVersion": "12.1"}}, 400, "minCudaVersion"),
        ({"cpu": {"id": "cpu3c", "vcpuCount": 4}}, 400, "exactly one"),
        ({"gpu": None}, 400, "exactly one"),
        ({"gpu": None, "cpu": {"id": "cpu9z", "vcpuCount": 4}}, 400, "cpu9z"),
        ({"gpu": None, "cpu": {"id": "cpu3c", "vcpuCount": 6}}, 400, "power of two"),
        ({"gpu": None, "cpu": {"id": "cpu3c", "vcpuCount": 4}, "mounts": {"persistent": PERSISTENT}}, 400, "CPU"),
        ({"image": None}, 400, "image"),
        ({"image": "Not An Image"}, 400, "image"),
        ({"templateId": "tpl1"}, 404, "tpl1"),
        ({"mounts": {"network": [{"volumeId": "vol_nope", "path": "/w"}]}}, 400, "vol_nope"),
        (
            {"mounts": {"persistent": PERSISTENT, "network": [{"volumeId": "models-vol", "path": "/b"}]}},
            400,
            "both",
        ),
    ],
)
def test_create_refuses_as_runpod_does(
    http: httpx.Client, sim: SimApiServer, fields: dict[str, Any], status: int, said: str
) -> None:
    found = problem(create(http, **fields), status)
    assert said in found["detail"] or any(said in e for e in found.get("errors", [])), found
    assert set(sim.world.pods) == set(DEMO_IDS.values())  # nothing was made


def test_create_without_the_money_is_402(http: httpx.Client, sim: SimApiServer) -> None:
    sim.world.set_balance(0.5)
    found = problem(create(http, gpu={"id": "NVIDIA H100 80GB HBM3", "count": 1}, cloud="SECURE"), 402)
    assert "balance" in found["detail"]
    assert create(http).status_code == 201  # a 3090 at $0.22/hr fits


def test_include_cluster_pods_is_a_boolean(http: httpx.Client) -> None:
    assert len(http.get("/v2/pods", params={"includeClusterPods": "true"}).json()["pods"]) == len(DEMO_IDS)
    found = problem(http.get("/v2/pods", params={"includeClusterPods": "maybe"}), 400)
    assert "includeClusterPods" in found["detail"]
