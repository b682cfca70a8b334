"""A pod's log, live (docs/architecture.md#logs): the stream's state in words, the lines, and the lines' filter. The
logs screen shows one full size and the pane's Logs tab one beside the list; both are this panel.

It follows one pod at a time from RunPod's log stream: the source (both, container, system), how far back it starts
(the last N lines or since a time), a filter, pause, and saving what is shown to a file. The state line says whether
the stream is live or down since when, why, and when it tries again, as it reconnects by itself."""

from __future__ import annotations

import functools
import os
import re
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from podtui.core import secret, units
from podtui.core.api.errors import ApiError, InvalidInput
from podtui.core.logs import SOURCES, TAIL_MAX, LogFollower, LogLine, LogRequest, Source, StreamState, since_time
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.visible import visible
from podtui.ui import colours, keymap
from podtui.ui.widgets.log_view import KEPT, LogView
from podtui.ui.widgets.prompt_line import PromptLine
from podtui.ui.worker_errors import failures_shown, in_thread

if TYPE_CHECKING:
    from textual.worker import Worker

T = TypeVar("T")
BATCH_S = 0.05  # lines are handed to the view at most this often: a flood is drawn in batches, not line by line
TAIL = 500  # the backfill asked for at first
LIVE_QUIET_S = 60.0  # a live stream quiet this long is resumed (a connection that died without a word)


_SAFE_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def _new_file(folder: Path, stem: str) -> tuple[Path, int]:
    """A file of its own in `folder` (0600), opened for writing: `stem.log`, or `stem-2.log` and on when a save in
    the same second made that one."""
    for n in range(1, 1000):
        target = folder / (f"{stem}.log" if n == 1 else f"{stem}-{n}.log")
        try:
            return target, os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
    raise FileExistsError(f"{folder / stem}.log and 998 more")


class LogPanel(Vertical):
    DEFAULT_CSS = """
    LogPanel { height: 1fr; }
    LogPanel #log-state { padding: 0 1; height: 1; }
    LogPanel #log-input { display: none; border: tall $accent; }
    LogPanel #log-input.-active { display: block; }
    """
    BINDINGS = keymap.bindings("logs")
    on_worker_state_changed = failures_shown

    class Left(Message):
        """Back was pressed with nothing of the panel's own to close: whoever holds the panel decides."""

    def __init__(self, services: Callable[[], Services], *, id: str | None = None) -> None:
        """services: the API streamed from (asked each time a stream opens), the data folder saved logs go to, and
        the account's clock, which "since 10m" counts back from."""
        super().__init__(id=id)
        self._services = services
        self.pod: Pod | None = None
        self.source: Source = "all"
        self.tail = TAIL
        self.since: str | None = None  # RFC 3339, instead of the tail
        self._follower: LogFollower | None = None
        self._worker: Worker[None] | None = None
        self._state: StreamState | None = None
        self._ended: str | None = None  # why following stopped for good (the pod gone, a refused key)
        # from the reading thread (deque: thread-safe); bounded as the view is, for a stream that runs on while the
        # event loop waits (the app suspended for ssh)
        self._inbox: deque[tuple[LogFollower, LogLine]] = deque(maxlen=KEPT)
        self._asking: str | None = None  # what the line at the bottom is for: "filter" or "range"

    def compose(self) -> ComposeResult:
        yield Static("", id="log-state", markup=False)
        yield LogView(id="log-lines")
        # a wrong range stays to be mended: the line keeps the focus for it
        yield PromptLine(self._leaving_to, back=("logs.back", self.action_back), id="log-input")

    def on_mount(self) -> None:
        self.set_interval(BATCH_S, self._drain)
        self._say_state()

    def on_unmount(self) -> None:
        self.stop()

    @property
    def view(self) -> LogView:
        return self.query_one(LogView)

    @property
    def heading(self) -> str:
        """Where the lines come from and how far back, in words."""
        back = f"since {self.since}" if self.since else f"last {self.tail:,} lines"
        return f"source: {self.source} · {back}"

    # --- the stream -----------------------------------------------------------------------------------

    def show_pod(self, pod: Pod | None) -> None:
        """Follow this pod's log (the same pod again: the stream on show goes on)."""
        same = pod is not None and self.pod is not None and pod.id == self.pod.id
        self.pod = pod
        if same and self._follower is not None:
            return
        # the same pod again (the pane back in sight, its tab shown again): on from the last line on show
        self._follow(resume_from=self.view.last_id if same and self._ended is None else None)

    def stop(self) -> None:
        """Stop following (the lines on show stay)."""
        if self._follower is not None:
            self._follower.stop()
            self._follower = None
            self._state = None
            self._say_state()

    @property
    def following(self) -> bool:
        return self._follower is not None and not self._follower.stopped

    def _follow(self, resume_from: str | None = None) -> None:
        """Follow self.pod from the start of its range, or after the line `resume_from` keeping the lines on show."""
        self.stop()
        self._ended = None
        self._state = None
        self._inbox.clear()
        view = self.view
        if resume_from is None:
            view.clear()
            view.set_paused(False)
        view.show_source = self.source == "all"
        if self.pod is None:
            self._say_state()
            return
        api = self._services().api
        follower = LogFollower(
            functools.partial(api.open_pod_logs, quiet_s=LIVE_QUIET_S),
            LogRequest(self.pod.id, self.source, self.tail, self.since),
            on_state=lambda state: self._tell(follower, self._show_state, state),
            on_problem=lambda text: self._tell(follower, self._problem, text),
        )
        follower.last_id = resume_from  # sent as Last-Event-ID: RunPod goes on after it
        self._follower = follower
        self._say_state()
        self._read(follower)

    @in_thread(group="logs", description="the log stream", exclusive=True)
    def _read(self, follower: LogFollower) -> None:
        """The lines go to an inbox the panel empties every BATCH_S (a flood is drawn in batches, a lone line
        within BATCH_S); the state and the end are handed over as they happen."""
        try:
            for line in follower.lines():
                self._inbox.append((follower, line))
        except ApiError as e:
            if not follower.stopped:
                self.app.call_from_thread(self._end, follower, secret.redact(str(e)))

    def _drain(self) -> None:
        lines: list[LogLine] = []
        while self._inbox:
            follower, line = self._inbox.popleft()
            if follower is self._follower:  # a source switched meanwhile: the old stream's lines are not these
                lines.append(line)
        if lines:
            self.view.add(lines)
            self._say_state()

    def _tell(self, follower: LogFollower, callback: Callable[[T], object], value: T) -> None:
        """From the reading thread: only the stream on show is heard (not one a source switch replaced, nor one
        the panel closing stopped)."""
        if follower is self._follower and not follower.stopped:
            self.app.call_from_thread(callback, value)

    def _problem(self, text: str) -> None:
        self.notify(text, severity="warning", markup=False)

    def _show_state(self, state: StreamState) -> None:
        self._state = state
        self._say_state()

    def _end(self, follower: LogFollower, why: str) -> None:
        if follower is self._follower:
            self._ended = why
            self._say_state()

    def show_failure(self, line: str) -> None:
        self._ended = line
        self._say_state()

    def state_text(self) -> Text:
        st = colours.palette(self.app).style
        view = self.view
        count = f"{len(view.shown):,} lines" + (f" of {view.kept:,}" if len(view.shown) != view.kept else "")
        if self.pod is None:
            text = Text("no pod selected", st("muted"))
        elif self._ended is not None:
            text = Text.assemble(("stopped: ", st("bad")), visible(self._ended), f"  · {count}")
        elif self._follower is None:
            text = Text.assemble(("not following", st("muted")), f"  · {count}")
        elif self._state is None:
            text = Text("connecting…", st("muted"))
        elif not self._state.up:
            since = time.strftime("%H:%M:%S", time.localtime(self._state.since))
            again = f"; trying again in {units.duration(self._state.retry_in)}" if self._state.retry_in else ""
            text = Text.assemble(
                (f"down since {since}", st("bad")), f" ({visible(self._state.reason)}){again}  · {count}"
            )
        else:
            text = Text.assemble(("● live", st("good")), f"  · {count}")
        if view.paused:
            text.append(f"  · paused, {view.held:,} new" if view.held else "  · paused", st("warn"))
        return text

    def _say_state(self) -> None:
        found = self.query("#log-state")  # none while the panel is being taken down
        if found:
            found.first(Static).update(self.state_text())

    # --- keys -----------------------------------------------------------------------------------------

    def action_source(self) -> None:
        """Both, container, system, and round again: the stream starts over with that source."""
        self.source = SOURCES[(SOURCES.index(self.source) + 1) % len(SOURCES)]
        self._restarted()

    def _restarted(self) -> None:
        self._follow()
        self.post_message(self.Changed())

    class Changed(Message):
        """The source or the range changed: a heading showing them is redrawn."""

    def action_pause(self) -> None:
        view = self.view
        view.set_paused(not view.paused)
        self._say_state()

    def action_filter(self) -> None:
        words = "filter: words the lines must have · enter keeps it"
        self._ask("filter", keymap.fill(self.app, words), self.view.words)

    def action_find(self) -> None:
        self._ask("find", "find: words to go to (n next, N previous) · enter finds", self.view.found)

    def action_find_next(self, forward: bool = True) -> None:
        if not self.view.found:
            self.action_find()
            return
        if not self.view.find(self.view.found, forward):
            self.notify(f"no line shown holds {self.view.found!r}", timeout=4, markup=False)

    def action_range(self) -> None:
        back = f"how far back: the last N lines (up to {TAIL_MAX:,}) or since 10m, 2h, 1d, 2026-12-01T09:30Z"
        self._ask("range", back)

    def _ask(self, what: str, placeholder: str, value: str = "") -> None:
        box = self.query_one("#log-input", Input)
        self._asking = what
        box.placeholder = placeholder
        box.value = value
        box.add_class("-active")
        # at once, not queued: the words typed right after the key (read with it) go to the line, not the lines
        self.screen.set_focus(box)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self._asking == "filter":
            self.view.set_query(event.value)
            self._say_state()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self._asking == "range" and event.value.strip():
            try:
                self._set_range(event.value.strip())
            except InvalidInput as e:
                self.notify(str(e), severity="error", markup=False)
                return  # the line stays, to be mended
        if self._asking == "find":
            self.view.found_at = None  # from the top of the view
            if event.value.strip() and not self.view.find(event.value):
                self.notify(f"no line shown holds {visible(event.value.strip())!r}", timeout=4, markup=False)
        if not (self._asking == "filter" and event.value):
            self._close_input()
        self.view.focus()

    def _leaving_to(self) -> LogView | None:
        """Where Enter in the line sends the focus: back to the lines, unless the range typed is wrong."""
        text = self.query_one("#log-input", Input).value.strip()
        if self._asking == "range" and text:
            try:
                self._range_of(text)
            except InvalidInput:
                return None
        return self.view

    def _range_of(self, text: str) -> tuple[int, str | None]:
        """The last N lines, or since a time: (tail, since); InvalidInput says what is wrong."""
        if text.isascii() and text.isdigit():  # "²" is a digit to isdigit, not to int
            tail = int(text)
            if not 0 < tail <= TAIL_MAX:
                raise InvalidInput(f"the last 1 to {TAIL_MAX:,} lines (RunPod's limit), not {tail:,}")
            return tail, None
        return self.tail, since_time(text, self._services().clock())

    def _set_range(self, text: str) -> None:
        self.tail, self.since = self._range_of(text)
        self._restarted()

    def _close_input(self) -> None:
        box = self.query_one("#log-input", Input)
        box.remove_class("-active")
        self._asking = None

    def action_save(self) -> None:
        """What is shown (the filter applied) to a file of its own, readable by this user only."""
        if self.pod is None:
            return
        view = self.view
        folder = Path(self._services().paths.data_dir) / "logs"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        # the pod's name and id come from RunPod: only safe characters go into a file name (no "/" or "..")
        base = _SAFE_NAME.sub("_", f"{self.pod.name}-{self.pod.id}").strip("_-")[:80] or "pod"
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            target, fd = _new_file(folder, f"{base}-{stamp}")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(view.text())
        except OSError as e:
            self.notify(f"could not save the log: {visible(str(e))}", severity="error", markup=False)
            return
        self.notify(f"saved {len(view.shown):,} lines to {visible(str(target))}", markup=False, timeout=10)

    def action_back(self) -> None:
        """Out of the line at the bottom (a filter's words cleared) if it is open; else the holder's back."""
        box = self.query_one("#log-input", Input)
        if box.has_class("-active"):
            if self._asking == "filter":
                box.value = ""
                self.view.set_query("")
                self._say_state()
            self._close_input()
            self.screen.set_focus(self.view)  # at once: the key typed after it acts on the lines (PromptLine)
            return
        self.post_message(self.Left())
