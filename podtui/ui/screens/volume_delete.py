"""Delete a network volume, asked so that it cannot go wrong: its data is gone for good, so Cancel has the focus
and the volume's name must be typed; the line under the box says at once whether it matches. The volumes screen
refuses before this opens while a pod mounts the volume; RunPod's own refusal appears here
(docs/storage.md#network-volumes)."""

from __future__ import annotations

from typing import Protocol

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from podtui.core.api import ApiError
from podtui.core.visible import visible
from podtui.core.volume import NetworkVolume, money_per_month
from podtui.ui import keymap
from podtui.ui.buttons import ready_again
from podtui.ui.needs import Needs, Served
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import failures_shown, in_thread


class VolumeDeleteNeeds(Served, Protocol):
    """The API."""


class VolumeDeleteScreen(Dialog[NetworkVolume | None]):
    CSS_PATH = ["dialog.tcss", "volume_delete.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("volume-delete")

    def __init__(self, volume: NetworkVolume) -> None:
        super().__init__()
        self.volume = volume  # made visible by the volumes screen
        self._busy = False

    needs = Needs[VolumeDeleteNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        v = self.volume
        with Frame(id="dialog"):
            yield Static(f"Delete network volume {v.name}?", id="title", markup=False)
            yield Static(
                f"{v.id} · {v.size_gb} GB in {v.data_centre} · {money_per_month(v.cost_per_month)}\n"
                "Everything on it is deleted with it, for good. Billing for it stops.",
                id="body",
                markup=False,
            )
            with Vertical(id="foot"):
                yield Static(f"Type the volume's name, {v.name}, to confirm:", id="ask", markup=False)
                yield Input(placeholder="the volume's name", id="name", select_on_focus=False)
                yield Static("", id="match", markup=False)
                yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel", variant="primary")
                    yield Button("Delete", id="confirm", variant="error", disabled=True)

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_key(self, event: events.Key) -> None:
        # Cancel has focus; a name's first letter goes to the box, and so does any printable key the box did not
        # take (it moves a moment later), so a fast typist loses nothing (as the terminate dialog does)
        if event.is_printable and event.character:
            box = self.query_one("#name", Input)
            if not box.has_focus:
                box.focus()
            box.insert_text_at_cursor(event.character)
            event.stop()

    def _matches(self) -> bool:
        return self.query_one("#name", Input).value == self.volume.name

    def on_input_changed(self, event: Input.Changed) -> None:
        matches = event.value == self.volume.name
        self.query_one("#confirm", Button).disabled = not matches or self._busy
        line = self.query_one("#match", Static)
        line.update("✔ the name matches" if matches else ("✖ name does not match" if event.value else ""))
        line.set_class(matches, "-matches")
        line.set_class(bool(event.value) and not matches, "-mismatch")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self._matches():
            self._delete()
        else:
            self.notify("that is not the volume's name; nothing was deleted", severity="warning", markup=False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "confirm" and self._matches():
            self._delete()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def _error(self, text: str) -> None:
        line = self.query_one("#error", Static)
        line.update(text)
        line.display = bool(text)

    def _delete(self) -> None:
        if self._busy:
            return
        if self.needs.read_only:
            self._error("read-only mode: deleting a network volume is switched off")
            return
        self._busy = True
        self.query_one("#confirm", Button).disabled = True
        self._error(f"deleting {self.volume.name}…")
        self._send()

    @in_thread(group="volume-delete", description="deleting the network volume", exclusive=True)
    def _send(self) -> None:
        try:
            self.needs.services.api.delete_network_volume(self.volume.id)
        except ApiError as e:
            self.app.call_from_thread(self.show_failure, f"RunPod did not delete it: {e}")
            return
        self.app.call_from_thread(self.dismiss, self.volume)

    def show_failure(self, line: str) -> None:
        self._busy = False
        ready_again(self.query_one("#confirm", Button), self._matches())
        self._error(visible(line))
