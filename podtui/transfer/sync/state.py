"""What a sync reports as it goes, and what a pane keeps of it (docs/sync.md#the-api): the listener's events (called
on the sync's worker thread), the result, and SyncState, a listener that holds the state a pane draws."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from podtui.transfer.sync.plan import Plan

Via = Literal["auto", "rsync", "sftp", "console"]


@dataclass(frozen=True)
class SyncSpec:
    """What to sync: `local` and the pod's `remote` (as the user gave it), which way, and how."""

    pod_id: str
    local: Path
    remote: str
    pull: bool = False
    delete: bool = False
    excludes: tuple[str, ...] = ()
    gitignore: bool = True
    via: Via = "auto"
    dry_run: bool = False

    @property
    def direction(self) -> str:
        return "pull" if self.pull else "push"


@dataclass
class SyncResult:
    spec: SyncSpec
    pod_name: str = ""
    remote_root: str = ""  # REMOTE_DIR as the pod names it (absolute)
    route: str = ""
    plan: Plan | None = None
    verified: list[tuple[str, str]] = field(default_factory=list)  # (path, sha256)
    deleted: list[str] = field(default_factory=list)
    linked: list[str] = field(default_factory=list)
    touched: int = 0  # same bytes: only the time was set
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    kept: list[str] = field(default_factory=list)  # folders --delete left: they still hold something
    notes: list[str] = field(default_factory=list)
    error: str | None = None  # the sync as a whole failed: why
    cancelled: bool = False
    attempts: int = 0
    started: float = field(default_factory=time.time)
    ended: float | None = None

    @property
    def ok(self) -> bool:
        """Everything it set out to do was done and verified."""
        return self.error is None and not self.failed and not self.cancelled

    @property
    def copied_bytes(self) -> int:
        sizes = {c.path: c.size for c in self.plan.copies} if self.plan is not None else {}
        return sum(sizes.get(p, 0) for p, _ in self.verified)


class SyncListener:
    """A sync's events, each called on the sync's worker thread (a pane hands them to its event loop). Override
    what you need; the rest do nothing."""

    def started(self, spec: SyncSpec) -> None:
        """A sync begins (before the pod is reached)."""

    def plan_ready(self, plan: Plan) -> None:
        """The listing is compared and same-size files hashed: what the sync will do (or, dry, would)."""

    def file_started(self, path: str, size: int) -> None:
        """A file's bytes start to move (rsync names a file once it is through)."""

    def progress(self, done: int, total: int) -> None:
        """Bytes moved of all the sync copies."""

    def file_verified(self, path: str, digest: str) -> None:
        """A file matched on both ends and is under its final name."""

    def file_failed(self, path: str, why: str) -> None:
        """A file (or folder, symlink, delete) could not be done; the rest goes on."""

    def note(self, text: str) -> None:
        """Something worth saying: the route, a retry, what a folder kept."""

    def done(self, result: SyncResult) -> None:
        """The sync ended, whichever way."""


@dataclass(frozen=True)
class SyncSnapshot:
    """SyncState at one moment, for drawing."""

    running: bool = False
    plan: Plan | None = None
    in_flight: tuple[tuple[str, int], ...] = ()  # (path, size) whose bytes are moving
    done_bytes: int = 0
    total_bytes: int = 0
    verified: int = 0
    failed: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    last: SyncResult | None = None  # the last sync that ended
    runs: int = 0


class SyncState(SyncListener):
    """What a sync pane draws, kept as events arrive from the worker thread; `snapshot()` from anywhere."""

    MAX_NOTES = 20

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._now = SyncSnapshot()
        self._flight: dict[str, int] = {}
        self._failed: list[tuple[str, str]] = []  # appended to, made a tuple at a snapshot: each failure costs O(1)

    def snapshot(self) -> SyncSnapshot:
        with self._lock:
            return replace(self._now, in_flight=tuple(self._flight.items()), failed=tuple(self._failed))

    def started(self, spec: SyncSpec) -> None:
        with self._lock:
            self._flight.clear()
            self._failed.clear()
            self._now = replace(self._now, running=True, plan=None, done_bytes=0, total_bytes=0, verified=0)

    def plan_ready(self, plan: Plan) -> None:
        # once per attempt: after a dropped connection the new plan's failures replace those the first one reported
        with self._lock:
            self._flight.clear()
            self._failed.clear()
            self._now = replace(self._now, plan=plan, done_bytes=0, total_bytes=plan.bytes_to_copy)

    def file_started(self, path: str, size: int) -> None:
        with self._lock:
            self._flight[path] = size

    def progress(self, done: int, total: int) -> None:
        with self._lock:
            self._now = replace(self._now, done_bytes=done, total_bytes=total)

    def file_verified(self, path: str, digest: str) -> None:
        with self._lock:
            self._flight.pop(path, None)
            self._now = replace(self._now, verified=self._now.verified + 1)

    def file_failed(self, path: str, why: str) -> None:
        with self._lock:
            self._flight.pop(path, None)
            self._failed.append((path, why))

    def note(self, text: str) -> None:
        with self._lock:
            self._now = replace(self._now, notes=(*self._now.notes, text)[-self.MAX_NOTES :])

    def done(self, result: SyncResult) -> None:
        with self._lock:
            self._flight.clear()
            self._failed[:] = result.failed
            self._now = replace(self._now, running=False, last=result, runs=self._now.runs + 1)
