"""How a sync reads (podtui/ui/sync_view.py): the heading names where the sync asked for goes, not where the last
one went (docs/sync.md#the-api)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from podtui.transfer.sync.state import SyncResult, SyncSnapshot, SyncSpec
from podtui.ui.sync_view import PodSync, sync_text


def plain(view: PodSync) -> str:
    console = Console(width=160, file=io.StringIO(), record=True)
    console.print(sync_text(view, "eval-a100", 160))
    return console.export_text()


def test_the_heading_follows_the_sync_asked_for_not_the_last_one(tmp_path: Path) -> None:
    before = SyncSpec("pod1", tmp_path / "proj", "proj")
    last = SyncResult(before, pod_name="eval-a100", remote_root="/workspace/proj", ended=1.0, started=0.0)
    now = SyncSpec("pod1", tmp_path / "other", "data/other")
    text = plain(PodSync("pod1", SyncSnapshot(running=True, last=last), now, busy=True))
    assert "eval-a100:data/other" in text and "/workspace/proj" not in text.splitlines()[0], text
    same = plain(PodSync("pod1", SyncSnapshot(last=last), before))  # the same sync: as the pod names its folder
    assert "eval-a100:/workspace/proj" in same.splitlines()[0], same
