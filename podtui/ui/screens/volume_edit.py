"""Grow or rename a network volume: one box, checked as it is typed (a volume only grows, up to RunPod's largest),
sent in a thread; RunPod's refusal appears in the dialog and what was typed stays (docs/storage.md#network-volumes)."""

from __future__ import annotations

from typing import Literal, Protocol

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Static

from podtui.core.api import ApiError
from podtui.core.visible import visible
from podtui.core.volume import (
    NETWORK_VOLUME_PER_GB_MONTH,
    VOLUME_GB_RANGE,
    NetworkVolume,
    check_grow,
    check_volume_name,
    money_per_month,
)
from podtui.ui import keymap
from podtui.ui.buttons import ready_again
from podtui.ui.needs import Needs, Served
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import failures_shown, in_thread

Edit = Literal["grow", "rename"]


class VolumeEditNeeds(Served, Protocol):
    """The API."""


class VolumeEditScreen(Dialog[NetworkVolume | None]):
    CSS_PATH = ["dialog.tcss", "volume_edit.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("volume-edit")

    def __init__(self, volume: NetworkVolume, what: str) -> None:
        super().__init__()
        self.volume = volume  # made visible by the volumes screen
        self.what: Edit = "grow" if what == "grow" else "rename"
        self._busy = False

    needs = Needs[VolumeEditNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        v = self.volume
        grow = self.what == "grow"
        with Frame(id="dialog"):
            title = f"Grow {v.name}" if grow else f"Rename {v.name}"
            yield Static(title, id="title", markup=False)
            yield Static(
                f"{v.id} · {v.size_gb} GB in {v.data_centre} · {money_per_month(v.cost_per_month)}", markup=False
            )
            if grow:
                yield Label(f"New size in GB (more than {v.size_gb}, up to {VOLUME_GB_RANGE[1]}; it cannot shrink)")
                yield Input(str(v.size_gb), id="value", type="integer")
            else:
                yield Label("New name")
                yield Input(v.name if v.name.isprintable() else "", id="value")
            yield Static("", id="problem", markup=False)
            with Vertical(id="foot"):
                yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel")
                    yield Button("Grow" if grow else "Rename", id="save", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#value", Input).focus()
        self._refresh()

    def _checked(self) -> int | str:
        """The new size or name; ValueError in words."""
        typed = self.query_one("#value", Input).value
        if self.what == "grow":
            return check_grow(self.volume, typed)
        name = check_volume_name(typed)
        if name == self.volume.name:
            raise ValueError("that is its name already")
        return name

    def _refresh(self) -> int | str | None:
        line = self.query_one("#problem", Static)
        button = self.query_one("#save", Button)
        if self.what == "grow":  # the new cost on the button that commits to it, as Create shows it
            button.label = "Grow"
        try:
            value = self._checked()
        except ValueError as e:
            line.update(str(e))
            line.set_class(True, "-bad")
            return None
        line.set_class(False, "-bad")
        if isinstance(value, int):
            now = money_per_month(value * NETWORK_VOLUME_PER_GB_MONTH)
            line.update(f"{now} from now on (was {money_per_month(self.volume.cost_per_month)}); it never shrinks")
            button.label = f"Grow ({now})"
        else:
            line.update("")
        return value

    def on_input_changed(self, event: Input.Changed) -> None:
        self._refresh()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def _error(self, text: str) -> None:
        line = self.query_one("#error", Static)
        line.update(text)
        line.display = bool(text)

    def action_submit(self) -> None:
        if self._busy:
            return
        if self.needs.read_only:
            self._error("read-only mode: changing a network volume is switched off")
            return
        value = self._refresh()
        if value is None:
            self._error("nothing was sent: see above")
            return
        self._busy = True
        self.query_one("#save", Button).disabled = True
        self._error("growing…" if self.what == "grow" else "renaming…")
        self._send(value)

    @in_thread(group="volume-edit", description="changing the network volume", exclusive=True)
    def _send(self, value: int | str) -> None:
        api = self.needs.services.api
        try:
            if isinstance(value, int):
                changed = api.update_network_volume(self.volume.id, size_gb=value)
            else:
                changed = api.update_network_volume(self.volume.id, name=value)
        except ApiError as e:
            self.app.call_from_thread(self.show_failure, f"RunPod refused: {e}")
            return
        self.app.call_from_thread(self._done, changed)

    def show_failure(self, line: str) -> None:
        self._busy = False
        ready_again(self.query_one("#save", Button))
        self._error(visible(line))

    def _done(self, volume: NetworkVolume) -> None:
        self.dismiss(volume)
