"""Ask for a file name, with a sensible one filled in."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from podtui.ui import keymap
from podtui.ui.screens.dialog import Dialog, Frame


class SaveAsScreen(Dialog[str | None]):
    CSS_PATH = ["dialog.tcss", "save_as.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("save-as")

    def __init__(self, title: str, default: str) -> None:
        super().__init__()
        self._title, self._default = title, default

    def compose(self) -> ComposeResult:
        with Frame(id="dialog"):
            yield Static(self._title, id="title", markup=False)
            yield Input(self._default, id="path")
            yield Static(keymap.fill(self.app, "enter saves · {save-as.cancel} cancels"), id="help", markup=False)
            with Vertical(id="foot"), Horizontal(id="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Save", id="save", variant="primary")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(self.query_one("#path", Input).value.strip() or None if event.button.id == "save" else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
