"""Ask for a file name, with a sensible one filled in."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from podtui.ui import keymap
from podtui.ui.screens.dialog import Dialog


class SaveAsScreen(Dialog[str | None]):
    CSS_PATH = "save_as.tcss"
    BINDINGS = keymap.bindings("save-as")

    def __init__(self, title: str, default: str) -> None:
        super().__init__()
        self._title, self._default = title, default

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title, id="title", markup=False)
            yield Input(self._default, id="path")
            yield Static(keymap.fill(self.app, "enter saves · {save-as.cancel} cancels"), id="help", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
