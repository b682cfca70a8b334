"""The simulator's REST v2 billing routes (docs/runpod-facts.md#billing): every answer keeps RunPod's schema; the
window is snapped to its buckets, or is the last N of them; the filters narrow; what RunPod refuses is a 400
problem in words; keys, rate limits and faults as on every other route. The clock is frozen at 2026-11-30 09:00 UTC,
a Monday."""

from __future__ import annotations

import itertools
import logging
from typing import Any

import pytest

from podtui.sim import rest_v2
from podtui.sim.problem import Answer
from podtui.sim.server import SimApiServer
from podtui.sim.v2_request import Call
from tests.helpers.contract import ExchangeWatch
from tests.helpers.sim import DEMO_IDS
from tests.spend_sim.conftest import Billing

ROUTES = (
    "/v2/billing",
    "/v2/billing/pods",
    "/v2/billing/network-volumes",
    "/v2/billing/serverless",
    "/v2/billing/endpoints",
    "/v2/billing/clusters",
)
PER_RESOURCE = {"/v2/billing/pods": "podId", "/v2/billing/network-volumes": "networkVolumeId"}


def spans(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(r["startTime"], r["endTime"]) for r in body["records"]]


def window(body: dict[str, Any]) -> tuple[str, str, str]:
    q = body["metadata"]["query"]
    return q["startTime"], q["endTime"], q["bucketSize"]


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_keeps_the_schema(billing: Billing, route: str) -> None:
    for params in ({}, {"bucketSize": "hour", "lastN": "30"}, {"bucketSize": "week"}, {"bucketSize": "year"}):
        body = billing.ok(route, **params)
        assert body["metadata"]["recordCount"] == len(body["records"])


def test_the_routes_the_simulator_has_nothing_of_answer_no_records(billing: Billing) -> None:
    for route, counted in (
        ("/v2/billing/serverless", "uniqueServerlessCount"),
        ("/v2/billing/clusters", "uniqueClusterCount"),
        ("/v2/billing/endpoints", None),
    ):
        body = billing.ok(route, lastN="3")
        assert body["records"] == [] and body["metadata"]["recordCount"] == 0
        assert set(body["metadata"]["totals"].values()) == {0}
        assert counted is None or body["metadata"][counted] == 0
        assert window(body) == ("2026-11-28T00:00:00Z", "2026-12-01T00:00:00Z", "day")
    body = billing.ok("/v2/billing/serverless", serverlessId="ep1", lastN="1")
    assert body["metadata"]["query"]["serverlessId"] == "ep1"


def test_the_default_window_is_the_last_30_days_by_day(billing: Billing) -> None:
    body = billing.ok("/v2/billing")
    assert window(body) == ("2026-10-31T00:00:00Z", "2026-12-01T00:00:00Z", "day")
    assert len(body["records"]) == 31  # one per day, empty days too
    assert spans(body)[0] == ("2026-10-31T00:00:00Z", "2026-11-01T00:00:00Z")
    assert spans(body)[-1] == ("2026-11-30T00:00:00Z", "2026-12-01T00:00:00Z")


@pytest.mark.parametrize(
    ("params", "resolved", "count"),
    [
        # snapped down and up to the bucket they land in
        ({"startTime": "2026-11-28T10:30:00Z", "endTime": "2026-11-29T05:00:00Z"}, ("2026-11-28", "2026-11-30"), 2),
        # already on a boundary: not widened
        ({"startTime": "2026-11-28T00:00:00Z", "endTime": "2026-11-29T00:00:00Z"}, ("2026-11-28", "2026-11-29"), 1),
        # an offset is read as the instant it names: 01:30+02:00 is 23:30 the day before
        (
            {"startTime": "2026-11-28T01:30:00+02:00", "endTime": "2026-11-28T12:00:00.25Z"},
            ("2026-11-27", "2026-11-29"),
            2,
        ),
        # only a start: up to now, snapped up
        ({"startTime": "2026-11-29T12:00:00Z"}, ("2026-11-29", "2026-12-01"), 2),
    ],
)
def test_days_are_snapped_to_midnight_utc(
    billing: Billing, params: dict[str, str], resolved: tuple[str, str], count: int
) -> None:
    body = billing.ok("/v2/billing", **params)
    start, end, size = window(body)
    assert (start, end, size) == (f"{resolved[0]}T00:00:00Z", f"{resolved[1]}T00:00:00Z", "day")
    assert len(body["records"]) == count and spans(body)[0][0] == start and spans(body)[-1][1] == end


@pytest.mark.parametrize(
    ("size", "start", "end", "resolved"),
    [
        ("hour", "2026-11-30T06:20:00Z", "2026-11-30T08:00:00Z", ("2026-11-30T06:00:00Z", "2026-11-30T08:00:00Z")),
        ("hour", "2026-11-30T06:00:00Z", "2026-11-30T08:00:01Z", ("2026-11-30T06:00:00Z", "2026-11-30T09:00:00Z")),
        # weeks begin on Monday: 2026-11-18 is a Wednesday
        ("week", "2026-11-18T12:00:00Z", "2026-11-24T00:00:00Z", ("2026-11-16T00:00:00Z", "2026-11-30T00:00:00Z")),
        ("month", "2026-10-15T00:00:00Z", "2026-11-15T00:00:00Z", ("2026-10-01T00:00:00Z", "2026-12-01T00:00:00Z")),
        ("month", "2026-12-15T00:00:00Z", "2027-01-02T00:00:00Z", ("2026-12-01T00:00:00Z", "2027-02-01T00:00:00Z")),
        ("year", "2026-03-01T00:00:00Z", "2026-11-30T00:00:00Z", ("2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z")),
    ],
)
def test_each_bucket_size_snaps_to_its_own_boundaries(
    billing: Billing, size: str, start: str, end: str, resolved: tuple[str, str]
) -> None:
    body = billing.ok("/v2/billing", bucketSize=size, startTime=start, endTime=end)
    assert window(body) == (*resolved, size)
    edges = spans(body)
    assert edges[0][0] == resolved[0] and edges[-1][1] == resolved[1]
    assert all(a[1] == b[0] for a, b in itertools.pairwise(edges))  # contiguous, no gap or overlap


@pytest.mark.parametrize(
    ("size", "n", "resolved"),
    [
        ("hour", "3", ("2026-11-30T07:00:00Z", "2026-11-30T10:00:00Z")),  # ends with the current hour
        ("day", "1", ("2026-11-30T00:00:00Z", "2026-12-01T00:00:00Z")),
        ("week", "2", ("2026-11-23T00:00:00Z", "2026-12-07T00:00:00Z")),
        ("month", "13", ("2025-11-01T00:00:00Z", "2026-12-01T00:00:00Z")),
        ("year", "2", ("2025-01-01T00:00:00Z", "2027-01-01T00:00:00Z")),
    ],
)
def test_last_n_is_the_buckets_up_to_the_current_one(
    billing: Billing, size: str, n: str, resolved: tuple[str, str]
) -> None:
    for route in ("/v2/billing", "/v2/billing/pods"):
        body = billing.ok(route, bucketSize=size, lastN=n)
        assert window(body) == (*resolved, size)
    assert len(billing.ok("/v2/billing", bucketSize=size, lastN=n)["records"]) == int(n)


def test_pods_are_filtered_by_id(billing: Billing) -> None:
    whole = billing.ok("/v2/billing/pods", lastN="5")
    assert whole["metadata"]["query"]["podId"] is None
    assert whole["metadata"]["uniquePodCount"] == len({r["podId"] for r in whole["records"]}) > 1
    one = billing.ok("/v2/billing/pods", lastN="5", podId=DEMO_IDS["stopped"])
    assert one["records"] and {r["podId"] for r in one["records"]} == {DEMO_IDS["stopped"]}
    assert one["records"] == [r for r in whole["records"] if r["podId"] == DEMO_IDS["stopped"]]
    assert one["metadata"]["query"]["podId"] == DEMO_IDS["stopped"] and one["metadata"]["uniquePodCount"] == 1
    assert one["metadata"]["totals"]["totalAmount"] == pytest.approx(sum(r["totalAmount"] for r in one["records"]))
    nobody = billing.ok("/v2/billing/pods", lastN="5", podId="nosuchpod")
    assert nobody["records"] == [] and nobody["metadata"]["uniquePodCount"] == 0


def test_volumes_are_filtered_by_id(billing: Billing) -> None:
    whole = billing.ok("/v2/billing/network-volumes", lastN="2")
    assert {r["networkVolumeId"] for r in whole["records"]} >= {"models-vol", "d8k2x9m4qa", "c4p7n1v8ks"}
    one = billing.ok("/v2/billing/network-volumes", lastN="2", networkVolumeId="c4p7n1v8ks")
    assert [r["networkVolumeId"] for r in one["records"]] == ["c4p7n1v8ks", "c4p7n1v8ks"]
    assert one["metadata"]["uniqueNetworkVolumeCount"] == 1
    assert all(r["standardAmount"] == 0 and r["highPerformanceAmount"] > 0 for r in one["records"])  # its tier


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"lastN": "3", "startTime": "2026-11-01T00:00:00Z"}, "lastN"),
        ({"lastN": "3", "endTime": "2026-11-01T00:00:00Z"}, "lastN"),
        ({"bucketSize": "fortnight"}, "bucketSize"),
        ({"bucketSize": "DAY"}, "bucketSize"),
        ({"lastN": "0"}, "lastN"),
        ({"lastN": "-2"}, "lastN"),
        ({"lastN": "2.5"}, "lastN"),
        ({"lastN": "many"}, "lastN"),
        ({"startTime": "yesterday"}, "startTime"),
        ({"startTime": "2026-11-01"}, "startTime"),  # a date without its time
        ({"startTime": "2026-11-01T00:00:00"}, "startTime"),  # no zone: which instant is unknown
        ({"endTime": "2026-02-30T00:00:00Z"}, "endTime"),  # no such day
        ({"endTime": "2026-11-01T25:00:00Z"}, "endTime"),
        ({"startTime": "2026-11-02T00:00:00Z", "endTime": "2026-11-01T00:00:00Z"}, "endTime"),
        ({"startTime": "2026-11-02T00:00:00Z", "endTime": "2026-11-02T00:00:00Z"}, "endTime"),
        ({"startTime": "2027-01-01T00:00:00Z"}, "endTime"),  # a start after now, with no end: the end is now
        ({"startTime": "0001-01-01T00:00:00Z", "bucketSize": "hour"}, "buckets"),  # too many to answer
        ({"lastN": "1000000000", "bucketSize": "hour"}, "buckets"),
        ({"startTime": "0001-01-01T00:30:00+01:00"}, "startTime"),  # before year 1 in UTC
    ],
)
def test_what_runpod_refuses_is_a_400_problem_in_words(billing: Billing, params: dict[str, str], named: str) -> None:
    for route in ROUTES:
        r = billing.get(route, **params)
        assert r.status_code == 400, (route, r.text)
        assert r.headers["content-type"] == "application/problem+json"
        problem = r.json()
        assert problem["status"] == 400 and problem["title"] == "Bad Request"
        assert named in problem["detail"] or any(named in e for e in problem.get("errors", [])), problem


def test_a_parameter_given_twice_is_refused(billing: Billing) -> None:
    r = billing.http.get("/v2/billing", params=[("bucketSize", "day"), ("bucketSize", "hour")])
    assert r.status_code == 400 and "bucketSize" in r.json()["detail"]


def test_the_years_before_1000_are_written_in_four_digits(billing: Billing) -> None:
    body = billing.ok(
        "/v2/billing", bucketSize="year", startTime="0999-06-01T00:00:00Z", endTime="1001-01-01T00:00:00Z"
    )
    assert spans(body)[0] == ("0999-01-01T00:00:00Z", "1000-01-01T00:00:00Z") and len(body["records"]) == 2


def test_keys_rate_limits_and_faults_as_on_every_route(sim: SimApiServer) -> None:
    nobody, stranger = Billing(sim, key=""), Billing(sim, key="wrong")
    pod_key = Billing(sim, key=sim.world.pods[DEMO_IDS["train"]].api_key)  # a pod's own key: its pod only
    client = Billing(sim)
    for route in ROUTES:
        assert nobody.get(route).status_code == 401 and stranger.get(route).status_code == 401
        own = pod_key.get(route)
        assert own.status_code == 403 and own.headers["content-type"] == "application/problem+json"
        ok = client.get(route)
        assert ok.headers.get("RateLimit") and ok.headers.get("RateLimit-Policy")
        sim.faults.add("retry_after", 9, times=1)
        limited = client.get(route)
        assert limited.status_code == 429 and limited.headers["Retry-After"] == "9"
        sim.faults.add("server_error", 503, times=1)
        assert client.get(route).status_code == 503
        assert client.get(route).status_code == 200, route  # each fault once only


@pytest.mark.parametrize(
    "raw",
    [
        "²",
        "+-3",
        "-+3",
        "\uff13",
        "\u0663",
        " 2 ",
        "2 ",
        "\t2",
        "1e3",
        "0x10",
        "",
        "+",
        "1_000",
        "1234567890123",
        "2\n",
    ],
)
def test_a_last_n_that_is_not_plain_ascii_digits_is_a_400(billing: Billing, raw: str) -> None:
    """str.isdigit() takes superscripts and other scripts' digits, which int() refuses or reads: every one is a 400
    in words, never a dropped connection, and nothing around the digits is read past."""
    for route in ("/v2/billing", "/v2/billing/pods"):
        r = billing.get(route, lastN=raw)
        assert r.status_code == 400, (raw, r.text)
        assert r.headers["content-type"] == "application/problem+json"
        assert "lastN" in r.json()["detail"]


def test_a_last_n_with_a_plus_sign_is_read(billing: Billing) -> None:
    assert window(billing.ok("/v2/billing", lastN="+2")) == window(billing.ok("/v2/billing", lastN="2"))


@pytest.mark.parametrize(
    ("params", "resolved"),
    [
        # now is 09:00:00 exactly: a start of now, and the default end of now, snap to today's bucket
        ({"startTime": "2026-11-30T09:00:00Z"}, ("2026-11-30", "2026-12-01")),
        ({"startTime": "2026-11-30T12:00:00Z"}, ("2026-11-30", "2026-12-01")),  # later today: still today
        # within one day, the end before the start: both snap to that day
        ({"startTime": "2026-11-28T10:00:00Z", "endTime": "2026-11-28T09:30:00Z"}, ("2026-11-28", "2026-11-29")),
    ],
)
def test_a_window_is_judged_once_snapped(billing: Billing, params: dict[str, str], resolved: tuple[str, str]) -> None:
    body = billing.ok("/v2/billing", **params)
    assert window(body) == (f"{resolved[0]}T00:00:00Z", f"{resolved[1]}T00:00:00Z", "day")
    assert len(body["records"]) == 1


def test_an_end_before_the_default_start_says_so(billing: Billing) -> None:
    r = billing.get("/v2/billing", endTime="2026-10-01T00:00:00Z")
    assert r.status_code == 400 and "default start, 30 days ago" in r.json()["detail"]
    r = billing.get("/v2/billing", startTime="2026-12-01T00:00:00Z")  # tomorrow's bucket, with no end
    assert r.status_code == 400 and "after the default end, now" in r.json()["detail"]


def test_a_handler_that_fails_is_a_500_problem_and_a_logged_traceback(
    billing: Billing, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug in a route is seen (a 500 in words, its traceback in the log), not a connection dropped unanswered."""

    def broken(call: Call) -> Answer:
        raise ZeroDivisionError("a bug")

    monkeypatch.setitem(rest_v2.ROUTES["/v2/billing"], "GET", broken)
    with caplog.at_level(logging.ERROR, logger="podtui.sim"):
        r = billing.http.get("/v2/billing")
    assert r.status_code == 500 and r.headers["content-type"] == "application/problem+json"
    assert r.json()["status"] == 500 and "/v2/billing" in r.json()["detail"]
    assert any(rec.exc_info and rec.exc_info[0] is ZeroDivisionError for rec in caplog.records)
    monkeypatch.undo()
    assert billing.http.get("/v2/billing").status_code == 200  # the server answers on


def test_a_failure_outside_the_routes_is_a_500_problem_too(
    sim: SimApiServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    rest_v2_contract: ExchangeWatch,
) -> None:
    def broken(*args: object, **kw: object) -> Answer:
        raise RuntimeError("a bug")

    monkeypatch.setattr(sim, "rest", broken)
    client = Billing(sim)
    with caplog.at_level(logging.ERROR, logger="podtui.sim"):
        r = client.http.get("/v2/billing")
    client.http.close()
    assert r.status_code == 500 and r.headers["content-type"] == "application/problem+json"
    assert any(rec.exc_info and rec.exc_info[0] is RuntimeError for rec in caplog.records)
    # failing before the rate limit was counted, it has no RateLimit headers: the one way it breaks the contract
    assert rest_v2_contract.violations and all("RateLimit" in v for v in rest_v2_contract.violations)
    rest_v2_contract.violations.clear()
