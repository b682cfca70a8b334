"""Every fault switch of the simulated API ends in a clear error, never a crash or a wrong figure."""

from __future__ import annotations

import time

import pytest

from podtui.core.api import (
    ApiAuthError,
    ApiConflict,
    ApiForbidden,
    ApiNotFound,
    ApiQueryError,
    ApiResponseError,
    ApiUnavailable,
    V2Api,
)
from podtui.core.billing import BillingQuery
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS


@pytest.mark.parametrize("status", [500, 502, 503])
def test_gateway_error_pages(api: V2Api, sim: SimApiServer, status: int) -> None:
    sim.faults.add("status", status, times=1)
    with pytest.raises(ApiUnavailable, match=rf"^RunPod's API had a server error \({status}\)$") as e:
        api.fetch_snapshot()
    assert e.value.status == status and not e.value.not_sent
    assert api.fetch_snapshot().pods  # next poll is fine


def test_timeout(sim: SimApiServer) -> None:
    api = V2Api(sim.api_key, sim.url, timeout_s=1.0)
    sim.faults.add("hang", 2.5, times=1)
    t = time.monotonic()
    with pytest.raises(ApiUnavailable, match="did not answer GET /v2/pods within 1 s") as e:
        api.fetch_snapshot()
    assert e.value.status is None and not e.value.not_sent  # it may have arrived: only the answer is missing
    assert time.monotonic() - t < 2.0


def test_latency_under_the_timeout_is_fine(api: V2Api, sim: SimApiServer) -> None:
    sim.faults.add("latency", 0.3, times=1)
    assert len(api.fetch_snapshot().pods) == 5


def test_unauthorized(api: V2Api, sim: SimApiServer) -> None:
    sim.faults.add("unauthorized", times=1)
    with pytest.raises(ApiAuthError, match="401") as e:
        api.fetch_snapshot()
    assert sim.api_key not in str(e.value)


def test_wrong_key(sim: SimApiServer) -> None:
    with pytest.raises(ApiAuthError):
        V2Api("rpa_WRONGWRONGWRONGWRONG", sim.url).fetch_snapshot()


def test_problem_answers(api: V2Api, sim: SimApiServer) -> None:
    """REST v2 says a refusal as an RFC 9457 problem: its status and detail, in words."""
    sim.faults.add("conflict", "Something went wrong. Please try again later.", times=1)
    with pytest.raises(ApiConflict, match=r"RunPod refused GET /v2/pods \(409\): Something went wrong") as e:
        api.fetch_snapshot()
    assert e.value.status == 409 and isinstance(e.value, ApiQueryError)
    with pytest.raises(ApiNotFound, match=r"\(404\): pod not found"):
        api.fetch_pod("nosuchpod")
    with pytest.raises(ApiForbidden, match=r"\(403\)"):
        V2Api(sim.world.pods[DEMO_IDS["idle"]].api_key, sim.url, timeout_s=5.0).fetch_snapshot()


def test_graphql_errors_leave_the_pods_and_lose_only_the_balance(api: V2Api, sim: SimApiServer) -> None:
    """GraphQL `errors` can only come from the balance query now: the poll goes on without the balance."""
    sim.faults.add("graphql_error", "Something went wrong. Please try again later.", times=1)
    snap = api.fetch_snapshot()
    assert len(snap.pods) == 5 and snap.account.balance is None
    said = "RunPod did not give it: RunPod refused the request: Something went wrong. Please try again later."
    assert snap.account.unknown_why == said


def test_truncated_json(api: V2Api, sim: SimApiServer) -> None:
    sim.faults.add("malformed", times=1)
    with pytest.raises(ApiResponseError, match="not JSON"):
        api.fetch_snapshot()


def test_partial_payload_keeps_what_it_can(api: V2Api, sim: SimApiServer) -> None:
    sim.faults.add("partial", times=1, only="GET /v2/pods")
    snap = api.fetch_snapshot()
    assert len(snap.pods) == 4  # the record without an id is dropped, the rest kept
    assert any("cost is not a number" in p for p in snap.problems)
    assert any("actions is not a list" in p for p in snap.problems)
    assert any("createdAt is not a time" in p for p in snap.problems)
    assert any("no id" in p for p in snap.problems)
    odd = next(p for p in snap.pods if p.id == DEMO_IDS["train"])  # its cost and actions were garbled
    assert odd.cost_per_hr is None and odd.actions == frozenset()
    assert snap.account.balance == pytest.approx(23.87)  # the balance is its own answer
    sim.faults.add("partial", times=1, only="podtuiBalance")
    snap = api.fetch_snapshot()
    assert len(snap.pods) == 5 and snap.account.balance is None
    assert snap.account.unknown_why == "RunPod's answer had no usable balance"


def test_unknown_status(api: V2Api, sim: SimApiServer) -> None:
    sim.faults.add("unknown_status", "HIBERNATING", times=1)
    snap = api.fetch_snapshot()
    assert any(p.state == "? HIBERNATING" for p in snap.pods)


def test_connection_refused() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(ApiUnavailable, match="cannot reach"):
        V2Api("rpa_whateverwhateverwhat", f"http://127.0.0.1:{port}", timeout_s=5).fetch_snapshot()


def test_control_endpoint_needs_the_key(sim: SimApiServer) -> None:
    import json
    import urllib.error
    import urllib.request

    body = json.dumps({"add": [{"kind": "status", "value": 500, "times": 1}]}).encode()
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(urllib.request.Request(f"{sim.url}/_sim/faults", body))
    req = urllib.request.Request(f"{sim.url}/_sim/faults", body, {"Authorization": f"Bearer {sim.api_key}"})
    urllib.request.urlopen(req).read()
    bad = urllib.request.Request(
        f"{sim.url}/_sim/faults", b'{"add": [{"kind": "meteor"}]}', {"Authorization": f"Bearer {sim.api_key}"}
    )
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(bad)
    assert e.value.code == 400


@pytest.mark.parametrize(
    "body",
    [
        '{"errors": []}',
        '{"errors": "x"}',
        '{"title": "Bad Request", "status": 400}',
        "null",
        "5",
        '{"pods": "none"}',
        '{"data": {"myself": {"pods": [], "clientBalance": 1}}}',
    ],
)
def test_unusable_answers_to_the_list(api: V2Api, sim: SimApiServer, body: str) -> None:
    sim.faults.add("raw", body, times=1, only="GET /v2/pods")
    with pytest.raises(ApiResponseError, match="RunPod's answer was incomplete"):
        api.fetch_snapshot()


@pytest.mark.parametrize(
    "body",
    ['{"errors": []}', '{"errors": "x"}', '{"errors": [{}]}', "null", "5", '{"data": {"myself": null}}'],
)
def test_unusable_answers_to_the_balance(api: V2Api, sim: SimApiServer, body: str) -> None:
    sim.faults.add("raw", body, times=1, only="podtuiBalance")
    snap = api.fetch_snapshot()
    assert len(snap.pods) == 5 and snap.account.balance is None
    assert snap.account.unknown_why  # in words, shown after "balance unknown:"


def test_non_finite_numbers_do_not_blank_the_list(api: V2Api, sim: SimApiServer) -> None:
    pods = (
        '{"pods": [{"id": "a1", "name": "ok", "status": "RUNNING", "cost": "1e999",'
        ' "gpu": {"id": "NVIDIA GeForce RTX 3090", "count": NaN}, "runtime": {"uptime": Infinity}}]}'
    )
    balance = '{"data": {"myself": {"id": "u", "clientBalance": NaN, "currentSpendPerHr": Infinity}}}'
    sim.faults.add("raw", pods, times=1, only="GET /v2/pods")
    sim.faults.add("raw", balance, times=1, only="podtuiBalance")
    snap = api.fetch_snapshot()
    assert snap.pods[0].name == "ok" and snap.pods[0].cost_per_hr is None and snap.pods[0].uptime_s is None
    assert any("pod a1.gpu: count is not finite" in p for p in snap.problems)
    assert snap.account.balance is None and snap.account.spend_per_hr is None
    assert len(snap.problems) >= 3


def test_account_keys_missing_is_refused(api: V2Api, sim: SimApiServer) -> None:
    from podtui.core.api import ApiResponseError as Err

    for body in ('{"keys": null}', '{"keys": ["ssh-ed25519 AAAA one", 5]}', "{}"):
        sim.faults.add("raw", body, times=1, only="GET /v2/account/ssh-keys")
        with pytest.raises(Err, match="did not include the account's SSH keys"):
            api.account_keys()
    sim.world.set_pub_key("ssh-ed25519 AAAA one")
    assert api.account_keys() == "ssh-ed25519 AAAA one"


def test_timeout_does_not_keep_the_process_alive(sim: SimApiServer) -> None:
    import subprocess
    import sys

    sim.faults.add("hang", 20, times=1)
    code = (
        "import time, sys\nfrom podtui.core.api import V2Api\nfrom podtui.core.api.errors import ApiUnavailable\n"
        f"api = V2Api({sim.api_key!r}, {sim.url!r}, timeout_s=1)\n"
        "try:\n    api.fetch_snapshot()\nexcept ApiUnavailable:\n    print('gave up')\n"
    )
    t = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "gave up" and time.monotonic() - t < 8


def test_rate_limited_page(api: V2Api, sim: SimApiServer) -> None:
    from podtui.core.api.errors import ApiRateLimited

    sim.faults.add("status", 429, times=1)  # the HTML page carries Retry-After: 2
    with pytest.raises(ApiRateLimited, match="429") as e:
        api.fetch_snapshot()
    assert e.value.retry_after_s == 2
    assert api.fetch_snapshot().pods


def test_a_garbled_billing_answer_keeps_what_it_can(api: V2Api, sim: SimApiServer) -> None:
    """A billing record without its bucket or with a mistyped amount is skipped or counted as unknown, with a note
    naming it; the rest are kept (docs/spend.md#podtui-spend)."""
    query = BillingQuery(last_n=7)
    whole = api.pod_billing(query)
    sim.faults.add("partial", times=1, only="GET /v2/billing/pods")
    garbled = api.pod_billing(query)
    assert len(whole.records) >= 3
    assert 0 < len(garbled.records) < len(whole.records)  # those without a bucket or a total are left out
    assert garbled.problems
    assert all("\x1b" not in p for p in garbled.problems)
