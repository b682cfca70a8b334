"""A detached job on a pod, as podtui reads it back from the pod's `/workspace/.podtui/jobs/ID/` (docs/jobs.md):
what was asked (the spec), and what became of it (state, exit code, times, the log's size).

Plain data: `remote_jobs.py` starts, lists, reads and cancels jobs over a RemoteShell; `follow.py` does what a
job asked for once it ends (alert, pulls, then stop or terminate).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

JobState = Literal["running", "done", "failed", "cancelled", "lost"]
# done: exit 0; failed: any other exit (or it could not start); cancelled: `podtui job cancel` asked;
# lost: it stopped without an exit recorded (the pod stopped or restarted under it, or it was killed)
ENDED: frozenset[JobState] = frozenset({"done", "failed", "cancelled", "lost"})
Then = Literal["stop", "terminate"]

JOB_ID = re.compile(r"[a-z0-9][a-z0-9-]{2,39}")  # what podtui makes; anything else is refused before any shell sees it


@dataclass(frozen=True)
class Pull:
    """A path on the pod to bring home once the job ends: `remote` (absolute, or relative to the job's workdir)
    into `local` (None: the current directory's file of the same name, as `podtui transfer` does)."""

    remote: str
    local: str | None = None


@dataclass(frozen=True)
class JobSpec:
    """What `podtui run` (or the TUI's new-job form) asks for."""

    command: str  # run by the pod's shell, as typed
    name: str | None = None
    workdir: str | None = None  # None: /workspace
    then: Then | None = None
    pulls: tuple[Pull, ...] = ()
    log_max_mb: float | None = None  # the log's cap (config.toml's job_log_max_mb); None: 256 MB


@dataclass(frozen=True)
class Job:
    """One job as the pod's records say. Times are epoch seconds by the pod's clock."""

    id: str
    pod_id: str
    command: str
    name: str | None
    workdir: str
    state: JobState
    exit_code: int | None
    started: float | None
    ended: float | None
    then: Then | None
    pulls: tuple[Pull, ...]
    log_bytes: int  # what the job printed, dropped bytes included
    log_dropped: int  # bytes the cap dropped from the log (its head is kept, and its latest output)
    note: str | None = None  # why it is lost or failed to start, in words; a record podtui could not fully read

    @property
    def ended_yet(self) -> bool:
        return self.state in ENDED

    def duration_s(self, now: float) -> float | None:
        """How long it ran (or has run until `now`, by the pod's clock)."""
        if self.started is None:
            return None
        return max(0.0, (self.ended if self.ended is not None else now) - self.started)

    @property
    def label(self) -> str:
        return self.name or self.id


MAX_NAME = 200
MAX_PATH = 4096


def spec_problem(spec: JobSpec) -> str | None:
    """Why `spec` cannot be started, in words (None: it can). Bad input is refused before anything reaches a pod."""
    if not spec.command.strip():
        return "nothing to run: the command is empty"
    if "\0" in spec.command:
        return "the command holds a NUL character, which no shell can run"
    if spec.name is not None and (not spec.name.strip() or len(spec.name) > MAX_NAME or "\0" in spec.name):
        return f"a job's name is 1 to {MAX_NAME} characters"
    workdir = spec.workdir
    if workdir is not None and (not workdir.strip() or len(workdir) > MAX_PATH or _control(workdir)):
        return "the workdir must be a folder's path without control characters"
    if spec.then not in (None, "stop", "terminate"):
        return "--then is stop or terminate"
    for pull in spec.pulls:
        if not pull.remote.strip() or len(pull.remote) > MAX_PATH or _control(pull.remote):
            return "each --pull names a path on the pod (without control characters): --pull REMOTE[:LOCAL]"
        if pull.local is not None and (not pull.local.strip() or _control(pull.local)):
            return "a --pull's local path (after the colon) must be a path without control characters"
    if spec.log_max_mb is not None and not 1 <= spec.log_max_mb <= 1 << 20:
        return "the log's cap is from 1 to 1048576 MB"
    return None


def _control(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def dropped_line(n: int) -> str:
    """What a log view shows where the cap dropped `n` bytes (docs/jobs.md#the-log-and-its-cap)."""
    return f"[podtui: {n:,} bytes dropped here]"


class JobError(Exception):
    """A job could not be started, read or cancelled; str(e) says why and what to do."""


class JobNotFound(JobError):
    """No job with that id on the pod."""
