"""The spend report: windows of UTC days, breakdowns from RunPod's billing or from the ledger alone, names of
terminated pods from the ledger, and the ledger reconciled with the billing per pod and in all."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from podtui.core.billing import AccountBill, Billing, PodBill, VolumeBill
from podtui.core.ledger import Run
from podtui.core.pod import Pod, PodStatus
from podtui.core.spend import MAX_BILLING_NOTES, Bills, Row, beyond, report, window
from podtui.core.volume import NetworkVolume

NOW = datetime(2026, 6, 3, 15, 0, tzinfo=UTC).timestamp()
D1, D2, D3 = (datetime(2026, 6, d, tzinfo=UTC).timestamp() for d in (1, 2, 3))
H = 3600.0


def test_windows_are_utc_days_up_to_today() -> None:
    w = window(1, NOW)
    assert (w.start, w.end, w.label, w.dates) == (D3, D3 + 86400, "today", "Jun 03")
    w = window(3, NOW)
    assert (w.start, w.day_starts(), w.label, w.dates) == (D1, (D1, D2, D3), "3 days", "Jun 01 to Jun 03")
    for bad in (0, 367, -1):
        with pytest.raises(ValueError):
            window(bad, NOW)


RUNS = (
    Run("gone1", "old-trainer", "NVIDIA A100", 1, 2.0, D1 + 22 * H, D2 + 2 * H, D2 + 2 * H),  # over midnight
    Run("live1", "notebook", "NVIDIA A40", 1, 1.0, D3 + 10 * H, NOW),
)
LIVE = Pod("live1", "notebook", PodStatus.RUNNING, gpu_count=1, gpu_name="NVIDIA A40", cost_per_hr=1.0)


def test_from_the_ledger_alone() -> None:
    made = report(window(3, NOW), RUNS, [LIVE], why_not_billing="RunPod's billing could not be had: 404")
    assert made.source == "ledger" and "404" in made.source_why and made.reconciliation is None
    assert made.total == pytest.approx(4 * 2.0 + 5 * 1.0)
    assert [(r.label, r.amount, r.note) for r in made.by_pod] == [
        ("old-trainer", pytest.approx(8.0), "NVIDIA A100, terminated"),
        ("notebook", pytest.approx(5.0), "NVIDIA A40"),
    ]
    assert [r.amount for r in made.by_day] == [pytest.approx(4.0), pytest.approx(4.0), pytest.approx(5.0)]
    assert [r.key for r in made.by_gpu] == ["NVIDIA A100", "NVIDIA A40"]
    assert made.by_volume == () and any("network volumes" in n for n in made.notes)
    today = report(window(1, NOW), RUNS, [LIVE])
    assert today.total == pytest.approx(5.0) and [r.key for r in today.by_pod] == ["live1"]


def _bills(pod_compute: dict[str, float], disk: float = 0.5) -> Bills:
    pods = tuple(
        PodBill(D3, D3 + 86400, pod_id, amount + disk, gpu=amount, disk=disk) for pod_id, amount in pod_compute.items()
    )
    pods_total = sum(p.total for p in pods)
    account = (
        AccountBill(D2, D2 + 86400, 3.0, pod_gpu=3.0),
        AccountBill(D3, D3 + 86400, pods_total + 1.5, pod_gpu=pods_total, storage=1.5),
    )
    volumes = (VolumeBill(D3, D3 + 86400, "vol1", 1.5, standard=1.5),)
    return Bills(
        Billing(account),
        Billing(pods),
        Billing(volumes, problems=("a network volume billing record: no networkVolumeId; skipped",), skipped=1),
    )


def test_from_runpods_billing_with_names_from_the_ledger_and_volumes() -> None:
    volumes = [NetworkVolume("vol1", "datasets", 100, "EU-RO-1")]
    made = report(window(2, NOW), RUNS, [LIVE], volumes, _bills({"live1": 5.0, "stranger": 2.0}), made_at=NOW)
    assert made.source == "billing" and made.source_line == "RunPod's billing at 15:00 UTC"
    assert made.total == pytest.approx(3.0 + 8.0 + 1.5)
    assert [(r.key, r.label, r.note) for r in made.by_pod] == [
        ("live1", "notebook", "NVIDIA A40"),
        ("stranger", "stranger", "never seen by podtui"),
        ("other", "not pods: volumes, serverless, …", ""),
    ]
    assert made.by_pod[-1].other and made.by_pod[-1].amount == pytest.approx(3.0 + 1.5)
    assert [(r.label, r.amount) for r in made.by_volume[:1]] == [("datasets", 1.5)]
    assert [r.amount for r in made.by_day] == [3.0, pytest.approx(9.5)]
    assert "1 billing record was unreadable and left out" in made.notes
    assert made.by_volume[-1].label == "not itemised (unreadable records, pods, serverless, …)"


def test_reconciliation_agrees_within_the_tolerance_and_says_the_difference_beyond() -> None:
    w = window(1, NOW)
    agree = report(w, RUNS, [LIVE], bills=_bills({"live1": 5.04}))
    assert agree.reconciliation is not None and agree.reconciliation.agrees
    assert "agree" in agree.reconciliation.line()
    differ = report(w, RUNS, [LIVE], bills=_bills({"live1": 7.0, "stranger": 2.0}))
    rec = differ.reconciliation
    assert rec is not None and not rec.agrees
    assert (rec.ledger, rec.billing, rec.disk) == (pytest.approx(5.0), 9.0, 1.0)
    assert [(d.pod_id, d.difference) for d in rec.pods] == [("live1", pytest.approx(2.0)), ("stranger", 2.0)]
    assert rec.unseen == ("stranger",)
    assert "RunPod $9.00 for the pods' compute, ledger $5.00 (RunPod +$4.00)" in rec.line()
    assert "1 pod podtui never saw running" in rec.line()
    assert not beyond(100.0, 104.0) and beyond(100.0, 106.0) and not beyond(0.0, 0.09) and beyond(0.0, 0.2)


def _notes_of(made_by_pod: tuple[Row, ...]) -> dict[str, str]:
    return {r.key: r.note for r in made_by_pod}


def test_terminated_is_said_only_when_the_whole_pod_list_is_known() -> None:
    w = window(3, NOW)
    # the pods could not be listed (or not yet polled): nothing is said gone, and the running pod is not terminated
    unknown = report(w, RUNS, None)
    assert _notes_of(unknown.by_pod) == {"gone1": "NVIDIA A100", "live1": "NVIDIA A40"}
    # a list that skipped a record may lack a pod that is there
    partial = report(w, RUNS, [], all_pods_listed=False)
    assert _notes_of(partial.by_pod) == {"gone1": "NVIDIA A100", "live1": "NVIDIA A40"}
    # a whole list: the pod whose last run ended is terminated; one still running in the ledger is not listed now
    whole = report(w, RUNS, [])
    assert _notes_of(whole.by_pod) == {"gone1": "NVIDIA A100, terminated", "live1": "NVIDIA A40, not listed now"}
    listed = report(w, RUNS, [LIVE])
    assert _notes_of(listed.by_pod) == {"gone1": "NVIDIA A100, terminated", "live1": "NVIDIA A40"}


def test_deleted_is_said_only_when_the_volumes_are_known() -> None:
    w = window(2, NOW)
    unknown = report(w, RUNS, [LIVE], None, _bills({"live1": 5.0}))
    assert [(r.label, r.note) for r in unknown.by_volume if not r.other] == [("vol1", "")]
    known = report(w, RUNS, [LIVE], [], _bills({"live1": 5.0}))
    assert [(r.label, r.note) for r in known.by_volume if not r.other] == [("vol1", "deleted")]


def test_skipped_pod_records_are_not_itemised_and_left_out_of_the_comparison() -> None:
    bills = _bills({"live1": 9.0, "stranger": 2.0})
    skipped = Billing(
        bills.pods.records[1:],  # live1's record could not be read
        problems=("pod billing record live1 at x: totalAmount is not an amount; skipped",),
        skipped=1,
        skipped_ids=("live1",),
    )
    made = report(window(1, NOW), RUNS, [LIVE], [], Bills(bills.account, skipped, bills.volumes))
    assert (
        made.by_pod[-1].other and made.by_pod[-1].label == "not itemised (unreadable records, volumes, serverless, …)"
    )
    assert made.by_gpu[-1].label == made.by_pod[-1].label
    rec = made.reconciliation
    assert rec is not None and rec.left_out == ("live1",) and rec.ledger == 0.0
    assert [d.pod_id for d in rec.pods] == ["stranger"]  # live1 (ledger $5, RunPod unknown) is not blamed
    assert "1 unreadable pod billing record left out with 1 pod" in rec.line()
    assert "2 billing records were unreadable and left out" in made.notes  # and the volume's
    assert any("totalAmount is not an amount" in n for n in made.notes)


def test_billing_oddities_are_in_the_notes_capped() -> None:
    bills = _bills({"live1": 5.0})
    odd = tuple(f"pod billing record p{i}: gpuAmount is not a number (str)" for i in range(7))
    bills = Bills(bills.account, Billing(bills.pods.records, problems=odd), bills.volumes)
    made = report(window(1, NOW), RUNS, [LIVE], [], bills)
    said = [n for n in made.notes if "RunPod's billing" in n]
    assert len(said) == MAX_BILLING_NOTES + 1 and "gpuAmount" in said[0]
    assert said[-1] == "and 5 more odd parts of RunPod's billing (in the log)"


def test_without_the_volumes_billing_the_rest_is_kept() -> None:
    bills = _bills({"live1": 5.0})
    why = "RunPod's billing of network volumes could not be had: HTTP 500"
    made = report(window(2, NOW), RUNS, [LIVE], [], Bills(bills.account, bills.pods, None, why))
    assert made.source == "billing" and made.total == pytest.approx(3.0 + 5.5 + 1.5)
    assert made.by_volume == () and made.empty_line("volume") == why and why in made.notes
    assert [r.key for r in made.by_pod if not r.other] == ["live1"]


def test_pods_of_one_name_are_told_apart_by_id() -> None:
    twins = (
        Run("a1", "trainer", "NVIDIA A40", 1, 1.0, D3, D3 + H, D3 + H),
        Run("b2", "trainer", "NVIDIA A40", 1, 2.0, D3, D3 + H, D3 + H),
    )
    made = report(window(1, NOW), twins, [])
    assert [r.label for r in made.by_pod] == ["trainer (b2)", "trainer (a1)"]
