"""A new network volume: name, size, a data centre that takes volumes (RunPod's list, loaded in a thread) and a tier,
each checked as it is typed, with what it will cost a month shown before the Create button. RunPod's refusal appears
in the form and nothing typed is lost (docs/storage.md#network-volumes). When RunPod's answer is lost the volume may
exist: it is looked for by name, and Create stays off until the user has looked (names are not unique: a second
create makes a second volume, billed too)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static

from podtui.core.api import ApiError
from podtui.core.data_centre import DataCentre
from podtui.core.lost_answer import LOOKUP_DELAYS, answer_lost, lost_create_message
from podtui.core.visible import visible, visible_fields
from podtui.core.volume import (
    NETWORK_VOLUME_PER_GB_MONTH,
    VOLUME_GB_RANGE,
    NetworkVolume,
    check_volume_name,
    check_volume_size,
    find_created_volume,
    known_volume_ids,
    money_per_month,
)
from podtui.ui import keymap
from podtui.ui.buttons import ready_again
from podtui.ui.needs import Needs, Served
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import failures_shown, in_thread

DEFAULT_TIER = "default"  # the data centre's own tier: no type sent


class VolumeFormNeeds(Served, Protocol):
    """The API."""


class VolumeFormScreen(Dialog[NetworkVolume | None]):
    CSS_PATH = ["dialog.tcss", "volume_form.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("volume-form")
    lookup_delays: ClassVar[Sequence[float]] = LOOKUP_DELAYS  # before each look after a lost answer

    def __init__(self, name: str = "", size_gb: int = 50) -> None:
        super().__init__()
        self._given, self._size_gb = name, size_gb
        self.centres: tuple[DataCentre, ...] = ()
        self._busy = False
        self._maybe_made: str | None = None  # why Create is off: a lost answer, the volume may exist

    needs = Needs[VolumeFormNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        lo, hi = VOLUME_GB_RANGE
        with Frame(id="dialog"):
            yield Static("New network volume", id="title")
            yield Label("Name")
            yield Input(self._given, id="name", placeholder="e.g. datasets")
            yield Static("", id="err-name", classes="field-error", markup=False)
            yield Label(f"Size in GB ({lo} to {hi}; it can grow later, never shrink)")
            yield Input(str(self._size_gb), id="size", type="integer")
            yield Static("", id="err-size", classes="field-error", markup=False)
            yield Label("Data centre (pods using the volume run there) · tier")
            with Horizontal():
                yield Select[str]([], prompt="loading data centres…", id="dc")
                yield Select[str]([("default tier", DEFAULT_TIER)], value=DEFAULT_TIER, id="type")
            yield Static("", id="err-dc", classes="field-error", markup=False)
            with Vertical(id="foot"):
                yield Static("", id="cost", markup=False)
                yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel")
                    yield Button("Create", id="create", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#name", Input).focus()
        self._load()
        self._refresh()

    @in_thread(group="data-centres", description="loading the data centres", exclusive=True)
    def _load(self) -> None:
        try:
            centres = self.needs.services.api.data_centres()
        except ApiError as e:
            self.app.call_from_thread(self._error, f"cannot load the data centres: {e}")
            return
        self.app.call_from_thread(self._loaded, centres)

    def show_failure(self, line: str) -> None:
        """Loading the data centres or creating failed on something unexpected: said, and Create works again."""
        self._busy = False
        self.query_one("#create", Button).disabled = False
        self._error(f"that failed: {line}")

    def _loaded(self, centres: tuple[DataCentre, ...]) -> None:
        self.centres = tuple(c for c in visible_fields(centres) if c.takes_volumes)
        select: Select[str] = self.query_one("#dc", Select)
        select.set_options([(f"{c.id} · {c.name}", c.id) for c in self.centres])
        if self.centres:
            select.value = self.centres[0].id
        else:
            self._error("RunPod lists no data centre that takes network volumes")
        self._refresh()

    @property
    def centre(self) -> DataCentre | None:
        value = self.query_one("#dc", Select).value
        return next((c for c in self.centres if c.id == value), None)

    def on_input_changed(self, event: Input.Changed) -> None:
        self._refresh()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "dc":
            centre = self.centre
            tiers: Select[str] = self.query_one("#type", Select)
            was = tiers.value
            options = [("default tier", DEFAULT_TIER)]
            options += [(t.replace("_", " ").lower(), t) for t in (centre.volume_types if centre else ())]
            tiers.set_options(options)
            tiers.value = was if any(v == was for _, v in options) else DEFAULT_TIER
        self._refresh()

    def _check(self) -> tuple[dict[str, object], dict[str, str]]:
        values: dict[str, object] = {}
        problems: dict[str, str] = {}
        for field, check in (
            ("name", lambda: check_volume_name(self.query_one("#name", Input).value)),
            ("size", lambda: check_volume_size(self.query_one("#size", Input).value)),
        ):
            try:
                values[field] = check()
            except ValueError as e:
                problems[field] = str(e)
        if self.centre is None:
            problems["dc"] = "pick a data centre" if self.centres else ""
        return values, problems

    def _refresh(self) -> tuple[dict[str, object], dict[str, str]]:
        values, problems = self._check()
        for field in ("name", "size", "dc"):
            line = self.query_one(f"#err-{field}", Static)
            line.update(problems.get(field, ""))
            line.set_class(bool(problems.get(field)), "-shown")
        size = values.get("size")
        button = self.query_one("#create", Button)
        if isinstance(size, int):
            cost = size * NETWORK_VOLUME_PER_GB_MONTH
            self.query_one("#cost", Static).update(
                f"Cost: {money_per_month(cost)} (${NETWORK_VOLUME_PER_GB_MONTH:.2f}/GB) until it is deleted"
            )
            button.label = f"Create ({money_per_month(cost)})"
        else:
            self.query_one("#cost", Static).update("Cost: give a size to see it")
            button.label = "Create"
        button.refresh(layout=True)
        return values, problems

    def _error(self, text: str) -> None:
        line = self.query_one("#error", Static)
        line.update(visible(text, lines=True))
        line.display = bool(text)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "create":
            self.action_submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_submit(self) -> None:
        if self._busy:
            return
        if self._maybe_made is not None:
            self._error(self._maybe_made)
            return
        if self.needs.read_only:
            self._error("read-only mode: creating a network volume is switched off")
            return
        values, problems = self._refresh()
        centre = self.centre
        if problems or centre is None:
            self._error("fix the fields marked in red first; nothing was sent")
            return
        tier = self.query_one("#type", Select).value
        self._busy = True
        self.query_one("#create", Button).disabled = True
        name, size = str(values["name"]), int(str(values["size"]))
        self._error(f"creating {name}…")
        self._create(name, size, centre.id, tier if isinstance(tier, str) and tier != DEFAULT_TIER else None)

    @in_thread(group="volume-create", description="creating the network volume", exclusive=True)
    def _create(self, name: str, size: int, centre: str, tier: str | None) -> None:
        api = self.needs.services.api
        known = known_volume_ids(api.network_volumes)
        try:
            volume = api.create_network_volume(name, size, centre, tier)
        except ApiError as e:
            if not answer_lost(e):
                self.app.call_from_thread(self._failed, str(e))
                return
            self.app.call_from_thread(self._error, f"RunPod's answer was lost: looking for {name} on the account…")
            try:
                found = find_created_volume(api.network_volumes, name, centre, known, self.lookup_delays)
            except ApiError as err:
                self.app.call_from_thread(
                    self._uncertain, lost_create_message(f"the volume {name}", e, err, "the Volumes list")
                )
                return
            if found is None:
                self.app.call_from_thread(
                    self._uncertain, lost_create_message(f"the volume {name}", e, None, "the Volumes list")
                )
                return
            self.app.call_from_thread(self._created, found, "created after all: network volume", known is None)
            return
        self.app.call_from_thread(self._created, volume)

    def _failed(self, message: str) -> None:
        self._busy = False
        ready_again(self.query_one("#create", Button))
        self._error(f"RunPod did not create the volume: {message}")

    def _uncertain(self, message: str) -> None:
        """The volume may exist: Create stays off (a second one would be billed too); what was typed stays."""
        self._busy = False
        self._maybe_made = message
        self._error(message)

    def _created(self, volume: NetworkVolume, said: str = "created network volume", unsure: bool = False) -> None:
        older = " (the list before creating was not available: check it is not an older one)" if unsure else ""
        self.app.notify(
            f"{said} {visible(volume.name)}: {volume.size_gb} GB in {visible(volume.data_centre)}, "
            f"{money_per_month(volume.cost_per_month)}{older}",
            markup=False,
        )
        self.dismiss(volume)
