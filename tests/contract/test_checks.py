"""tests/helpers/contract.py catches what breaks RunPod's REST v2 contract: a missing required field, a value
outside an enum, a field the spec does not define, a wrong type, a wrong status, header or content type. Each
case starts from an exchange that keeps the contract, so a check that catches everything would fail here too."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from podtui.core import secret
from podtui.sim.exchange import Exchange
from tests.helpers.contract import (
    Contract,
    ExchangeWatch,
    check_exchange,
    check_request,
    check_response,
    contract,
    is_date_time,
)

RATE = {"RateLimit": '"minute";r=59;t=60', "RateLimit-Policy": '"minute";q=60;w=60'}
JSON = {"Content-Type": "application/json", **RATE}
PROBLEM = {"Content-Type": "application/problem+json", **RATE}


def a_pod(**changes: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "id": "q7x2m9fk4r8t1a",
        "name": "llama-lora-3090",
        "status": "RUNNING",
        "actions": ["stop", "restart", "terminate"],
        "image": "runpod/pytorch:2.4.0",
        "args": "",
        "disk": 50,
        "mounts": {"persistent": {"size": 20, "path": "/workspace"}},
        "ports": ["22/tcp", "8888/http"],
        "env": {"HF_HOME": "/workspace/hf"},
        "registry": None,
        "gpu": {"id": "NVIDIA GeForce RTX 3090", "count": 1},
        "cloud": "SECURE",
        "dataCenterId": "EU-RO-1",
        "cudaVersion": "12.4",
        "ssh": {
            "proxy": {"host": "ssh.runpod.io", "port": 22, "username": "q7x2m9fk4r8t1a-1", "command": "ssh x"},
            "direct": None,
        },
        "template": None,
        "cost": 0.22,
        "locked": False,
        "globalNetworking": {"enabled": False},
        "runtime": {"uptime": 600, "gpus": [{"util": 97, "memoryUtil": 80}], "cpu": {"util": 12}, "ports": []},
        "createdAt": "2026-11-28T20:00:00Z",
        "startedAt": "2026-11-28T20:01:00.5+01:00",
    }
    pod.update(changes)
    return pod


def pods_answer(*pods: dict[str, Any]) -> bytes:
    return json.dumps({"pods": list(pods)}).encode()


def problem(status: int, **extra: Any) -> bytes:
    return json.dumps({"title": "Conflict", "status": status, "detail": "pod is RUNNING", **extra}).encode()


def one_violation(found: list[str], *words: str) -> str:
    assert len(found) == 1, found
    for w in words:
        assert w in found[0], (w, found[0])
    return found[0]


# -- answers ------------------------------------------------------------------------------------------------------


def test_a_good_answer_keeps_the_contract() -> None:
    assert (
        check_response("GET", "/v2/pods", 200, JSON, pods_answer(a_pod(), a_pod(runtime=None, status="EXITED"))) == []
    )
    assert check_response("GET", "/v2/pods/{id}", 200, JSON, json.dumps(a_pod())) == []
    assert check_response("POST", "/v2/pods/{id}/action", 204, RATE, b"") == []
    assert check_response("POST", "/v2/pods/{id}/action", 409, PROBLEM, problem(409)) == []


def test_a_missing_required_field_is_caught() -> None:
    pod = a_pod()
    del pod["cost"]
    one_violation(check_response("GET", "/v2/pods", 200, JSON, pods_answer(pod)), "$.pods[0]", "'cost' is a required")
    del pod["ssh"]["proxy"]["port"]  # deeper down, and in the other route that answers a pod
    pod["cost"] = 0.0
    one_violation(check_response("GET", "/v2/pods/{id}", 200, JSON, json.dumps(pod)), "$.ssh", "'port'")


def test_a_value_outside_an_enum_is_caught() -> None:
    found = check_response("GET", "/v2/pods", 200, JSON, pods_answer(a_pod(status="HIBERNATING")))
    one_violation(found, "$.pods[0].status", "'HIBERNATING' is not one of")
    found = check_response("GET", "/v2/pods", 200, JSON, pods_answer(a_pod(actions=["stop", "resume"])))
    one_violation(found, "$.pods[0].actions[1]", "'resume'")


def test_a_wrong_type_is_caught_even_under_anyof() -> None:
    one_violation(check_response("GET", "/v2/pods", 200, JSON, pods_answer(a_pod(cost="0.22"))), "$.pods[0].cost")
    runtime = {"uptime": "ten minutes"}
    found = check_response("GET", "/v2/pods/{id}", 200, JSON, json.dumps(a_pod(runtime=runtime)))
    # runtime is an object or null: the words say which field of the object is wrong
    one_violation(found, "$.runtime", "closest: at $.runtime.uptime", "'ten minutes' is not of type 'integer'")


def test_a_time_that_is_not_rfc_3339_is_caught() -> None:
    found = check_response("GET", "/v2/pods", 200, JSON, pods_answer(a_pod(createdAt="Sat Nov 28 2026 20:00:00")))
    one_violation(found, "$.pods[0].createdAt", "date-time")
    assert is_date_time("2026-11-28T20:00:00Z") and is_date_time("2026-11-28t20:00:00.123456-05:30")
    for bad in ("2026-11-28", "2026-11-28 20:00:00Z", "2026-02-30T00:00:00Z", "2026-11-28T24:00:00Z", "1764360000"):
        assert not is_date_time(bad), bad


def test_a_status_the_spec_does_not_list_falls_to_its_default() -> None:
    # every operation podtui uses has a default (an error problem): a 402 is held to it
    assert check_response("POST", "/v2/pods", 402, PROBLEM, problem(402)) == []
    one_violation(check_response("POST", "/v2/pods", 402, JSON, b'{"error": "no money"}'), "application/json")


def test_a_status_the_spec_does_not_list_without_a_default_is_caught() -> None:
    document = copy.deepcopy(contract().document)
    del document["routes"]["/v2/pods/{id}/action"]["POST"]["responses"]["default"]
    found = Contract(document).check_response("POST", "/v2/pods/{id}/action", 418, PROBLEM, problem(418))
    one_violation(found, "status 418 is not in the spec", "204", "409")


def test_an_unknown_route_or_method_is_caught() -> None:
    one_violation(check_response("GET", "/v2/pods/{id}/metrics", 200, JSON, b"{}"), "route is not in the contract")
    one_violation(check_response("PUT", "/v2/pods/{id}", 200, JSON, b"{}"), "DELETE, GET, PATCH")
    one_violation(check_request("POST", "/v1/pods", {}, b"{}"), "route is not in the contract")


def test_headers_the_spec_lists_must_be_there_and_well_formed() -> None:
    found = check_response("GET", "/v2/pods", 200, {"Content-Type": "application/json"}, pods_answer())
    assert found == [
        "GET /v2/pods -> 200: header RateLimit is missing",
        "GET /v2/pods -> 200: header RateLimit-Policy is missing",
    ]
    assert (
        check_response("GET", "/v2/pods", 200, {"Content-Type": "application/json"}, pods_answer(), all_headers=False)
        == []
    )
    found = check_response(
        "GET", "/v2/pods", 429, {**PROBLEM, "Retry-After": "Sat, 28 Nov 2026 20:00:00 GMT"}, problem(429)
    )
    one_violation(found, "Retry-After", "not of type 'integer'")
    one_violation(check_response("GET", "/v2/pods", 429, PROBLEM, problem(429)), "header Retry-After is missing")
    assert check_response("GET", "/v2/pods", 429, {**PROBLEM, "retry-after": "7"}, problem(429)) == []
    # a 401 answers whoever asked, with no quota to report
    assert check_response("GET", "/v2/pods", 401, {"Content-Type": "application/problem+json"}, problem(401)) == []


def test_errors_are_problem_json_with_their_own_status() -> None:
    one_violation(
        check_response("POST", "/v2/pods/{id}/action", 409, JSON, problem(409)), "the spec has application/problem+json"
    )
    one_violation(check_response("POST", "/v2/pods/{id}/action", 409, PROBLEM, problem(400)), "says status 400")
    found = check_response("GET", "/v2/pods/{id}", 404, PROBLEM, b'{"error": "not found"}')
    assert any("'title' is a required" in v for v in found) and any("'detail'" in v for v in found), found
    one_violation(check_response("GET", "/v2/pods/{id}", 404, PROBLEM, b"<html>404</html>"), "not JSON")


def test_no_content_means_no_body_and_content_means_a_body() -> None:
    one_violation(check_response("DELETE", "/v2/pods/{id}", 204, RATE, b"{}"), "carries a body of 2 bytes")
    one_violation(check_response("GET", "/v2/pods", 200, JSON, b""), "has no body")


def test_log_events_are_checked_one_by_one() -> None:
    headers = {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "Connection": "keep-alive",
        "X-Accel-Buffering": "no",
        **RATE,
    }
    good = 'id: 2026-11-28T20:00:00Z\ndata: {"ts": "2026-11-28T20:00:00Z", "source": "system", "line": "pulling"}\n\n'
    assert check_response("GET", "/v2/pods/{id}/logs", 200, headers, good + ": keep-alive\n\n" + 'data: {"ts') == []
    bad = 'data: {"ts": "2026-11-28T20:00:01Z", "source": "kernel", "line": "oops"}\n\n'
    one_violation(check_response("GET", "/v2/pods/{id}/logs", 200, headers, good + bad), "event 2", "'kernel'")
    del headers["X-Accel-Buffering"]
    one_violation(check_response("GET", "/v2/pods/{id}/logs", 200, headers, good), "X-Accel-Buffering")


# -- requests -----------------------------------------------------------------------------------------------------


def test_a_good_request_keeps_the_contract() -> None:
    create = {
        "name": "sweep",
        "image": "runpod/pytorch:2.4.0",
        "gpu": {"id": "NVIDIA A100 80GB PCIe", "count": 2},
        "cloud": "COMMUNITY",
        "dataCenterIds": ["EU-RO-1"],
        "disk": 40,
        "mounts": {"persistent": {"size": 50, "path": "/workspace"}},
        "ports": ["22/tcp"],
        "env": {"A": "1"},
        "startSsh": True,
    }
    assert check_request("POST", "/v2/pods", {}, json.dumps(create)) == []
    assert check_request("POST", "/v2/pods/{id}/action", {}, b'{"action": "stop"}') == []
    assert check_request("PATCH", "/v2/pods/{id}", {}, b'{"name": "renamed", "locked": true}') == []
    assert check_request("PUT", "/v2/account/ssh-keys", {}, b'{"keys": ["ssh-ed25519 AAAAC3Nza me@host"]}') == []
    assert check_request("GET", "/v2/pods", {"includeClusterPods": ["true"]}, None) == []


def test_a_body_field_the_spec_does_not_define_is_caught_by_name() -> None:
    one_violation(check_request("POST", "/v2/pods/{id}/action", {}, b'{"action": "stop", "bogus": 1}'), "'bogus'")
    one_violation(
        check_request("PATCH", "/v2/pods/{id}", {}, b'{"name": "x", "interruptible": true}'), "'interruptible'"
    )
    found = check_request("POST", "/v2/pods", {}, b'{"name": "x", "image": "i", "gpu": {"id": "g", "bidPerGpu": 0.2}}')
    assert any("$.gpu" in v and "'bidPerGpu'" in v for v in found), found
    one_violation(check_request("PUT", "/v2/account/ssh-keys", {}, b'{"keys": [], "merge": true}'), "'merge'")


def test_a_wrong_request_type_or_enum_or_missing_field_is_caught() -> None:
    one_violation(check_request("POST", "/v2/pods/{id}/action", {}, b'{"action": "resume"}'), "'resume' is not one of")
    one_violation(check_request("POST", "/v2/pods/{id}/action", {}, b"{}"), "'action' is a required")
    found = check_request("POST", "/v2/pods", {}, b'{"name": "x", "image": "i", "disk": "20", "gpu": {"id": "g"}}')
    assert any("$.disk" in v and "not of type 'integer'" in v for v in found), found
    one_violation(check_request("POST", "/v2/pods", {}, b'{"name": "x", "gpu": {"id": "g"}}'), "'image' is a required")
    one_violation(check_request("PUT", "/v2/account/ssh-keys", {}, b'{"keys": ["not a key"]}'), "does not match")


def test_a_body_where_there_is_none_or_none_where_one_is_required() -> None:
    one_violation(check_request("GET", "/v2/pods", {}, b'{"a": 1}'), "sends a body")
    one_violation(check_request("POST", "/v2/pods/{id}/action", {}, b""), "requires one")
    one_violation(check_request("POST", "/v2/pods/{id}/action", {}, b"stop"), "not JSON")
    found = check_request("POST", "/v2/pods/{id}/action", {}, b'{"action": "stop"}', {"Authorization": "Bearer k"})
    one_violation(found, "without a Content-Type")


def test_query_parameters_are_held_to_their_types() -> None:
    one_violation(check_request("GET", "/v2/pods", {"limit": ["5"]}), "'limit' is not in the spec")
    one_violation(check_request("GET", "/v2/pods", {"includeClusterPods": ["yes"]}), "not of type 'boolean'")
    one_violation(check_request("GET", "/v2/pods/{id}/logs", {"tail": ["5001"]}), "maximum of 5000")
    one_violation(check_request("GET", "/v2/pods/{id}/logs", {"tail": ["1", "2"]}), "given 2 times")
    one_violation(check_request("GET", "/v2/pods/{id}/logs", {"source": ["stderr"]}), "'stderr'")
    query = {"include": ["AVAILABILITY"], "product": ["POD"], "count": ["2"], "cloud": ["SECURE"]}
    assert check_request("GET", "/v2/catalog/gpus", query) == []
    # a comma-separated list (style form, not exploded) is taken apart before its items are checked
    one_violation(check_request("GET", "/v2/catalog/gpus", {**query, "countryCodes": ["RO,usa"]}), "'usa'")
    one_violation(check_request("GET", "/v2/billing/pods", {"bucketSize": ["fortnight"]}), "'fortnight'")


def test_request_headers_need_a_bearer_key_which_is_never_quoted() -> None:
    key = "rpa_" + "7" * 40
    secret.register(key)
    found = check_request("GET", "/v2/pods", {}, None, {"Authorization": f"Basic {key}"})
    assert key not in one_violation(found, "Authorization: Bearer")
    assert check_request("GET", "/v2/pods", {}, None, {"authorization": f"Bearer {key}"}) == []
    found = check_request("GET", "/v2/pods/{id}/logs", {}, None, {"Authorization": "Bearer k", "Last-Event-ID": "3"})
    one_violation(found, "Last-Event-ID", "date-time")


def test_a_secret_in_a_wrong_value_is_masked() -> None:
    token = "hf_" + "s" * 30
    secret.register(token)
    found = check_request(
        "POST", "/v2/pods", {}, json.dumps({"name": "x", "image": "i", "gpu": {"id": "g"}, "env": {"T": [token]}})
    )
    assert found and all(token not in v for v in found), found


# -- the listener on the simulator's exchanges --------------------------------------------------------------------


def seen(
    method: str,
    path: str,
    route: str | None,
    status: int,
    response_body: bytes = b"",
    request_body: bytes = b"",
    *,
    request_headers: dict[str, str] | None = None,
    response_headers: dict[str, str] | None = None,
    fault: bool = False,
) -> Exchange:
    """One exchange as the simulator records it; by default podtui's request, with its key, answered with JSON."""
    return Exchange(
        method=method,
        path=path,
        query={},
        route=route,
        request_headers={"User-Agent": "podtui/0.1.0", "Authorization": "Bearer k"}
        if request_headers is None
        else request_headers,
        request_body=request_body,
        status=status,
        response_headers=dict(JSON) if response_headers is None else response_headers,
        response_body=response_body,
        fault=fault,
    )


def test_podtuis_requests_and_the_simulators_answers_are_both_checked() -> None:
    podtui = {"User-Agent": "podtui/0.1.0", "Authorization": "Bearer k", "Content-Type": "application/json"}
    bad_request = seen(
        "POST",
        "/v2/pods/p1/action",
        "/v2/pods/{id}/action",
        400,
        problem(400),
        b'{"action": "x"}',
        request_headers=podtui,
        response_headers=dict(PROBLEM),
    )
    one_violation(check_exchange(bad_request), "request body", "'x' is not one of")
    # a test's own request: only the answer counts
    bad_answer = seen(
        "GET",
        "/v2/pods",
        "/v2/pods",
        200,
        pods_answer(a_pod(status="PAUSED")),
        request_headers={"User-Agent": "python-httpx/0.28"},
    )
    one_violation(check_exchange(bad_answer), "'PAUSED'")


def test_what_the_listener_leaves_alone() -> None:
    wrong = pods_answer(a_pod(status="PAUSED"))
    assert (
        check_exchange(seen("POST", "/graphql", "/graphql", 200, b'{"data": {}}', b'{"query": "{ myself { id } }"}'))
        == []
    )
    assert check_exchange(seen("GET", "/v2/pods", "/v2/pods", 200, wrong, fault=True, request_headers={})) == []
    # an unknown path has no contract for its answer; podtui asking for one is still caught
    assert check_exchange(seen("GET", "/v2/nowhere", None, 404, problem(404), request_headers={})) == []
    one_violation(check_exchange(seen("GET", "/v2/nowhere", None, 404, problem(404))), "route is not in the contract")
    one_violation(check_exchange(seen("GET", "/v1/pods", None, 404, b"")), "neither GraphQL nor a REST v2 route")


def test_the_watch_collects_and_never_raises_into_the_simulator() -> None:
    watch = ExchangeWatch()
    watch(seen("GET", "/v2/pods", "/v2/pods", 200, pods_answer(a_pod())))
    assert watch.violations == []
    watch(seen("GET", "/v2/pods", "/v2/pods", 200, pods_answer(a_pod(cost=None))))
    watch(seen("GET", "/v2/pods", "/v2/pods", 200, b"[1, 2"))
    assert len(watch.violations) == 2 and "2 REST v2 contract violation(s)" in watch.report()

    def broken(ex: object) -> list[str]:
        raise RuntimeError("boom")

    careful = ExchangeWatch(broken)
    careful(seen("GET", "/v2/pods", "/v2/pods", 200))
    one_violation(careful.violations, "checking it failed: RuntimeError: boom")


@pytest.mark.parametrize("route", sorted(contract().routes))
def test_every_route_has_a_default_error_and_bearer_auth(route: str) -> None:
    for method, op in contract().routes[route].items():
        assert "default" in op["responses"], (method, route)
        assert op["auth"] == ["bearerAuth"], (method, route)


@pytest.mark.parametrize(
    ("method", "route"),
    sorted((m, r) for r, methods in contract().routes.items() for m, op in methods.items() if op["requestBody"]),
)
def test_every_request_body_in_the_contract_is_closed(method: str, route: str) -> None:
    """The spec closes every body podtui may send, so a field it does not define is caught on every route."""
    found = check_request(method, route, {}, b'{"notInTheSpec": 1}')
    assert any("'notInTheSpec'" in v for v in found), found
