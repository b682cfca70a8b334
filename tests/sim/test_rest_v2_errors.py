"""How the simulator's REST v2 refuses, as RunPod does (docs/runpod-facts.md#rest-v2): 401 without a key, 404 and
405 for routes, 400 naming each fault of a body, every error an RFC 9457 problem, RateLimit headers on every
answer and a 429 past the quota; and every fault switch over REST, and the exchanges it publishes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from podtui.sim import exchange
from podtui.sim.demo import demo_world
from podtui.sim.exchange import Exchange
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

TRAIN = DEMO_IDS["train"]
LIMIT = re.compile(r'"minute";r=(\d+);t=(\d+)')


@pytest.fixture
def http(sim: SimApiServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, headers={"Authorization": f"Bearer {sim.api_key}"}, timeout=10) as client:
        yield client


def problem(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = r.json()
    assert {"title", "status", "detail"} <= set(body) and body["status"] == status
    assert all(isinstance(e, str) for e in body.get("errors", []))
    return body


def test_no_key_or_a_wrong_key_is_401(sim: SimApiServer) -> None:
    for headers, said in (({}, "missing bearer token"), ({"Authorization": "Bearer rpa_WRONG"}, "invalid API key")):
        r = httpx.get(f"{sim.url}/v2/pods", headers=headers)
        assert problem(r, 401)["detail"] == said
        assert "RateLimit" not in r.headers  # RunPod counts authenticated callers only
    r = httpx.post(f"{sim.url}/v2/pods/{TRAIN}/action", json={"action": "stop"}, headers={"Authorization": "Basic x"})
    problem(r, 401)
    assert sim.world.pods[TRAIN].status == "RUNNING"


def test_unknown_routes_are_404_and_wrong_methods_405_with_allow(http: httpx.Client) -> None:
    for path in ("/v2/nothing", "/v2/pods/a/b/c", "/v1/pods", "/"):
        assert path in problem(http.get(path), 404)["detail"]
    for method, path, allow in (
        ("PUT", "/v2/pods", "GET, POST"),
        ("POST", f"/v2/pods/{TRAIN}", "GET, PATCH, DELETE"),
        ("GET", f"/v2/pods/{TRAIN}/action", "POST"),
        ("DELETE", "/v2/account/ssh-keys", "GET, PUT"),
        ("GET", "/graphql", "POST"),
    ):
        r = http.request(method, path)
        problem(r, 405)
        assert r.headers["Allow"] == allow


@pytest.mark.parametrize(
    ("path", "body", "errors"),
    [
        (f"/v2/pods/{TRAIN}/action", {"action": "stop", "bogus": 1}, ["$: additional properties 'bogus' not allowed"]),
        (f"/v2/pods/{TRAIN}/action", {"action": 1}, ["$.action: expected string, but got integer"]),
        (
            f"/v2/pods/{TRAIN}/action",
            {"action": "resume"},
            ["$.action: value must be one of 'start', 'stop', 'restart', 'terminate'"],
        ),
        (f"/v2/pods/{TRAIN}/action", {}, ["$: missing properties 'action'"]),
        (
            "/v2/pods",
            {"name": "x", "image": "a/b", "gpu": {"id": "x", "count": "2", "spot": True}, "bidPerGpu": 0.2},
            [
                "$: additional properties 'bidPerGpu' not allowed",
                "$.gpu: additional properties 'spot' not allowed",
                "$.gpu.count: expected integer, but got string",
            ],
        ),
        ("/v2/pods", {"name": "", "image": "a/b", "cloud": "ALL", "disk": 0}, None),
        ("/v2/pods", {"name": "x", "image": "a/b", "env": {"A": 1}, "ports": "22/tcp"}, None),
        ("/v2/pods", {"name": "x", "image": "a/b", "mounts": {"persistent": {"size": 5, "path": 1}}}, None),
    ],
)
def test_a_body_that_breaks_the_schema_is_400_naming_each_fault(
    http: httpx.Client, sim: SimApiServer, path: str, body: dict[str, Any], errors: list[str] | None
) -> None:
    found = problem(http.post(path, json=body), 400)
    if errors is not None:
        assert sorted(found["errors"]) == sorted(errors)
    else:
        assert len(found["errors"]) >= 2, found  # every fault, not the first only
    assert sim.world.pods[TRAIN].status == "RUNNING" and len(sim.world.pods) == len(DEMO_IDS)


def test_what_is_not_a_json_object_is_400(http: httpx.Client) -> None:
    for raw in (b"", b"stop", b'{"action": NaN}', b'["stop"]', b'{"action": "stop"'):
        problem(http.post(f"/v2/pods/{TRAIN}/action", content=raw, headers={"Content-Type": "application/json"}), 400)


R3090 = "NVIDIA GeForce RTX 3090"
PERSISTENT_20 = {"persistent": {"size": 20.0, "path": "/w"}}


@pytest.mark.parametrize(
    ("method", "path", "body", "fields"),
    [
        ("POST", "/v2/network-volumes", {"name": "x", "size": 10.0, "dataCenter": "EU-RO-1"}, {"size": 10}),
        ("PATCH", "/v2/network-volumes/models-vol", {"size": 60.0}, {"size": 60}),
        (
            "POST",
            "/v2/pods",
            {"name": "x", "image": "a/b", "gpu": {"id": R3090, "count": 1.0}, "disk": 20.0, "mounts": PERSISTENT_20},
            {"disk": 20, "gpu.count": 1, "mounts.persistent.size": 20},
        ),
        (
            "PATCH",
            f"/v2/pods/{TRAIN}",
            {"disk": 30.0, "mounts": {"persistent": {"size": 60.0, "path": "/workspace"}}},
            {"disk": 30, "mounts.persistent.size": 60},
        ),
        (
            "POST",
            "/v2/templates",
            {"name": "t", "image": "ubuntu:22.04", "disk": 9.0, "mounts": PERSISTENT_20},
            {"disk": 9, "mounts.persistent.size": 20},
        ),
    ],
)
def test_a_whole_number_sent_as_a_float_is_kept_as_an_integer(
    http: httpx.Client, method: str, path: str, body: dict[str, Any], fields: dict[str, int]
) -> None:
    # JSON Schema counts 10.0 an integer: taken, and stored and answered as 10 (docs/runpod-facts.md#rest-v2)
    r = http.request(method, path, json=body)
    assert r.status_code in (200, 201), r.text
    answer = r.json()
    again = http.get(f"{path}/{answer['id']}" if method == "POST" else path).json()
    for found in (answer, again):
        for dotted, wanted in fields.items():
            value = found
            for name in dotted.split("."):
                value = value[name]
            assert value == wanted and type(value) is int, (dotted, value)


def test_rate_limit_headers_count_down_on_every_answer(http: httpx.Client) -> None:
    answers = [
        http.get("/v2/pods"),
        http.get("/v2/pods/nosuchpod"),
        http.post(f"/v2/pods/{TRAIN}/action", json={"action": "start"}),
        http.post(f"/v2/pods/{TRAIN}/action", json={"bogus": 1}),
        http.get("/v2/nowhere"),
    ]
    assert [r.status_code for r in answers] == [200, 404, 409, 400, 404]
    left = []
    for r in answers:
        m = LIMIT.fullmatch(r.headers["RateLimit"])
        assert m is not None and 0 < int(m.group(2)) <= 60, r.headers["RateLimit"]
        assert r.headers["RateLimit-Policy"] == '"minute";q=600;w=60'
        left.append(int(m.group(1)))
    assert left == [599, 598, 597, 596, 595]


def test_past_the_quota_it_is_429_with_retry_after() -> None:
    world = demo_world()
    with (
        SimApiServer(world, rate_limit=3) as sim,
        httpx.Client(base_url=sim.url, headers={"Authorization": f"Bearer {sim.api_key}"}) as http,
    ):
        assert [http.get("/v2/pods").status_code for _ in range(3)] == [200, 200, 200]
        r = http.post(f"/v2/pods/{TRAIN}/action", json={"action": "stop"})
        assert "minute" in problem(r, 429)["detail"]
        assert 1 <= int(r.headers["Retry-After"]) <= 60 and r.headers["RateLimit"].startswith('"minute";r=0;')
        assert world.pods[TRAIN].status == "RUNNING"  # refused, not carried out
        own = httpx.get(f"{sim.url}/v2/pods/{TRAIN}", headers={"Authorization": f"Bearer {world.pods[TRAIN].api_key}"})
        assert own.status_code == 200  # a pod's key has a window of its own


def _add(sim: SimApiServer, kind: str, value: object = None, only: str | None = None) -> None:
    sim.faults.add(kind, value, times=1, only=only)  # type: ignore[arg-type]


def test_faults_over_rest(http: httpx.Client, sim: SimApiServer) -> None:
    _add(sim, "status", 502)
    r = http.get("/v2/pods")
    assert r.status_code == 502 and r.headers["content-type"] == "text/html" and "502" in r.text
    _add(sim, "unauthorized")
    problem(http.get("/v2/pods"), 401)
    _add(sim, "malformed")
    with pytest.raises(json.JSONDecodeError):
        json.loads(http.get("/v2/pods").content)
    _add(sim, "raw", '{"pods": [{"id": NaN}]}')
    assert http.get("/v2/pods").text == '{"pods": [{"id": NaN}]}'
    _add(sim, "retry_after", "Wed, 21 Oct 2026 07:28:00 GMT")
    r = http.get("/v2/pods")
    assert problem(r, 429) and r.headers["Retry-After"] == "Wed, 21 Oct 2026 07:28:00 GMT"
    _add(sim, "conflict", "the pod is being migrated")
    assert problem(http.post(f"/v2/pods/{TRAIN}/action", json={"action": "stop"}), 409)["detail"] == (
        "the pod is being migrated"
    )
    assert sim.world.pods[TRAIN].status == "RUNNING"
    _add(sim, "unknown_status")
    assert http.get("/v2/pods").json()["pods"][0]["status"] == "HIBERNATING"
    _add(sim, "unknown_status", "MIGRATING")
    assert http.get(f"/v2/pods/{TRAIN}").json()["status"] == "MIGRATING"
    _add(sim, "latency", 0.01)
    _add(sim, "hang", 0.01)
    assert http.get("/v2/pods").status_code == 200  # only later
    assert http.get("/v2/pods").json()["pods"][0]["status"] != "HIBERNATING"  # every fault used up


def test_a_partial_answer_has_fields_missing_or_of_the_wrong_type(http: httpx.Client, sim: SimApiServer) -> None:
    _add(sim, "partial")
    pods = http.get("/v2/pods").json()["pods"]
    assert pods[0]["cost"] == "cheap" and pods[0]["actions"] == "stop" and pods[0]["gpu"]["count"] == [1]
    assert "runtime" not in pods[1] and "ssh" not in pods[1]
    assert "id" not in pods[2]
    _add(sim, "partial")
    assert http.get("/v2/account/ssh-keys").json() == {"keys": None}


def test_only_picks_requests_by_method_and_path(http: httpx.Client, sim: SimApiServer) -> None:
    _add(sim, "status", 503, only="POST /v2/pods/")
    _add(sim, "graphql_error", "for GraphQL only")  # REST never uses it up
    assert http.get("/v2/pods").status_code == 200 and http.get(f"/v2/pods/{TRAIN}").status_code == 200
    assert http.post(f"/v2/pods/{TRAIN}/action", json={"action": "restart"}).status_code == 503
    assert http.post(f"/v2/pods/{TRAIN}/action", json={"action": "restart"}).status_code == 200
    r = http.post("/graphql", json={"query": "query { myself { id clientBalance } }"})
    assert r.json() == {"errors": [{"message": "for GraphQL only"}]}


def test_the_control_endpoint_sets_faults_with_the_accounts_key_only(http: httpx.Client, sim: SimApiServer) -> None:
    body = {"add": [{"kind": "conflict", "times": 1, "only": "POST /v2/pods/"}], "balance": 3.5}
    assert http.post("/_sim/faults", json=body).json() == {"ok": True}
    assert sim.world.balance == 3.5
    problem(http.post(f"/v2/pods/{TRAIN}/action", json={"action": "stop"}), 409)
    assert http.post("/_sim/faults", json={"add": [{"kind": "meteor"}]}).status_code == 400
    pod_key = {"Authorization": f"Bearer {sim.world.pods[TRAIN].api_key}"}
    assert httpx.post(f"{sim.url}/_sim/faults", json={"clear": True}, headers=pod_key).status_code == 401


def test_every_answer_is_published_as_an_exchange(http: httpx.Client, sim: SimApiServer) -> None:
    seen: list[Exchange] = []

    def broken(_ex: Exchange) -> None:
        raise RuntimeError("a listener's bug")

    exchange.listeners.extend([broken, seen.append])
    try:
        http.post(f"/v2/pods/{TRAIN}/action", params={"x": ["1", "2"]}, json={"action": "restart"})
        _add(sim, "status", 500)
        http.get("/v2/pods")
        http.post("/graphql", json={"query": "query { myself { id } }"})
        http.get("/v2/nowhere")
    finally:
        exchange.listeners.remove(broken)
        exchange.listeners.remove(seen.append)
    action, faulted, graphql, nowhere = seen
    assert (action.method, action.path, action.route, action.status) == (
        "POST",
        f"/v2/pods/{TRAIN}/action",
        "/v2/pods/{id}/action",
        200,
    )
    assert action.query == {"x": ["1", "2"]} and json.loads(action.request_body) == {"action": "restart"}
    assert json.loads(action.response_body)["id"] == TRAIN and not action.fault
    assert action.response_headers["Content-Type"] == "application/json" and "RateLimit" in action.response_headers
    assert action.request_headers["Authorization"] == f"Bearer {sim.api_key}"
    assert (faulted.status, faulted.fault, faulted.route) == (500, True, "/v2/pods")
    assert (graphql.route, graphql.method) == ("/graphql", "POST")
    assert (nowhere.status, nowhere.route) == (404, None)
