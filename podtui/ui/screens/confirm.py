"""A yes/no question whose safe answer is the default: Cancel has focus, escape and n cancel."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from podtui.ui import keymap
from podtui.ui.screens.dialog import Dialog, Frame


class ConfirmScreen(Dialog[bool]):
    CSS_PATH = ["dialog.tcss", "confirm.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("confirm")

    def __init__(self, title: str, body: str, confirm_label: str, danger: bool = False) -> None:
        super().__init__(classes="-danger" if danger else "")
        self._title, self._body, self._label, self._danger = title, body, confirm_label, danger

    def compose(self) -> ComposeResult:
        with Frame(id="dialog"):
            yield Static(self._title, id="title", markup=False)
            yield Static(self._body, id="body", markup=False)
            with Vertical(id="foot"), Horizontal(id="buttons"):
                yield Button("Cancel", id="cancel", variant="primary")
                yield Button(self._label, id="confirm", variant="error" if self._danger else "warning")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm")

    def action_cancel(self) -> None:
        self.dismiss(False)

    def action_confirm(self) -> None:
        self.dismiss(True)
