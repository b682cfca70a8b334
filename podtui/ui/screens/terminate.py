"""Terminate, asked so that it cannot go wrong: what is lost and what survives, any transfer from the pod not yet
verified, Cancel focused, and (by default) the pod's name typed to confirm, when no key answers: y and n are bound
only when config.toml's confirm_terminate asks for a plain yes ("yn"). While a name is typed, the line under the box
says at once whether it matches."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from podtui.core import actions
from podtui.core.pod import Pod
from podtui.ui import keymap
from podtui.ui.screens.dialog import Dialog, Frame

MISMATCH = "name does not match"


class TerminateScreen(Dialog[bool]):
    CSS_PATH = ["dialog.tcss", "terminate.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("terminate")

    def __init__(self, pod: Pod, pending: list[str], type_name: bool = True) -> None:
        super().__init__()
        self.pod, self.pending, self.type_name = pod, pending, type_name

    def compose(self) -> ComposeResult:
        c = actions.confirmation("terminate", self.pod)
        with Frame(id="dialog"):
            yield Static(c.title, id="title", markup=False)
            yield Static(c.body, id="body", markup=False)
            if self.pending:
                yield Static(
                    "Transfers from this pod not yet verified (their files would be lost):\n  "
                    + "\n  ".join(self.pending),
                    id="pending",
                    markup=False,
                )
            with Vertical(id="foot"):
                if self.type_name:
                    # the name stands in the label above the box, never as the box's placeholder, which would
                    # look typed already
                    yield Static(f"Type the pod's name, {self.pod.name}, to confirm:", id="ask", markup=False)
                    yield Input(placeholder="the pod's name", id="name", select_on_focus=False)
                    yield Static("", id="match", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel", variant="primary")
                    yield Button("Terminate", id="confirm", variant="error", disabled=self.type_name)

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_key(self, event: events.Key) -> None:
        # Cancel has focus; typing a name's first letter goes to the name box, so nobody has to find it first.
        # Any printable key that reaches the screen was not taken by the box (it stops the ones it takes), so it
        # goes there too: focus moves a moment later, and a fast typist's next letters must not be lost. Stopped
        # here, a letter never reaches the bindings (checked after the screen's handler), whatever [keys] says.
        if self.type_name and event.is_printable and event.character:
            box = self.query_one("#name", Input)
            if not box.has_focus:
                box.focus()
            box.insert_text_at_cursor(event.character)
            event.stop()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("yes", "no"):
            return not self.type_name  # while the name is asked for, only the name (or escape, or Cancel) answers
        return True

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)

    def _say_match(self, typed: str, submitted: bool = False) -> None:
        line = self.query_one("#match", Static)
        matches = typed == self.pod.name
        if matches:
            line.update("✔ the name matches: Terminate, or enter, terminates it")
        elif typed or submitted:
            line.update(f"✖ {MISMATCH}" + ("; nothing was terminated" if submitted else ""))
        else:
            line.update("")
        line.set_class(matches, "-matches")
        line.set_class(bool(typed or submitted) and not matches, "-mismatch")

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#confirm", Button).disabled = event.value != self.pod.name
        self._say_match(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value == self.pod.name:
            self.dismiss(True)
        else:
            self._say_match(event.value, submitted=True)
            self.notify("that is not the pod's name; nothing was terminated", severity="warning", markup=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(
            event.button.id == "confirm"
            and (not self.type_name or self.query_one("#name", Input).value == self.pod.name)
        )

    def action_cancel(self) -> None:
        self.dismiss(False)
