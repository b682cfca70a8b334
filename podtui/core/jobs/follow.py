"""What podtui does once a detached job ends (docs/jobs.md#after-a-job), in this order, each step once:

1. the alert (`job_ended`, its severity by how the job ended);
2. its `--pull` paths downloaded through the transfer queue, each verified on both ends;
3. its pod stopped or terminated as it asked, only once every pull is verified and still where it landed (the
   rule of terminate-after-download). A pull that fails leaves the pod running, and that is said as an error.

A lost job (its pod stopped under it) gets its alert and nothing else; so does a cancelled one (whoever cancelled it
is at the keyboard) and one in read-only mode.

The same object serves the app (ui/job_desk.py) and `podtui watch`: what differs (where an alert goes, which queue
the pulls join, how a stop or terminate is sent or asked) comes through `FollowHooks`. Each step is written in the
job memory before it is taken (job_memory.py), and a job's follow-up is held by one podtui at a time: a podtui that
restarts, or another one once the first is gone, takes it up where it stopped and never takes a step twice. Blocking:
call it from a thread.
"""

from __future__ import annotations

import logging
import os
import posixpath
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from podtui.core.alerts import Alert, Severity, job_ended, job_pod_kept
from podtui.core.api.errors import ApiUnavailable
from podtui.core.jobs.job import ENDED, Job, Pull
from podtui.core.jobs.job_memory import Followed, JobMemory, Key, seen_now
from podtui.core.pod import Pod, PodStatus
from podtui.core.visible import visible
from podtui.transfer import owner

if TYPE_CHECKING:
    from podtui.transfer.job import TransferJob
    from podtui.transfer.queue import TransferQueue

log = logging.getLogger(__name__)

DOWN = (PodStatus.EXITED, PodStatus.ERROR, PodStatus.TERMINATED)
LOST_WITH_POD = "its pod stopped while it ran (or before podtui saw it end), so nothing recorded how it ended"
GONE_FROM_POD = "its record on the pod is gone"
# a pull whose podtui stopped halfway is retried once by the podtui that takes the follow-up over
INTERRUPTED_WORDS = ("podtui stopped during this transfer", "stopped before it was done")
# what the stop or terminate step is while it is being taken (a podtui that takes over a follow-up left at one of
# these takes the step again: a second stop of a stopped pod is refused by RunPod, a question is asked again)
STOPPING, TERMINATING = "stop: sending", "terminate: under way"
ASKED = "terminate: asked"  # the app asked the user; the answer finishes it (FollowUp.answered)
UNDER_WAY = "under way"  # another job's stop or terminate is being taken (docs/jobs.md#after-a-job)


class FollowHooks(Protocol):
    """What the follow-up needs of whoever runs it (the app or `podtui watch`). Called from the follow-up's thread."""

    @property
    def read_only(self) -> bool: ...  # pulls, stops and terminates are all switched off

    def alert(self, alert: Alert) -> None: ...  # to the router (docs/alerts.md)
    def queue(self) -> TransferQueue: ...  # the transfer queue the pulls join, started
    def stop(self, job: Job, pod_name: str) -> str: ...  # send it: what became of it, in words (STOP_SENT ...)
    # the app asks (ASKED, then answered()); `podtui watch` sends it, confirmed at `podtui run` time
    def terminate(self, job: Job, pod_name: str) -> str: ...
    def say(self, text: str, severity: Severity) -> None: ...  # a step, in a line (the app: a note)
    def busy(self, pod_id: str) -> bool: ...  # a transfer from or to the pod is queued or under way


STOP_SENT, TERMINATE_SENT = "stop sent", "terminate sent"


class Closing(Exception):
    """Raised by a hook instead of starting a request: the podtui running the follow-up is ending, and the steps
    left are the next podtui's (the step's mark is undone, as for any step not sent)."""


class FollowUp:
    def __init__(
        self,
        memory: JobMemory,
        hooks: FollowHooks,
        clock: Callable[[], float],
        here: Callable[[], Path] = Path.cwd,
    ) -> None:
        """here: where a pull without a local path lands (as `podtui pull` does: the current folder)."""
        self.memory, self.hooks, self.clock, self.here = memory, hooks, clock, here
        self.owner = owner.claim(adopts=True)
        self._lock = threading.RLock()  # one decision at a time in this podtui (the memory's lock spans podtuis)
        self._held: set[Key] = set()  # stops held for another job on the pod, said once (docs/jobs.md#after-a-job)

    def close(self) -> None:
        """The follow-ups this podtui holds are left for the next podtui to take up."""
        owner.release(self.owner)

    # --- what podtui learns --------------------------------------------------------------------------------

    def started(self, job: Job, pod_name: str) -> None:
        """A job podtui started: followed from now on (one that failed at once too: its end is news)."""
        with self._lock:
            remember_started(self.memory, job, pod_name, self.clock())
            self.go_on()

    def seen(
        self, pod_id: str, pod_name: str, jobs: Iterable[Job], whole: bool = False, gone: Iterable[str] = ()
    ) -> None:
        """Jobs as read from their pod. A running one is remembered, to be followed when it ends; one remembered
        that has ended is followed up. One that had ended before podtui followed it is history, not news. whole: the
        pod's whole list, so a job remembered running that is not in it has lost its record; gone: jobs asked about
        that the pod has no record of (lost likewise)."""
        now = self.clock()
        jobs = list(jobs)
        listed = {j.id for j in jobs}
        missing = set(gone)

        def remember(entries: dict[Key, Followed]) -> None:
            for job in jobs:
                entry = entries.get((pod_id, job.id))
                if entry is None and job.state != "running":
                    continue
                if entry is None or not entry.finished:
                    entries[(pod_id, job.id)] = seen_now(entry, job, pod_name, now)
            for key, entry in list(entries.items()):
                if key[0] == pod_id and _running(entry) and (key[1] in missing or (whole and key[1] not in listed)):
                    entries[key] = _lost(entry, GONE_FROM_POD, now)

        with self._lock:
            self.memory.change(remember)
            self.go_on()

    def pods_seen(self, pods: Iterable[Pod], whole: bool) -> None:
        """A poll's pods: a job remembered running on a pod that is down (stopped, failed, terminated) or gone from
        a whole answer is lost; its alert says so. A partial answer says nothing of the pods it left out."""
        pods = list(pods)
        down = {p.id for p in pods if p.status in DOWN}
        listed = {p.id for p in pods}

        def under_it(entry: Followed) -> bool:
            pod_id = entry.job.pod_id
            return _running(entry) and (pod_id in down or (whole and pod_id not in listed))

        def lose(entries: dict[Key, Followed]) -> None:
            now = self.clock()
            for key, entry in list(entries.items()):
                if under_it(entry):
                    entries[key] = _lost(entry, LOST_WITH_POD, now)

        with self._lock:
            if any(under_it(e) for e in self.memory.entries()):
                self.memory.change(lose)
            self.go_on()

    def go_on(self) -> None:
        """Take every unfinished follow-up as far as it goes now (after a check, a transfer's change, at start)."""
        with self._lock:
            for entry in self.memory.entries():
                if not entry.finished and entry.job.state in ENDED:
                    try:
                        self._advance(entry.key)
                    except Closing:
                        return  # no step more: this podtui is ending
                    except ApiUnavailable as e:  # RunPod did not answer: taken again at the next go_on
                        log.warning("following up job %s on %s: %s", entry.job.id, entry.job.pod_id, e)
                    except Exception:  # one job's trouble must not hold the others back
                        log.exception("following up job %s on %s failed", entry.job.id, entry.job.pod_id)

    def answered(self, pod_id: str, job_id: str, words: str) -> None:
        """The app's question about terminating the job's pod was answered: `words` say how."""
        with self._lock:
            self._set((pod_id, job_id), then_done=words, finished=True)

    # --- what the checks look at ---------------------------------------------------------------------------

    def running(self) -> dict[str, list[Followed]]:
        """The jobs remembered running, by pod id: what the light check asks their pods about."""
        out: dict[str, list[Followed]] = {}
        for entry in self.memory.entries():
            if _running(entry):
                out.setdefault(entry.job.pod_id, []).append(entry)
        return out

    def waiting(self) -> set[str]:
        """The pods where an ended job's stop or terminate is still to come (held for a job running there, or
        its pulls under way): the light check looks at them as often as at a pod whose job asked for one."""
        return {
            e.job.pod_id
            for e in self.memory.entries()
            if not e.finished and e.job.state in ENDED and e.job.then is not None
        }

    def pending(self, pod_id: str) -> list[Followed]:
        """The jobs of a pod whose follow-up is under way (for the Jobs tab to say so)."""
        return [e for e in self.memory.entries() if e.job.pod_id == pod_id and not e.finished]

    def entry(self, pod_id: str, job_id: str) -> Followed | None:
        return self.memory.get(pod_id, job_id)

    # --- the steps -----------------------------------------------------------------------------------------

    def _advance(self, key: Key) -> None:
        claimed = self._claim(key)
        if claimed is None:
            return
        entry, took_over = claimed
        job, name = entry.job, entry.pod_name
        if entry.alerted is None:
            entry = self._set(key, alerted=self.clock())
            try:
                self.hooks.alert(job_ended(job, name, self.clock(), _next_step(entry, self.hooks.read_only)))
            except Closing:  # not said: the next podtui says it
                self._set(key, alerted=None)
                raise
        if not entry.asked_for_something:
            self._set(key, finished=True)
            return
        if job.state in ("lost", "cancelled"):
            self._set(key, then_done=f"not done: the job was {job.state}", finished=True)
            return
        if self.hooks.read_only:
            self._set(key, then_done="not done: read-only mode", finished=True)
            return
        if job.pulls:
            entry = self._queue_pulls(entry)
            pulls = self._pulls_state(entry, took_over)
            if pulls == "pending":
                return
            if pulls != "verified":
                self._kept(entry, pulls)
                return
        if job.then is None:
            self._set(key, finished=True)
            return
        self._then(entry, took_over)

    def _claim(self, key: Key) -> tuple[Followed, bool] | None:
        """The follow-up is this podtui's now (it was nobody's, or its podtui is gone): the entry, and whether it
        was taken over from another podtui. None: finished, or another podtui that still runs holds it."""

        def claim(entries: dict[Key, Followed]) -> tuple[Followed, bool] | None:
            entry = entries.get(key)
            if entry is None or entry.finished or entry.job.state not in ENDED:
                return None
            if owner.same(entry.owner, self.owner):
                return entry, False
            if entry.owner is not None and owner.alive(entry.owner):
                return None
            entries[key] = entry = replace(entry, owner=dict(self.owner))
            return entry, True

        return self.memory.change(claim)

    def _set(self, key: Key, **changes: object) -> Followed:
        """The entry with `changes`, written before the step they record is taken."""

        def change(entries: dict[Key, Followed]) -> Followed:
            entry = replace(entries[key], **changes)  # type: ignore[arg-type]
            entries[key] = entry
            return entry

        return self.memory.change(change)

    def _queue_pulls(self, entry: Followed) -> Followed:
        """The pulls in the transfer queue: their ids written first, then each queued under its id, so a podtui
        that stopped in between queues the missing ones (and never a second copy)."""
        if entry.pulls_queued:
            return entry
        job = entry.job
        if entry.pull_ids is None:
            entry = self._set(entry.key, pull_ids=tuple(uuid.uuid4().hex[:10] for _ in job.pulls))
        assert entry.pull_ids is not None
        queue = self.hooks.queue()
        for pull, transfer_id in zip(job.pulls, entry.pull_ids, strict=True):
            if queue.get(transfer_id) is None:
                queue.add(self._transfer(job, entry.pod_name, pull, transfer_id))
        queue.flush()  # in the history before it is called queued: another podtui taking over looks there
        said = ", ".join(visible(p.remote) for p in job.pulls)
        self.hooks.say(f"job {visible(job.label)} on {visible(entry.pod_name)}: pulling {said}", "information")
        return self._set(entry.key, pulls_queued=True)

    def _transfer(self, job: Job, pod_name: str, pull: Pull, transfer_id: str) -> TransferJob:
        from podtui.transfer.job import TransferJob

        return TransferJob(
            job.pod_id,
            "pull",
            remote_path(job, pull),
            local_path(pull, self.here()),
            pod_name=pod_name,
            id=transfer_id,
        )

    def _pulls_state(self, entry: Followed, took_over: bool) -> str:
        """ "pending", "verified" (every pull verified, and still where it landed), or why not, in words."""
        from podtui.transfer.runners import runner_for

        queue = self.hooks.queue()
        assert entry.pull_ids is not None
        pending = False
        for pull, transfer_id in zip(entry.job.pulls, entry.pull_ids, strict=True):
            t = queue.get(transfer_id)
            what = visible(pull.remote)
            if t is None:
                return f"the pull of {what} is no longer in the transfer list"
            if t.state == "verified":
                if not runner_for("pull").landed(t):
                    return f"{visible(t.final_path or what)} is no longer here as it was verified"
                continue
            if t.state == "failed" and self._retry(entry, t, queue):
                pending = True
                continue
            if t.state == "failed":
                return f"the pull of {what} failed: {visible(t.error or 'no reason given')}"
            if t.state == "cancelled":
                return f"the pull of {what} was cancelled"
            pending = True
        return "pending" if pending else "verified"

    def _retry(self, entry: Followed, t: TransferJob, queue: TransferQueue) -> bool:
        """A pull its podtui stopped in the middle of, adopted by this one's queue: retried once."""
        interrupted = t.retryable and any(w in (t.error or "") for w in INTERRUPTED_WORDS)
        if not interrupted or t.id in entry.retried or not queue.mine(t):
            return False
        self._set(entry.key, retried=(*entry.retried, t.id))
        return queue.retry(t.id)

    def _kept(self, entry: Followed, why: str) -> None:
        """A pull did not verify: the pod is left as it is, said as an error (it bills on)."""
        job, name = entry.job, entry.pod_name
        self._set(entry.key, then_done=f"kept: {why}", finished=True)
        if job.then is None:
            self.hooks.say(f"job {visible(job.label)} on {visible(name)}: {why}", "error")
            return
        text = (
            f"job {job.label} on {name}: {why}; so {name} is left running, not {_verb(job)} as asked. Bring the "
            "results home another way, then stop or terminate it yourself"
        )
        self.hooks.alert(job_pod_kept(job.pod_id, name, job.id, text, self.clock()))

    def _then(self, entry: Followed, took_over: bool) -> None:
        """Stop or terminate the pod, once: marked before it is sent; a podtui that took over a follow-up left
        halfway through this step takes it again (a second stop is refused by RunPod, a question asked again)."""
        job, name = entry.job, entry.pod_name
        if entry.then_done is not None and not took_over:
            return  # under way here (a question open, a stop being sent)
        if self.hooks.busy(job.pod_id):
            return  # another transfer from or to the pod is under way: decided again when it ends
        if self._another_runs(entry):
            return  # decided again when that job is seen to end (docs/jobs.md#after-a-job)
        step = STOPPING if job.then == "stop" else TERMINATING

        def take(entries: dict[Key, Followed]) -> str | None:
            """Decided and marked in one change of the memory, so two podtuis never both send it: "go", or None."""
            now = entries[entry.key]
            done = _done_by_another(entries.values(), now)
            if done == UNDER_WAY:
                return None  # another job's step is being taken: decided again at the next go_on
            if done is not None:
                entries[entry.key] = replace(now, then_done=done, finished=True)
                return None
            entries[entry.key] = replace(now, then_done=step)
            return "go"

        if self.memory.change(take) is None:
            return
        try:
            words = self.hooks.stop(job, name) if job.then == "stop" else self.hooks.terminate(job, name)
        except Exception:
            # not sent (RunPod unreachable, the app closing): the step is taken again at the next go_on, here or in
            # the next podtui, never recorded as done with the pod still billing (docs/jobs.md#after-a-job)
            self._set(entry.key, then_done=None)
            raise
        self._set(entry.key, then_done=words, finished=words != ASKED)

    def _another_runs(self, entry: Followed) -> bool:
        """Another job remembered running on the pod: stopping it now would kill that job, so the step waits for
        it (said once)."""
        job = entry.job
        others = [e for e in self.memory.entries() if e.key != entry.key and e.job.pod_id == job.pod_id and _running(e)]
        if not others:
            self._held.discard(entry.key)
            return False
        if entry.key not in self._held:
            self._held.add(entry.key)
            what = "stopped" if job.then == "stop" else "terminated"
            self.hooks.say(
                f"job {visible(job.label)} on {visible(entry.pod_name)} ended; the pod is {what} once job "
                f"{visible(others[0].job.label)} ends too: it still runs there",
                "information",
            )
        return True


def _done_by_another(entries: Iterable[Followed], entry: Followed) -> str | None:
    """Another job that ran beside this one (it ended after this one started) had the pod stopped or terminated
    already, which does for this one too: in words; UNDER_WAY while its step is being taken (a stop being sent, a
    terminate asked); None: not so. An earlier run's stop is not this one's (the pod was started again since)."""
    job = entry.job
    for other in entries:
        if other.key == entry.key or other.job.pod_id != job.pod_id or other.then_done is None:
            continue
        if other.job.ended is None or job.started is None or other.job.ended < job.started:
            continue
        if other.then_done in (STOPPING, TERMINATING, ASKED):
            return UNDER_WAY
        if other.then_done == TERMINATE_SENT or (other.then_done == STOP_SENT and job.then == "stop"):
            return f"{other.then_done} with job {other.job.label}"
    return None


def remember_started(memory: JobMemory, job: Job, pod_name: str, at: float) -> None:
    """A job `podtui run` started: remembered, so that the app or `podtui watch` follows it up when it ends (the
    command itself follows nothing: it ends once the job has started)."""

    def remember(entries: dict[Key, Followed]) -> None:
        entries[(job.pod_id, job.id)] = seen_now(entries.get((job.pod_id, job.id)), job, pod_name, at)

    memory.change(remember)


def remote_path(job: Job, pull: Pull) -> str:
    """The pull's path on the pod: as given when absolute (or from the home folder), else under the job's workdir."""
    remote = pull.remote
    if remote.startswith(("/", "~")):
        return remote
    return posixpath.join(job.workdir or "/workspace", remote)


def local_path(pull: Pull, here: Path) -> str:
    """Where the pull lands: its local path (a relative one under `here`), or into `here` itself. A path that ends
    with a slash is a folder to put it in: made when missing (a pull puts a file into a folder that exists, else
    names the file so)."""
    if pull.local is None or not pull.local.strip():
        return str(here)
    local = pull.local.strip()
    path = here / os.path.expanduser(local)
    if local.endswith(("/", os.sep)):
        path.mkdir(parents=True, exist_ok=True)
    return str(path)


def _running(entry: Followed) -> bool:
    return not entry.finished and entry.job.state == "running"


def _lost(entry: Followed, why: str, now: float) -> Followed:
    return replace(entry, job=replace(entry.job, state="lost", note=why), seen_at=now)


def _verb(job: Job) -> str:
    return "terminated" if job.then == "terminate" else "stopped"


def _next_step(entry: Followed, read_only: bool) -> str:
    """What podtui does after the alert, in a few words for it."""
    job = entry.job
    if not entry.asked_for_something:
        return ""
    if job.state in ("lost", "cancelled") or read_only:
        why = "read-only mode" if read_only and job.state not in ("lost", "cancelled") else f"it was {job.state}"
        return f"its pulls and its pod's stop are not done ({why})"
    steps = []
    if job.pulls:
        n = len(job.pulls)
        steps.append(f"pulling {n} path{'s' if n != 1 else ''}")
    if job.then == "stop":
        steps.append(f"then stopping {entry.pod_name}" if job.pulls else f"stopping {entry.pod_name}")
    elif job.then == "terminate":
        steps.append(("then " if job.pulls else "") + f"terminating {entry.pod_name}")
    if job.pulls and job.then is not None:
        steps[-1] += " once every pull is verified"
    return ", ".join(steps)
