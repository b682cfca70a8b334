"""The app's side of the transfer queue: the queue started on first use (the transfer code loads paramiko, which
the first frame must not wait for), its changes carried from the queue's threads to the event loop as messages
and published on `changed_signal` (every transfer table and the transfer strip follow it) or said in a note, and
the pane and the add-transfer dialog opened.

The queue's context takes the Hugging Face endpoint and token from the services, podtui's one source of defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.dom import DOMNode
from textual.message import Message
from textual.signal import Signal

from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.visible import visible
from podtui.ui.messages import TerminateHeld, TerminateReady, TransferChanged, TransferRemoved
from podtui.ui.needs import Notifies, Opens

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.notifications import SeverityLevel
    from textual.screen import Screen

    from podtui.transfer.job import TransferJob
    from podtui.transfer.queue import TransferQueue
    from podtui.ui.navigator import Navigator
    from podtui.ui.screens.transfers import TransfersScreen


class DeskHost(Opens, Notifies, Protocol):
    """What the desk needs of the app."""

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...
    @property
    def navigator(self) -> Navigator: ...  # the pod the user is on, for the add-transfer dialog
    def pods(self) -> tuple[Pod, ...]: ...
    def post_message(self, message: Message) -> bool: ...  # thread-safe
    def is_screen_installed(self, screen: Screen[Any] | str) -> bool: ...
    def install_screen(self, screen: Screen[Any], name: str) -> None: ...
    def get_screen(self, screen: str) -> Screen[Any]: ...


class TransferDesk:
    def __init__(self, host: DeskHost, services: Services, read_only: bool) -> None:
        self.host, self.services, self.read_only = host, services, read_only
        self.started: TransferQueue | None = None  # None until a transfer is first asked for
        assert isinstance(host, DOMNode)  # the App: a signal is published from a node of the DOM
        # a transfer that changed (a copy), or the id of one no longer listed; on the event loop
        self.changed_signal: Signal[TransferJob | str] = Signal(host, "transfers-changed")
        self.picked: str | None = None  # the transfer last added from the UI: a table that lists it selects it
        # told of each of this app's transfers that ended (verified or failed), and whether the pane shows it: the
        # alerts say it (a toast unless in sight, and wherever the config sends it); None: a note says it here
        self.on_end: Callable[[TransferJob, bool], None] | None = None

    def queue(self) -> TransferQueue:
        if self.started is None:
            self.started, problem = self._start()
            if problem:
                self.host.notify(visible(problem), severity="warning", timeout=15, markup=False)
            for job in self.started.jobs():  # the history's: listed by the tables and the strip already shown
                self.changed_signal.publish(job)
        return self.started

    def _start(self) -> tuple[TransferQueue, str | None]:
        """The queue, started, and what is wrong with the history file if anything."""
        from podtui.transfer.history import TransferHistory
        from podtui.transfer.queue import TransferQueue

        s, post = self.services, self.host.post_message
        ctx = s.transfer_context()
        history = TransferHistory(s.transfer_history) if s.transfer_history else None

        def changed(job: TransferJob) -> None:  # these four are called on the queue's threads
            post(TransferChanged(job))

        def removed(job_id: str) -> None:
            post(TransferRemoved(job_id))

        def terminate_ready(pod_id: str, name: str, confirmed: bool) -> None:
            post(TerminateReady(pod_id, name, confirmed))

        def terminate_held(pod_id: str, name: str, why: str) -> None:
            post(TerminateHeld(pod_id, name, why))

        queue = TransferQueue(
            ctx,
            history,
            on_change=changed,
            on_terminate_ready=terminate_ready,
            read_only=self.read_only,
            on_removed=removed,
            on_terminate_held=terminate_held,
        )
        problem = history.problem if history is not None else None  # from reading it: before anything runs
        return queue.start(), problem

    def resume(self) -> None:
        """Soon after start-up: transfers queued in an earlier run go on (and interrupted ones are listed)."""
        history = self.services.transfer_history
        if self.started is None and history is not None and history.exists():
            self.queue()

    def close(self) -> None:
        if self.started is not None:
            self.started.close()

    def unverified(self, pod_id: str) -> list[TransferJob]:
        return self.started.unverified(pod_id) if self.started is not None else []

    def busy_pods(self) -> set[str]:
        return self.started.busy_pods() if self.started is not None else set()

    def jobs(self) -> list[TransferJob]:
        """The transfers listed (copies), without starting the queue: none before it is started."""
        return self.started.jobs() if self.started is not None else []

    def add(self, job: TransferJob) -> TransferJob:
        """A transfer the user asked for: queued, and selected in the tables that list it (now, and in one opened
        later)."""
        added = self.queue().add(job)
        self.picked = added.id
        self.changed_signal.publish(self.queue().get(added.id) or added)
        return added

    # --- the pane ----------------------------------------------------------------------------------------

    def pane(self) -> TransfersScreen:
        from podtui.ui.screens.transfers import TransfersScreen

        if not self.host.is_screen_installed("transfers"):
            self.host.install_screen(TransfersScreen(), "transfers")
        return cast("TransfersScreen", self.host.get_screen("transfers"))

    def show(self) -> None:
        self.host.open_screen(self.pane(), ("transfers",))

    def ask(self, then_show: bool = True) -> None:
        """The add-transfer dialog, on the pod the user is on; the transfer it makes is queued, selected, and shown
        on the transfers screen (then_show), else where it was asked from (a pod's pane)."""
        from podtui.ui.screens.add_transfer import AddTransferScreen

        def answered(job: TransferJob | None) -> None:
            if job is not None:
                self.add(job)
                if then_show:
                    self.show()

        dialog = AddTransferScreen(list(self.host.pods()), self.host.navigator.selected_pod())
        self.host.open_screen(dialog, ("add-transfer",), answered)

    def changed(self, job: TransferJob) -> None:
        self.changed_signal.publish(job)
        pane = self.pane() if self.host.is_screen_installed("transfers") else None
        mine = self.started is None or self.started.mine(job)  # another podtui's: it says so itself
        stack = self.host.screen_stack  # empty while the app shuts down, a transfer ending meanwhile
        in_sight = bool(stack) and stack[-1] is pane
        if mine and stack and self.on_end is not None:  # its end is an alert (docs/alerts.md#events)
            if job.state in ("verified", "failed"):
                self.on_end(job, in_sight)
            return
        note = _finished_note(job) if mine and stack and not in_sight else None
        if note is not None:
            self.host.notify(note[0], severity=note[1], markup=False, timeout=8)

    def removed(self, job_id: str) -> None:
        self.changed_signal.publish(job_id)

    def held(self, why: str) -> None:
        """A "then terminate" waits for another podtui's transfer: said once per holding transfer (the queue sees
        to it); the pane's detail line says it while it lasts."""
        self.host.notify(visible(f"then terminate held: {why}"), severity="warning", timeout=15, markup=False)


def _finished_note(job: TransferJob) -> tuple[str, SeverityLevel] | None:
    if job.state == "verified":
        return visible(f"{job.label}: verified"), "information"
    if job.state == "failed":
        return visible(f"{job.label}: failed: {job.error}"), "error"
    return None
