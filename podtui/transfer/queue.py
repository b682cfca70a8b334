"""The transfer queue: several transfers at once up to a limit, cancel, retry with backoff, a persisted history,
and "then terminate the pod" once every marked download of a pod is verified.

Runs on plain threads (no UI imports): the pane and the CLI watch it through `on_change`, which is called from
worker threads with a copy of the job, and `on_removed`, with the id of a job no longer listed. The history is
written by the queue's own saver thread, so adding, cancelling, retrying or removing never waits for the file.
Each job is run by the runner for its kind (runners.py); what differs between kinds (read-only mode, work that
goes on on the pod, whether a download is still in place) the queue asks the runner.

Every job belongs to one queue (owner.py). A queue runs, cancels, retries and removes only its own jobs; the
jobs of another podtui sharing the history are listed as that podtui last wrote them, refreshed when the file
changes, and adopted only once that podtui is gone; one whose podtui cannot be looked up from here (another machine
or container) only the user can take off the list (forget). Another podtui's transfer from a pod that is still
queued or under way holds back a "then terminate" of that pod: the history is read again before deciding, the
hold is said (in the marked jobs' logs, through `on_terminate_held`, and by terminate_hold()), and the decision is
taken again when that transfer ends or is forgotten.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence

from podtui.transfer import owner
from podtui.transfer.history import TransferHistory
from podtui.transfer.job import ACTIVE, FINISHED, TransferJob
from podtui.transfer.progress import Reporter, TransferCancelled
from podtui.transfer.runner import TransferContext, TransferFailed
from podtui.transfer.runners import runner_for

log = logging.getLogger(__name__)
BACKOFF_S: tuple[float, ...] = (2.0, 8.0, 30.0)  # before the 2nd, 3rd, 4th attempt
WATCH_S = 1.0  # how often the history file is looked at for another podtui's changes


class TransferQueue:
    def __init__(
        self,
        ctx: TransferContext,
        history: TransferHistory | None = None,
        concurrency: int = 2,
        backoff_s: Sequence[float] = BACKOFF_S,
        on_change: Callable[[TransferJob], None] | None = None,
        on_terminate_ready: Callable[[str, str, bool], None] | None = None,
        read_only: bool = False,
        adopt: bool = True,
        watch_s: float | None = WATCH_S,
        on_removed: Callable[[str], None] | None = None,
        on_terminate_held: Callable[[str, str, str], None] | None = None,
    ) -> None:
        """adopt: list every job of the history and take over those whose podtui is gone (the TUI). Without it
        (`podtui push|pull`) the queue holds only the jobs added to it, though it still writes them into the
        shared history. watch_s: how often to look for another podtui's changes (None: only at start)."""
        self.ctx = ctx
        self.history = history
        self.concurrency = max(1, concurrency)
        self.backoff_s = tuple(backoff_s)
        self.on_change = on_change
        self.on_removed = on_removed
        self.on_terminate_ready = on_terminate_ready  # (pod id, pod name, confirmed up front)
        self.on_terminate_held = on_terminate_held  # (pod id, pod name, what holds it), once per new holder
        self.read_only = read_only  # uploads change pods: in read-only mode they never start
        self._lock = threading.Lock()
        self._reload_lock = threading.Lock()  # one reload at a time, so an older file never lands after a newer
        # saves: one thread writes them all, in order, each with the newest jobs (requests made meanwhile merge)
        self._saves = threading.Condition()
        self._save_asked = self._save_done = 0
        self._saver: threading.Thread | None = None
        self._saver_stop = False
        self.owner = owner.claim(adopts=adopt)
        self.adopt = adopt
        self.watch_s = watch_s if adopt else None
        self._jobs: list[TransferJob] = history.load(self.owner) if history is not None and adopt else []
        self._removed: set[str] = set()
        self._watcher: threading.Thread | None = None
        self._stop_watching = threading.Event()
        self._reporters: dict[str, Reporter] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._saved_states: dict[str, str] = {}
        self._saved_pids: dict[str, list[object]] = {j.id: _pids(j) for j in self._jobs}
        self._announced: set[str] = set()
        self._held: set[str] = set()  # pods with a marked download verified here whose terminate waits
        self._holds: dict[str, str] = {}  # pod id: what another podtui has pending that holds its terminate back
        self._holders_said: dict[str, set[str]] = {}  # pod id: the holding jobs already said
        self._forgotten: dict[str, dict[str, object]] = {}  # job id: the job as the user forgot it
        self._forgetting: dict[str, owner.Owner | None] = {}  # job id: its owner, until a save takes it out
        self._closing = False
        self._started = False
        self._stoppers: dict[str, threading.Thread] = {}  # jobs being stopped on their pod, outside a worker

    # -- what the pane and the CLI call -------------------------------------------------------------------

    def start(self) -> TransferQueue:
        """Begin running what is queued (including jobs queued before a restart)."""
        self._started = True
        if self.history is not None and self.watch_s is not None and self._watcher is None:
            self._watcher = threading.Thread(target=self._watch, daemon=True, name="transfer-history-watch")
            self._watcher.start()
        self._pump()
        return self

    def mine(self, job: TransferJob) -> bool:
        """Whether this queue runs the job (else another podtui does, and this one only shows it)."""
        return owner.same(job.owner, self.owner)

    def foreign(self, job_id: str) -> str | None:
        """Who runs the job when it is not this queue ("another podtui (pid 123)"), else None."""
        with self._lock:
            job = self._find(job_id)
            return owner.describe(job.owner) if job is not None and not self.mine(job) else None

    def jobs(self) -> list[TransferJob]:
        with self._lock:
            return [copy.deepcopy(j) for j in self._jobs]

    def unverified(self, pod_id: str) -> list[TransferJob]:
        """Transfers from or to the pod that are not verified and not given up: what terminating it would lose."""
        return [j for j in self.jobs() if j.pod_id == pod_id and j.state not in ("verified", "cancelled")]

    def busy_pods(self) -> set[str]:
        """The pods a transfer is moving data from or to, or waits to: they are in use, whatever their GPU does."""
        return {j.pod_id for j in self.jobs() if j.state not in ("verified", "failed", "cancelled")}

    def get(self, job_id: str) -> TransferJob | None:
        with self._lock:
            job = self._find(job_id)
            return copy.deepcopy(job) if job else None

    def add(self, job: TransferJob) -> TransferJob:
        with self._lock:
            job.state, job.attempts = "queued", 0
            job.owner = dict(self.owner)
            job.note(f"queued: {job.direction} {job.source} -> {job.target} (via {job.route_choice}, {job.algorithm})")
            self._jobs.append(job)
            if job.terminate_after:
                self._announced.discard(job.pod_id)
        self._changed(job)
        self._pump()
        return job

    def cancel(self, job_id: str) -> bool:
        with self._lock:
            job = self._find(job_id)
            if job is None or job.state in FINISHED or not self.mine(job):
                return False
            reporter = self._reporters.get(job_id)
            if reporter is not None:
                reporter.cancel.set()  # the worker notices at its next progress report and ends it
                return True
            job.state, job.finished_at = "cancelled", time.time()
            job.note("cancelled before it started")
        self._changed(job)
        self._stop_on_pod_later(job, listed=True)  # one queued again after a restart may still run on the pod
        return True

    def retry(self, job_id: str) -> bool:
        with self._lock:
            job = self._find(job_id)
            if job is None or job.state not in ("failed", "cancelled") or not self.mine(job):
                return False
            job.state, job.error, job.error_kind, job.attempts, job.finished_at = "queued", None, None, 0, None
            job.done_bytes, job.rate_bytes_per_s, job.eta_s = 0, None, None
            job.note("retry asked for")
            if job.terminate_after:
                self._announced.discard(job.pod_id)
        self._changed(job)
        self._pump()
        return True

    def forgettable(self, job_id: str) -> bool:
        """Whether the job is another podtui's that this one can never take over: that podtui runs on another
        machine or in another container, so whether it still runs cannot be told from here."""
        with self._lock:
            job = self._find(job_id)
            return job is not None and not self.mine(job) and owner.liveness(job.owner) == "unknown"

    def forget(self, job_id: str) -> bool:
        """Take such a job off the list and out of the shared history, at the user's word (its podtui may have
        stopped for good, and nothing else ever clears it). Nothing is stopped, cleaned or killed: that podtui, if
        it still runs, goes on with the transfer, and the job is listed again once it writes it changed."""
        with self._lock:
            job = self._find(job_id)
            if job is None or self.mine(job) or owner.liveness(job.owner) != "unknown":
                return False
            self._jobs.remove(job)
            self._forgotten[job.id] = copy.deepcopy(job.to_json())
            self._forgetting[job.id] = copy.deepcopy(job.owner)
        self._save()
        if self.on_removed is not None:
            self.on_removed(job.id)
        if job.pod_id in self._held:  # it may have held a "then terminate" back; landed() may read a big folder
            threading.Thread(
                target=self._decide_terminate, args=(job.pod_id,), daemon=True, name=f"transfer-decide-{job.pod_id}"
            ).start()
        return True

    def terminate_hold(self, job_id: str) -> str | None:
        """What holds back the "then terminate" of this queue's verified marked download, in words; else None."""
        with self._lock:
            job = self._find(job_id)
            if job is None or not self.mine(job) or not job.terminate_after or job.state != "verified":
                return None
            return self._holds.get(job.pod_id)

    def remove(self, job_id: str) -> bool:
        """Forget a finished job (its files stay where they are)."""
        with self._lock:
            job = self._find(job_id)
            if job is None or job.state not in FINISHED or not self.mine(job):
                return False
            self._jobs.remove(job)
            self._removed.add(job.id)
        self._save()
        if self.on_removed is not None:
            self.on_removed(job.id)
        if job.state == "failed":  # a failed download may go on on the pod (a lost connection): end it there
            self._stop_on_pod_later(job, listed=False)
        return True

    def wait(self, job_ids: Sequence[str] | None = None, timeout_s: float | None = None) -> bool:
        """Block until the given jobs (default: all of this queue's own) are finished; False on timeout. Another
        podtui's job finishes here when the history says so."""
        end = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            with self._lock:
                pending = [
                    j.id
                    for j in self._jobs
                    if (j.id in job_ids if job_ids is not None else self.mine(j))
                    and (j.state not in FINISHED or j.id in self._threads)
                ]
                pending += [i for i in self._stoppers if job_ids is None or i in job_ids]
            if not pending:
                return True
            if end is not None and time.monotonic() > end:
                return False
            time.sleep(0.05)

    def flush(self) -> None:
        """Wait until the history holds this queue's jobs as they are now (saves are written by a thread)."""
        self._save(wait=True)

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop every running transfer and save: they are listed after a restart, as interrupted."""
        with self._lock:
            self._closing = True
            reporters = list(self._reporters.values())
            threads = list(self._threads.values())
        self._stop_watching.set()
        for r in reporters:
            r.closing = True
            r.cancel.set()
        for t in threads:
            t.join(timeout_s)
        with self._lock:
            stopping = list(self._stoppers.values())
        for t in stopping:
            t.join(timeout_s)
        if self._watcher is not None:
            self._watcher.join(timeout_s)
        self.flush()
        with self._saves:
            self._saver_stop = True
            self._saves.notify_all()
        if self._saver is not None:
            self._saver.join(timeout_s)
        owner.release(self.owner)  # from now on its jobs are for whoever loads the history next

    # -- workers ------------------------------------------------------------------------------------------

    def _find(self, job_id: str) -> TransferJob | None:
        return next((j for j in self._jobs if j.id == job_id), None)

    def _pump(self) -> None:
        if not self._started:
            return
        with self._lock:
            if self._closing:
                return
            running = sum(1 for j in self._jobs if j.id in self._threads)
            for job in self._jobs:
                if running >= self.concurrency:
                    break
                if not self.mine(job):
                    continue  # another podtui's: it runs it
                changes = runner_for(job.direction).changes_pods
                if job.state == "queued" and job.id not in self._threads and self.read_only and changes:
                    job.state, job.error, job.retryable = "failed", f"read-only mode: {changes} are switched off", True
                    job.finished_at = time.time()
                    continue
                if job.state == "queued" and job.id not in self._threads and job.id not in self._stoppers:
                    reporter = Reporter(job, self._changed, self._lock)
                    self._reporters[job.id] = reporter
                    t = threading.Thread(
                        target=self._work, args=(job, reporter), daemon=True, name=f"transfer-{job.id}"
                    )
                    self._threads[job.id] = t
                    running += 1
                    t.start()

    def _work(self, job: TransferJob, reporter: Reporter) -> None:
        try:
            self._attempts(job, reporter)
        finally:
            # every callback about this job is made before wait() sees it finished (the thread is still listed)
            self._changed(job)
            if not self._closing:
                self._check_terminate(job)
            with self._lock:
                self._reporters.pop(job.id, None)
                self._threads.pop(job.id, None)
            self._pump()

    def _attempts(self, job: TransferJob, reporter: Reporter) -> None:
        runner = runner_for(job.direction)
        while True:
            with self._lock:
                job.attempts += 1
                job.error = job.error_kind = None
                job.done_bytes, job.rate_bytes_per_s, job.eta_s = 0, None, None
            try:
                runner.run(job, reporter, self.ctx)
            except TransferCancelled:
                self._end(job, "cancelled", None if not self._closing else "interrupted")
                return
            except TransferFailed as e:
                delay = self.backoff_s[job.attempts - 1] if job.attempts <= len(self.backoff_s) else None
                if reporter.cancel.is_set() and runner.runs_on_pod:  # cancelled while the attempt failed
                    self._cancel_on_pod(job)
                    self._end(job, "cancelled", None if not self._closing else "interrupted")
                    return
                if e.retryable and delay is not None and not reporter.cancel.is_set():
                    reporter.stage("queued", f"attempt {job.attempts} failed: {e}; trying again in {delay:g} s")
                    with self._lock:
                        job.error, job.error_kind = f"retrying in {delay:g} s: {e}", e.kind
                    self._changed(job)
                    if reporter.cancel.wait(delay):
                        # its work may go on on the pod (the attempt lost its connection): end it there
                        self._cancel_on_pod(job)
                        self._end(job, "cancelled", None if not self._closing else "interrupted")
                        return
                    continue
                self._end(job, "failed", str(e), e.kind, e.retryable)
                return
            except Exception as e:  # a bug or an unforeseen failure: the job fails, the queue goes on
                log.exception("transfer %s failed unexpectedly", job.id)
                self._end(job, "failed", f"unexpected error: {type(e).__name__}: {e}", "bug")
                return
            self._end(job, "verified", None)
            return

    def _cancel_on_pod(self, job: TransferJob) -> None:
        """A job whose work runs on the pod by itself, cancelled outside its attempt: end that work there (closing
        podtui leaves it running, as a running one is left)."""
        runner = runner_for(job.direction)
        if not runner.runs_on_pod or self._closing:
            return
        with self._lock:
            snapshot = copy.deepcopy(job)
        said = runner.stop_on_pod(snapshot, self.ctx)
        if said is None:  # nothing was started on the pod
            return
        with self._lock:
            job.note(said)

    def _stop_on_pod_later(self, job: TransferJob, listed: bool) -> None:
        """_cancel_on_pod on a thread of its own (cancel and remove are called from the UI); wait() waits for
        it. listed: the job is still in the queue, so its note is shown and saved."""
        if not runner_for(job.direction).started_on_pod(job) or self._closing:
            return

        def stop() -> None:
            try:
                self._cancel_on_pod(job)
            finally:
                if listed:
                    self._changed(job)
                with self._lock:
                    self._stoppers.pop(job.id, None)
                self._pump()  # a retry asked for meanwhile waited for the stop (it would end the new run)

        t = threading.Thread(target=stop, daemon=True, name=f"transfer-stop-{job.id}")
        with self._lock:
            self._stoppers[job.id] = t
        t.start()

    def _end(
        self, job: TransferJob, state: str, error: str | None, kind: str | None = None, retryable: bool = False
    ) -> None:
        with self._lock:
            self._reporters.pop(job.id, None)  # a cancel from now on is for whatever runs next, not this run
            if self._closing and state == "cancelled":
                job.note("interrupted: podtui is closing")
                return  # keeps its running state in the history; loading it marks it interrupted
            job.state = state  # type: ignore[assignment]
            job.error, job.error_kind, job.retryable = error, kind, retryable
            job.finished_at = time.time()
            job.rate_bytes_per_s = job.eta_s = None
            job.note(
                {"verified": f"verified ({job.algorithm} {job.checksum})", "cancelled": "cancelled"}.get(
                    state, f"failed: {error}"
                )
            )

    def _check_terminate(self, job: TransferJob) -> None:
        """A job of this queue ended: if it was a download marked "then terminate", or the pod has one waiting,
        decide on the pod (with what other podtuis wrote, read again now)."""
        if self.on_terminate_ready is None:
            return
        with self._lock:
            if job.terminate_after and job.state == "verified":
                self._held.add(job.pod_id)
            if job.pod_id not in self._held:
                return
        for pod_id in {job.pod_id} | self._reload():
            self._decide_terminate(pod_id)

    def _decide_terminate(self, pod_id: str) -> None:
        """Once every download of this queue marked "then terminate" for the pod is verified and still there as
        verified, and nothing else for the pod is queued or under way (here or in another podtui), say so once.
        While only another podtui's transfer holds it back, say that instead (once per holding transfer)."""
        while True:
            said: list[TransferJob] = []  # marked jobs whose hold changed: shown again
            held_now: tuple[str, str] | None = None  # (pod name, what holds it), for on_terminate_held
            with self._lock:
                if pod_id not in self._held or pod_id in self._announced:
                    return
                for_pod = [j for j in self._jobs if j.pod_id == pod_id]
                marked = [j for j in for_pod if j.terminate_after and self.mine(j)]
                kept = [j for j in marked if j.state != "cancelled"]
                if any(_pending(j) and self.mine(j) for j in for_pod):  # decided again when it ends
                    said = kept if self._holds.pop(pod_id, None) is not None else []  # not held by others now
                    break
                if not kept or any(j.state != "verified" for j in kept):
                    self._held.discard(pod_id)  # a failed download never terminates anything
                    said = self._unhold(pod_id, kept)
                    break
                holders = [j for j in for_pod if _pending(j)]  # another podtui's, queued or under way
                if holders:
                    said, new = self._hold(pod_id, kept, holders)
                    if new:
                        held_now = (kept[0].pod_name or pod_id, self._holds[pod_id])
                    break
                before = _decisive(for_pod)
                verified = [copy.deepcopy(j) for j in kept]
            # landed() may list a folder of any size: never with the lock held, which every poll of the pane takes
            missing_ids = {j.id for j in verified if not runner_for(j.direction).landed(j)}
            with self._lock:
                if pod_id not in self._held or pod_id in self._announced:
                    return  # decided meanwhile by another thread
                if _decisive([j for j in self._jobs if j.pod_id == pod_id]) != before:
                    continue  # a job of the pod changed while it was looked at: decide on what is there now
                self._held.discard(pod_id)
                said = self._unhold(pod_id, kept)
                missing = [j for j in kept if j.id in missing_ids]
                if missing:  # verified, not there now as verified (moved, emptied, changed): the pod is all there is
                    for j in missing:
                        j.note(
                            f"not terminating {j.pod_name or j.pod_id}: {j.final_path} is no longer here as it "
                            "was verified"
                        )
                else:
                    self._announced.add(pod_id)
                job = kept[0]
                name = job.pod_name or job.pod_id
                # a marked download was cancelled, so never fetched: ask, even if the user said yes up front
                confirmed = any(j.terminate_confirmed for j in kept) and len(kept) == len(marked)
            for j in said:
                self._changed(j)
            if missing:
                self._save()
            elif self.on_terminate_ready is not None:
                self.on_terminate_ready(pod_id, name, confirmed)
            return
        for j in said:
            self._changed(j)
        if said:
            self._save()  # the notes: only a change of state saves by itself
        if held_now is not None and self.on_terminate_held is not None:
            self.on_terminate_held(pod_id, *held_now)

    def _hold(self, pod_id: str, kept: list[TransferJob], holders: list[TransferJob]) -> tuple[list[TransferJob], bool]:
        """Another podtui's transfers hold the pod's terminate back: noted in each marked job's log once per holding
        transfer. Returns the jobs noted just now, and whether a holding transfer is new. Called with the lock
        held."""
        why = held_by(holders, kept[0].pod_name or pod_id)
        self._holds[pod_id] = why
        said = self._holders_said.setdefault(pod_id, set())
        noted = [j for j in kept if any(f"{j.id} {h.id}" not in said for h in holders)]
        for j in noted:
            j.note(f"then terminate held: {why}")
        new = any(h.id not in said for h in holders)
        said.update({h.id for h in holders} | {f"{j.id} {h.id}" for j in kept for h in holders})
        return noted, new

    def _unhold(self, pod_id: str, kept: list[TransferJob]) -> list[TransferJob]:
        """Nothing holds the pod's terminate back any longer: the marked jobs that said it was held (to show again).
        Called with the lock held."""
        self._holders_said.pop(pod_id, None)
        return kept if self._holds.pop(pod_id, None) is not None else []

    def _changed(self, job: TransferJob) -> None:
        with self._lock:
            pids = _pids(job)
            marker = f"{job.state} {pids}"
            state_changed = self._saved_states.get(job.id) != marker
            self._saved_states[job.id] = marker
            started = any(p not in self._saved_pids.get(job.id, []) for p in pids)
            self._saved_pids[job.id] = pids
            snapshot = copy.deepcopy(job)
        if state_changed:
            # A runpodctl process just started is written before the transfer goes on, not a moment later by the
            # saver: a podtui killed in between would leave it running with no record, and the next podtui stops
            # only what the history names (history._kill_leftovers_here). Runs on the worker's thread.
            self._save(wait=started)
        if self.on_change is not None:
            self.on_change(snapshot)

    def _save(self, wait: bool = False) -> None:
        """Have the saver thread write this queue's jobs into the history; wait: until it has."""
        if self.history is None:
            return
        with self._saves:
            self._save_asked += 1
            asked = self._save_asked
            if self._saver is None:
                self._saver = threading.Thread(target=self._saving, daemon=True, name="transfer-history-save")
                self._saver.start()
            self._saves.notify_all()
            while wait and self._save_done < asked and self._saver.is_alive():
                self._saves.wait(1.0)

    def _saving(self) -> None:
        assert self.history is not None
        while True:
            with self._saves:
                while self._save_done >= self._save_asked and not self._saver_stop:
                    self._saves.wait()
                if self._save_done >= self._save_asked:
                    return
                asked = self._save_asked
            try:
                with self._lock:
                    jobs = [copy.deepcopy(j) for j in self._jobs if self.mine(j)]
                    removed = set(self._removed)
                    forgetting = dict(self._forgetting)
                self.history.save(jobs, removed, self.owner, forgetting)
                with self._lock:  # once out of the file; the same id written again later is that podtui's to keep
                    for job_id in forgetting:
                        self._forgetting.pop(job_id, None)
            except Exception:  # a bad moment writing the file must not end the saving
                log.exception("saving the transfer history failed")
            with self._saves:
                self._save_done = asked
                self._saves.notify_all()

    # -- other podtuis sharing the history ----------------------------------------------------------------

    def _watch(self) -> None:
        assert self.watch_s is not None
        while not self._stop_watching.wait(self.watch_s):
            try:
                self.refresh()
            except Exception:  # a bad moment reading the file must not end the watching
                log.exception("reading the transfer history for other podtuis' changes failed")

    def refresh(self) -> None:
        """Show what other podtuis wrote since, adopt the jobs of one that has gone, and decide again on a "then
        terminate" that waited for another podtui's transfer from the pod."""
        if self.history is None or not self.adopt:
            return
        with self._lock:
            if self._closing:
                return
            others = {json.dumps(j.owner, sort_keys=True): j.owner for j in self._jobs if not self.mine(j)}
        if not self.history.changed() and all(owner.alive(o) for o in others.values()):
            return
        for pod_id in self._reload():
            self._decide_terminate(pod_id)
        self._pump()

    def _reload(self) -> set[str]:
        """Read the history into the list: other podtuis' jobs as they last wrote them, and those of a podtui that
        has gone adopted. Returns the pods for which another podtui's job stopped being queued or under way."""
        if self.history is None or not self.adopt:
            return set()
        with self._reload_lock:
            loaded = self.history.load(self.owner)
            changed: list[TransferJob] = []
            gone: list[str] = []
            ended: set[str] = set()
            with self._lock:
                if self._closing:
                    return set()
                by_id = {j.id: j for j in loaded}
                jobs = []
                for job in self._jobs:
                    if self.mine(job):
                        jobs.append(job)  # this queue's copy is the newest
                        continue
                    new = by_id.get(job.id)
                    if _pending(job) and (new is None or not _pending(new)):
                        ended.add(job.pod_id)
                    if new is None:
                        gone.append(job.id)  # its podtui removed it
                        continue
                    if new.to_json() != job.to_json():
                        changed.append(new)
                    jobs.append(new)
                listed = {j.id for j in jobs}
                for job in loaded:
                    if (
                        job.id not in listed
                        and job.id not in self._removed
                        and self._forgotten.get(job.id) != job.to_json()
                    ):  # forgotten: until it is written changed
                        jobs.append(job)
                        changed.append(job)
                self._jobs = jobs
                for job in changed:
                    if self.mine(job):  # adopted just now: saved already, as it is
                        self._saved_states[job.id] = f"{job.state} {_pids(job)}"
                        self._saved_pids[job.id] = _pids(job)
                snapshots = [copy.deepcopy(j) for j in changed]
            if self.on_change is not None:
                for snapshot in snapshots:
                    self.on_change(snapshot)
            if self.on_removed is not None:
                for job_id in gone:
                    self.on_removed(job_id)
        return ended


def _pending(job: TransferJob) -> bool:
    return job.state == "queued" or job.state in ACTIVE


def _pids(job: TransferJob) -> list[object]:
    return [e.get("pid") for e in job.leftovers]


def _decisive(jobs: list[TransferJob]) -> list[tuple[object, ...]]:
    """What a "then terminate" decision about these jobs rests on: a change in it means deciding again."""
    return [
        (
            j.id,
            j.state,
            j.terminate_after,
            j.terminate_confirmed,
            json.dumps(j.owner, sort_keys=True),
            j.final_path,
            json.dumps(j.landed_as, sort_keys=True),
        )
        for j in jobs
    ]


def held_by(holders: Sequence[TransferJob], pod_name: str) -> str:
    """Other podtuis' pending transfers for a pod, in words: "podtui pid 12 on host X is still pulling a.bin from
    POD (transferring)", with how to let go of one whose podtui cannot be looked up from here. Outside text."""
    said = "; ".join(
        f"{owner.short(j.owner)} is still {runner_for(j.direction).activity.format(j.label)} "
        f"{pod_name} ({j.state_label})"
        for j in holders[:3]
    )
    more = f" and {len(holders) - 3} more" if len(holders) > 3 else ""
    if any(owner.liveness(j.owner) == "unknown" for j in holders):
        more += (
            ". Whether it still runs cannot be told from here (another machine or container): if it has "
            "stopped, forget its transfer (in the transfer pane, select it and press d)"
        )
    return f"{said}{more}"
