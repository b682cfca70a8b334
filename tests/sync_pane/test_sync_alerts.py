"""A sync's end as an alert (docs/alerts.md#events): as a transfer's end, one occurrence per sync; a cancelled one is
not news; a watch says only its failures, once per quiet period."""

from __future__ import annotations

from pathlib import Path

from podtui.core.alerts import sync_ended
from podtui.transfer.sync.plan import Copy, Plan
from podtui.transfer.sync.state import SyncResult, SyncSpec


def result(home: Path, **kw: object) -> SyncResult:
    spec = SyncSpec("pod1", home / "proj", "proj", pull=bool(kw.pop("pull", False)))
    plan = Plan(spec.pull, False, copies=[Copy("a.py", 1200, 0, False, "new"), Copy("b.py", 800, 0, False, "new")])
    made = SyncResult(spec, pod_name="eval-a100", remote_root="/workspace/proj", route="console", plan=plan)
    made.verified = [("a.py", "0" * 64), ("b.py", "1" * 64)]
    made.started = 100.0
    for key, value in kw.items():
        setattr(made, key, value)
    return made


def test_verified_and_failed_are_said_as_a_transfers_end(isolated_home: Path) -> None:
    ok = sync_ended(result(isolated_home), 200.0)
    assert ok is not None and ok.kind == "transfer_verified" and ok.severity == "information"
    assert ok.text == "sync ~/proj → eval-a100:/workspace/proj: 2 files verified on both ends (2.0 kB)"
    assert ok.pod_id == "pod1" and ok.pod_name == "eval-a100"
    pulled = sync_ended(result(isolated_home, pull=True), 200.0)
    assert pulled is not None and pulled.text.startswith("sync eval-a100:/workspace/proj → ~/proj:")
    one = sync_ended(result(isolated_home, failed=[("b.py", "cannot read it")]), 200.0)
    assert one is not None and one.kind == "transfer_failed" and one.severity == "error"
    assert one.text == "sync ~/proj → eval-a100:/workspace/proj failed for b.py: cannot read it"
    two = sync_ended(result(isolated_home, failed=[("b.py", "x"), ("c.py", "y")]), 200.0)
    assert two is not None and two.text.endswith("failed for 2 files, the first b.py: x")
    whole = sync_ended(result(isolated_home, error="eval-a100 is EXITED: sync needs it RUNNING"), 200.0)
    assert whole is not None and whole.text.endswith("failed: eval-a100 is EXITED: sync needs it RUNNING")


def test_each_sync_is_its_own_occurrence_and_a_cancelled_one_is_not_news(isolated_home: Path) -> None:
    first, second = sync_ended(result(isolated_home), 200.0), sync_ended(result(isolated_home, started=150.0), 250.0)
    assert first is not None and second is not None and first.occurrence != second.occurrence
    assert first.quiet_key == first.occurrence  # no quiet period between two syncs asked for
    assert sync_ended(result(isolated_home, cancelled=True), 200.0) is None


def test_a_watch_says_its_failures_once_per_quiet_period(isolated_home: Path) -> None:
    assert sync_ended(result(isolated_home), 200.0, watching=True) is None  # the Sync tab shows it
    failed = [sync_ended(result(isolated_home, failed=[("a.py", "x")], started=t), t, watching=True) for t in (1, 2)]
    assert all(a is not None and a.kind == "transfer_failed" for a in failed)
    assert failed[0] is not None and failed[1] is not None
    assert failed[0].occurrence != failed[1].occurrence and failed[0].quiet_key == failed[1].quiet_key
