"""In-app autostop: a pod the user opted in has turned idle; it is stopped when the countdown ends, unless any key
is pressed first (or the pointer clicks anywhere, the button included)."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Button, Static

from podtui.core import units
from podtui.core.pod import Pod
from podtui.ui import keymap
from podtui.ui.screens.dialog import Dialog, Frame


class CountdownScreen(Dialog[bool]):
    CSS_PATH = ["dialog.tcss", "countdown.tcss"]  # the shared frame, then its own

    def __init__(self, pod: Pod, idle_s: float, per_hr: float, seconds: int = 60) -> None:
        super().__init__()
        self.pod, self.idle_s, self.per_hr, self.left = pod, idle_s, per_hr, seconds
        self.covered = False
        self.ticking: Timer | None = None  # the second hand (a snapshot test holds it still)

    def compose(self) -> ComposeResult:
        with Frame(id="dialog"):
            yield Static("", id="title", markup=False)
            yield Static(
                f"Its GPU has been idle for {units.duration(self.idle_s)}, still billing "
                f"{units.rate(self.per_hr)}. You asked podtui to stop it when idle "
                f"({keymap.key_for(self.app, 'pods.autostop')} to turn that off).\n"
                "The volume is kept. Press any key to keep it running.",
                markup=False,
            )
            with Vertical(id="foot"), Horizontal(id="buttons"):
                yield Button("Keep it running", id="keep", variant="primary")

    def on_mount(self) -> None:
        self._show()
        self.ticking = self.set_interval(1.0, self._second)

    def _show(self) -> None:
        self.query_one("#title", Static).update(f"Stopping {self.pod.name} in {self.left} s")

    def _second(self) -> None:
        if self.app.screen is not self:  # something opened over it (the palette, a question): never stop unseen
            return
        self.left -= 1
        if self.left <= 0:
            self._answer(True)
        else:
            self._show()

    def _answer(self, stop: bool) -> None:
        self.dismiss(stop)  # once, whoever is first (a timer, a key): Dialog answers once, and only from the top

    def on_screen_suspend(self) -> None:
        self.covered = True

    def on_screen_resume(self) -> None:
        if self.covered:
            self._answer(False)  # it was covered: the user looked elsewhere, which counts as a key

    def on_key(self, event: events.Key) -> None:
        event.stop()
        self._answer(False)  # any key keeps the pod

    def on_click(self) -> None:
        self._answer(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self._answer(False)
