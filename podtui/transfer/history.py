"""The queue's history in the user data dir, so unfinished and failed transfers are still listed after a restart,
and shared by every podtui running at once (two TUIs, a TUI and a `podtui push`).

Each job belongs to the podtui that runs it (owner.py). A save is read, merge by job id, write, under a lock
(flock on `transfers.json.lock` beside it): the caller's own jobs replace theirs, everyone else's are kept as
written, so no save ever drops another podtui's job. It is written whole to a temporary file (0600) and renamed
over the old one, so a crash mid-write never loses the history. A damaged file is set aside (renamed, never
deleted) and the queue starts empty, with a message saying so.

Loading adopts the jobs whose podtui is gone: the ones that were running come back failed and retryable, the
runpodctl processes they left here are killed; queued ones run again, unless a `podtui push|pull` queued them (its
user saw it fail: it comes back failed, to retry by hand, not run hours later). A job whose podtui still runs, or
runs where it cannot be looked up from here (owner.py), comes back exactly as written.

A save that merged in what another podtui wrote since this object last read the file leaves the file marked as
unseen, so the caller's next look (changed(), then load()) brings those changes in.

The file is bounded: the oldest finished jobs go past a count, and finished jobs but the newest few keep only the
end of their log.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

from podtui.core.user_files import NotAFile, read_user_file
from podtui.transfer import leftovers, owner
from podtui.transfer.job import ACTIVE, TransferJob
from podtui.transfer.modes import private_dir
from podtui.transfer.runners import runner_for

if sys.platform != "win32":
    import fcntl

log = logging.getLogger(__name__)
KEEP_FINISHED = 200  # verified and cancelled jobs beyond this many are dropped, oldest first
KEEP_FAILED = 200  # and failed ones beyond this many
FULL_LOGS = 20  # the newest finished jobs keep their whole log; older ones only its last OLD_LOG_LINES lines
OLD_LOG_LINES = 20
MAX_BYTES = 64 << 20  # a bounded history is a few MB even with large Hub repos listed; past this it is damaged
INTERRUPTED = "podtui stopped during this transfer; nothing was renamed into place. Retry to start it again."
NOT_RUN = (
    "the podtui push/pull that queued this transfer stopped before it was done; nothing was renamed into "
    "place. Retry to start it again."
)
Stamp = tuple[int, int, int]
_UNSEEN: Stamp = (-1, -1, -1)  # what no file has: changed() says yes until the next load


class HistoryUnusable(Exception):
    """The history's path holds something that is not a regular file (a FIFO, a folder): neither read nor
    replaced; the message is one line naming it."""


def _kill_leftovers_here(job: TransferJob) -> None:
    """Stop the runpodctl processes a killed podtui left on this machine; those on the pod wait for the job's next
    attempt (files._clean_pod)."""
    kept = []
    for entry in job.leftovers:
        if entry.get("where") == "pod":
            kept.append(entry)
        elif leftovers.kill_here(entry):
            job.note(f"stopped runpodctl {entry.get('pid')}, left running here by the podtui that was stopped")
    job.leftovers = kept


def _adopt(job: TransferJob) -> None:
    """A job whose podtui is gone, taken over: what it left running here stops, a running one is interrupted, and a
    queued one of a `podtui push|pull` fails (owner.claim)."""
    _kill_leftovers_here(job)
    resumes = owner.adopts(job.owner)
    runner = runner_for(job.direction)
    if job.state in ACTIVE and runner.runs_on_pod and resumes:
        job.state = "queued"  # it runs on the pod by itself: the queue re-attaches to it there
        job.note(runner.reattaching)
    elif job.state in ACTIVE or (job.state == "queued" and not resumes):
        why = INTERRUPTED if job.state in ACTIVE else NOT_RUN
        job.state, job.error, job.retryable = "failed", why, True
        job.code = None
        job.note(why)


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
            try:
                jobs = self._read()
            except HistoryUnusable as e:
                self.problem = str(e)
                log.warning(self.problem)
                return []
            adopted = False
            for job in jobs:
                if (me is not None and owner.same(job.owner, me)) or owner.alive(job.owner):
                    continue  # ours already, or another podtui's that still runs (or may): as written
                _adopt(job)
                job.owner = dict(me) if me is not None else None
                adopted = True
            if adopted and me is not None and held:
                self._write(jobs)
            self._stamp = self._current_stamp()
        return jobs

    def save(
        self,
        jobs: list[TransferJob],
        removed: Collection[str] = (),
        me: owner.Owner | None = None,
        forgotten: Mapping[str, owner.Owner | None] | None = None,
    ) -> None:
        """Write `jobs` (the caller's own) into the file: each replaces the one with its id, new ones go last;
        `removed` ids go, unless another podtui that still runs owns them; `forgotten` ones (id: its owner, one
        whose liveness cannot be told from here) go while that owner still has them; every other job stays as
        written."""
        with self._locked() as held:
            if not held:
                return
            others_wrote = self._current_stamp() != self._stamp
            try:
                written = self._read()
            except HistoryUnusable as e:
                self.problem = str(e)
                log.warning("not saved: %s", self.problem)
                return
            mine = {j.id: j for j in jobs}
            merged = []
            for job in written:
                if (
                    job.id in removed
                    and job.id not in mine
                    and (owner.same(job.owner, me) or not owner.alive(job.owner))
                ):
                    continue
                if forgotten and job.id in forgotten and job.id not in mine and job.owner == forgotten[job.id]:
                    continue  # the user's word; adopted since by someone else, it is theirs to keep
                merged.append(mine.pop(job.id, job))
            merged += [j for j in jobs if j.id in mine]
            self._write(self._pruned(merged, {j.id for j in jobs}))
            # what the others wrote is in the file now, not in the caller's list: leave it for the next load
            self._stamp = _UNSEEN if others_wrote else self._current_stamp()

    def pending(self, pod_id: str, me: owner.Owner | None = None) -> list[TransferJob]:
        """The pod's transfers that another podtui, still running (or running where it cannot be looked up from
        here), has queued or under way, as it last wrote them. Raises HistoryUnusable."""
        with self._locked():
            jobs = self._read()
        return [
            j
            for j in jobs
            if j.pod_id == pod_id
            and (j.state == "queued" or j.state in ACTIVE)
            and not owner.same(j.owner, me)
            and owner.alive(j.owner)
        ]

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
        """The jobs in the file; [] when there is none. Raises HistoryUnusable for a path that is not a regular
        file; a damaged (or absurdly large) one is set aside and [] returned."""
        try:
            try:
                data = read_user_file(self.path, MAX_BYTES)  # a FIFO there would block a plain read forever
            except NotAFile as e:
                if not stat.S_ISREG(os.stat(self.path).st_mode):
                    raise HistoryUnusable(
                        f"the transfer history {e}; transfers are not saved until it is moved away"
                    ) from None
                raise ValueError(f"larger than {MAX_BYTES >> 20} MiB") from None
            raw = json.loads(data.decode("utf-8"))
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
        """Past KEEP_FINISHED verified or cancelled jobs (KEEP_FAILED failed ones), the oldest go, and finished jobs
        but the newest FULL_LOGS keep only the end of their log: only the caller's own or orphaned ones, never
        those of a podtui still running."""
        alive: dict[str, bool] = {}  # by owner: hundreds of jobs share a few owners

        def gone(job: TransferJob) -> bool:
            key = json.dumps(job.owner, sort_keys=True)
            if key not in alive:
                alive[key] = owner.alive(job.owner)
            return not alive[key]

        ours = {j.id for j in jobs if j.id in mine or gone(j)}
        drop: set[str] = set()
        for states, keep in ((("verified", "cancelled"), KEEP_FINISHED), (("failed",), KEEP_FAILED)):
            finished = [j for j in jobs if j.state in states]
            if len(finished) > keep:
                drop.update([j.id for j in finished if j.id in ours][: len(finished) - keep])
        kept = [j for j in jobs if j.id not in drop]
        by_age = sorted((j for j in kept if j.finished), key=lambda j: j.finished_at or j.created_at, reverse=True)
        for j in by_age[FULL_LOGS:]:
            if j.id in ours and len(j.log) > OLD_LOG_LINES:
                j.log = j.log[-OLD_LOG_LINES:]
        return kept

    def _write(self, jobs: list[TransferJob]) -> None:
        # compact: with an indent, json falls back from its C encoder to Python, several times slower
        text = json.dumps({"version": 1, "jobs": [j.to_json() for j in jobs]}, separators=(",", ":"))
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
