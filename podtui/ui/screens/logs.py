"""A pod's log, full screen (docs/architecture.md#logs): the container's and the system's lines as RunPod streams
them, following live. The source (both, container, system), a filter, pause, and saving what is shown to a file;
the stream's state in words (live; down since when, why, and the next try), as it reconnects by itself."""

from __future__ import annotations

import functools
import os
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Input, Static

from podtui.core import secret, units
from podtui.core.api.errors import ApiError
from podtui.core.logs import SOURCES, LogFollower, LogLine, LogRequest, Source, StreamState
from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui import colours, keymap
from podtui.ui.needs import Needs, Served
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.log_view import LogView
from podtui.ui.worker_errors import failures_shown, in_thread

if TYPE_CHECKING:
    from textual.worker import Worker

T = TypeVar("T")
BATCH_S = 0.05  # lines are handed to the screen at most this often: a flood is drawn in batches, not line by line
TAIL = 500  # the backfill asked for when the screen opens


class LogsNeeds(Served, Protocol):
    """How to reach RunPod, and where files go."""


class LogsScreen(Screen[None]):
    CSS_PATH = "logs.tcss"
    BINDINGS = keymap.bindings("logs")

    needs = Needs[LogsNeeds]()
    on_worker_state_changed = failures_shown

    def __init__(self, pod: Pod) -> None:
        super().__init__()
        self.pod = pod
        self.source: Source = "all"
        self._follower: LogFollower | None = None
        self._worker: Worker[None] | None = None
        self._state: StreamState | None = None
        self._ended: str | None = None  # why following stopped for good (the pod gone, a refused key)
        self._inbox: deque[tuple[LogFollower, LogLine]] = deque()  # from the reading thread (deque: thread-safe)

    def compose(self) -> ComposeResult:
        yield Static(self._head(), id="head")
        yield Static("connecting…", id="state", markup=False)
        yield LogView(id="log")
        yield Input(
            placeholder=keymap.fill(self.app, "filter: words the lines must have · enter keeps it"), id="filter"
        )
        yield FittedFooter()

    def _head(self) -> Text:
        p = self.pod
        return Text.assemble(("Logs · ", "bold"), (p.name, "bold"), f"  {p.id}  ", (f"source: {self.source}", "italic"))

    def on_mount(self) -> None:
        self.query_one(LogView).focus()
        self.set_interval(BATCH_S, self._drain)
        self._follow()

    def on_unmount(self) -> None:
        if self._follower is not None:
            self._follower.stop()

    # --- the stream -----------------------------------------------------------------------------------

    def _follow(self) -> None:
        if self._follower is not None:
            self._follower.stop()
        self._ended = None
        view = self.query_one(LogView)
        view.clear()
        view.show_source = self.source == "all"
        api = self.needs.services.api
        follower = LogFollower(
            functools.partial(api.open_pod_logs, quiet_s=60.0),
            LogRequest(self.pod.id, self.source, TAIL),
            on_state=lambda state: self._tell(follower, self._show_state, state),
            on_problem=lambda text: self._tell(follower, self._problem, text),
        )
        self._follower = follower
        self._read(follower)

    @in_thread(group="logs", description="the log stream", exclusive=True)
    def _read(self, follower: LogFollower) -> None:
        """The lines go to an inbox the screen empties every BATCH_S (a flood is drawn in batches, a lone line
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
            self.query_one(LogView).add(lines)
            self._say_state()

    def _tell(self, follower: LogFollower, callback: Callable[[T], object], value: T) -> None:
        """From the reading thread: only the stream on show is heard (not one a source switch replaced, nor one
        the screen closing stopped)."""
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

    def _say_state(self) -> None:
        st = colours.palette(self.app).style
        view = self.query_one(LogView)
        count = f"{len(view.shown):,} lines" + (f" of {view.kept:,}" if len(view.shown) != view.kept else "")
        if self._ended is not None:
            text = Text.assemble(("stopped: ", st("bad")), visible(self._ended), f"  · {count}")
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
        self.query_one("#state", Static).update(text)

    # --- keys -----------------------------------------------------------------------------------------

    def action_source(self) -> None:
        """Both, container, system, and round again: the stream starts over with that source."""
        self.source = SOURCES[(SOURCES.index(self.source) + 1) % len(SOURCES)]
        self.query_one("#head", Static).update(self._head())
        self._state = None
        self._follow()

    def action_pause(self) -> None:
        view = self.query_one(LogView)
        view.set_paused(not view.paused)
        self._say_state()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-active")
        self.set_focus(box)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one(LogView).set_query(event.value)
        self._say_state()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not event.value:
            event.input.remove_class("-active")
        self.set_focus(self.query_one(LogView))

    def action_save(self) -> None:
        """What is shown (the filter applied) to a file of its own, readable by this user only."""
        view = self.query_one(LogView)
        folder = Path(self.needs.services.paths.data_dir) / "logs"
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = folder / f"{self.pod.name}-{self.pod.id}-{stamp}.log"
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(view.text())
        except OSError as e:
            self.notify(f"could not save the log: {visible(str(e))}", severity="error", markup=False)
            return
        self.notify(f"saved {len(view.shown):,} lines to {visible(str(target))}", markup=False, timeout=10)

    def action_back(self) -> None:
        """Out of the filter's line (its words cleared) if it is there; else back."""
        box = self.query_one("#filter", Input)
        if box.has_focus or box.has_class("-active"):
            box.value = ""
            box.remove_class("-active")
            self.set_focus(self.query_one(LogView))
            return
        self.dismiss()
