"""What the user does to a pod: stop, resume and terminate (asked first, sent in a thread worker, the answer said
in a note), the terminate asked for by downloads marked "then terminate" once they are verified, and autostop: in
the app (a countdown once the pod is idle) or the watchdog on the pod."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App

from podtui.core import actions
from podtui.core.api import ApiError
from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.messages import ActionFinished
from podtui.ui.needs import Notifies, Opens, Served
from podtui.ui.worker_errors import what_failed

if TYPE_CHECKING:
    from textual.message import Message
    from textual.screen import ModalScreen, Screen
    from textual.worker import Worker

    from podtui.core.feed import PodFeed
    from podtui.core.ticker import CostTicker
    from podtui.ui.transfers import TransferDesk

log = logging.getLogger(__name__)
KEY_REFUSED = (
    'RunPod refused the API key at the last refresh; set a valid one ({app.palette}, "RunPod API key", '
    "or `podtui config set-key`), then try again"
)  # {app.palette}: the palette's key (keymap.fill)


class PodActionsHost(Served, Opens, Notifies, Protocol):
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
    def pods(self) -> tuple[Pod, ...]: ...
    def poll_now(self) -> None: ...
    def post_message(self, message: Message) -> bool: ...  # thread-safe
    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...
    def run_worker(
        self,
        work: Callable[[], None],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[None]: ...


class PodActions:
    def __init__(self, host: PodActionsHost) -> None:
        self.host = host
        self.countdown_s = 60  # the autostop countdown's length

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
        if self._refused(v, v, pod):
            return
        host = self.host
        if host.feed.key_refused:  # asking first would only lead to a refusal after the answer
            app = host if isinstance(host, App) else None  # the keys in effect are the running app's
            host.notify(
                f"{verb} {pod.name} not sent: {keymap.fill(app, KEY_REFUSED)}",
                severity="error",
                timeout=10,
                markup=False,
            )
            return
        from podtui.ui.screens.confirm import ConfirmScreen  # with the first question, not for the first frame

        c = actions.confirmation(v, pod)
        question = (
            self.terminate_question(pod)
            if v == "terminate"
            else ConfirmScreen(c.title, c.body, c.button, danger=c.danger)
        )
        host.open_screen(question, (v, pod.id), lambda yes: self.start(v, pod) if yes else None)

    def terminate_question(self, pod: Pod, unasked: bool = False) -> ModalScreen[bool]:
        """unasked: the question comes up by itself (then-terminate), perhaps while the user types elsewhere,
        so a stray "y" must not answer it: the name is always typed then."""
        from podtui.ui.screens.terminate import TerminateScreen

        pending = [f"{j.label} ({j.state_label})" for j in self.host.transfers.unverified(pod.id)]
        return TerminateScreen(pod, pending, type_name=unasked or self.host.services.config.confirm_terminate == "name")

    def start(self, verb: actions.Verb, pod: Pod) -> None:
        """Send an action the user has already confirmed."""
        self.host.notify(f"{verb} {pod.name}: sent…", timeout=3, markup=False)
        self.host.run_worker(
            functools.partial(self._send, verb, pod),
            thread=True,
            group="action",
            exit_on_error=False,
            description="sending the action",
        )

    def _send(self, verb: actions.Verb, pod: Pod) -> None:
        """In the worker thread."""
        try:
            actions.perform(self.host.services.api, verb, pod)
        except ApiError as e:
            self.host.post_message(ActionFinished(verb, pod.name, str(e)))
        except Exception as e:  # said as this action's failure, with the pod and a refresh: the pod may have changed
            log.exception("%s %s failed", verb, pod.id)
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
