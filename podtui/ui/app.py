"""The podtui App: holds the services and the objects that do the work (the poll loop and its feed, the cost
ticker, the consoles, the transfer desk), broadcasts new pod data and the second's tick to the screens that
subscribe, and turns what its objects report into notifications and screens
(docs/architecture.md#from-a-poll-to-the-screen)."""

from __future__ import annotations

import logging
import sys
import time
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import work
from textual.actions import SkipAction
from textual.app import App
from textual.screen import ModalScreen, Screen
from textual.signal import Signal
from textual.worker import Worker, WorkerState

from podtui.console.registry import ConsoleRegistry
from podtui.core import actions, crash, secret
from podtui.core.api import ApiError, RunPodApi
from podtui.core.cost import SessionSpend
from podtui.core.feed import PodFeed
from podtui.core.idle import IdleState, IdleTracker
from podtui.core.log_file import log_location
from podtui.core.pod import Pod, PodStatus, Snapshot
from podtui.core.services import Services
from podtui.core.ticker import CostTicker, Ticker
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.messages import (
    ActionFinished,
    PollFinished,
    TerminateHeld,
    TerminateReady,
    TransferChanged,
    TransferRemoved,
)
from podtui.ui.needs import PodData, ScreenResultCallback
from podtui.ui.options import RunOptions
from podtui.ui.pod_view import Cells, row_cells
from podtui.ui.poll import Poller
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.help import HelpScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.transfers import TransferDesk

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.command import Provider
    from textual.notifications import SeverityLevel
    from textual.widget import AwaitMount

    from podtui.console.link import ConsoleLink
    from podtui.console.widget import TerminalView
    from podtui.transfer.job import TransferJob
    from podtui.transfer.queue import TransferQueue
    from podtui.ui.screens.console import ConsoleScreen

log = logging.getLogger(__name__)
KEY_REFUSED = ("RunPod refused the API key at the last refresh; set a valid one (ctrl+p, \"RunPod API key\", or "
               "`podtui config set-key`), then try again")


def _pod_commands() -> type[Provider]:
    # Imported when the palette first opens: textual.command is not needed for the first frame.
    from podtui.ui.commands import PodCommands

    return PodCommands


class PodtuiApp(App[None]):
    TITLE = "podtui"
    COMMANDS = App.COMMANDS | {_pod_commands}
    BINDINGS = keymap.bindings("app")
    # the widgets' CSS (a screen brings its own through its CSS_PATH)
    CSS_PATH = ["widgets/pod_table.tcss", "widgets/account_bar.tcss", "widgets/status_line.tcss"]

    def __init__(self, services: Services, options: RunOptions | None = None) -> None:
        super().__init__()
        self.options = options = options or RunOptions()
        self.services, self.read_only = services, options.read_only
        self.now = services.clock
        self.feed = PodFeed()
        self.rows: Mapping[str, Cells] | None = None  # the pod table's cells, idle pods marked
        self.poller = Poller(self, services.api, self.feed, options.poll_interval_s, services.clock)
        self.costs = CostTicker(services.config, services.clock)
        self.consoles = ConsoleRegistry(services.ssh_settings, services.api, services.config.console_scrollback,
                                        self.costs.typed)  # typing into a console is use: the pod is not idle
        self.transfers = TransferDesk(self, services, options.read_only)
        self.pods_polled: Signal[PodData] = Signal(self, "pods-polled")
        self.ticked: Signal[PodData] = Signal(self, "ticked")
        self.autostop_countdown_s = 60
        self.demo_requested = False  # the welcome screen's "Try the demo": the CLI starts the demo after exit
        self._exit_when = options.exit_when if options.screenshot is None else "data"
        self._identities: weakref.WeakKeyDictionary[Screen[Any], tuple[str, ...]] = weakref.WeakKeyDictionary()

    def _handle_exception(self, error: Exception) -> None:
        """Every crash ends here. Textual's own report prints each frame's local variables after exit, and
        podtui's hold pods with their environment (tokens in clear): instead, a redacted traceback goes to the
        log and the terminal gets one line naming it. See docs/architecture.md#crashes."""
        log.error("crashed", exc_info=error)
        self._return_code = 1
        if self._exception is None:  # what run_test re-raises, for the tests
            self._exception = error
            self._exception_event.set()
        self.panic(Text(crash.one_line(error, log_location()), no_wrap=True, overflow="ignore"))

    def panic(self, *renderables: RenderableType) -> None:
        """Textual's input thread reports its own crashes here with a rich traceback of the exception's text,
        bypassing _handle_exception: it gets the same safe treatment."""
        traces = [r for r in renderables if type(r).__module__ == "rich.traceback"]
        if traces:
            kind, summary = crash.summarise_trace(getattr(traces[0], "trace", None))
            log.error("crashed in Textual's input thread: %s", summary)
            self._return_code = 1
            renderables = (Text(crash.one_line(kind, log_location()), no_wrap=True, overflow="ignore"),)
        super().panic(*renderables)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every notification, the screens' included, passes here: most quote text from outside (RunPod's errors,
        pod names, paths), which is shown, never acted on by the terminal (docs/architecture.md#text-from-outside)."""
        super().notify(visible(message, lines=True), title=visible(title), severity=severity, timeout=timeout,
                       markup=markup)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Whatever a worker's own code did not expect ends here, the screens' workers' included: the traceback
        goes to the log (secrets masked, no locals), one line to the user (docs/architecture.md#worker-errors)."""
        error = event.worker.error
        if event.state is WorkerState.ERROR and error is not None:
            what = event.worker.description or event.worker.name
            log.error("%s failed", what, exc_info=error)
            self.notify(f"{what} failed: unexpected error: {type(error).__name__}: {secret.redact(str(error))}",
                        severity="error", timeout=10, markup=False)

    def open_screen(self, screen: Screen[Any], identity: tuple[str, ...],
                    callback: ScreenResultCallback | None = None) -> AwaitMount | None:
        """Push `screen` unless one with the same identity (a kind, and the pod it is about) is already open: a
        key pressed twice, two Enters in one read or a double click must not open two. Returns what to await
        for the screen to be mounted, None when nothing was pushed."""
        if any(self._identities.get(s) == identity for s in self.screen_stack):
            return None
        self._identities[screen] = identity
        return self.push_screen(screen, callback)

    def on_mount(self) -> None:
        keymap.install(self, self.services.config.keys)  # config.toml's [keys]
        self.push_screen(PodListScreen())
        if self.services.needs_key:  # no API key yet: open on the welcome screen
            self.open_welcome()
        if self._exit_when == "first-frame":  # stamped as soon as the first frame is out
            self.call_after_refresh(self._bench_exit, "first-frame")
        self.call_after_refresh(self.poll_now)  # first frame first, then the (slower) first fetch
        self.set_timer(1.0, self.transfers.resume)  # loads the transfer code, so not before the first frame
        self.set_interval(1.0, self._tick)

    def on_unmount(self) -> None:
        self.close_connections()

    def close_connections(self) -> None:
        """End every console's shell and the transfer queue, on purpose (before the demo's simulator stops)."""
        self.consoles.close_all()
        self.transfers.close()

    # --- pod data: polled, then told to the screens; the ticker's events told to the user ----------------

    def poll_now(self) -> None:
        self.poller.poll_now()

    def on_poll_finished(self, message: PollFinished) -> None:
        self.poller.landed(message)
        if message.snapshot is not None:
            self.rows = self._costs_after_poll(message.snapshot, message.rows or {})
        self.pods_polled.publish(self.pod_data())
        if message.snapshot is not None and self._exit_when == "data":
            self.call_after_refresh(self._finish_first_data)
        self.poller.go_on()

    def _costs_after_poll(self, snap: Snapshot, rows: Mapping[str, Cells]) -> dict[str, Cells]:
        """Idle pods marked in the rows, announced with a bell, and counted down when the user asked for it."""
        went_idle = self.costs.after_poll(snap, self.transfers.busy_pods())
        marks = self.costs.idle_marks
        marked = {**rows, **{p.id: row_cells(p, idle=marks[p.id]) for p in snap.pods if p.id in marks}}
        for event in went_idle:
            self.notify(event.text, severity="warning", timeout=15, markup=False)
            self.bell()
            if event.countdown is not None and not self.read_only:
                self._count_down(event.pod, *event.countdown)
        return marked

    def _tick(self) -> None:
        self.cost_tick()  # the money moves every second, interpolated between polls
        self.ticked.publish(self.pod_data())

    def cost_tick(self) -> None:
        for step in self.costs.tick(self.feed.snapshot):
            self.notify(step.text, severity=step.severity, timeout=20, markup=False)
            self.bell()

    def ticker(self) -> Ticker | None:
        return self.costs.ticker(self.feed.snapshot)

    def pod_data(self) -> PodData:
        return PodData(self.feed, self.rows, self.ticker(), self.now(), self.services.demo)

    def _finish_first_data(self) -> None:
        shot = self.options.screenshot
        if shot is None:
            self._bench_exit("data")
            return
        self.save_screenshot(filename=shot.name, path=str(shot.parent))
        self.exit()

    def _bench_exit(self, what: str) -> None:
        # bench/startup.py reads this wall-clock stamp: the moment the frame was on screen, not process exit.
        sys.__stderr__.write(f"podtui-bench {what} {time.time():.6f}\n")  # type: ignore[union-attr]
        self.exit()

    # --- pods ----------------------------------------------------------------------------------------

    def pods(self) -> tuple[Pod, ...]:
        """The pods as last polled (none before the first answer)."""
        return self.feed.snapshot.pods if self.feed.snapshot is not None else ()

    def selected_pod(self) -> Pod | None:
        """The pod the user is on: the details screen's, else the one selected in the list."""
        for screen in reversed(self.screen_stack):
            if isinstance(screen, PodListScreen | PodDetailScreen) and screen.selected_pod is not None:
                return screen.selected_pod
        return None

    def open_details(self, pod_id: str) -> None:
        if any(self._identities.get(s) == ("details", pod_id) for s in self.screen_stack):
            return  # already open (two Enters in one read)
        if isinstance(self.screen, PodDetailScreen):
            self.pop_screen()
        self.open_screen(PodDetailScreen(pod_id), ("details", pod_id))

    def run_on_list(self, action: str) -> None:
        while len(self.screen_stack) > 1 and not isinstance(self.screen, PodListScreen):
            self.pop_screen()
        self.call_later(self.screen.run_action, action)

    def _refused(self, what: str, verb: actions.Verb | None = None, pod: Pod | None = None) -> bool:
        """Read-only mode refuses `what`, or the pod's state refuses the verb: said, and True."""
        try:
            actions.guard(self.read_only, what)
            if verb is not None and pod is not None:
                actions.check(verb, pod)
        except actions.ActionRefused as e:
            self.notify(str(e), severity="warning", markup=False)
            return True
        return False

    def request_action(self, verb: str, pod: Pod) -> None:
        if verb not in ("stop", "resume", "terminate"):
            raise ValueError(verb)
        v: actions.Verb = verb  # type: ignore[assignment]
        if self._refused(v, v, pod):
            return
        if self.feed.key_refused:  # asking first would only lead to a refusal after the answer
            self.notify(f"{verb} {pod.name} not sent: {KEY_REFUSED}", severity="error", timeout=10, markup=False)
            return
        c = actions.confirmation(v, pod)
        question = self.terminate_screen(pod) if v == "terminate" else \
            ConfirmScreen(c.title, c.body, c.button, danger=c.danger)
        self.open_screen(question, (v, pod.id), lambda yes: self.start_action(v, pod) if yes else None)

    def terminate_screen(self, pod: Pod, unasked: bool = False) -> ModalScreen[bool]:
        """unasked: the question comes up by itself (then-terminate), perhaps while the user types elsewhere,
        so a stray "y" must not answer it: the name is always typed then."""
        from podtui.ui.screens.terminate import TerminateScreen

        pending = [f"{j.label} ({j.state_label})" for j in self.transfers.unverified(pod.id)]
        return TerminateScreen(pod, pending, type_name=unasked or self.services.config.confirm_terminate == "name")

    def start_action(self, verb: actions.Verb, pod: Pod) -> None:
        """Send an action the user has already confirmed."""
        self.notify(f"{verb} {pod.name}: sent…", timeout=3, markup=False)
        self._run_action(verb, pod)

    @work(thread=True, group="action", exit_on_error=False, description="sending the action")
    def _run_action(self, verb: actions.Verb, pod: Pod) -> None:
        try:
            actions.perform(self.services.api, verb, pod)
        except ApiError as e:
            self.post_message(ActionFinished(verb, pod.name, str(e)))
        else:
            self.post_message(ActionFinished(verb, pod.name, None))

    def on_action_finished(self, message: ActionFinished) -> None:
        if message.error:
            self.notify(f"{message.verb} {message.pod_name} failed: {message.error}", severity="error",
                        timeout=10, markup=False)
        else:
            self.notify(f"{message.pod_name}: {actions.UNDER_WAY[message.verb]}", markup=False)
        self.poll_now()

    # --- autostop: in the app (a countdown once idle), or the watchdog on the pod ----------------------------

    def toggle_autostop(self, pod: Pod) -> None:
        on = pod.id not in self.costs.autostop_pods
        if not (on and self._refused("autostop")):
            self.notify(self.costs.set_autostop(pod, on, self.autostop_countdown_s), markup=False,
                        timeout=10 if on else None)

    def _count_down(self, pod: Pod, idle_s: float, per_hr: float) -> None:
        from podtui.ui.screens.countdown import CountdownScreen

        if any(isinstance(s, CountdownScreen) for s in self.screen_stack):  # one at a time, always on top
            self.notify(f"{pod.name} is idle too; autostop waits until the open countdown is answered", markup=False)
            return

        def answered(stop: bool | None) -> None:
            if stop:
                self.start_action("stop", pod)
            else:
                self.notify(f"{pod.name} keeps running; autostop waits for its next idle stretch", markup=False)

        self.open_screen(CountdownScreen(pod, idle_s, per_hr, self.autostop_countdown_s), ("countdown", pod.id),
                         answered)

    def watchdog(self, pod: Pod, action: str) -> None:
        """install, remove or status of the on-pod watchdog, in a thread worker; the answer comes as a note."""
        if action == "status" or not self._refused(f"autostop {action}"):
            self.notify(f"autostop watchdog on {pod.name}: {action}…", timeout=3, markup=False)
            self._watchdog(pod, action)

    @work(thread=True, group="watchdog", exit_on_error=False, description="the autostop watchdog")
    def _watchdog(self, pod: Pod, action: str) -> None:
        from podtui.core import autostop
        from podtui.core.ssh.errors import SshError

        c = self.services.config
        try:
            st = autostop.on_pod(pod, self.services.ssh_settings(), action, c.idle_threshold_pct,
                                 c.idle_window_min * 60)
            text, severity = f"autostop watchdog on {pod.name}: {st.label}", "information"
        except (SshError, autostop.AutostopError) as e:
            text, severity = f"autostop watchdog on {pod.name}: {e}", "error"
        self.call_from_thread(self.notify, text, severity=severity, markup=False, timeout=10)

    # --- consoles -------------------------------------------------------------------------------------

    def _console_focused(self) -> bool:
        from podtui.console.widget import TerminalView  # loaded with the first console, not at start-up

        return isinstance(self.focused, TerminalView)

    async def action_quit(self) -> None:
        if self._console_focused():
            raise SkipAction()  # ctrl+q belongs to the pod while a console has focus
        live = self.consoles.live()
        if not live:
            await super().action_quit()
            return
        self.open_screen(ConfirmScreen(
            f"Quit with {len(live)} console{'s' if len(live) > 1 else ''} open?",
            "Their shells end, and programs started in them without nohup or tmux stop with them:\n"
            + ", ".join(live) + "\nThe pods keep running (and billing).", "Quit"), ("quit",),
            lambda yes: self.exit() if yes else None)

    def action_command_palette(self) -> None:
        if self._console_focused():
            raise SkipAction()  # so does ctrl+p
        super().action_command_palette()

    def console_screen(self) -> ConsoleScreen:
        from podtui.ui.screens.console import ConsoleScreen

        if not self.is_screen_installed("consoles"):
            self.install_screen(ConsoleScreen(self.consoles, self.services.clock), "consoles")
        return cast("ConsoleScreen", self.get_screen("consoles"))

    async def open_console(self, pod: Pod) -> TerminalView | None:
        if pod.status is not PodStatus.RUNNING:
            self.notify(f"{pod.name} is {pod.status.value.lower()}: a console needs a running pod",
                        severity="warning", markup=False)
            return None
        screen = self.console_screen()
        if (pushed := self.open_screen(screen, ("consoles",))) is not None:
            await pushed
        link = self.consoles.open(pod, cols=max(self.size.width, 20), rows=max(self.size.height - 4, 5))
        return await screen.add(link)

    def show_consoles(self) -> None:
        self.open_screen(self.console_screen(), ("consoles",))

    # --- transfers ------------------------------------------------------------------------------------

    def transfer_queue(self) -> TransferQueue:
        return self.transfers.queue()

    def show_transfers(self) -> None:
        self.transfers.show()

    def ask_for_transfer(self) -> None:
        self.transfers.ask(list(self.pods()), self.selected_pod())

    def on_transfer_changed(self, message: TransferChanged) -> None:
        self.transfers.changed(message.job)

    def on_transfer_removed(self, message: TransferRemoved) -> None:
        self.transfers.removed(message.job_id)

    def on_terminate_held(self, message: TerminateHeld) -> None:
        # said once per holding transfer (the queue sees to it); the pane's detail line says it while it lasts
        self.notify(visible(f"then terminate held: {message.why}"), severity="warning", timeout=15, markup=False)

    def on_terminate_ready(self, message: TerminateReady) -> None:
        pod = next((p for p in self.pods() if p.id == message.pod_id), None)
        if pod is None:
            self.notify(f"downloads from {visible(message.pod_name)} verified; the pod is no longer listed",
                        markup=False)
        elif self.read_only:
            self.notify(f"downloads from {visible(pod.name)} verified; read-only mode, so it is not terminated",
                        markup=False)
        elif message.confirmed:
            self.notify(f"downloads from {visible(pod.name)} verified: terminating it, as you asked", markup=False)
            self.start_action("terminate", pod)
        else:
            self.notify(f"every download marked \"then terminate\" from {visible(pod.name)} is verified",
                        markup=False)
            self.open_screen(self.terminate_screen(pod, unasked=True), ("terminate", pod.id),
                             lambda yes: self.start_action("terminate", pod) if yes else None)

    # --- the other screens ----------------------------------------------------------------------------

    def open_welcome(self) -> None:
        from podtui.ui.screens.welcome import WelcomeScreen

        save_key = self.services.save_key
        if save_key is None:
            self.notify("the demo needs no key; `podtui config set-key` stores one for your account")
            return
        self.open_screen(WelcomeScreen(save_key, timeout_s=self.services.config.api_timeout_s), ("welcome",))

    def restart_in_demo(self) -> None:
        self.demo_requested = True
        self.exit()

    def action_hf_check(self) -> None:
        self.open_hf_check()

    def open_hf_check(self) -> None:
        from podtui.ui.screens.hf_check import HfCheckScreen

        self.open_screen(HfCheckScreen(list(self.pods()), self.selected_pod()), ("hf",))

    def action_gpus(self) -> None:
        from podtui.ui.screens.gpus import GpusScreen  # loaded on first use, not for the first frame

        self.open_screen(GpusScreen(), ("gpus",))

    def action_create_pod(self) -> None:
        from podtui.ui.screens.create_pod import CreatePodScreen

        if self.read_only:
            self.notify("read-only mode: creating a pod is switched off", severity="warning", markup=False)
            return
        self.open_screen(CreatePodScreen(), ("create",))

    def open_doctor(self, pod: Pod) -> None:
        from podtui.ui.screens.doctor import DoctorScreen

        self.open_screen(DoctorScreen(pod), ("doctor", pod.id))

    def action_help(self) -> None:
        self.open_screen(HelpScreen(), ("help",))

    def action_keys(self) -> None:
        from podtui.ui.screens.keys import KeysScreen

        s = self.services
        self.open_screen(KeysScreen(s.api, s.key_path, self.pods, read_only=self.read_only), ("keys",))

    # --- shortcuts into the objects above: the palette reads autostop_pods, tests read the rest (once they read
    # the objects themselves, these go) -------------------------------------------------------------------------

    @property
    def api(self) -> RunPodApi:
        return self.services.api

    @property
    def autostop_pods(self) -> set[str]:
        return self.costs.autostop_pods

    @property
    def idle(self) -> IdleTracker:
        return self.costs.idle

    @property
    def idle_states(self) -> dict[str, IdleState]:
        return self.costs.idle_states

    @property
    def session_spend(self) -> SessionSpend:
        return self.costs.session_spend

    @property
    def console_links(self) -> list[ConsoleLink]:
        return self.consoles.links

    @property
    def polls_done(self) -> int:
        return self.poller.done

    @property
    def _polling(self) -> bool:
        return self.poller.polling

    @property
    def next_poll_in_s(self) -> float | None:
        return self.poller.next_in_s

    def _backoff(self) -> float:
        return self.poller.backoff()

    @property
    def _transfer_queue(self) -> TransferQueue | None:
        return self.transfers.started

    def transfer_jobs(self) -> list[TransferJob]:
        return self.transfer_queue().jobs()


if TYPE_CHECKING:  # the App gives every screen what the screen declares it needs (its `needs`): mypy checks it
    from podtui.ui.needs import Opens, Served, Transfers
    from podtui.ui.screens.create_pod import CreatePodNeeds
    from podtui.ui.screens.doctor import DoctorNeeds
    from podtui.ui.screens.gpus import GpusNeeds
    from podtui.ui.screens.hf_check import HfCheckNeeds
    from podtui.ui.screens.pod_detail import PodDetailNeeds
    from podtui.ui.screens.pod_list import PodListNeeds
    from podtui.ui.screens.welcome import WelcomeNeeds

    def _gives(app: PodtuiApp) -> tuple[PodListNeeds, PodDetailNeeds, Transfers, Opens, Served, GpusNeeds,
                                        CreatePodNeeds, DoctorNeeds, HfCheckNeeds, WelcomeNeeds]:
        return app, app, app, app, app, app, app, app, app, app
