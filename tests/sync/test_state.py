"""What the Sync tab draws from (core SyncState): failures kept in order as they come, those of an attempt
replaced by the next attempt's plan, and the end's own list once the sync is done (docs/sync.md#failures)."""

from __future__ import annotations

from pathlib import Path

from podtui.transfer.sync.state import SyncResult, SyncSpec, SyncState


def test_failures_in_order_replaced_by_a_new_attempt_then_by_the_result(tmp_path: Path) -> None:
    state = SyncState()
    spec = SyncSpec("pod", tmp_path, "/workspace/code")
    state.started(spec)
    for i in range(1000):
        state.file_failed(f"f{i}", "cannot read it")
    failed = state.snapshot().failed
    assert len(failed) == 1000 and failed[0] == ("f0", "cannot read it") and failed[-1][0] == "f999"
    state.file_started("kept", 10)
    state.file_failed("kept", "the link broke")
    assert "kept" not in dict(state.snapshot().in_flight)
    snap = state.snapshot()
    state.file_failed("later", "x")
    assert len(snap.failed) == 1001  # a snapshot does not change under its reader
    result = SyncResult(spec)
    result.failed.append(("only", "what the end says"))
    state.done(result)
    assert state.snapshot().failed == (("only", "what the end says"),)
    state.started(spec)
    assert state.snapshot().failed == ()
