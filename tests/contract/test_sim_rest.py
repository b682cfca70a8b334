"""The simulator's REST v2 answers keep RunPod's contract: every route podtui uses, asked well and badly over real
HTTP, answers what the spec says (docs/runpod-facts.md#rest-v2): 400 naming an unknown field, 409 for an action
the pod's status does not allow, 204 for terminate, 401 without a key, 404 for an unknown pod, 429 with
Retry-After, and RateLimit headers on every answer to a caller with a key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from podtui.sim import rest_v2
from podtui.sim.server import SimApiServer
from tests.helpers.contract import check_response
from tests.helpers.sim import DEMO_IDS

RUNNING, EXITED, PROVISIONING = DEMO_IDS["train"], DEMO_IDS["stopped"], DEMO_IDS["starting"]
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZvcmNvbnRyYWN0dGVzdHNvbmx5MDEyMzQ1Njc4OWFi tester@contract"


class Rest:
    """Requests to the simulator as any HTTP client sends them; every answer is checked against the contract."""

    def __init__(self, sim: SimApiServer, key: str | None) -> None:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.http = httpx.Client(base_url=sim.url, headers=headers, timeout=10.0)

    def __call__(self, method: str, route: str, *, pod: str = "", **kw: Any) -> httpx.Response:
        r = self.http.request(method, route.replace("{id}", pod), **kw)
        found = check_response(method, route, r.status_code, r.headers, r.content)
        assert found == [], f"{method} {route} -> {r.status_code} {r.text[:300]}:\n" + "\n".join(found)
        return r


@pytest.fixture
def rest(sim: SimApiServer) -> Iterator[Rest]:
    client = Rest(sim, sim.api_key)
    yield client
    client.http.close()


def simulated(route: str) -> None:
    """A route the contract has for a later feature is checked once the simulator answers it."""
    if route not in rest_v2.ROUTES:
        pytest.skip(f"the simulator does not answer {route} yet")


def problem_of(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = r.json()
    return body


def names(problem: dict[str, Any], field: str) -> bool:
    return field in problem["detail"] or any(field in e for e in problem.get("errors", []))


# -- pods ---------------------------------------------------------------------------------------------------------


def test_list_and_get_pods(rest: Rest) -> None:
    pods = rest("GET", "/v2/pods").json()["pods"]
    assert {RUNNING, EXITED, PROVISIONING} <= {p["id"] for p in pods}
    assert rest("GET", "/v2/pods", params={"includeClusterPods": "true"}).status_code == 200
    pod = rest("GET", "/v2/pods/{id}", pod=RUNNING).json()
    assert pod["status"] == "RUNNING" and pod["runtime"] is not None
    stopped = rest("GET", "/v2/pods/{id}", pod=EXITED).json()
    assert stopped["status"] == "EXITED" and stopped["runtime"] is None and stopped["cost"] == 0


def test_an_unknown_pod_is_404(rest: Rest) -> None:
    for method, route, kw in [
        ("GET", "/v2/pods/{id}", {}),
        ("PATCH", "/v2/pods/{id}", {"json": {"name": "x"}}),
        ("DELETE", "/v2/pods/{id}", {}),
        ("POST", "/v2/pods/{id}/action", {"json": {"action": "stop"}}),
        *([("GET", "/v2/pods/{id}/logs", {})] if "/v2/pods/{id}/logs" in rest_v2.ROUTES else []),
    ]:
        problem_of(rest(method, route, pod="nosuchpod0000", **kw), 404)


def test_no_key_or_a_wrong_key_is_401(sim: SimApiServer) -> None:
    for key in (None, "rpa_WRONGWRONGWRONGWRONGWRONG"):
        anonymous = Rest(sim, key)
        try:
            problem_of(anonymous("GET", "/v2/pods"), 401)
            problem_of(anonymous("GET", "/v2/pods/{id}", pod=RUNNING), 401)
            problem_of(anonymous("POST", "/v2/pods/{id}/action", pod=RUNNING, json={"action": "stop"}), 401)
            problem_of(anonymous("GET", "/v2/account/ssh-keys"), 401)
        finally:
            anonymous.http.close()
    assert sim.world.pods[RUNNING].status == "RUNNING"


def test_an_unknown_body_field_is_400_naming_it(rest: Rest) -> None:
    found = problem_of(rest("POST", "/v2/pods/{id}/action", pod=RUNNING, json={"action": "stop", "bogus": 1}), 400)
    assert names(found, "bogus"), found
    found = problem_of(rest("PATCH", "/v2/pods/{id}", pod=RUNNING, json={"name": "x", "interruptible": True}), 400)
    assert names(found, "interruptible"), found
    found = problem_of(rest("PUT", "/v2/account/ssh-keys", json={"keys": [], "merge": True}), 400)
    assert names(found, "merge"), found
    create = {"name": "c", "image": "runpod/pytorch:2.4.0", "gpu": {"id": "x", "count": 1}, "bidPerGpu": 0.2}
    found = problem_of(rest("POST", "/v2/pods", json=create), 400)
    assert names(found, "bidPerGpu"), found
    assert rest("GET", "/v2/pods/{id}", pod=RUNNING).json()["name"] != "x"  # nothing was carried out


def test_a_body_that_is_not_json_is_refused(rest: Rest) -> None:
    r = rest("POST", "/v2/pods/{id}/action", pod=RUNNING, content=b"stop", headers={"Content-Type": "application/json"})
    assert r.status_code in (400, 422), r.text
    problem_of(r, r.status_code)


def test_an_action_the_status_does_not_allow_is_409(rest: Rest) -> None:
    pod = rest("GET", "/v2/pods/{id}", pod=RUNNING).json()
    assert "start" not in pod["actions"]
    problem_of(rest("POST", "/v2/pods/{id}/action", pod=RUNNING, json={"action": "start"}), 409)
    stopped = rest("GET", "/v2/pods/{id}", pod=EXITED).json()
    for action in {"stop", "restart"} - set(stopped["actions"]):
        problem_of(rest("POST", "/v2/pods/{id}/action", pod=EXITED, json={"action": action}), 409)
    r = rest("POST", "/v2/pods/{id}/action", pod=RUNNING, json={"action": "resume"})  # no such action
    assert r.status_code in (400, 422) and problem_of(r, r.status_code)


def test_stop_and_start_answer_the_pod(rest: Rest) -> None:
    stopped = rest("POST", "/v2/pods/{id}/action", pod=RUNNING, json={"action": "stop"})
    assert stopped.status_code == 200 and stopped.json()["id"] == RUNNING
    assert stopped.json()["status"] == "EXITED" and "start" in stopped.json()["actions"]
    started = rest("POST", "/v2/pods/{id}/action", pod=EXITED, json={"action": "start"})
    assert started.status_code == 200 and started.json()["status"] in ("PROVISIONING", "STARTING", "RUNNING")


def test_terminate_and_delete_are_204_and_the_pod_is_gone(rest: Rest) -> None:
    r = rest("POST", "/v2/pods/{id}/action", pod=EXITED, json={"action": "terminate"})
    assert r.status_code == 204 and r.content == b""
    r = rest("DELETE", "/v2/pods/{id}", pod=RUNNING)
    assert r.status_code == 204 and r.content == b""
    for gone in (EXITED, RUNNING):
        r = rest("GET", "/v2/pods/{id}", pod=gone)
        assert r.status_code == 404 or r.json()["status"] == "TERMINATED", r.text  # TERMINATED for a moment
    listed = {p["id"]: p["status"] for p in rest("GET", "/v2/pods").json()["pods"]}
    assert listed.get(EXITED, "TERMINATED") == listed.get(RUNNING, "TERMINATED") == "TERMINATED"


def test_patch_renames(rest: Rest) -> None:
    r = rest("PATCH", "/v2/pods/{id}", pod=RUNNING, json={"name": "renamed"})
    assert r.status_code == 200 and r.json()["name"] == "renamed"
    assert rest("GET", "/v2/pods/{id}", pod=RUNNING).json()["name"] == "renamed"


def test_create_pod(rest: Rest) -> None:
    gpu = rest("GET", "/v2/pods/{id}", pod=RUNNING).json()["gpu"]["id"]
    body = {
        "name": "contract-made",
        "image": "runpod/pytorch:2.4.0",
        "gpu": {"id": gpu, "count": 1},
        "cloud": "SECURE",
        "disk": 20,
        "mounts": {"persistent": {"size": 20, "path": "/workspace"}},
        "ports": ["22/tcp", "8888/http"],
        "env": {"A": "1"},
        "startSsh": True,
    }
    r = rest("POST", "/v2/pods", json=body)
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["name"] == "contract-made" and made["status"] in ("PROVISIONING", "STARTING", "RUNNING")
    assert rest("GET", "/v2/pods/{id}", pod=made["id"]).json()["id"] == made["id"]
    missing_image = {k: v for k, v in body.items() if k != "image"}
    assert rest("POST", "/v2/pods", json=missing_image).status_code in (400, 422)


def test_pod_logs_stream_events(sim: SimApiServer) -> None:
    simulated("/v2/pods/{id}/logs")
    with (
        httpx.Client(base_url=sim.url, headers={"Authorization": f"Bearer {sim.api_key}"}, timeout=10.0) as http,
        http.stream("GET", f"/v2/pods/{PROVISIONING}/logs", params={"source": "system", "tail": "5"}) as r,
    ):
        assert r.status_code == 200, (r.status_code, r.read()[:300])
        got = b""
        for chunk in r.iter_bytes():
            got += chunk
            if b"\n\n" in got:
                break  # the stream never ends by itself: one whole event is enough
        got = got[: got.index(b"\n\n") + 2]
        found = check_response("GET", "/v2/pods/{id}/logs", r.status_code, r.headers, got)
    assert r.status_code == 200 and found == [], found
    data = next(line for line in got.decode().splitlines() if line.startswith("data:"))
    assert json.loads(data[5:])["source"] == "system"


def test_logs_refuse_a_tail_past_5000(rest: Rest) -> None:
    simulated("/v2/pods/{id}/logs")
    r = rest("GET", "/v2/pods/{id}/logs", pod=RUNNING, params={"tail": "6000"})
    assert r.status_code in (400, 422), r.text


# -- the account --------------------------------------------------------------------------------------------------


def test_ssh_keys_are_replaced_whole(rest: Rest) -> None:
    assert isinstance(rest("GET", "/v2/account/ssh-keys").json()["keys"], list)
    assert rest("PUT", "/v2/account/ssh-keys", json={"keys": [KEY]}).json() == {"keys": [KEY]}
    assert rest("GET", "/v2/account/ssh-keys").json() == {"keys": [KEY]}
    assert rest("PUT", "/v2/account/ssh-keys", json={"keys": []}).json() == {"keys": []}


# -- limits -------------------------------------------------------------------------------------------------------


def test_rate_limit_headers_on_every_answer(rest: Rest) -> None:
    for r in (
        rest("GET", "/v2/pods"),
        rest("GET", "/v2/pods/{id}", pod=RUNNING),
        rest("GET", "/v2/pods/{id}", pod="nosuchpod0000"),
        rest("POST", "/v2/pods/{id}/action", pod=RUNNING, json={"action": "start"}),
    ):
        assert r.headers.get("RateLimit") and r.headers.get("RateLimit-Policy"), (r.status_code, dict(r.headers))


def test_retry_after_fault_is_a_429_problem_with_retry_after(rest: Rest, sim: SimApiServer) -> None:
    sim.faults.add("retry_after", 7, times=1)
    r = rest("GET", "/v2/pods")
    assert problem_of(r, 429)["status"] == 429
    assert r.headers["Retry-After"] == "7"
    assert rest("GET", "/v2/pods").status_code == 200  # once only


# -- the routes later features read -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "params"),
    [
        ("/v2/catalog/gpus", {"include": "AVAILABILITY", "product": "POD", "count": "1", "cloud": "SECURE"}),
        ("/v2/catalog/datacenters", {}),
        ("/v2/billing/pods", {"bucketSize": "day"}),
        ("/v2/billing", {"bucketSize": "hour", "lastN": "48"}),
        ("/v2/billing/pods", {"podId": EXITED, "startTime": "2026-11-01T00:00:00Z", "bucketSize": "week"}),
        ("/v2/billing/network-volumes", {"bucketSize": "month", "lastN": "2"}),
        ("/v2/billing/serverless", {"serverlessId": "ep1"}),
        ("/v2/billing/endpoints", {"bucketSize": "year"}),
        ("/v2/billing/clusters", {"lastN": "7"}),
        ("/v2/network-volumes", {}),
        ("/v2/templates", {}),
        ("/v2/catalog/datacenters", {"include": "GPU_AVAILABILITY,CPU_AVAILABILITY", "regions": "EUROPE"}),
        ("/v2/catalog/templates", {"source": "verified"}),
    ],
)
def test_the_read_routes_for_later_features(rest: Rest, route: str, params: dict[str, str]) -> None:
    simulated(route)
    assert rest("GET", route, params=params).status_code == 200


# -- storage and launch -------------------------------------------------------------------------------------------


def test_network_volumes_keep_the_contract(rest: Rest) -> None:
    made = rest("POST", "/v2/network-volumes", json={"name": "c", "size": 10, "dataCenter": "EU-RO-1"})
    assert made.status_code == 201
    vid = made.json()["id"]
    assert rest("GET", "/v2/network-volumes/{id}", pod=vid).json()["size"] == 10
    assert rest("PATCH", "/v2/network-volumes/{id}", pod=vid, json={"size": 20}).json()["size"] == 20
    problem_of(rest("PATCH", "/v2/network-volumes/{id}", pod=vid, json={"size": 10}), 400)
    problem_of(rest("PATCH", "/v2/network-volumes/{id}", pod=vid, json={}), 400)
    problem_of(rest("POST", "/v2/network-volumes", json={"name": "c", "size": 10, "dataCenter": "CA-MTL-1"}), 400)
    problem_of(rest("DELETE", "/v2/network-volumes/{id}", pod="models-vol"), 409)
    assert rest("DELETE", "/v2/network-volumes/{id}", pod=vid).status_code == 204
    problem_of(rest("GET", "/v2/network-volumes/{id}", pod=vid), 404)


def test_templates_keep_the_contract(rest: Rest) -> None:
    made = rest("POST", "/v2/templates", json={"name": "c", "image": "ubuntu:22.04", "ports": ["22/tcp"]})
    assert made.status_code == 201
    tid = made.json()["id"]
    assert rest("PATCH", "/v2/templates/{id}", pod=tid, json={"disk": 9}).json()["disk"] == 9
    assert rest("GET", "/v2/templates/{id}", pod="runpod-torch-v240").json()["public"] is True
    bad = {"name": "d", "image": "ubuntu:22.04", "mounts": {"network": [{"volumeId": "v", "path": "/d"}]}}
    problem_of(rest("POST", "/v2/templates", json=bad), 422)
    problem_of(rest("DELETE", "/v2/templates/{id}", pod="runpod-torch-v240"), 404)
    pod = rest("POST", "/v2/pods", json={"name": "t", "templateId": tid, "gpu": {"id": "NVIDIA GeForce RTX 3090"}})
    assert pod.status_code == 201 and pod.json()["template"] == tid
    problem_of(rest("DELETE", "/v2/templates/{id}", pod=tid), 400)
    problem_of(
        rest(
            "POST",
            "/v2/pods",
            json={"name": "t", "templateId": "runpod-worker-vllm", "cpu": {"id": "cpu3c", "vcpuCount": 2}},
        ),
        422,
    )


def test_data_centres_keep_the_contract(rest: Rest) -> None:
    one = rest("GET", "/v2/catalog/datacenters/{id}", pod="US-KS-2", params={"include": "GPU_AVAILABILITY"})
    assert one.json()["gpuAvailability"]
    problem_of(rest("GET", "/v2/catalog/datacenters/{id}", pod="XX-1"), 404)
    problem_of(rest("GET", "/v2/catalog/datacenters", params={"regions": "MARS"}), 400)
    gpus = rest("GET", "/v2/catalog/gpus", params={"include": "AVAILABILITY", "product": "POD", "cloud": "COMMUNITY"})
    assert any("dataCenters" in g for g in gpus.json()["gpus"])


def test_an_edit_keeps_the_contract(rest: Rest) -> None:
    edited = rest("PATCH", "/v2/pods/{id}", pod=RUNNING, json={"image": "runpod/pytorch:2.4.0", "env": {"A": "1"}})
    assert edited.status_code == 200 and edited.json()["image"] == "runpod/pytorch:2.4.0"
    problem_of(rest("PATCH", "/v2/pods/{id}", pod=RUNNING, json={"mounts": {"persistent": {"size": 60}}}), 422)
    problem_of(rest("PATCH", "/v2/pods/{id}", pod=RUNNING, json={"mounts": {"network": []}}), 400)
