"""The app's side of alerts (docs/alerts.md): the detector and the router, with the app's places to say an alert: a
toast (and the bell for the serious ones), the terminal's own notification written through Textual's driver,
notify-send and the webhook. It hears every poll's snapshot and the cost ticker's events (the App), a transfer's
end (TransferDesk) and what the user asked of a pod (PodActions). Everything here runs on the event loop; the
webhook and notify-send send from threads of their own.

What is on screen when the app starts is not an alert (the account bar shows the runway, the list a stuck pod): the
first snapshot only sets where things stand, and the runway's the first one with the balance known. The demo's
simulated pods reach the app alone, never the desktop or a webhook.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from podtui.core.alert_rules import Sink
from podtui.core.alerts import Alert, AlertDetector, AlertRouter, budget_steps, transfer_ended, went_idle
from podtui.core.cost import cost_view
from podtui.core.pod import Pod, Snapshot
from podtui.core.services import Services
from podtui.ui.needs import Notifies

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.driver import Driver

    from podtui.core.notify.webhook import WebhookSink
    from podtui.core.ticker import BudgetStep, WentIdle
    from podtui.transfer.job import TransferJob

log = logging.getLogger(__name__)
TOAST_S = {"error": 20.0, "warning": 15.0, "information": 8.0}  # by severity; a budget step stays up 20 s
# the status line under the list says these for as long as they last (a low runway and what $0 deletes, a pod
# starting too long): a toast would only cover the list with the same words; the bell still rings
ON_SCREEN = ("runway", "stuck")
TRANSFER_TOAST_S = 8.0  # as the transfer desk always said a transfer's end
CLOSE_FLUSH_S = 1.0  # at the app's end, queued webhook alerts get this long, in a thread of their own


class AlertHost(Notifies, Protocol):
    """What the desk needs of the app: to say a toast, ring the bell, and write to the terminal."""

    @property
    def _driver(self) -> Driver | None: ...
    def bell(self) -> None: ...


class AlertDesk:
    def __init__(
        self,
        host: AlertHost,
        services: Services,
        environ: Mapping[str, str] | None = None,
        which: Callable[[str], str | None] | None = None,
    ) -> None:
        """environ: where $TMUX is read (os.environ); which: how notify-send is found (on PATH)."""
        self.host = host
        rules = services.config.alerts
        self.detector = AlertDetector(services.config, services.clock)
        self.clock = services.clock
        self.webhook: WebhookSink | None = None
        sinks: dict[Sink, Callable[[Alert], None]] = {"app": self._toast}
        if not services.demo:  # the demo's pods are not the user's: nothing leaves the app about them
            from podtui.core.notify.desktop import NotifySend
            from podtui.core.notify.terminal import TerminalNotifier

            sinks["desktop"] = TerminalNotifier(
                self._write_terminal, rules.osc, os.environ if environ is None else environ
            )
            notify_send = NotifySend(which)
            if notify_send.available:
                sinks["notify-send"] = notify_send
            if rules.webhook is not None:
                from podtui.core.notify.webhook import WebhookSink

                self.webhook = WebhookSink(rules.webhook, rules.webhook_format)
                sinks["webhook"] = self.webhook
        self.router = AlertRouter(rules, sinks, services.profile)
        self._first = True
        self._runway_set = False  # the runway's start, set by the first poll with the balance known
        self._transfer_in_sight = False  # the transfer's end is on screen already: no toast for it
        self.closing: threading.Thread | None = None  # the webhook's last second, after the app's end
        self.flush_s = CLOSE_FLUSH_S

    # --- what the app hears -----------------------------------------------------------------------------------

    def after_poll(self, snap: Snapshot, idle: Iterable[WentIdle], stuck: Iterable[tuple[Pod, float]]) -> None:
        """A poll's snapshot (the pods RunPod sent: a sink makes the text safe for its place), the pods the ticker
        found idle, the pods starting too long."""
        alerts = self.detector.after_poll(snap, stuck)
        if self._first:  # where things stand at start is on screen
            self._first, alerts = False, []
        if not self._runway_set:  # the runway stands where the first balance puts it (a poll may come without)
            self._runway_set = cost_view(snap, self.clock()).balance is not None
            alerts = [a for a in alerts if a.kind != "runway"]
        now = self.clock()
        self.router.route_all([*alerts, *(went_idle(e, now) for e in idle)])

    def budget(self, steps: Iterable[BudgetStep]) -> None:
        self.router.route_all(budget_steps(steps, self.clock()))

    def transfer_ended(self, job: TransferJob, in_sight: bool) -> None:
        """A transfer of this app's ended; `in_sight`: the transfers' pane is on top and shows it already."""
        alert = transfer_ended(job, self.clock())
        if alert is not None:
            self._transfer_in_sight = in_sight
            try:
                self.router.route(alert)
            finally:
                self._transfer_in_sight = False

    def asked(self, pod_id: str, verb: str) -> None:
        """The user asked podtui to stop or terminate a pod: its exit is not an alert."""
        if verb in ("stop", "terminate"):
            self.detector.asked(pod_id, verb)

    def refused(self, pod_id: str, verb: str) -> None:
        """RunPod refused (or never got) the stop or terminate asked: a real exit after it is an alert again."""
        self.detector.unasked(pod_id, verb)

    def close(self) -> None:
        """Queued webhook alerts get `flush_s` to go, in a thread: the event loop never waits for a receiver that
        hangs. Not a daemon: the process's end waits for that second (and the webhook's bounded stop)."""
        webhook, self.webhook = self.webhook, None
        if webhook is not None:
            self.closing = threading.Thread(
                target=webhook.close, kwargs={"flush_s": self.flush_s, "join_s": 0.5}, name="podtui-webhook-close"
            )
            self.closing.start()

    # --- the app's places ----------------------------------------------------------------------------------------

    def _toast(self, alert: Alert) -> None:
        if alert.kind in ("transfer_verified", "transfer_failed"):
            if not self._transfer_in_sight:
                self.host.notify(alert.text, severity=alert.severity, timeout=TRANSFER_TOAST_S, markup=False)
            return
        if alert.kind not in ON_SCREEN:
            timeout = 20.0 if alert.kind == "budget" else TOAST_S[alert.severity]
            self.host.notify(alert.text, severity=alert.severity, timeout=timeout, markup=False)
        if alert.severity != "information":
            self.host.bell()

    def _write_terminal(self, sequence: str) -> None:
        """Through Textual's driver, which writes each frame whole from its writer thread: the sequence goes between
        two frames and moves no cursor (what App.bell does). Headless, the driver writes nothing."""
        driver: Any = self.host._driver
        if driver is not None:
            driver.write(sequence)
