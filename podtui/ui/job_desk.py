"""The app's side of detached jobs (docs/jobs.md#after-a-job): the follow-up (core/jobs/follow.py) fed by the polls,
the pods' job lists for the Jobs tab, and starting, cancelling and reading jobs.

Every look at a pod goes over SSH in a thread worker, one session per pod at a time: on each poll, a light look
(each job podtui remembers running) at the running pods with such a job, every `job_poll_s` where a job asked for
pulls or a stop or the pod's Jobs tab is on show, ten times less often otherwise; the whole list when the Jobs tab
is opened, and every `job_poll_s` while it stays on show. At start-up the first poll looks at every pod that has a
job remembered running: a job that ended while no podtui ran is followed up then, and a follow-up a closed podtui
left halfway is taken up where it stopped.

The follow-up runs in those workers; what it asks of the app (an alert, a note, the transfer queue, a stop, the
terminate question) is done on the event loop through `call_from_thread`. The follow-up is never called from the
event loop: its lock may be held by a worker that waits for the loop.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from textual.dom import DOMNode
from textual.signal import Signal

from podtui.core.jobs.checks import JobChecks
from podtui.core.pod import Pod, PodStatus
from podtui.core.services import Services
from podtui.core.visible import visible
from podtui.ui.job_view import PodJobs
from podtui.ui.needs import Notifies, Opens, RunsWorkers

if TYPE_CHECKING:
    from textual.screen import Screen

    from podtui.core.alerts import Alert, Severity
    from podtui.core.jobs.follow import FollowUp
    from podtui.core.jobs.job import Job, JobSpec
    from podtui.core.jobs.job_memory import Followed
    from podtui.core.pod import Snapshot
    from podtui.transfer.job import TransferJob
    from podtui.transfer.queue import TransferQueue
    from podtui.ui.alert_desk import AlertDesk
    from podtui.ui.pod_actions import PodActions
    from podtui.ui.transfers import TransferDesk

log = logging.getLogger(__name__)
CANCEL_GRACE_S = 10.0  # SIGTERM, then SIGKILL after this (docs/jobs.md)


class JobsHost(Opens, Notifies, RunsWorkers, Protocol):
    """What the desk needs of the app."""

    @property
    def services(self) -> Services: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def screen(self) -> Screen[Any]: ...
    @property
    def transfers(self) -> TransferDesk: ...
    @property
    def alerts(self) -> AlertDesk: ...
    @property
    def pod_actions(self) -> PodActions: ...
    def pods(self) -> tuple[Pod, ...]: ...


class JobDesk:
    def __init__(self, host: JobsHost, services: Services) -> None:
        self.host, self.services = host, services
        assert isinstance(host, DOMNode)  # the App: a signal is published from a node of the DOM
        self.changed_signal: Signal[PodJobs] = Signal(host, "jobs-changed")  # a pod's list, on the event loop
        self.listings: dict[str, PodJobs] = {}
        self.looking_at: str | None = None  # the pod whose Jobs tab (or screen) is on show
        self._follow: FollowUp | None = None  # made in the first worker (it reads the memory's file)
        self._follow_lock = threading.Lock()
        self._sessions: dict[str, threading.Lock] = {}  # one SSH session per pod at a time
        self._sessions_lock = threading.Lock()
        self.checks = JobChecks(services.config.job_poll_s)  # which pods are due a look at their jobs
        self._polling = False  # a poll's look is under way (one at a time; the next poll looks again)
        self._listing: set[str] = set()  # pods whose whole list is being read
        self._said: dict[str, str] = {}  # pod id: the last trouble said about looking at it (said once)
        self._going_on = self._go_on_again = False  # follow-ups taken on in a worker, after a transfer ended
        self._followed: dict[str, dict[str, Followed]] = {}  # by pod and job id: the job memory as last read
        self.closed = False

    # --- the follow-up, and what it asks of the app (called from its worker threads) -------------------

    def follow(self) -> FollowUp:
        """The follow-up, made on first use (in a worker: it reads the job memory's file)."""
        with self._follow_lock:
            if self._follow is None:
                from podtui.core.jobs.follow import FollowUp
                from podtui.core.jobs.job_memory import JobMemory

                self._follow = FollowUp(JobMemory.for_services(self.services), _Hooks(self), self.services.clock)
                trouble = self._follow.memory.refused
                if trouble:
                    self._on_loop(self.host.notify, trouble, severity="warning", timeout=15, markup=False)
            return self._follow

    def _on_loop(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """From a worker: run on the event loop and return what it returns (None once the app is closing)."""
        from podtui.core.jobs.follow import Closing

        try:
            return self._on_loop_or_closing(callback, *args, **kwargs)
        except Closing as e:
            if e.__cause__ is not None:  # the loop had gone, not only the desk closed
                log.info("the app closed before %s could run", getattr(callback, "__name__", callback))
            return None

    def _on_loop_or_closing(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """As _on_loop, for a follow-up's step: Closing once the app is closing, so the step is not recorded as
        taken (an end marked said and never said) and no further step is tried (docs/jobs.md#after-a-job)."""
        from podtui.core.jobs.follow import Closing

        if self.closed:
            raise Closing()
        try:
            return self.host.call_from_thread(callback, *args, **kwargs)
        except RuntimeError as e:  # the app's loop has gone: it is closing
            raise Closing() from e

    def close(self) -> None:
        """The app ends: the follow-ups this app holds are left for the next podtui to take up."""
        self.closed = True
        if self._follow is not None:
            self._follow.close()

    # --- the polls --------------------------------------------------------------------------------------

    def after_poll(self, snap: Snapshot) -> None:
        """A poll landed (on the event loop): the jobs followed are looked at in a worker, where due."""
        if self._polling or self.closed:
            return
        self._polling = True
        self._work(functools.partial(self._look, snap.pods, not snap.skipped_records), "looking at detached jobs")

    def _look(self, pods: tuple[Pod, ...], whole: bool) -> None:
        """In a worker: jobs on pods that went down are lost; the pods due a look are asked about their jobs."""
        try:
            follow = self.follow()
            follow.pods_seen(pods, whole)
            for pod, job_ids in self.checks.due(pods, follow.running(), self.looking_at, follow.waiting()):
                self._check(pod, job_ids)
            self._keep_followed()
        finally:
            self._on_loop(self._looked)

    def _looked(self) -> None:
        self._polling = False

    def _session(self, pod_id: str) -> threading.Lock:
        with self._sessions_lock:
            return self._sessions.setdefault(pod_id, threading.Lock())

    def _check(self, pod: Pod, job_ids: list[str]) -> None:
        """In a worker: the jobs remembered running on the pod, each asked about (a light look)."""
        from podtui.core.jobs.checks import look
        from podtui.core.jobs.job import JobError
        from podtui.core.ssh.errors import SshError

        try:
            with self._session(pod.id):
                seen, gone = look(pod, self.services.ssh_settings(), job_ids)
        except (SshError, JobError, OSError) as e:
            self._trouble(pod, f"cannot look at the jobs on {pod.name}: {e}")
            return
        self._said.pop(pod.id, None)
        self.follow().seen(pod.id, pod.name, seen, gone=gone)

    def _shell(self, pod: Pod) -> Any:
        from podtui.core.ssh.remote import open_remote

        return open_remote(pod, self.services.ssh_settings())

    def _trouble(self, pod: Pod, text: str) -> None:
        """A look that failed: logged, and said once (until it works again or fails otherwise)."""
        log.warning("%s", text)
        if self._said.get(pod.id) != text:
            self._said[pod.id] = text
            self._on_loop(self.host.notify, visible(text), severity="warning", timeout=10, markup=False)

    def _work(self, work: Callable[[], None], description: str, group: str = "jobs") -> None:
        self.host.run_worker(work, thread=True, group=group, exit_on_error=False, description=description)

    def transfer_changed(self, transfer: TransferJob) -> None:
        """A transfer moved (on the event loop): one that ended may be a job's pull, or free its pod to be stopped."""
        if self._follow is None or self.closed or transfer.state not in ("verified", "failed", "cancelled"):
            return
        if self._going_on:
            self._go_on_again = True
            return
        self._going_on = True
        self._work(self._go_on, "following up ended jobs")

    def _go_on(self) -> None:
        """In a worker: every unfinished follow-up taken as far as it goes, again while transfers ended meanwhile."""
        again = True
        while again:
            try:
                self.follow().go_on()
                self._keep_followed()
            finally:
                again = bool(self._on_loop(self._went_on))

    def _went_on(self) -> bool:
        again, self._go_on_again = self._go_on_again, False
        self._going_on = again
        return again

    # --- the Jobs tab ------------------------------------------------------------------------------------

    def listing(self, pod_id: str) -> PodJobs:
        return self.listings.get(pod_id) or PodJobs(pod_id)

    def watch(self, pod: Pod | None) -> None:
        """The Jobs tab (or screen) shows this pod now (None: none is on show)."""
        self.looking_at = pod.id if pod is not None else None

    def refresh(self, pod: Pod) -> None:
        """The pod's whole list, read in a worker (once at a time per pod), published when it lands."""
        if pod.id in self._listing or self.closed:
            return
        if pod.status is not PodStatus.RUNNING:
            self._publish(PodJobs(pod.id, error=f"{pod.name} is {pod.state.lower()}: its jobs are read over SSH"))
            return
        self._listing.add(pod.id)
        self._publish(self._kept(pod.id, loading=True))
        self._work(functools.partial(self._list, pod), "listing a pod's jobs", group="jobs-list")

    def _kept(self, pod_id: str, **changes: Any) -> PodJobs:
        """The pod's last list, with `changes` (loading, or why it could not be read again)."""
        return replace(self.listing(pod_id), **{"loading": False, "error": None, **changes})

    def _list(self, pod: Pod) -> None:
        from podtui.core.jobs.job import JobError
        from podtui.core.jobs.remote_jobs import list_jobs
        from podtui.core.ssh.errors import SshError

        try:
            try:
                with self._session(pod.id), self._shell(pod) as shell:
                    listed = list_jobs(shell, pod.id)
            except (SshError, JobError, OSError) as e:
                self._on_loop(self._publish, self._kept(pod.id, error=f"cannot list the jobs: {e}"))
                return
            self.checks.looked(pod.id)
            mono = time.monotonic()
            now = self.services.clock()
            self._on_loop(
                self._publish, PodJobs(pod.id, listed.jobs, listed.problems, None, now, False, listed.pod_now, mono)
            )
            self.follow().seen(pod.id, pod.name, listed.jobs, whole=not listed.problems)
            self._keep_followed()
        finally:
            self._on_loop(self._listed, pod.id)

    def _listed(self, pod_id: str) -> None:
        self._listing.discard(pod_id)

    def _publish(self, jobs: PodJobs) -> None:
        self.listings[jobs.pod_id] = jobs
        self.changed_signal.publish(jobs)

    def followed(self, pod_id: str) -> dict[str, Followed]:
        """The pod's jobs whose follow-up is under way or ended with something to say, by job id, as the workers
        last read them (the event loop never reads the job memory's file)."""
        return self._followed.get(pod_id, {})

    def _keep_followed(self) -> None:
        """In a worker, after the follow-up moved: what the Jobs tab says of each job's follow-up, handed over."""
        by_pod: dict[str, dict[str, Followed]] = {}
        for entry in self.follow().memory.entries():
            by_pod.setdefault(entry.job.pod_id, {})[entry.job.id] = entry
        self._on_loop(self._took_followed, by_pod)

    def _took_followed(self, by_pod: dict[str, dict[str, Followed]]) -> None:
        changed = {p for p in {*by_pod, *self._followed} if by_pod.get(p) != self._followed.get(p)}
        self._followed = by_pod
        for pod_id in changed:
            if pod_id in self.listings:
                self.changed_signal.publish(self.listings[pod_id])  # its panels say the follow-up's news

    # --- starting, cancelling, reading ------------------------------------------------------------------

    def ask_new(self, pod: Pod) -> None:
        """The new-job form on the pod; the job it starts is followed and listed."""
        from podtui.ui.screens.new_job import NewJobScreen

        if self.host.read_only:
            self.host.notify("read-only mode: starting a job is switched off", severity="warning", markup=False)
            return
        if pod.status is not PodStatus.RUNNING:
            self.host.notify(f"{pod.name} is not running: a job needs a running pod", severity="warning", markup=False)
            return

        def answered(job: Job | None) -> None:
            if job is not None:
                self.host.notify(f"job {job.label} started on {pod.name} ({job.id})", markup=False)
                self.refresh(pod)

        self.host.open_screen(NewJobScreen(pod), ("new-job", pod.id), answered)

    def start(self, pod: Pod, spec: JobSpec) -> Job:
        """Blocking (the form's worker): the job started on the pod, and followed from now on. Raises JobError or
        SshError, in words."""
        from podtui.core.jobs.remote_jobs import start_job

        if spec.log_max_mb is None:
            spec = replace(spec, log_max_mb=self.services.config.job_log_max_mb)
        with self._session(pod.id), self._shell(pod) as shell:
            job = start_job(shell, pod.id, spec, now=self.services.clock())
        try:
            self.follow().started(job, pod.name)
            self._keep_followed()
        except OSError as e:  # it runs all the same: said started, never "not started" (it would be started twice)
            log.warning("job %s on %s is not followed: %s", job.id, pod.id, e)
            text = f"job {job.label} on {pod.name} runs but is not followed (its end does nothing here): {e}"
            self._on_loop(self.host.notify, visible(text), severity="error", timeout=30, markup=False)
        return job

    def cancel(self, pod: Pod, job: Job) -> None:
        """Cancel a running job, asked first: SIGTERM to its processes, SIGKILL after a grace period."""
        from podtui.ui.screens.confirm import ConfirmScreen

        if self.host.read_only:
            self.host.notify("read-only mode: cancelling a job is switched off", severity="warning", markup=False)
            return
        if job.ended_yet:
            self.host.notify(f"job {job.label} has ended already ({job.state})", markup=False)
            return
        question = ConfirmScreen(
            f"Cancel job {job.label} on {pod.name}?",
            f"{job.command}\nIts processes get SIGTERM, then SIGKILL after {CANCEL_GRACE_S:g} s. What it asked for "
            "after (pulls, a stop) is not done.",
            "Cancel job",
            danger=True,
        )
        self.host.open_screen(
            question, ("cancel-job", pod.id, job.id), lambda yes: self._cancel(pod, job) if yes else None
        )

    def _cancel(self, pod: Pod, job: Job) -> None:
        self.host.notify(f"cancelling job {job.label} on {pod.name}…", timeout=3, markup=False)
        self._work(functools.partial(self._cancel_now, pod, job), "cancelling a job", group="jobs-cancel")

    def _cancel_now(self, pod: Pod, job: Job) -> None:
        from podtui.core.jobs.job import JobError
        from podtui.core.jobs.remote_jobs import cancel_job
        from podtui.core.ssh.errors import SshError

        try:
            with self._session(pod.id), self._shell(pod) as shell:
                ended = cancel_job(shell, pod.id, job.id, CANCEL_GRACE_S)
        except (SshError, JobError, OSError) as e:
            text = f"cancel job {job.label} on {pod.name} failed: {e}"
            self._on_loop(self.host.notify, visible(text), severity="error", timeout=10, markup=False)
            return
        self._on_loop(self.host.notify, visible(f"job {ended.label} on {pod.name}: {ended.state}"), markup=False)
        self.follow().seen(pod.id, pod.name, [ended])
        self._keep_followed()
        self._on_loop(self.refresh, pod)

    def open_log(self, pod: Pod, job: Job) -> None:
        from podtui.ui.screens.job_log import JobLogScreen

        self.host.open_screen(JobLogScreen(pod, job), ("job-log", pod.id, job.id))

    def show(self, pod: Pod) -> None:
        """The pod's jobs: the pane's Jobs tab with the panes on (the pane shows the pod under the cursor), else a
        screen of their own."""
        from podtui.ui.screens.pod_list import PodListScreen

        screen = self.host.screen
        if isinstance(screen, PodListScreen) and screen.panes_on and screen.pane.pod_id == pod.id:
            screen.remove_class("-zoom-list")
            screen.pane.show_jobs()
            return
        from podtui.ui.screens.jobs import JobsScreen

        self.host.open_screen(JobsScreen(pod), ("jobs", pod.id))

    # --- what the follow-up asks, on the event loop ----------------------------------------------------------

    def route(self, alert: Alert) -> None:
        self.host.alerts.router.route(alert)

    def say(self, text: str, severity: Severity) -> None:
        timeout = 30.0 if severity == "error" else 8.0
        self.host.notify(visible(text), severity=severity, timeout=timeout, markup=False)

    def pod_to_stop(self, job: Job, pod: Pod) -> Pod | str:
        """The job's pulls are verified (or it had none): its pod as RunPod says it is now, to be stopped as it asked
        without a question (by the follow-up's worker, which waits for RunPod's answer), or why not, in words."""
        from podtui.core import actions

        if pod.status is PodStatus.EXITED:  # a stop whose answer was lost got there after all, or someone stopped it
            return f"stop not needed: {pod.name} is stopped already"
        try:
            actions.check("stop", pod)
        except actions.ActionRefused as e:
            self.say(f"job {job.label} on {pod.name}: not stopping it: {e}", "warning")
            return f"stop not sent: {e}"
        done = "every pull verified: " if job.pulls else ""
        self.say(f"job {job.label} ended, {done}stopping {pod.name} as asked", "information")
        return pod

    def ask_terminate(self, job: Job, pod_name: str) -> str:
        """The app asks before terminating, as after a marked download (the pod's name typed)."""
        from podtui.core.jobs.follow import ASKED

        pod = next((p for p in self.host.pods() if p.id == job.pod_id), None)
        if pod is None:
            return f"terminate not sent: {pod_name} is no longer listed"
        actions = self.host.pod_actions
        done = "every pull verified; " if job.pulls else ""
        self.say(f"job {job.label} ended; {done}it asked to terminate {pod.name}: confirm it", "information")

        def answered(yes: bool | None) -> None:
            if yes:  # sent, and RunPod's answer waited for, before it is recorded
                self._work(functools.partial(self._terminate, job, pod), "terminating a job's pod")
                return
            words = "terminate declined: the pod was kept"
            self._work(functools.partial(self._answered, job, words), "noting a terminate's answer")

        self.host.open_screen(actions.terminate_question(pod, unasked=True), ("terminate", pod.id), answered)
        return ASKED

    def _terminate(self, job: Job, pod: Pod) -> None:
        """In a worker: the terminate the user confirmed, and what RunPod said of it, recorded (docs/jobs.md)."""
        from podtui.core.api import ApiUnavailable
        from podtui.core.jobs.follow import TERMINATE_SENT

        try:
            refused = self.host.pod_actions.send_waiting("terminate", pod)
        except ApiUnavailable as e:  # not sent again unasked: said, and left to the user
            refused = f"RunPod did not answer ({e}); terminate it yourself"
            self._on_loop(self.say, f"job {job.label}: terminate {pod.name} not sent: {refused}", "error")
        except Exception as e:  # said by send_waiting; recorded, the pod left as it is
            refused = f"unexpected error: {e}"
        self._answered(job, TERMINATE_SENT if refused is None else f"terminate not sent: {refused}")

    def _answered(self, job: Job, words: str) -> None:
        self.follow().answered(job.pod_id, job.id, words)
        self._keep_followed()

    def queue(self) -> TransferQueue:
        return self.host.transfers.queue()


class _Hooks:
    """The follow-up's view of the app (core/jobs/follow.py FollowHooks): each call from its worker thread runs on
    the event loop."""

    def __init__(self, desk: JobDesk) -> None:
        self.desk = desk

    @property
    def read_only(self) -> bool:
        return self.desk.host.read_only

    def alert(self, alert: Alert) -> None:
        self.desk._on_loop_or_closing(self.desk.route, alert)

    def queue(self) -> TransferQueue:
        return self.desk._on_loop_or_closing(self.desk.queue)  # type: ignore[no-any-return]

    # An app closing mid-step raises Closing rather than answer in words: words would finish the follow-up with the
    # stop never sent; left under way, the next podtui takes the step again (docs/jobs.md#after-a-job).
    def stop(self, job: Job, pod_name: str) -> str:
        from podtui.core.api import ApiError, ApiNotFound, ApiUnavailable
        from podtui.core.jobs.follow import STOP_SENT, Closing

        if self.desk.closed:  # no request started by an app that is closing
            raise Closing()
        try:  # as RunPod says it is now: the last poll may predate another job's stop
            fresh = self.desk.host.services.api.fetch_pod(job.pod_id)
            pod = self.desk._on_loop(self.desk.pod_to_stop, job, fresh)
            if not isinstance(pod, Pod):
                return _sent(pod)
            refused = self.desk.host.pod_actions.send_waiting("stop", pod)
        except ApiNotFound:
            return f"stop not sent: {pod_name} is gone from the account"
        except ApiUnavailable as e:  # no answer: taken again after the next poll, never recorded as sent
            self.say(f"job {job.label} on {pod_name}: stop not sent yet ({e}); trying again", "warning")
            raise
        except ApiError as e:  # RunPod's answer about the pod was not one podtui can read: said, the pod left as it is
            self.say(f"job {job.label} on {pod_name}: stop not sent: {e}", "error")
            return f"stop not sent: {e}"
        return STOP_SENT if refused is None else f"stop not sent: {refused}"

    def terminate(self, job: Job, pod_name: str) -> str:
        return _sent(self.desk._on_loop(self.desk.ask_terminate, job, pod_name))

    def say(self, text: str, severity: Severity) -> None:
        self.desk._on_loop(self.desk.say, text, severity)

    def busy(self, pod_id: str) -> bool:
        busy: set[str] = self.desk._on_loop(self.desk.host.transfers.busy_pods) or set()
        return pod_id in busy


def _sent(words: str | None) -> str:
    """What the step came to on the loop; None: the app is closing, and the step is the next podtui's."""
    from podtui.core.jobs.follow import Closing

    if words is None:
        raise Closing()
    return words
