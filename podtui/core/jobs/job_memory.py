"""The detached jobs podtui follows, and how far each one's follow-up has gone (docs/jobs.md#after-a-job).

A job is remembered from when podtui starts it, or first sees it running on its pod, until what it asked for is
done: its alert said, its pulls queued (by transfer id) and verified, its pod stopped or terminated. Each step is
written down before it is taken, so a podtui that restarts (or another that takes over) never takes it twice.

The record is a JSON file in the data folder (0600, replaced whole: `secret.write_private`), shared by every podtui
of this account on this machine: each change is read, change, write under a lock (flock on `jobs.json.lock` beside
it, as the transfer history does), so two podtuis never both claim one job. A job's follow-up belongs to one podtui
at a time (its `owner`, as transfer/owner.py tells them apart); another takes it over only once that one is gone. A
file that cannot be read is refused in words and never written over: the jobs met meanwhile are kept in memory and
the file is looked at again once it changes. An entry that cannot be read is kept in the file as it is. The demo's
jobs are kept in memory only.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from podtui.core.held_files import OnePerFile
from podtui.core.jobs.job import ENDED, JOB_ID, Job, JobState, Pull, Then
from podtui.core.paths import Paths
from podtui.core.secret import private_dir, write_private
from podtui.core.user_files import Unusable, read_json_member
from podtui.core.visible import visible

if TYPE_CHECKING:
    from podtui.core.services import Services

try:  # POSIX; elsewhere one podtui at a time is assumed, and the thread lock is all there is
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

FILE_NAME = "jobs.json"
MAX_ENTRIES = 1000  # the oldest finished follow-ups go first
MAX_BYTES = 4 << 20
STATES: tuple[JobState, ...] = ("running", "done", "failed", "cancelled", "lost")
T = TypeVar("T")
Key = tuple[str, str]  # (pod id, job id)


@dataclass(frozen=True)
class Followed:
    """One job podtui follows: the job as last seen, and its follow-up so far."""

    job: Job
    pod_name: str
    seen_at: float  # this machine's clock, when the job was last seen (or remembered)
    owner: dict[str, Any] | None = None  # the podtui doing the follow-up now (transfer/owner.py); None: nobody yet
    alerted: float | None = None  # when its end was said
    pull_ids: tuple[str, ...] | None = None  # the transfers its pulls are, once chosen (before they are queued)
    pulls_queued: bool = False  # every one of them went into the transfer queue
    retried: tuple[str, ...] = ()  # pulls retried once by a podtui that took the follow-up over
    then_done: str | None = None  # what became of its stop or terminate, in words ("stop sent", "asked", ...)
    finished: bool = False  # nothing left to do
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # unknown keys of a newer podtui, kept

    @property
    def key(self) -> Key:
        return (self.job.pod_id, self.job.id)

    @property
    def asked_for_something(self) -> bool:
        return bool(self.job.pulls) or self.job.then is not None

    def as_json(self) -> dict[str, Any]:
        j = self.job
        return {
            **self.extra,
            "pod_id": j.pod_id,
            "job_id": j.id,
            "pod_name": self.pod_name,
            "job": {
                "command": j.command,
                "name": j.name,
                "workdir": j.workdir,
                "state": j.state,
                "exit_code": j.exit_code,
                "started": j.started,
                "ended": j.ended,
                "then": j.then,
                "pulls": [{"remote": p.remote, "local": p.local} for p in j.pulls],
                "log_bytes": j.log_bytes,
                "log_dropped": j.log_dropped,
                "note": j.note,
            },
            "seen_at": self.seen_at,
            "owner": self.owner,
            "alerted": self.alerted,
            "pull_ids": list(self.pull_ids) if self.pull_ids is not None else None,
            "pulls_queued": self.pulls_queued,
            "retried": list(self.retried),
            "then_done": self.then_done,
            "finished": self.finished,
        }


_KNOWN = {
    "pod_id",
    "job_id",
    "pod_name",
    "job",
    "seen_at",
    "owner",
    "alerted",
    "pull_ids",
    "pulls_queued",
    "retried",
    "then_done",
    "finished",
}


def followed_from_json(raw: object) -> Followed | None:
    """One entry as written, or None when it is not one (a hand-edited or damaged entry)."""
    if not isinstance(raw, dict):
        return None
    pod_id, job_id, pod_name, data = raw.get("pod_id"), raw.get("job_id"), raw.get("pod_name"), raw.get("job")
    if not (isinstance(pod_id, str) and pod_id and isinstance(job_id, str) and JOB_ID.fullmatch(job_id)):
        return None
    if not isinstance(pod_name, str) or not isinstance(data, dict):
        return None
    job = _job(pod_id, job_id, data)
    seen_at = _number(raw.get("seen_at"))
    if job is None or seen_at is None:
        return None
    owner, alerted, then_done = raw.get("owner"), raw.get("alerted"), raw.get("then_done")
    ids, retried = raw.get("pull_ids"), raw.get("retried", [])
    if owner is not None and not isinstance(owner, dict):
        return None
    if alerted is not None and _number(alerted) is None:
        return None
    if ids is not None and not _strings(ids):
        return None
    if not _strings(retried) or (then_done is not None and not isinstance(then_done, str)):
        return None
    queued, finished = raw.get("pulls_queued", False), raw.get("finished", False)
    if not isinstance(queued, bool) or not isinstance(finished, bool):
        return None
    return Followed(
        job,
        pod_name,
        seen_at,
        owner,
        _number(alerted),
        tuple(ids) if ids is not None else None,
        queued,
        tuple(retried),
        then_done,
        finished,
        {k: v for k, v in raw.items() if k not in _KNOWN},
    )


def _job(pod_id: str, job_id: str, data: dict[str, Any]) -> Job | None:
    command, workdir, state = data.get("command"), data.get("workdir"), data.get("state")
    name, then, note = data.get("name"), data.get("then"), data.get("note")
    if not isinstance(command, str) or not isinstance(workdir, str) or state not in STATES:
        return None
    if any(v is not None and not isinstance(v, str) for v in (name, note)):
        return None
    if then not in (None, "stop", "terminate"):
        return None
    pulls = _pulls(data.get("pulls"))
    code = data.get("exit_code")
    if pulls is None or (code is not None and (isinstance(code, bool) or not isinstance(code, int))):
        return None
    sizes = [data.get("log_bytes", 0), data.get("log_dropped", 0)]
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in sizes):
        return None
    started, ended = data.get("started"), data.get("ended")
    if (started is not None and _number(started) is None) or (ended is not None and _number(ended) is None):
        return None
    return Job(
        id=job_id,
        pod_id=pod_id,
        command=command,
        name=name,
        workdir=workdir,
        state=cast("JobState", state),
        exit_code=code,
        started=_number(started),
        ended=_number(ended),
        then=cast("Then | None", then),
        pulls=pulls,
        log_bytes=sizes[0],
        log_dropped=sizes[1],
        note=note,
    )


def _pulls(raw: object) -> tuple[Pull, ...] | None:
    if not isinstance(raw, list):
        return None
    out = []
    for item in raw:
        if not isinstance(item, dict):
            return None
        remote, local = item.get("remote"), item.get("local")
        if not isinstance(remote, str) or not remote or (local is not None and not isinstance(local, str)):
            return None
        out.append(Pull(remote, local))
    return tuple(out)


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


class JobMemory:
    """The jobs followed, in `path` (None: in memory only, the demo's)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.refused: str | None = None  # why the file is not used (and left alone), in words
        self._lock = threading.RLock()
        self._entries: dict[Key, Followed] | None = None
        self._unread: list[object] = []  # entries that could not be read: written back as they were
        self._stamp: tuple[int, int, int] | None = None  # the file's (inode, mtime_ns, size) when read or refused

    @classmethod
    def for_paths(cls, paths: Paths) -> JobMemory:
        """This data folder's memory, one per file in this process."""
        return _HELD.for_paths(paths)

    @classmethod
    def for_services(cls, services: Services) -> JobMemory:
        """podtui's own file; for the demo, one memory per run, never written: the demo's pods are not the user's."""
        return _HELD.for_services(services)

    # --- reading -------------------------------------------------------------------------------------------

    def entries(self) -> tuple[Followed, ...]:
        """Every job followed, the one seen last first."""
        with self._lock:
            found = self._load()
            return tuple(sorted(found.values(), key=lambda f: f.seen_at, reverse=True))

    def get(self, pod_id: str, job_id: str) -> Followed | None:
        with self._lock:
            return self._load().get((pod_id, job_id))

    # --- changing ------------------------------------------------------------------------------------------

    def change(self, act: Callable[[dict[Key, Followed]], T]) -> T:
        """`act` on the entries as the file holds them now (read again under the file's lock), then written if it
        changed any: the read, change, write of one podtui never interleaves with another's."""
        with self._lock, self._locked():
            entries = self._load(again=True)
            before = dict(entries)
            result = act(entries)
            if entries != before:
                self._save(entries)
            return result

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if self.path is None or fcntl is None:
            yield
            return
        private_dir(self.path.parent)
        lock_path = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # the lock goes with it

    # --- the file ------------------------------------------------------------------------------------------

    def _load(self, again: bool = False) -> dict[Key, Followed]:
        """Under the lock: the entries as the file holds them, read again when it changed (another podtui wrote it)
        or `again` (a change decides on what the file holds now, whatever its time stamp says). A refused file is
        looked at again once it changes: this session's entries join what it holds then."""
        if self.path is None:
            if self._entries is None:
                self._entries = {}
            return self._entries
        held = self._entries if self._entries is not None else {}
        try:
            st = self.path.stat()
        except FileNotFoundError:  # none yet, or moved away: this session's entries are all there is
            self.refused, self._unread, self._stamp = None, [], None
            self._entries = held
            return self._entries
        except OSError:
            if self._entries is None:
                self._entries = {}
            return self._entries  # cannot tell whether it changed: what was read stands
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if self._entries is not None and stamp == self._stamp and (not again or self.refused is not None):
            return self._entries  # as read (or still the file that was refused: left alone)
        was_refused = self.refused is not None
        self.refused, self._unread = None, []
        read = self._read()
        self._stamp = stamp
        if self.refused is not None:
            self._entries = held
        else:  # this session's own entries stand where a mended file is behind them
            self._entries = {**read, **held} if was_refused else read
        return self._entries

    def _read(self) -> dict[Key, Followed]:
        assert self.path is not None
        try:
            raw = read_json_member(self.path, "jobs", list, MAX_BYTES)
        except Unusable as e:
            self.refused = (
                f"the job memory {visible(str(self.path))} is not used: {visible(str(e))}. podtui leaves it as it is "
                "and keeps this session's jobs in memory; move it away to start a new one"
            )
            log.warning("%s", self.refused)
            return {}
        out: dict[Key, Followed] = {}
        for item in raw or []:
            entry = followed_from_json(item)
            if entry is None:
                self._unread.append(item)
            else:
                out[entry.key] = entry
        if self._unread:
            log.warning(
                "the job memory %s: %d entries could not be read; kept in the file as they are",
                visible(str(self.path)),
                len(self._unread),
            )
        return out

    def _save(self, entries: dict[Key, Followed]) -> None:
        """Under the lock: cut to MAX_ENTRIES (the oldest finished first) and written, unless the file is refused."""
        if len(entries) > MAX_ENTRIES:
            done = sorted((e for e in entries.values() if e.finished), key=lambda e: e.seen_at)
            for e in done[: len(entries) - MAX_ENTRIES]:
                del entries[e.key]
        self._entries = entries
        if self.path is None or self.refused is not None:
            return
        data = {"version": 1, "jobs": [*self._unread, *(e.as_json() for e in entries.values())]}
        text = json.dumps(data, indent=1, ensure_ascii=True) + "\n"
        if len(text) > MAX_BYTES:  # far past what MAX_ENTRIES holds: a record of enormous commands
            log.warning("the job memory %s would pass %d bytes; not written", visible(str(self.path)), MAX_BYTES)
            return
        write_private(self.path, text)
        try:
            st = self.path.stat()
            self._stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            self._stamp = None


def seen_now(entry: Followed | None, job: Job, pod_name: str, at: float) -> Followed:
    """An entry with the job as seen now (a job that has ended stays as it ended: a later listing cannot undo it)."""
    if entry is None:
        return Followed(job, pod_name, at)
    if entry.job.state in ENDED and job.state not in ENDED:
        return replace(entry, pod_name=pod_name or entry.pod_name)
    return replace(entry, job=job, pod_name=pod_name or entry.pod_name, seen_at=at)


_HELD = OnePerFile(JobMemory, FILE_NAME)
