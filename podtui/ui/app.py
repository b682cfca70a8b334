"""The podtui App: holds the services and the objects that do the work (the poll loop and its feed, the cost
ticker, the consoles, the transfer desk, the pod actions, the navigator that opens screens), broadcasts new pod data
and the second's tick to the screens that subscribe, and turns what its objects report into notifications
(docs/architecture.md#from-a-poll-to-the-screen)."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.app import App
from textual.screen import Screen
from textual.signal import Signal
from textual.worker import Worker

from podtui.console.registry import ConsoleRegistry
from podtui.core import crash, start_up
from podtui.core.feed import PodFeed
from podtui.core.log_file import log_location
from podtui.core.pod import Pod, Snapshot
from podtui.core.services import Services
from podtui.core.ticker import CostTicker, Ticker
from podtui.core.visible import visible
from podtui.ui import key_fence, keymap, worker_errors
from podtui.ui.alert_desk import AlertDesk
from podtui.ui.forwards import ForwardDesk
from podtui.ui.job_desk import JobDesk
from podtui.ui.messages import (
    ActionFinished,
    ForwardChanged,
    PollFinished,
    TerminateHeld,
    TerminateReady,
    TransferChanged,
    TransferRemoved,
)
from podtui.ui.navigator import Navigator
from podtui.ui.needs import PodData, ScreenResultCallback
from podtui.ui.options import RunOptions
from podtui.ui.pod_actions import PodActions
from podtui.ui.pod_view import Cells, row_cells
from podtui.ui.poll import Poller
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.ssh_out import SshOut
from podtui.ui.sync_desk import SyncDesk, SyncMoved
from podtui.ui.transfers import TransferDesk
from podtui.ui.worker_errors import in_thread

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.command import Provider
    from textual.notifications import SeverityLevel
    from textual.widget import AwaitMount

    from podtui.core.launch_memory import LaunchMemory
    from podtui.core.ledger import Ledger

log = logging.getLogger(__name__)


def _pod_commands() -> type[Provider]:
    # Imported when the palette first opens: textual.command is not needed for the first frame.
    from podtui.ui.commands import PodCommands

    return PodCommands


class PodtuiApp(App[None]):
    TITLE = "podtui"
    COMMANDS = App.COMMANDS | {_pod_commands}
    BINDINGS = keymap.bindings("app")
    # the widgets' CSS (a screen brings its own through its CSS_PATH)
    CSS_PATH = [
        "widgets/pod_pane.tcss",
        "widgets/pod_table.tcss",
        "widgets/account_bar.tcss",
        "widgets/status_line.tcss",
        "widgets/transfer_strip.tcss",
        "widgets/jobs_panel.tcss",
        "widgets/sync_panel.tcss",
        "screens/pod_list.tcss",  # the first screen's: pushing a screen with CSS not read yet reparses all
    ]

    def __init__(self, services: Services, options: RunOptions) -> None:
        """Made by build_app() (podtui/ui/build.py), which fills `options` from the command line and the config."""
        super().__init__()
        self.options = options
        self.services, self.read_only = services, options.read_only
        self.now = services.clock
        self.feed = PodFeed()
        self.rows: Mapping[str, Cells] | None = None  # the pod table's cells, idle pods marked
        self.poller = Poller(
            self, services.api, self.feed, options.poll_interval_s, services.clock, self._hand_on
        )  # handed RunPod's answer as sent: the launch memory keeps env values exactly
        self._launch_memory: LaunchMemory | None = None  # held here: the memories per file are shared weakly
        self._ledger: Ledger | None = None  # the pods' runs and what they cost (docs/spend.md#the-ledger)
        self.costs = CostTicker(services.config, services.clock)
        self.type_ahead = key_fence.type_ahead(self)  # keys typed ahead of a focus change follow it
        self.consoles = ConsoleRegistry(
            services.ssh_settings, services.api, services.config.console_scrollback, self.costs.typed
        )  # typing into a console is use: the pod is not idle
        self.transfers = TransferDesk(self, services, options.read_only)
        self.forwards = ForwardDesk(self, services)
        self.jobs = JobDesk(self, services)  # detached jobs: the Jobs tab, and what follows a job's end
        self.syncs = SyncDesk(self, services)  # folders kept in step with pods: the Sync tab (docs/sync.md)
        self.ssh_out = SshOut(self)
        self._restoring = False  # remembered forwards being restored in a worker
        self.navigator = Navigator(self)
        self.pod_actions = PodActions(self)
        self.alerts = AlertDesk(self, services)  # idle, exits, runway, budget, transfers, stuck (docs/alerts.md)
        # through the App: a test may put a desk of its own in (tests/alerts: no real desktop notification)
        self.transfers.on_end = lambda job, in_sight: self.alerts.transfer_ended(job, in_sight)
        self.pod_actions.on_asked = lambda pod_id, verb: self.alerts.asked(pod_id, verb)
        self.pod_actions.on_refused = lambda pod_id, verb: self.alerts.refused(pod_id, verb)
        self.pods_polled: Signal[PodData] = Signal(self, "pods-polled")
        self.ticked: Signal[PodData] = Signal(self, "ticked")
        self.demo_requested = False  # the welcome screen's "Try the demo": the CLI starts the demo after exit
        self.profile_requested: str | None = None  # the palette's switch: the CLI starts the app again on that profile
        self._exit_when = options.exit_when if options.screenshot is None else "data"

    # --- what goes wrong, and what is said ------------------------------------------------------------

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

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification, the screens' included, passes here: most quote text from outside (RunPod's errors,
        pod names, paths), which is shown, never acted on by the terminal (docs/architecture.md#text-from-outside)."""
        super().notify(
            visible(message, lines=True), title=visible(title), severity=severity, timeout=timeout, markup=markup
        )

    async def on_event(self, event: events.Event) -> None:
        # a key as read, which Textual hands to the focus: held back while keys typed before it are read again
        if isinstance(event, events.Key) and not event.is_forwarded and not self.type_ahead.read(self, event):
            return
        await super().on_event(event)

    def on_key(self, event: events.Key) -> None:
        """A key reaching the App's bindings (it bubbled up from the widget it was handed to) after a dialog
        answered, but read before it did, was meant for the dialog: it does not act on the screen now on top. One
        typed ahead of a key that moved the focus goes to the widget focused now
        (docs/architecture.md#opening-a-screen-once)."""
        if key_fence.holds(self, event):
            log.debug("dropped %s, read with a dialog's answer", event.key)
            event.prevent_default()  # App._on_key, which runs the bindings, is not reached
            event.stop()
            return
        if self.type_ahead.back(self, event):  # read again, and handed to the focus now
            event.prevent_default()
            event.stop()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Whatever a worker's own code did not expect ends here, the screens' workers' included
        (docs/architecture.md#worker-errors)."""
        worker_errors.report(self, event)

    # --- running ----------------------------------------------------------------------------------------

    async def on_mount(self) -> None:
        if self.services.config.keys:  # config.toml's [keys]; none: the check of every screen's keys is not needed
            from podtui.ui import key_remaps

            key_remaps.install(self, self.services.config.keys)
        await self.push_screen(PodListScreen())  # mounted: its first refresh is the first frame
        if self.services.needs_key:  # no API key yet: open on the welcome screen
            self.navigator.open_welcome()
        # queued on the screen on top, not on the App, whose own queue would hold it back behind its other messages
        self.screen.call_after_refresh(self._first_frame_out)
        self.set_timer(1.0, self.transfers.resume)  # loads the transfer code, so not before the first frame
        self.set_interval(1.0, self._tick)

    def _first_frame_out(self) -> None:
        """The first frame is on screen: what it did without comes now, then the (slower) first fetch."""
        start_up.resume_collector()  # paused by the CLI for the way here (docs/architecture.md#start-up)
        if self._exit_when == "first-frame":
            self._bench_exit("first-frame")  # bench/startup.py: the run ends here
            return
        for screen in self.screen_stack:
            if isinstance(screen, PodListScreen):
                screen.first_frame_out()
        self.poll_now()

    def on_unmount(self) -> None:
        self.close_connections()
        if self._ledger is not None:  # an open run's last sight is written every few minutes: what the app saw
            self._ledger.flush_quietly()  # since goes down now, a small file as the app ends (docs/spend.md#the-ledger)

    def close_connections(self) -> None:
        """End every console's shell and the transfer queue, on purpose (before the demo's simulator stops)."""
        self.consoles.close_all()
        self.jobs.close()
        self.syncs.close()
        self.transfers.close()
        self.forwards.close()
        self.alerts.close()

    def open_screen(
        self, screen: Screen[Any], identity: tuple[str, ...], callback: ScreenResultCallback | None = None
    ) -> AwaitMount | None:
        """Push `screen` unless one with the same identity (a kind, and the pod it is about) is already open."""
        return self.navigator.open_screen(screen, identity, callback)

    def _console_focused(self) -> bool:
        from podtui.console.widget import TerminalView  # loaded with the first console, not at start-up

        return isinstance(self.focused, TerminalView)

    async def action_quit(self) -> None:
        if self._console_focused():
            raise SkipAction()  # ctrl+q belongs to the pod while a console has focus
        if not self.consoles.live():
            await super().action_quit()
            return
        self._ask_consoles_end("Quit", "Quit", self.exit)

    def _ask_consoles_end(self, doing: str, label: str, then: Callable[[], None]) -> None:
        """Ending the app ends the open consoles' shells: asked first, then `then` on yes."""
        from podtui.ui.screens.confirm import ConfirmScreen

        live = self.consoles.live()
        self.open_screen(
            ConfirmScreen(
                f"{doing} with {len(live)} console{'s' if len(live) > 1 else ''} open?",
                "Their shells end, and programs started in them without nohup or tmux stop with them:\n"
                + ", ".join(live)
                + "\nThe pods keep running (and billing).",
                label,
            ),
            (label.lower(),),
            lambda yes: then() if yes else None,
        )

    def action_command_palette(self) -> None:
        if self._console_focused():
            raise SkipAction()  # so does ctrl+p
        super().action_command_palette()

    def action_help(self) -> None:
        self.navigator.open_help()

    def action_keys(self) -> None:
        self.navigator.open_ssh_key()

    def action_jobs(self) -> None:
        """The selected pod's jobs (docs/jobs.md): in its pane, or a screen of their own."""
        pod = self.navigator.selected_pod()
        if pod is not None:
            self.jobs.show(pod)

    def action_sync(self) -> None:
        """The selected pod's sync (docs/sync.md): in its pane, or a screen of its own."""
        pod = self.navigator.selected_pod()
        if pod is not None:
            self.syncs.show(pod)

    def restart_in_demo(self) -> None:
        self.demo_requested = True
        self.exit()

    def switch_profile(self, name: str) -> None:
        """Start again on another account (docs/profiles.md#switching): every service belongs to one profile's key,
        so the app ends and the CLI opens it anew on `name`. Open consoles are asked about first, as on quit."""

        def switch() -> None:
            self.profile_requested = name
            self.exit()

        if self.consoles.live():
            self._ask_consoles_end(f"Switch to profile {name}", "Switch", switch)
        else:
            switch()

    # --- pod data: polled, then told to the screens; the ticker's events told to the user ----------------

    def poll_now(self) -> None:
        self.poller.poll_now()

    def on_poll_finished(self, message: PollFinished) -> None:
        self.poller.landed(message)
        if message.snapshot is not None:
            self.rows = self._costs_after_poll(message.snapshot, message.rows or {})
            self._forwards_after_poll(message.snapshot)
            self.ssh_out.after_poll(message.snapshot.pods)
            self.jobs.after_poll(message.snapshot)
        self.pods_polled.publish(self.pod_data())
        if message.snapshot is not None and self._exit_when == "data":
            self.call_after_refresh(self._finish_first_data)
        self.poller.go_on()

    def _costs_after_poll(self, snap: Snapshot, rows: Mapping[str, Cells]) -> dict[str, Cells]:
        """Idle pods marked in the rows, announced (an alert: a toast and the bell, and wherever the config sends it),
        and counted down when the user asked for it; the poll's other alerts (exits, runway, stuck starts)."""
        went_idle = self.costs.after_poll(snap, self.transfers.busy_pods())
        marks = self.costs.idle_marks
        marked = {**rows, **{p.id: row_cells(p, idle=marks[p.id]) for p in snap.pods if p.id in marks}}
        self.alerts.after_poll(snap, went_idle, self.feed.stuck())
        for event in went_idle:
            if event.countdown is not None and not self.read_only:
                self.pod_actions.count_down(event.pod, *event.countdown)
        return marked

    def _tick(self) -> None:
        self.cost_tick()  # the money moves every second, interpolated between polls
        self.ticked.publish(self.pod_data())

    def cost_tick(self) -> None:
        self.alerts.budget(self.costs.tick(self.feed.snapshot))  # a toast and the bell, and where the config says

    def ticker(self) -> Ticker | None:
        return self.costs.ticker(self.feed.snapshot)

    def pod_data(self) -> PodData:
        return PodData(
            self.feed,
            self.rows,
            self.ticker(),
            self.now(),
            self.services.demo,
            paused=self.poller.paused,
            consoles=self.consoles.pods_with_console(),
            autostop=frozenset(self.costs.autostop_pods),
        )

    def pods(self) -> tuple[Pod, ...]:
        """The pods as last polled (none before the first answer)."""
        return self.feed.snapshot.pods if self.feed.snapshot is not None else ()

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

    # --- what the held objects' threads report, handed to them on the event loop ----------------------------

    def on_action_finished(self, message: ActionFinished) -> None:
        self.pod_actions.finished(message)

    def on_terminate_ready(self, message: TerminateReady) -> None:
        self.pod_actions.then_terminate(message.pod_id, message.pod_name, message.confirmed)

    def on_transfer_changed(self, message: TransferChanged) -> None:
        self.transfers.changed(message.job)
        self.jobs.transfer_changed(message.job)  # a job's pull ended: its follow-up goes on

    def on_sync_moved(self, message: SyncMoved) -> None:
        self.syncs.moved(message)

    def on_transfer_removed(self, message: TransferRemoved) -> None:
        self.transfers.removed(message.job_id)

    def on_terminate_held(self, message: TerminateHeld) -> None:
        self.transfers.held(message.why)

    def on_forward_changed(self, message: ForwardChanged) -> None:
        self.forwards.changed(message.forward)

    def _forwards_after_poll(self, snap: Snapshot) -> None:
        """Forwards of pods gone from a whole answer stop (docs/architecture.md#panes: a record skipped is not a pod
        gone); remembered ones come back for the pods running now."""
        if not snap.skipped_records:
            for name in self.forwards.prune({p.id for p in snap.pods}):
                self.notify(f"{name} is no longer on the account: its forwards stopped", timeout=10, markup=False)
        if self.forwards.wanted(snap.pods) and not self._restoring:
            self._restoring = True
            self._restore_forwards(snap.pods)

    @in_thread(group="forwards", description="restoring the remembered forwards")
    def _restore_forwards(self, pods: tuple[Pod, ...]) -> None:
        """One at a time (a thread worker cannot be cancelled: two would race to make the same forwards)."""
        try:
            for severity, text in self.forwards.restore(pods):
                self.call_from_thread(self.notify, text, severity=severity, timeout=10, markup=False)
        finally:
            self.call_from_thread(setattr, self, "_restoring", False)

    def _hand_on(self, snap: Snapshot) -> None:
        """RunPod's answer, in the poller's hand-on worker: to the launch memory and the ledger."""
        self._remember_launches(snap)
        self._keep_ledger(snap)

    def _keep_ledger(self, snap: Snapshot) -> None:
        """Every pod run podtui sees, with what it cost, kept after the pod is gone (docs/spend.md#the-ledger). A
        file that cannot be written is logged, and the app goes on."""
        from podtui.core.ledger import Ledger

        first = self._ledger is None
        if self._ledger is None:
            self._ledger = Ledger.for_services(self.services)
        trouble = self._ledger.observe_quietly(snap)
        if trouble:
            log.warning("%s", trouble)
        if first:  # today's spend before this session, for the ticker (docs/alerts.md#events); on the event loop
            self._spent_before(self._ledger, snap.fetched_at)

    def _spent_before(self, ledger: Ledger, upto: float) -> None:
        """In the hand-on worker: what the ledger knows today cost before `upto`, handed to the ticker. What it
        puts over a budget step stands at start: shown, not alerted."""
        from podtui.core.ticker import spent_today_before

        try:
            day, spent = spent_today_before(ledger, upto)
        except Exception:  # a bug here must not stop the poll's hand-on; today then counts from now
            log.exception("today's spend before this session could not be read from the ledger")
            return
        self.call_from_thread(self.costs.spent_before, day, spent, True)

    def _remember_launches(self, snap: Snapshot) -> None:
        """In the poller's hand-on worker (never on the poll's path), with the pods as RunPod sent them (not the copy
        made safe to show, whose escaped text a recreate would send): each pod's launch spec, kept for after it is
        gone (docs/storage.md#recreate). A file that cannot be written is logged, and the app goes on."""
        from podtui.core.launch_memory import LaunchMemory, remember_quietly

        if self._launch_memory is None:  # one worker at a time runs this; kept so the file is read once, not per poll
            self._launch_memory = LaunchMemory.for_services(self.services)
        trouble = remember_quietly(self._launch_memory, snap.pods, snap.fetched_at)
        if trouble:
            log.warning("%s", trouble)


if TYPE_CHECKING:  # the App gives every screen what the screen declares it needs (its `needs`): mypy checks it
    from podtui.ui.commands import PaletteNeeds
    from podtui.ui.needs import Opens, Served, Transfers
    from podtui.ui.screens.accounts import AccountsNeeds
    from podtui.ui.screens.create_pod import CreatePodNeeds
    from podtui.ui.screens.doctor import DoctorNeeds
    from podtui.ui.screens.gpus import GpusNeeds
    from podtui.ui.screens.hf_check import HfCheckNeeds
    from podtui.ui.screens.job_log import JobLogNeeds
    from podtui.ui.screens.jobs import JobsNeeds
    from podtui.ui.screens.new_job import NewJobNeeds
    from podtui.ui.screens.pod_detail import PodDetailNeeds
    from podtui.ui.screens.pod_list import PodListNeeds
    from podtui.ui.screens.recreate import RecreateNeeds
    from podtui.ui.screens.spend import SpendNeeds
    from podtui.ui.screens.sync import SyncNeeds
    from podtui.ui.screens.sync_form import SyncFormNeeds
    from podtui.ui.screens.template_form import TemplateFormNeeds
    from podtui.ui.screens.templates import TemplatesNeeds
    from podtui.ui.screens.volume_delete import VolumeDeleteNeeds
    from podtui.ui.screens.volume_edit import VolumeEditNeeds
    from podtui.ui.screens.volume_form import VolumeFormNeeds
    from podtui.ui.screens.volumes import VolumesNeeds
    from podtui.ui.screens.welcome import WelcomeNeeds
    from podtui.ui.widgets.jobs_panel import JobsPanelHost
    from podtui.ui.widgets.sync_panel import SyncPanelHost

    def _gives(
        app: PodtuiApp,
    ) -> tuple[
        PodListNeeds,
        PodDetailNeeds,
        Transfers,
        Opens,
        Served,
        GpusNeeds,
        CreatePodNeeds,
        DoctorNeeds,
        HfCheckNeeds,
        WelcomeNeeds,
        PaletteNeeds,
        VolumesNeeds,
        VolumeFormNeeds,
        VolumeEditNeeds,
        VolumeDeleteNeeds,
        TemplatesNeeds,
        TemplateFormNeeds,
        RecreateNeeds,
        SpendNeeds,
        AccountsNeeds,
        JobsNeeds,
        JobsPanelHost,
        NewJobNeeds,
        JobLogNeeds,
        SyncNeeds,
        SyncFormNeeds,
        SyncPanelHost,
    ]:
        return (
            *(app, app, app, app, app, app, app, app, app, app, app, app, app, app, app, app, app, app, app, app),
            *(app, app, app, app),
            *(app, app, app),
        )
