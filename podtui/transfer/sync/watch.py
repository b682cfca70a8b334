"""`--watch`: sync once, then again whenever a local file changes (the kernel's file events through watchfiles,
debounced); a change during a sync queues exactly one more; stopping cancels the sync under way
(docs/sync.md#watch)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

from podtui.transfer.sync.ignore import IgnoreRules
from podtui.transfer.sync.run import SyncRun
from podtui.transfer.sync.state import SyncResult, SyncSpec
from podtui.transfer.sync.tree import STAGE_PREFIX

DEBOUNCE_MS = 500
WAKE_S = 0.25  # how often the loop looks whether it was stopped while nothing changes


class _Relevant:
    """Whether a changed path can change what a sync does: not podtui's working folders, not `.git`, not a path
    the `.gitignore` files (read again each time, along its folders) or --exclude leave out."""

    def __init__(self, spec: SyncSpec) -> None:
        self.spec = spec
        self.root = os.path.abspath(spec.local)

    def __call__(self, _change: watchfiles.Change, path: str) -> bool:
        rel = os.path.relpath(path, self.root)
        if rel == "." or rel.startswith(".."):
            return rel == "."
        rel = rel.replace(os.sep, "/")
        if rel.split("/")[0].startswith(STAGE_PREFIX):
            return False
        if os.path.basename(rel) == ".gitignore":
            return True  # the rules themselves changed (or, with --no-gitignore, a file to copy)
        rules = IgnoreRules(self.spec.excludes, self.spec.gitignore)
        parts = rel.split("/")
        for i in range(len(parts)):
            folder = "/".join(parts[:i])
            with contextlib.suppress(OSError, UnicodeDecodeError):
                text = (Path(self.root) / folder / ".gitignore").read_bytes()[: 1 << 20]
                rules.add_gitignore(folder, text.decode("utf-8", "surrogateescape"))
        return not rules.covers(rel, os.path.isdir(path))


def watch_sync(
    make_run: Callable[[], SyncRun],
    spec: SyncSpec,
    stop: threading.Event,
    on_result: Callable[[SyncResult], None],
    debounce_ms: int = DEBOUNCE_MS,
) -> None:
    """Sync with a new make_run() now and after every change under spec.local, until `stop` is set (the sync under
    way is then cancelled). Blocks: run it in a thread of its own, or as the CLI's main work."""
    changed = threading.Event()
    changed.set()  # the first sync
    current: list[SyncRun] = []

    def listen() -> None:
        for _ in watchfiles.watch(
            spec.local,
            watch_filter=_Relevant(spec),
            debounce=debounce_ms,
            stop_event=stop,
            raise_interrupt=False,
        ):
            changed.set()

    def cancel_on_stop() -> None:
        stop.wait()
        for run in list(current):
            run.cancel()

    listener = threading.Thread(target=listen, name="podtui-sync-watch", daemon=True)
    listener.start()
    threading.Thread(target=cancel_on_stop, name="podtui-sync-stop", daemon=True).start()
    try:
        while not stop.is_set():
            if not changed.wait(WAKE_S):
                continue
            changed.clear()  # a change from here on queues one more sync
            run = make_run()
            current[:] = [run]
            if stop.is_set():
                break
            result = run.run()
            current.clear()
            if not result.cancelled:
                on_result(result)
    finally:
        stop.set()
        listener.join(5)
