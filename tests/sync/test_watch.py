"""`--watch` (docs/sync.md#watch): a change arrives on the pod, ignored paths and podtui's own folders start no sync,
and stopping ends it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import watchfiles

from podtui.transfer.sync.state import SyncResult, SyncSpec
from podtui.transfer.sync.watch import _Relevant, watch_sync
from tests.helpers.sync import CONSOLE, Syncer
from tests.helpers.transfer import wait_for


def test_what_starts_a_sync(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "sub" / ".gitignore").write_text("gen/\n")
    relevant = _Relevant(SyncSpec("pod", root, "proj", excludes=("*.tmp",)))
    change = watchfiles.Change.modified
    for rel, wanted in (
        ("main.py", True),
        ("sub/x.py", True),
        (".gitignore", True),  # the rules themselves
        ("run.log", False),
        ("build/out/a.o", False),
        ("sub/gen/a.py", False),
        ("gen/a.py", True),  # sub's rule applies under sub only
        ("x.tmp", False),
        (".git/index", False),
        (".podtui-sync-abc/3", False),
    ):
        assert relevant(change, str(root / rel)) is wanted, rel
    plain = _Relevant(SyncSpec("pod", root, "proj", gitignore=False))
    assert plain(change, str(root / "run.log")) and plain(change, str(root / ".git/index"))


@pytest.mark.parametrize("route", [CONSOLE])
def test_a_change_arrives_and_stop_ends_it(syncer: Syncer, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("first")
    remote = syncer.workspace / "proj"
    results: list[SyncResult] = []
    stop = threading.Event()
    run = syncer.run_of(src)
    watcher = threading.Thread(
        target=watch_sync, args=(lambda: syncer.run_of(src), run.spec, stop, results.append, 100)
    )
    watcher.start()
    try:
        wait_for(lambda: len(results) >= 1)
        assert results[0].ok and (remote / "a.txt").read_text() == "first"
        (src / "b.txt").write_text("second")
        (src / "a.txt").write_text("FIRST")
        wait_for(lambda: (remote / "b.txt").exists() and (remote / "a.txt").read_text() == "FIRST")
        assert all(r.ok for r in results)
    finally:
        stop.set()
        watcher.join(60)
    assert not watcher.is_alive()
