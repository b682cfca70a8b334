"""The queue's history in the user data dir, so unfinished and failed transfers are still listed after a restart,
and shared by every podtui running at once (two TUIs, a TUI and a `podtui push`).

Each job belongs to the podtui that runs it (owner.py). A save is read, merge by job id, write, under a lock
(flock on `transfers.json.lock` beside it): the caller's own jobs replace theirs, everyone else's are kept as
written, so no save ever drops another podtui's job. It is written whole to a temporary file (0600) and renamed
over the old one, so a crash mid-write never loses the history. A damaged file is set aside (renamed, never
deleted) and the queue starts empty, with a message saying so.

Loading adopts the jobs whose podtui is gone: the ones that were running come back failed and retryable, the
runpodctl processes they left here are killed. A job whose podtui still runs comes back exactly as written.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Collection, Iterator
from pathlib import Path

from podtui.transfer import leftovers, owner
from podtui.transfer.job import ACTIVE, TransferJob
from podtui.transfer.modes import private_dir

if sys.platform != "win32":
    import fcntl

log = logging.getLogger(__name__)
KEEP_FINISHED = 200  # verified and cancelled jobs beyond this many are dropped, oldest first
INTERRUPTED = "podtui stopped during this transfer; nothing was renamed into place. Retry to start it again."
REATTACH = "podtui stopped while the pod downloaded from the Hub; the download went on there: re-attaching"
Stamp = tuple[int, int, int]


def _kill_leftovers_here(job: TransferJob) -> None:
    """Stop the runpodctl processes a killed podtui left on this machine; those on the pod wait for the job's next
    attempt (engine._clean_pod)."""
    kept = []
    for entry in job.leftovers:
        if entry.get("where") == "pod":
            kept.append(entry)
        elif leftovers.kill_here(entry):
            job.note(f"stopped runpodctl {entry.get('pid')}, left running here by the podtui that was stopped")
    job.leftovers = kept


def _adopt(job: TransferJob) -> None:
    """A job whose podtui is gone, taken over: what it left running here stops, a running one is interrupted."""
    _kill_leftovers_here(job)
    if job.state in ACTIVE and job.direction == "hub":
        job.state = "queued"  # it runs on the pod by itself: the queue finds it there by its pidfile
        job.note(REATTACH)
    elif job.state in ACTIVE:
        job.state, job.error, job.retryable = "failed", INTERRUPTED, True
        job.code = None
        job.note(INTERRUPTED)


class TransferHistory:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_path = path.with_name(path.name + ".lock")
        self.problem: str | None = None  # what went wrong reading it, for the pane to show
        self._lock = threading.Lock()  # workers save from their own threads; the file lock is per open file
        self._stamp: Stamp | None = None  # the file as this object last read or wrote it

    # -- what the queue calls -----------------------------------------------------------------------------

    def load(self, me: owner.Owner | None = None) -> list[TransferJob]:
        """Every job in the file. Those whose podtui is gone are adopted: given to `me` (and that is written
        back, so no other podtui adopts them too) or, without `me`, only changed in what is returned."""
        with self._locked() as held:
            jobs = self._read()
            adopted = False
            for job in jobs:
                if (me is not None and owner.same(job.owner, me)) or owner.alive(job.owner):
                    continue  # ours already, or another podtui's that still runs: as written
                _adopt(job)
                job.owner = dict(me) if me is not None else None
                adopted = True
            if adopted and me is not None and held:
                self._write(jobs)
            self._stamp = self._current_stamp()
        return jobs

    def save(self, jobs: list[TransferJob], removed: Collection[str] = (), me: owner.Owner | None = None) -> None:
        """Write `jobs` (the caller's own) into the file: each replaces the one with its id, new ones go last;
        `removed` ids go, unless another podtui that still runs owns them; every other job stays as written."""
        with self._locked() as held:
            if not held:
                return
            mine = {j.id: j for j in jobs}
            merged = []
            for job in self._read():
                if job.id in removed and job.id not in mine and (owner.same(job.owner, me)
                                                                 or not owner.alive(job.owner)):
                    continue
                merged.append(mine.pop(job.id, job))
            merged += [j for j in jobs if j.id in mine]
            self._write(self._pruned(merged, {j.id for j in jobs}))
            self._stamp = self._current_stamp()

    def changed(self) -> bool:
        """Whether someone wrote the file since this object last read or wrote it."""
        return self._current_stamp() != self._stamp

    # -- the file -----------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[bool]:
        """Both locks: this process's threads, then every process's (flock). Yields False when the folder or the
        lock file cannot be made (a read still works; a write is skipped and logged)."""
        with self._lock:
            try:
                private_dir(self.path.parent)
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
            except OSError as e:
                log.warning("could not save the transfer history to %s: %s", self.path, e)
                yield False
                return
            try:
                with contextlib.suppress(OSError):
                    os.fchmod(fd, 0o600)
                if sys.platform != "win32":
                    fcntl.flock(fd, fcntl.LOCK_EX)
                yield True
            finally:
                os.close(fd)  # closing releases the flock

    def _current_stamp(self) -> Stamp | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    def _read(self) -> list[TransferJob]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            items = raw["jobs"] if isinstance(raw, dict) else None
            if not isinstance(items, list):
                raise ValueError("no list of jobs")
        except FileNotFoundError:
            return []
        except NotADirectoryError as e:
            log.warning("cannot read the transfer history %s: %s", self.path, e)
            return []
        except (OSError, ValueError, KeyError, UnicodeDecodeError) as e:
            aside = self.path.with_name(self.path.name + ".damaged")
            try:
                self.path.replace(aside)
            except OSError:
                aside = self.path
            self.problem = f"the transfer history could not be read ({e}); it was kept as {aside}"
            log.warning(self.problem)
            return []
        jobs = []
        for item in items:
            try:
                jobs.append(TransferJob.from_json(item))
            except (TypeError, ValueError) as e:
                log.warning("skipped a transfer in the history: %s", e)
        return jobs

    @staticmethod
    def _pruned(jobs: list[TransferJob], mine: set[str]) -> list[TransferJob]:
        """Past KEEP_FINISHED verified or cancelled jobs, the oldest go: only the caller's own or orphaned ones,
        never those of a podtui still running."""
        finished = [j for j in jobs if j.state in ("verified", "cancelled")]
        if len(finished) <= KEEP_FINISHED:
            return jobs
        droppable = [j.id for j in finished if j.id in mine or not owner.alive(j.owner)]
        drop = set(droppable[:len(finished) - KEEP_FINISHED])
        return [j for j in jobs if j.id not in drop]

    def _write(self, jobs: list[TransferJob]) -> None:
        text = json.dumps({"version": 1, "jobs": [j.to_json() for j in jobs]}, indent=1)
        try:
            # paths and pod names are the user's business: mkstemp makes it 0600, like every file podtui keeps
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        except OSError as e:
            log.warning("could not save the transfer history to %s: %s", self.path, e)
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, self.path)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            log.warning("could not save the transfer history to %s: %s", self.path, e)
