"""What the user does to a pod: stop, resume and terminate (asked first, sent in a thread worker, the answer said
in a note), on one pod or on the pods marked in the list, the terminate asked for by downloads marked "then
terminate" once they are verified, a resume that finds no free GPU (wait and retry, or recreate on the pod's
network volume), and autostop: in the app (a countdown once the pod is idle) or the watchdog on the pod."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App

from podtui.core import actions, resume
from podtui.core.api import ApiConflict, ApiError, ApiUnavailable
from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.messages import ActionFinished
from podtui.ui.needs import Notifies, Opens, RunsWorkers, Served
from podtui.ui.worker_errors import what_failed

if TYPE_CHECKING:
    from textual.message import Message
    from textual.screen import ModalScreen, Screen

    from podtui.core.feed import PodFeed
    from podtui.core.pod_spec import PodSpec
    from podtui.core.ticker import CostTicker
    from podtui.ui.transfers import TransferDesk

log = logging.getLogger(__name__)
KEY_REFUSED = (
    'RunPod refused the API key at the last refresh; set a valid one ({app.palette}, "RunPod API key", '
    "or `podtui config set-key`), then try again"
)  # {app.palette}: the palette's key (keymap.fill)


class CreatesPods(Protocol):
    def open_create_pod(self, prefill: PodSpec | None = None) -> None: ...  # the create form, filled in


class PodActionsHost(Served, Opens, Notifies, RunsWorkers, Protocol):
    """What pod actions need of the app: the pods and what RunPod last said, the ticker's autostop choices, the
    transfers still to verify, and a thread worker to send an action in."""

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...
    @property
    def feed(self) -> PodFeed: ...
    @property
    def costs(self) -> CostTicker: ...
    @property
    def transfers(self) -> TransferDesk: ...
    @property
    def navigator(self) -> CreatesPods: ...
    def pods(self) -> tuple[Pod, ...]: ...
    def poll_now(self) -> None: ...
    def post_message(self, message: Message) -> bool: ...  # thread-safe


class PodActions:
    def __init__(self, host: PodActionsHost) -> None:
        self.host = host
        self.countdown_s = 60  # the autostop countdown's length
        self.retry_every_s = resume.RETRY_EVERY_S  # a resume that found no free GPU is tried again this often
        self.retries: dict[str, resume.RetryingResume] = {}  # by pod id: resumes being tried again
        self._bulk_busy: set[str] = set()  # pods a stop or terminate of several is being sent to
        # told of each action the user sent (pod id, verb): a stop's EXITED is not an alert (docs/alerts.md#events);
        # and of each one that failed, which explains no exit after all
        self.on_asked: Callable[[str, str], None] | None = None
        self.on_refused: Callable[[str, str], None] | None = None

    def _refused(self, what: str, verb: actions.Verb | None = None, pod: Pod | None = None) -> bool:
        """Read-only mode refuses `what`, or the pod's state refuses the verb: said, and True."""
        try:
            actions.guard(self.host.read_only, what)
            if verb is not None and pod is not None:
                actions.check(verb, pod)
        except actions.ActionRefused as e:
            self.host.notify(str(e), severity="warning", markup=False)
            return True
        return False

    # --- stop, resume, terminate ------------------------------------------------------------------------

    def request(self, verb: str, pod: Pod) -> None:
        """Ask first (the question fits the verb), then send."""
        if verb not in actions.VERBS:
            raise ValueError(verb)
        v: actions.Verb = verb
        if v == "resume" and pod.id in self.retries:  # r again while it is being tried: stop trying?
            self._ask_stop_retrying(pod)
            return
        if self._refused(v, v, pod) or self._key_refused(f"{verb} {pod.name}"):
            return
        host = self.host
        from podtui.ui.screens.confirm import ConfirmScreen  # with the first question, not for the first frame

        c = actions.confirmation(v, pod)
        question = (
            self.terminate_question(pod)
            if v == "terminate"
            else ConfirmScreen(c.title, c.body, c.button, danger=c.danger)
        )
        host.open_screen(question, (v, pod.id), lambda yes: self.start(v, pod) if yes else None)

    def _key_refused(self, what: str) -> bool:
        """RunPod refused the key at the last poll: asking first would only lead to a refusal after the answer."""
        host = self.host
        if not host.feed.key_refused:
            return False
        app = host if isinstance(host, App) else None  # the keys in effect are the running app's
        host.notify(f"{what} not sent: {keymap.fill(app, KEY_REFUSED)}", severity="error", timeout=10, markup=False)
        return True

    def terminate_question(self, pod: Pod, unasked: bool = False) -> ModalScreen[bool]:
        """unasked: the question comes up by itself (then-terminate), perhaps while the user types elsewhere,
        so a stray "y" must not answer it: the name is always typed then."""
        from podtui.ui.screens.terminate import TerminateScreen

        pending = [f"{j.label} ({j.state_label})" for j in self.host.transfers.unverified(pod.id)]
        return TerminateScreen(pod, pending, type_name=unasked or self.host.services.config.confirm_terminate == "name")

    def start(self, verb: actions.Verb, pod: Pod) -> None:
        """Send an action the user has already confirmed."""
        self._asked(verb, [pod])
        self.host.notify(f"{verb} {pod.name}: sent…", timeout=3, markup=False)
        self.host.run_worker(
            functools.partial(self._send, verb, pod),
            thread=True,
            group="action",
            exit_on_error=False,
            description="sending the action",
        )

    def send_waiting(self, verb: actions.Verb, pod: Pod) -> str | None:
        """From a worker thread, for an action asked for beforehand (a job's --then, docs/jobs.md#after-a-job):
        sent, and RunPod's answer waited for. None once sent; why not in words when RunPod refused it (said in a
        note as well); ApiUnavailable raised when no answer came, for the caller to try again."""
        self.host.call_from_thread(self._asked, verb, [pod])
        try:
            actions.perform(self.host.services.api, verb, pod)
        except ApiConflict as e:  # a stop refused because the pod is stopped already did what it was for
            if verb != "stop" or not actions.stopped_already(self.host.services.api, pod.id):
                self.host.call_from_thread(self._not_asked, verb, [pod])
                self.host.post_message(ActionFinished(verb, pod.name, str(e)))
                return str(e)
        except ApiError as e:
            self.host.call_from_thread(self._not_asked, verb, [pod])
            if isinstance(e, ApiUnavailable):
                raise
            self.host.post_message(ActionFinished(verb, pod.name, str(e)))
            return str(e)
        except Exception as e:  # said as `_send` says it, and raised: the caller takes it again (RunPod may have)
            log.exception("%s %s failed", verb, pod.id)
            self.host.call_from_thread(self._not_asked, verb, [pod])
            self.host.post_message(ActionFinished(verb, pod.name, f"unexpected error: {what_failed(e)}"))
            raise
        self.host.post_message(ActionFinished(verb, pod.name, None))
        return None

    def _asked(self, verb: str, pods: Sequence[Pod]) -> None:
        if self.on_asked is not None:
            for pod in pods:
                self.on_asked(pod.id, verb)

    def _not_asked(self, verb: str, pods: Sequence[Pod]) -> None:
        """On the event loop: the action failed, so it explains no exit of these pods."""
        if self.on_refused is not None:
            for pod in pods:
                self.on_refused(pod.id, verb)

    def _send(self, verb: actions.Verb, pod: Pod) -> None:
        """In the worker thread."""
        try:
            actions.perform(self.host.services.api, verb, pod)
        except ApiError as e:
            if verb == "resume" and resume.no_free_gpu(e):  # what can be done about it, asked on the event loop
                self.host.call_from_thread(self.offer_resume, pod, str(e))
                return
            self.host.call_from_thread(self._not_asked, verb, [pod])  # before the poll that finished() asks for
            self.host.post_message(ActionFinished(verb, pod.name, str(e)))
        except Exception as e:  # said as this action's failure, with the pod and a refresh: the pod may have changed
            log.exception("%s %s failed", verb, pod.id)
            self.host.call_from_thread(self._not_asked, verb, [pod])
            self.host.post_message(ActionFinished(verb, pod.name, f"unexpected error: {what_failed(e)}"))
        else:
            self.host.post_message(ActionFinished(verb, pod.name, None))

    def finished(self, message: ActionFinished) -> None:
        if message.error:
            self.host.notify(
                f"{message.verb} {message.pod_name} failed: {message.error}", severity="error", timeout=10, markup=False
            )
        else:
            self.host.notify(f"{message.pod_name}: {actions.UNDER_WAY[message.verb]}", markup=False)
        self.host.poll_now()

    # --- several pods at once ------------------------------------------------------------------------------

    def request_bulk(
        self,
        verb: str,
        pods: Sequence[Pod],
        on_sent: Callable[[Sequence[Pod]], None] | None = None,
        hidden: int = 0,
    ) -> None:
        """Stop or terminate the marked pods: one question listing them all (each one's cost, what survives, the
        transfers a terminate would cut off, which cannot be done now and why, how many marked pods the filter
        hides and leaves out), then each sent in turn in a thread worker. on_sent: once confirmed, with the pods
        the dialog listed (the list clears their marks)."""
        if verb not in ("stop", "terminate"):
            raise ValueError(verb)
        v: actions.Verb = "stop" if verb == "stop" else "terminate"
        n = len(pods)
        if self._refused(f"{verb} of {n} pods") or self._key_refused(f"{verb} of {n} pods"):
            return
        busy = [p for p in pods if p.id in self._bulk_busy]
        plan = actions.bulk_plan(v, [p for p in pods if p.id not in self._bulk_busy])
        if busy:  # a second press while the first sends are under way: those are not sent twice
            refused = tuple(actions.BulkItem(p, "an action is being sent to it already", v) for p in busy)
            plan = actions.BulkPlan(v, plan.items + refused)
        from podtui.ui.screens.bulk_action import BulkActionScreen  # with the first question

        pending: dict[str, list[str]] = {}
        if v == "terminate":  # what the single terminate warns of, for each pod (transfers not yet verified)
            for pod in plan.acting:
                jobs = [f"{j.label} ({j.state_label})" for j in self.host.transfers.unverified(pod.id)]
                if jobs:
                    pending[pod.id] = jobs

        def answered(yes: bool | None) -> None:
            if yes:
                if on_sent is not None:
                    on_sent(tuple(i.pod for i in plan.items))  # every pod the dialog listed
                self.start_bulk(v, plan.acting)

        self.host.open_screen(BulkActionScreen(plan, pending, hidden), ("bulk", verb), answered)

    def start_bulk(self, verb: actions.Verb, pods: Sequence[Pod]) -> None:
        """Send a confirmed action to each pod in turn (one worker, one request at a time)."""
        pods = [p for p in pods if p.id not in self._bulk_busy]
        if not pods:
            return
        self._bulk_busy.update(p.id for p in pods)
        self._asked(verb, pods)
        self.host.notify(f"{verb} {len(pods)} pods: sending…", timeout=3, markup=False)
        self.host.run_worker(
            functools.partial(self._send_bulk, verb, tuple(pods)),
            thread=True,
            group="action",
            exit_on_error=False,
            description="sending the action to several pods",
        )

    def _send_bulk(self, verb: actions.Verb, pods: tuple[Pod, ...]) -> None:
        """In the worker thread: each pod in turn; a failure does not stop the others."""
        failures: list[tuple[Pod, str]] = []
        for pod in pods:
            try:
                actions.perform(self.host.services.api, verb, pod)
            except ApiError as e:
                failures.append((pod, str(e)))
            except Exception as e:  # said with the pod's name, like RunPod's refusals; the others are still sent
                log.exception("%s %s failed", verb, pod.id)
                failures.append((pod, f"unexpected error: {what_failed(e)}"))
        self.host.call_from_thread(self._bulk_done, verb, pods, failures)

    def _bulk_done(self, verb: actions.Verb, pods: tuple[Pod, ...], failures: list[tuple[Pod, str]]) -> None:
        host = self.host
        self._bulk_busy.difference_update(p.id for p in pods)
        self._not_asked(verb, [pod for pod, _ in failures])
        for pod, error in failures:
            host.notify(f"{verb} {pod.name} failed: {error}", severity="error", timeout=10, markup=False)
        done = len(pods) - len(failures)
        if done:
            names = ", ".join(p.name for p in pods if all(p is not f for f, _ in failures))
            host.notify(f"{actions.UNDER_WAY[verb]} {done} pod{'s' if done != 1 else ''}: {names}", markup=False)
        host.poll_now()

    # --- a resume with no free GPU ---------------------------------------------------------------------------

    def offer_resume(self, pod: Pod, error: str) -> None:
        """RunPod found no free GPU on the pod's machine: wait and retry, recreate it on its network volume with
        another GPU, or leave it stopped."""
        from podtui.ui.screens.resume_offer import ResumeOfferScreen

        def answered(choice: str | None) -> None:
            if choice == "retry":
                self.retry_resume(pod)
            elif choice == "recreate":
                self.recreate(pod)
            else:
                self.host.notify(f"{pod.name} stays stopped", markup=False)

        offer = ResumeOfferScreen(pod, error, every_s=self.retry_every_s)
        self.host.open_screen(offer, ("resume-offer", pod.id), answered)

    def retry_resume(self, pod: Pod) -> None:
        if pod.id in self.retries or self._refused("resume", "resume", pod):
            return
        retrying = resume.RetryingResume(pod, every_s=self.retry_every_s)
        self.retries[pod.id] = retrying
        host = self.host
        app = host if isinstance(host, App) else None
        host.notify(
            f"{pod.name}: trying to resume it every {retrying.every_s:g} s, up to {retrying.limit} times "
            + keymap.fill(app, "({pods.resume} on it again stops trying)"),
            timeout=10,
            markup=False,
        )
        self.host.run_worker(
            functools.partial(self._retry, retrying),
            thread=True,
            group="resume-retry",
            exit_on_error=False,
            description="retrying a resume",
        )

    def _retry(self, retrying: resume.RetryingResume) -> None:
        """In the worker thread: until the pod starts, RunPod refuses for another reason, the tries run out, or
        the user or the app's end stops it."""
        from textual.worker import get_current_worker

        worker = get_current_worker()
        name = retrying.pod.name

        def tried(n: int, wait_s: float) -> None:
            why = (
                f"RunPod did not answer ({retrying.error})"
                if retrying.unanswered
                else "still no free GPU on its machine"
            )
            self.host.call_from_thread(
                self.host.notify,
                f"{name}: {why} (try {n} of {retrying.limit}); trying again in {wait_s:g} s",
                timeout=5,
                markup=False,
            )

        try:
            outcome = retrying.run(self.host.services.api, tried, lambda: worker.is_cancelled)
        except Exception as e:  # said as this resume's failure, like any other action's
            log.exception("retrying the resume of %s failed", retrying.pod.id)
            retrying.error, outcome = f"unexpected error: {what_failed(e)}", "failed"
        if not worker.is_cancelled:
            self.host.call_from_thread(self._retry_done, retrying, outcome)

    def _retry_done(self, retrying: resume.RetryingResume, outcome: resume.Outcome) -> None:
        pod, host = retrying.pod, self.host
        if self.retries.get(pod.id) is retrying:
            del self.retries[pod.id]
        if outcome == "resumed":
            host.notify(f"{pod.name}: resuming (after {retrying.tries} tries)", markup=False)
        elif outcome == "cancelled":
            host.notify(f"{pod.name}: stopped trying to resume it; it stays stopped", markup=False)
        elif outcome == "gave up":
            why = "no answer from RunPod" if retrying.unanswered else "still no free GPU"
            host.notify(
                f"{pod.name}: {why} after {retrying.tries} tries; it stays stopped. "
                + "; ".join(resume.what_to_do(pod)),
                severity="warning",
                timeout=15,
                markup=False,
            )
        else:
            host.notify(f"resume {pod.name} failed: {retrying.error}", severity="error", timeout=10, markup=False)
        host.poll_now()

    def _ask_stop_retrying(self, pod: Pod) -> None:
        from podtui.ui.screens.confirm import ConfirmScreen

        retrying = self.retries[pod.id]
        question = ConfirmScreen(
            f"Stop trying to resume {pod.name}?",
            f"Tried {retrying.tries} of {retrying.limit} times: its machine has had no free GPU.",
            "Stop trying",
        )
        self.host.open_screen(question, ("stop-retrying", pod.id), lambda yes: retrying.cancel() if yes else None)

    def recreate(self, pod: Pod) -> None:
        """The create form filled in like `pod`, on its network volume, to pick another GPU. `pod` is the list's
        copy, made fit to show: the spec comes from the pod as RunPod has it, read in a thread worker."""
        if self._refused("creating a pod"):
            return
        self.host.notify(f"{pod.name}: reading how it was made…", timeout=3, markup=False)
        self.host.run_worker(
            functools.partial(self._read_spec, pod),
            thread=True,
            group="recreate",
            exit_on_error=False,
            description="reading the pod to recreate it",
        )

    def _read_spec(self, pod: Pod) -> None:
        """In the worker thread."""
        from podtui.core.launch_memory import NotLaunchable, spec_of

        try:
            spec = spec_of(self.host.services.api.fetch_pod(pod.id))
        except (ApiError, NotLaunchable) as e:
            self.host.call_from_thread(
                self.host.notify, f"recreate {pod.name}: {e}", severity="warning", timeout=10, markup=False
            )
            return
        self.host.call_from_thread(self.host.navigator.open_create_pod, spec)

    def then_terminate(self, pod_id: str, pod_name: str, confirmed: bool) -> None:
        """Every download marked "then terminate" from the pod is verified: terminate it if the user said so up
        front, else ask (the name typed)."""
        host = self.host
        pod = next((p for p in host.pods() if p.id == pod_id), None)
        if pod is None:
            host.notify(f"downloads from {visible(pod_name)} verified; the pod is no longer listed", markup=False)
        elif host.read_only:
            host.notify(
                f"downloads from {visible(pod.name)} verified; read-only mode, so it is not terminated", markup=False
            )
        elif confirmed:
            host.notify(f"downloads from {visible(pod.name)} verified: terminating it, as you asked", markup=False)
            self.start("terminate", pod)
        else:
            host.notify(f'every download marked "then terminate" from {visible(pod.name)} is verified', markup=False)
            host.open_screen(
                self.terminate_question(pod, unasked=True),
                ("terminate", pod.id),
                lambda yes: self.start("terminate", pod) if yes else None,
            )

    # --- autostop: in the app (a countdown once idle), or the watchdog on the pod ----------------------------

    def toggle_autostop(self, pod: Pod) -> None:
        on = pod.id not in self.host.costs.autostop_pods
        if not (on and self._refused("autostop")):
            self.host.notify(
                self.host.costs.set_autostop(pod, on, self.countdown_s), markup=False, timeout=10 if on else None
            )

    def count_down(self, pod: Pod, idle_s: float, per_hr: float) -> None:
        """The pod went idle with in-app autostop on: a countdown, then stop it unless a key is pressed."""
        from podtui.ui.screens.countdown import CountdownScreen

        host = self.host
        if any(isinstance(s, CountdownScreen) for s in host.screen_stack):  # one at a time, always on top
            host.notify(f"{pod.name} is idle too; autostop waits until the open countdown is answered", markup=False)
            return

        def answered(stop: bool | None) -> None:
            if stop:
                self.start("stop", pod)
            else:
                host.notify(f"{pod.name} keeps running; autostop waits for its next idle stretch", markup=False)

        host.open_screen(CountdownScreen(pod, idle_s, per_hr, self.countdown_s), ("countdown", pod.id), answered)

    def watchdog(self, pod: Pod, action: str) -> None:
        """install, remove or status of the on-pod watchdog, in a thread worker; the answer comes as a note."""
        if action == "status" or not self._refused(f"autostop {action}"):
            self.host.notify(f"autostop watchdog on {pod.name}: {action}…", timeout=3, markup=False)
            self.host.run_worker(
                functools.partial(self._watchdog, pod, action),
                thread=True,
                group="watchdog",
                exit_on_error=False,
                description="the autostop watchdog",
            )

    def _watchdog(self, pod: Pod, action: str) -> None:
        """In the worker thread."""
        from podtui.core import autostop
        from podtui.core.ssh.errors import SshError

        services = self.host.services
        c = services.config
        try:
            st = autostop.on_pod(pod, services.ssh_settings(), action, c.idle_threshold_pct, c.idle_window_min * 60)
            text, severity = f"autostop watchdog on {pod.name}: {st.label}", "information"
        except (SshError, autostop.AutostopError) as e:
            text, severity = f"autostop watchdog on {pod.name}: {e}", "error"
        self.host.call_from_thread(self.host.notify, text, severity=severity, markup=False, timeout=10)
