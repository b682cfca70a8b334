"""Billing answers parsed strictly but forgivingly (a bad record skipped with a note, a wrong-typed answer an error in
words), queries checked before they are sent, and V2Api's billing calls over real HTTP against a scripted server
serving spec-shaped JSON and garbage."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from podtui.core.api.errors import ApiResponseError
from podtui.core.api.v2 import V2Api
from podtui.core.billing import (
    BillingQuery,
    parse_account_billing,
    parse_pod_billing,
    parse_time,
    parse_volume_billing,
    rfc3339,
)
from podtui.core.pod import PayloadError
from tests.helpers.scripted_api import Reply, ScriptedApi

DAY = "2026-06-01T00:00:00Z"
NEXT = "2026-06-02T00:00:00Z"


def pod_record(pod_id: object = "pod1", total: object = 12.34, **kw: object) -> dict[str, object]:
    return {
        "startTime": DAY,
        "endTime": NEXT,
        "podId": pod_id,
        "totalAmount": total,
        "gpuAmount": 11.1,
        "cpuAmount": 0,
        "diskAmount": 1.24,
        **kw,
    }


def account_record(total: object = 42.34) -> dict[str, object]:
    return {
        "startTime": DAY,
        "endTime": NEXT,
        "totalAmount": total,
        "podGpuAmount": 18.2,
        "podCpuAmount": 0,
        "podDiskAmount": 1.1,
        "storageStandardAmount": 0,
        "storageHighPerformanceAmount": 2.5,
        "serverlessGpuAmount": 12.6,
        "serverlessFeeAmount": 1.25,
        "endpointAmount": 3.21,
    }


def test_the_spec_example_reads_whole() -> None:
    bills = parse_account_billing(
        {
            "records": [account_record()],
            "metadata": {
                "query": {"startTime": DAY, "endTime": NEXT, "bucketSize": "day"},
                "recordCount": 1,
                "totals": {"totalAmount": 42.34},
            },
        }
    )
    (b,) = bills.records
    assert (b.total, b.pods, b.storage, b.serverless, b.endpoint) == (42.34, pytest.approx(19.3), 2.5, 13.85, 3.21)
    assert b.start == parse_time(DAY) and b.end - b.start == 86400
    assert bills.window == (parse_time(DAY), parse_time(NEXT)) and bills.bucket_size == "day" and bills.total == 42.34
    assert bills.problems == ()
    pods = parse_pod_billing({"records": [pod_record()], "metadata": {}})
    assert pods.records[0].compute == pytest.approx(11.1) and pods.records[0].disk == 1.24
    volumes = parse_volume_billing(
        {
            "records": [
                {
                    "startTime": DAY,
                    "endTime": NEXT,
                    "networkVolumeId": "v1",
                    "totalAmount": 5.79,
                    "standardAmount": 0,
                    "highPerformanceAmount": 5.79,
                }
            ]
        }
    )
    assert volumes.records[0].volume_id == "v1" and volumes.records[0].high_performance == 5.79


@pytest.mark.parametrize(
    "bad",
    [
        None,
        3,
        "text",
        [],
        pod_record(pod_id=None),
        pod_record(pod_id=""),
        pod_record(pod_id=7),
        pod_record(total=None),
        pod_record(total="lots"),
        pod_record(total=-1e12),
        pod_record(total=float("nan")),
        pod_record(total=1e12),
        pod_record(startTime="yesterday"),
        pod_record(startTime="2026-06-01T00:00:00"),
        pod_record(endTime=None),
        pod_record(startTime=NEXT, endTime=DAY),
        pod_record(startTime="x" * 10_000),
        {k: v for k, v in pod_record().items() if k != "totalAmount"},
    ],
)
def test_a_bad_record_is_skipped_with_a_note(bad: object) -> None:
    bills = parse_pod_billing({"records": [pod_record("good"), bad]})
    assert [r.pod_id for r in bills.records] == ["good"]
    assert bills.problems and bills.problems[-1].endswith("; skipped")


def test_a_wrong_typed_part_counts_as_nothing_with_a_note() -> None:
    bills = parse_pod_billing({"records": [pod_record(gpuAmount="eleven", diskAmount=True)]})
    (r,) = bills.records
    assert (r.total, r.gpu, r.disk) == (12.34, 0.0, 0.0)
    assert any("gpuAmount" in p for p in bills.problems)


@pytest.mark.parametrize("answer", [None, [], "records", {"records": None}, {"records": {"a": 1}}, {"data": []}])
def test_an_answer_that_is_not_a_record_list_is_refused(answer: object) -> None:
    with pytest.raises(PayloadError):
        parse_account_billing(answer)


def test_odd_metadata_is_ignored() -> None:
    bills = parse_account_billing({"records": [account_record()], "metadata": "soon"})
    assert bills.window is None and len(bills.records) == 1 and bills.problems
    bills = parse_account_billing(
        {"records": [], "metadata": {"query": {"startTime": 3}, "totals": {"totalAmount": "x"}}}
    )
    assert bills.window is None and bills.total is None


def test_queries_are_checked_and_written_as_runpod_takes_them() -> None:
    q = BillingQuery("day", start=parse_time(DAY), end=parse_time(NEXT))
    assert q.params() == {"bucketSize": "day", "startTime": DAY, "endTime": NEXT}
    assert BillingQuery("hour", last_n=24).params() == {"bucketSize": "hour", "lastN": 24}
    assert rfc3339(0) == "1970-01-01T00:00:00Z"
    for bad in (
        lambda: BillingQuery("fortnight"),  # type: ignore[arg-type]
        lambda: BillingQuery(last_n=0),
        lambda: BillingQuery(last_n=3, start=0.0),
        lambda: BillingQuery(start=10.0, end=5.0),
        lambda: BillingQuery(start=float("inf")),
    ):
        with pytest.raises(ValueError):
            bad()


@pytest.fixture
def scripted() -> Iterator[ScriptedApi]:
    server = ScriptedApi().start()
    yield server
    server.stop()


def test_v2api_asks_the_three_routes_with_the_query(scripted: ScriptedApi) -> None:
    api = V2Api("rpa_ScriptedTestKey0123456789", scripted.url, timeout_s=5.0)
    scripted.answer(Reply(200, {"records": [account_record()], "metadata": {}}))
    q = BillingQuery("day", start=parse_time(DAY), end=parse_time(NEXT))
    assert api.billing(q).records[0].total == 42.34
    scripted.answer(Reply(200, {"records": [pod_record(), "garbage"]}))
    pods = api.pod_billing(q, pod_id="pod1")
    assert [r.pod_id for r in pods.records] == ["pod1"] and len(pods.problems) == 1
    scripted.answer(Reply(200, {"records": []}))
    assert api.volume_billing(q, volume_id="v1").records == ()
    sent = [(s.path, {k: v[0] for k, v in s.query.items()}) for s in scripted.sent]
    assert sent[0] == ("/v2/billing", {"bucketSize": "day", "startTime": DAY, "endTime": NEXT})
    assert sent[1][0] == "/v2/billing/pods" and sent[1][1]["podId"] == "pod1"
    assert sent[2][0] == "/v2/billing/network-volumes" and sent[2][1]["networkVolumeId"] == "v1"


@pytest.mark.parametrize("body", [b"<html>oops</html>", b"[]", b'{"records": 5}', b"null"])
def test_v2api_says_an_unreadable_answer_in_words(scripted: ScriptedApi, body: bytes) -> None:
    api = V2Api("rpa_ScriptedTestKey0123456789", scripted.url, timeout_s=5.0)
    scripted.answer(Reply(200, body))
    with pytest.raises(ApiResponseError):
        api.pod_billing(BillingQuery(last_n=7))


def test_credits_below_zero_are_amounts() -> None:
    bills = parse_pod_billing(
        {"records": [pod_record(total=-5, gpuAmount=-5.0)], "metadata": {"totals": {"totalAmount": -5}}}
    )
    assert [(r.total, r.gpu) for r in bills.records] == [(-5.0, -5.0)] and bills.total == -5.0
    assert bills.problems == ()


def test_skipped_records_are_counted_with_their_ids() -> None:
    bills = parse_pod_billing({"records": [pod_record("good"), pod_record("bad", total="x"), pod_record(None), 7]})
    assert bills.skipped == 3 and bills.skipped_ids == ("bad",)
    many = parse_volume_billing({"records": [{"networkVolumeId": "v"}] * 3})
    assert many.skipped == 3 and many.skipped_ids == ("v",)
