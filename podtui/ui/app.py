"""The podtui App: owns the poll loop and the API; screens do the showing."""

from __future__ import annotations

import functools
import logging
import os
import sys
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from rich.text import Text
from textual import work
from textual.actions import SkipAction
from textual.app import App
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.timer import Timer

from podtui.core import actions, crash
from podtui.core.api import ApiAuthError, ApiError, ApiUnavailable, RunPodApi
from podtui.core.config import Config
from podtui.core.feed import PodFeed
from podtui.core.hf.token import FoundToken
from podtui.core.hf.token import discover as discover_hf_token
from podtui.core.log_file import log_location
from podtui.core.pod import Pod, PodStatus
from podtui.core.visible import visible, visible_fields
from podtui.ui.costs import CostsMixin
from podtui.ui.messages import ActionFinished, PollFinished
from podtui.ui.pod_view import Cells, row_cells
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.help import HelpScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.transfers import TransfersMixin

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.command import Provider
    from textual.notifications import SeverityLevel
    from textual.widget import AwaitMount

    from podtui.console.link import ConsoleLink
    from podtui.console.widget import TerminalView
    from podtui.core.ssh.connect import SshSettings
    from podtui.ui.screens.console import ConsoleScreen

log = logging.getLogger(__name__)
KEY_REFUSED = ("RunPod refused the API key at the last refresh; set a valid one (ctrl+p, \"RunPod API key\", or "
               "`podtui config set-key`), then try again")


def _dedicated_key() -> Path:
    from podtui.core.ssh.keys import DEDICATED_KEY  # paramiko: not needed for the first frame

    return DEDICATED_KEY.expanduser()


def _default_ssh_settings() -> SshSettings:
    from podtui.core.ssh.pods import default_settings

    return default_settings()


def _pod_commands() -> type[Provider]:
    # Imported when the palette first opens: textual.command is not needed for the first frame.
    from podtui.ui.commands import PodCommands

    return PodCommands


ExitWhen = Literal["first-frame", "data"]
ScreenResultCallback = Callable[[Any], None] | Callable[[Any], Awaitable[None]]


class PodtuiApp(CostsMixin, TransfersMixin, App[None]):
    TITLE = "podtui"
    COMMANDS = App.COMMANDS | {_pod_commands}
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("K", "keys", "SSH key", id="keys"),
    ]

    def __init__(
        self,
        api: RunPodApi,
        *,
        poll_interval_s: float = 5.0,
        demo: bool = False,
        clock: Callable[[], float] = time.time,
        screenshot: Path | None = None,
        exit_when: ExitWhen | None = None,
        key_path: Callable[[], Path] | None = None,
        ssh_settings: Callable[[], SshSettings] | None = None,
        console_scrollback: int = 10_000,
        transfer_history: Path | None = None,
        transfer_work_dir: Path | None = None,
        runpodctl: Callable[[], str | None] | None = None,
        read_only: bool = False,
        confirm_terminate: str = "name",
        config: Config | None = None,
        first_run: bool = False,
        save_key: Callable[[str], Path] | None = None,
        hf_endpoint: Callable[[], str] | None = None,
        hf_token: Callable[[], FoundToken | None] | None = None,
    ) -> None:
        super().__init__()
        # Hugging Face: where the Hub is and the user's token (the demo's own in the demo: a real token must
        # never reach simulated pods, so a demo without one has none)
        self.hf_endpoint = hf_endpoint or (lambda: os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
        self.hf_token: Callable[[], FoundToken | None] = hf_token or ((lambda: None) if demo else discover_hf_token)
        self.first_run = first_run  # no API key yet: open on the welcome screen
        self.save_key = save_key
        self.demo_requested = False  # the welcome screen's "Try the demo": the CLI starts the demo after exit
        self.config = config or Config()
        self.init_costs()
        self.read_only = read_only  # nothing that changes or costs anything
        self.confirm_terminate = confirm_terminate  # "name": type the pod's name; "yn": a plain yes/no
        self.transfer_history = transfer_history  # None: transfers are not remembered across runs
        self.transfer_work_dir = transfer_work_dir
        self.runpodctl = runpodctl or (lambda: None)
        # where the dedicated SSH key lives (the demo keeps its own, away from ~/.ssh)
        self.key_path = key_path or _dedicated_key
        self.ssh_settings = ssh_settings or _default_ssh_settings
        self.console_scrollback = console_scrollback
        self.console_links: list[ConsoleLink] = []  # every console open, shown or not
        self.api = api
        self.poll_interval_s = poll_interval_s
        self.demo = demo
        self.now = clock
        self.feed = PodFeed()
        self.rows: Mapping[str, Cells] | None = None
        self._screenshot_to = screenshot
        self._exit_when = exit_when if screenshot is None else "data"
        self._poll_timer: Timer | None = None
        self._polling = False
        self._poll_again = False
        self.polls_done = 0  # completed polls, good or bad: lets tests and benchmarks wait without sleeping
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
        self.push_screen(PodListScreen())
        if self.first_run:
            self.open_welcome()
        if self._exit_when == "first-frame":  # stamped as soon as the first frame is out
            self.call_after_refresh(self._bench_exit, "first-frame")
        self.call_after_refresh(self.poll_now)  # first frame first, then the (slower) first fetch
        self.set_timer(1.0, self.resume_transfers)  # loads the transfer code, so not before the first frame
        self.set_interval(1.0, self._tick)

    # --- polling: one fetch at a time, re-armed after each, paused under a modal ---------------------

    # (defaults here, beside the methods that use them; each instance assigns its own)
    _poll_retry_after: float | None = None  # a failed poll's Retry-After, from the worker to on_poll_finished
    _poll_key_refused = False  # likewise: the failed poll was a 401
    _hold_until = 0.0  # time.monotonic() before which no poll is sent (429 Retry-After)
    next_poll_in_s: float | None = None  # the delay the poll timer was last armed with

    def poll_now(self) -> None:
        if self._poll_timer is not None:
            self._poll_timer.stop()
            self._poll_timer = None
        held = self._hold_until - time.monotonic()
        if held > 0:
            # RunPod said when to ask again (429 Retry-After): asking sooner only earns another refusal
            self._arm_poll(held)
            return
        if self._polling:
            self._poll_again = True  # never two fetches in flight; run one more when this one lands
            return
        self._polling = True
        self._poll()

    @work(thread=True, group="poll", exit_on_error=False)
    def _poll(self) -> None:
        try:
            snap = self.api.fetch_snapshot()
        except ApiError as e:
            # read by on_poll_finished, which this message reaches before any other poll can start
            self._poll_retry_after = e.retry_after_s if isinstance(e, ApiUnavailable) else None
            self._poll_key_refused = isinstance(e, ApiAuthError)
            self.post_message(PollFinished(None, str(e)))
        except Exception as e:  # anything else is a bug, but must not freeze the list
            log.exception("poll failed")
            self._poll_retry_after, self._poll_key_refused = None, False
            self.post_message(PollFinished(None, f"unexpected error: {type(e).__name__}: {e}"))
        else:
            # what the screens get: every text RunPod sent made safe to show (docs/architecture.md#text-from-outside)
            snap = visible_fields(snap)
            # the feed changes only in on_poll_finished, never while this runs
            starting = self.feed.starting_after(snap)
            rows = {p.id: row_cells(p, starting_s=None if (since := starting.get(p.id)) is None
                                    else snap.fetched_at - since)
                    for p in snap.pods}  # here, not on the event loop
            self.post_message(PollFinished(snap, None, rows))

    def on_poll_finished(self, message: PollFinished) -> None:
        self._polling = False
        self.polls_done += 1
        if message.snapshot is not None:
            self.feed.succeeded(message.snapshot)
            self.rows = self.costs_after_poll(message.snapshot, dict(message.rows or {}))
            delay = self.poll_interval_s
        else:
            retry_after, self._poll_retry_after = self._poll_retry_after, None
            self.feed.failed(visible(message.error or "unknown error"), self.now(), retry_after, self._poll_key_refused)
            log.warning("poll failed: %s", message.error)
            delay = self._backoff()
            if retry_after is not None:
                delay = max(delay, retry_after)
                self._hold_until = time.monotonic() + retry_after
        for screen in self.screen_stack:
            show = getattr(screen, "show_feed", None)
            if show is not None and screen.is_mounted:  # a screen pushed a moment ago has not composed yet
                show(self.feed)
        if message.snapshot is not None and self._exit_when == "data":
            self.call_after_refresh(self._finish_first_data)
        if self._poll_again:
            self._poll_again = False
            self.poll_now()
        else:
            self._arm_poll(delay)

    def _backoff(self) -> float:
        """After failed polls: the interval, doubled per failure in a row, at most a minute (or the interval)."""
        doubled = self.poll_interval_s * float(2 ** min(max(self.feed.failures - 1, 0), 4))
        return min(doubled, max(60.0, self.poll_interval_s))

    def _arm_poll(self, delay: float) -> None:
        self.next_poll_in_s = delay
        self._poll_timer = self.set_timer(delay, self._poll_due)

    def _poll_due(self) -> None:
        self._poll_timer = None
        if isinstance(self.screen, ModalScreen):
            self._arm_poll(0.5)  # a question is open: do not move the ground under it
            return
        self._hold_until = 0.0  # this timer was armed to run out with any wait RunPod asked for
        self.poll_now()

    def _tick(self) -> None:
        self.cost_tick()  # the money moves every second, interpolated between polls
        tick = getattr(self.screen, "tick", None)
        if tick is not None and self.screen.is_mounted:
            tick()

    def _finish_first_data(self) -> None:
        if self._screenshot_to is not None:
            self.save_screenshot(filename=self._screenshot_to.name, path=str(self._screenshot_to.parent))
            self.exit()
        else:
            self._bench_exit("data")

    def _bench_exit(self, what: str) -> None:
        # bench/startup.py reads this wall-clock stamp: the moment the frame was on screen, not process exit.
        sys.__stderr__.write(f"podtui-bench {what} {time.time():.6f}\n")  # type: ignore[union-attr]
        self.exit()

    # --- pods ----------------------------------------------------------------------------------------

    def selected_pod(self) -> Pod | None:
        for screen in reversed(self.screen_stack):
            pod = getattr(screen, "selected_pod", None)
            if isinstance(pod, Pod):
                return pod
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

    def request_action(self, verb: str, pod: Pod) -> None:
        if verb not in ("stop", "resume", "terminate"):
            raise ValueError(verb)
        v: actions.Verb = verb  # type: ignore[assignment]
        try:
            actions.guard(self.read_only, verb)
            actions.check(v, pod)
        except actions.ActionRefused as e:
            self.notify(str(e), severity="warning", markup=False)
            return
        if self.feed.key_refused:  # asking first would only lead to a refusal after the answer
            self.notify(f"{verb} {pod.name} not sent: {KEY_REFUSED}", severity="error", timeout=10, markup=False)
            return
        c = actions.confirmation(v, pod)

        def answered(yes: bool | None) -> None:
            if yes:
                self.start_action(v, pod)

        if v == "terminate":
            self.open_screen(self.terminate_screen(pod), ("terminate", pod.id), answered)
        else:
            self.open_screen(ConfirmScreen(c.title, c.body, c.button, danger=c.danger), (v, pod.id), answered)

    def terminate_screen(self, pod: Pod, unasked: bool = False) -> ModalScreen[bool]:
        """unasked: the question comes up by itself (then-terminate), perhaps while the user types elsewhere,
        so a stray "y" must not answer it: the name is always typed then."""
        from podtui.ui.screens.terminate import TerminateScreen

        pending = [f"{j.label} ({j.state_label})" for j in self.unverified_transfers(pod.id)]
        return TerminateScreen(pod, pending, type_name=unasked or self.confirm_terminate == "name")

    def start_action(self, verb: actions.Verb, pod: Pod) -> None:
        """Send an action the user has already confirmed."""
        self.notify(f"{verb} {pod.name}: sent…", timeout=3, markup=False)
        self._run_action(verb, pod)

    @work(thread=True, group="action", exit_on_error=False)
    def _run_action(self, verb: actions.Verb, pod: Pod) -> None:
        try:
            actions.perform(self.api, verb, pod)
        except ApiError as e:
            self.post_message(ActionFinished(verb, pod.name, str(e)))
        except Exception as e:
            log.exception("%s failed", verb)
            self.post_message(ActionFinished(verb, pod.name, f"unexpected error: {type(e).__name__}: {e}"))
        else:
            self.post_message(ActionFinished(verb, pod.name, None))

    def on_action_finished(self, message: ActionFinished) -> None:
        if message.error:
            self.notify(f"{message.verb} {message.pod_name} failed: {message.error}", severity="error",
                        timeout=10, markup=False)
        else:
            self.notify(f"{message.pod_name}: {actions.UNDER_WAY[message.verb]}", markup=False)
        self.poll_now()

    # --- consoles -------------------------------------------------------------------------------------

    def _console_focused(self) -> bool:
        from podtui.console.widget import TerminalView  # loaded with the first console, not at start-up

        return isinstance(self.focused, TerminalView)

    async def action_quit(self) -> None:
        if self._console_focused():
            raise SkipAction()  # ctrl+q belongs to the pod while a console has focus
        live = self._live_consoles()
        if not live:
            await super().action_quit()
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.open_screen(ConfirmScreen(
            f"Quit with {len(live)} console{'s' if len(live) > 1 else ''} open?",
            "Their shells end, and programs started in them without nohup or tmux stop with them:\n"
            + ", ".join(live) + "\nThe pods keep running (and billing).", "Quit"), ("quit",), answered)

    def close_consoles(self) -> None:
        """End every console's shell, on purpose: nothing reconnects after this."""
        links, self.console_links = self.console_links, []
        for link in links:
            link.close()

    def on_unmount(self) -> None:
        self.close_consoles()
        self.close_transfers()

    def _live_consoles(self) -> list[str]:
        return [link.label for link in self.console_links if link.state != "closed"]

    def action_command_palette(self) -> None:
        if self._console_focused():
            raise SkipAction()  # so does ctrl+p
        super().action_command_palette()

    def console_screen(self) -> ConsoleScreen:
        from podtui.ui.screens.console import ConsoleScreen

        if not self.is_screen_installed("consoles"):
            self.install_screen(ConsoleScreen(), "consoles")
        return cast("ConsoleScreen", self.get_screen("consoles"))

    async def open_console(self, pod: Pod) -> TerminalView | None:
        from podtui.console.link import ConsoleLink, pod_connector

        if pod.status is not PodStatus.RUNNING:
            self.notify(f"{pod.name} is {pod.status.value.lower()}: a console needs a running pod",
                        severity="warning", markup=False)
            return None
        screen = self.console_screen()
        pushed = self.open_screen(screen, ("consoles",))
        if pushed is not None:
            await pushed
        size = self.size
        link = ConsoleLink(pod_connector(pod, self.ssh_settings, self.api), pod.name, cols=max(size.width, 20),
                           rows=max(size.height - 4, 5), scrollback=self.console_scrollback)
        link.on_input = functools.partial(self.console_typed, pod.id)
        self.console_links.append(link)
        return await screen.add(link)

    def show_consoles(self) -> None:
        self.open_screen(self.console_screen(), ("consoles",))

    def open_welcome(self) -> None:
        from podtui.ui.screens.welcome import WelcomeScreen

        if self.save_key is None:
            self.notify("the demo needs no key; `podtui config set-key` stores one for your account")
            return
        self.open_screen(WelcomeScreen(self.save_key, timeout_s=self.config.api_timeout_s), ("welcome",))

    def restart_in_demo(self) -> None:
        self.demo_requested = True
        self.exit()

    def hf_token_value(self) -> str | None:
        found = self.hf_token()
        return found.value if found is not None else None

    def action_hf_check(self) -> None:
        self.open_hf_check()

    def open_hf_check(self) -> None:
        from podtui.ui.screens.hf_check import HfCheckScreen

        pods = list(self.feed.snapshot.pods) if self.feed.snapshot is not None else []
        self.open_screen(HfCheckScreen(pods, self.selected_pod(), endpoint=self.hf_endpoint, token=self.hf_token),
                         ("hf",))

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

        self.open_screen(KeysScreen(self.api, self.key_path, self.pods), ("keys",))

    def pods(self) -> tuple[Pod, ...]:
        """The pods as last polled (none before the first answer)."""
        return self.feed.snapshot.pods if self.feed.snapshot is not None else ()
