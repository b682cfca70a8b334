"""The pods podtui has seen, the one seen last first: those no longer on the account, and those still there
(marked). Enter opens the create form filled in with the pod's launch spec, where its cost is shown before
anything is created; d forgets one (docs/storage.md#recreate).

The remembered specs hold no credential-looking values: the form gets each from this machine's environment when it
is set there, and the user is told which are left out. A pod still on the account is read from RunPod's answer."""

from __future__ import annotations

import os
from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Static

from podtui.core import units
from podtui.core.api import ApiError
from podtui.core.launch_memory import LaunchMemory, LaunchRecord, NotLaunchable, remember_quietly, spec_of
from podtui.core.pod import Pod, Snapshot
from podtui.core.visible import visible, visible_fields
from podtui.ui import keymap
from podtui.ui.needs import Needs, Served
from podtui.ui.screens.volumes import OpensCreateForm
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.measured_table import Cell, fill_measured
from podtui.ui.worker_errors import failures_shown, in_thread

TITLE = "Recreate: pods podtui has seen, the last seen first"
COLUMNS = (
    ("name", "name"),
    ("state", "now"),
    ("gpu", "GPU"),
    ("storage", "storage"),
    ("seen", "last seen"),
    ("image", "image"),
)
IMAGE_WIDTH = 48  # the rest of a long image name is in the create form


def _gpu(type_id: str) -> str:
    """RunPod's GPU type id, shorter: "NVIDIA GeForce RTX 3090" is an RTX 3090."""
    return type_id.removeprefix("NVIDIA ").replace("GeForce ", "")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class RecreateNeeds(Served, Protocol):
    """The API and the memory (through the services), and the create form."""

    @property
    def navigator(self) -> OpensCreateForm: ...


def _storage(record: LaunchRecord) -> str:
    s = record.spec
    if s.network_volume_id:
        return f"net vol {s.network_volume_id}"
    return f"{s.volume_gb} GB volume" if s.volume_gb else "no volume"


class RecreateScreen(Screen[None]):
    CSS_PATH = "recreate.tcss"
    BINDINGS = keymap.bindings("recreate")

    def __init__(self) -> None:
        super().__init__()
        self.records: tuple[LaunchRecord, ...] | None = None  # as remembered; None: not read yet
        self.live: dict[str, Pod] = {}  # the pods on the account now, as RunPod sent them, by id
        self._live_known = False  # RunPod answered once: a pod not in `live` is gone, not unknown
        self._now = 0.0

    needs = Needs[RecreateNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        yield Static(TITLE, id="title")
        yield DataTable[Cell](id="launches", cursor_type="row", zebra_stripes=True)
        yield Static("", id="status", markup=False)
        yield FittedFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        fill_measured(table, COLUMNS, [])
        table.focus()
        self.action_refresh()

    @property
    def memory(self) -> LaunchMemory:
        return LaunchMemory.for_services(self.needs.services)

    def action_refresh(self) -> None:
        self._status("reading the pods…")
        self._load()

    @in_thread(group="recreate", description="reading the remembered pods", exclusive=True)
    def _load(self) -> None:
        snap: Snapshot | None
        trouble: str | None = None
        try:
            snap = self.needs.services.api.fetch_snapshot()
        except ApiError as e:
            snap, trouble = None, f"cannot ask RunPod which pods are there now: {e}"
        memory = self.memory
        if snap is not None:
            trouble = remember_quietly(memory, snap.pods, snap.fetched_at)
        now = snap.fetched_at if snap is not None else self.needs.services.clock()
        self.app.call_from_thread(self._loaded, memory.records(), snap, now, trouble)

    def show_failure(self, line: str) -> None:
        self._status(f"that failed: {line}", True)

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(visible(text))
        status.set_class(error, "-error")

    def _loaded(
        self, records: tuple[LaunchRecord, ...], snap: Snapshot | None, now: float, trouble: str | None
    ) -> None:
        self.records, self._now = records, now
        if snap is not None:
            self.live, self._live_known = {p.id: p for p in snap.pods}, True
        table = self.query_one(DataTable)
        keep = self.selected.pod_id if self.selected else None
        rows: list[tuple[str, tuple[Cell, ...]]] = []
        for record in records:
            shown = visible_fields(record)
            live = self.live.get(record.pod_id)
            if live is not None:
                state = Text(f"● {visible(live.state)}", style="bold")
            else:
                state = Text("gone" if self._live_known else "?", style="dim")
            spec = shown.spec
            rows.append(
                (
                    record.pod_id,
                    (
                        Text(shown.name),
                        state,
                        Text(f"{spec.gpu_count} x {_gpu(spec.gpu_type_id)}"),
                        Text(_storage(shown)),
                        Text(units.ago(record.seen_at, now)),
                        Text(_cut(spec.image, IMAGE_WIDTH)),
                    ),
                )
            )
        fill_measured(table, COLUMNS, rows)
        ids = [r.pod_id for r in records]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
        if trouble:
            self._status(trouble, True)
        elif not records:
            self._status("podtui has seen no pod it can create again yet (GPU pods it has listed)")
        else:
            gone = sum(1 for r in records if r.pod_id not in self.live)
            self._status(
                keymap.fill(
                    self.app,
                    f"{len(records)} remembered, {gone} no longer on the account (● still there) · enter or "
                    "{recreate.create}: the create form with its spec · {recreate.forget}: forget it",
                )
            )

    @property
    def selected(self) -> LaunchRecord | None:
        if not self.records:
            return None
        table = self.query_one(DataTable)
        if table.row_count == 0 or table.cursor_row < 0:
            return None
        row = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((r for r in self.records if r.pod_id == row), None)

    # --- actions ------------------------------------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_create_pod()

    def action_create_pod(self) -> None:
        record = self.selected
        if record is None:
            self.notify("no pod is highlighted", severity="warning", markup=False)
            return
        if self.needs.read_only:
            self.notify("read-only mode: creating a pod is switched off", severity="warning", markup=False)
            return
        live = self.live.get(record.pod_id)
        if live is not None:
            try:
                spec = spec_of(live)  # the pod's own values, secrets too: RunPod has them now
            except NotLaunchable as e:
                self._status(str(e), True)
                return
        else:
            spec, _ = record.launch_spec("env", os.environ)
            left_out = [k for k in record.secret_keys if k not in dict(spec.env)]
            if left_out:
                self.notify(
                    visible(
                        f"not set on this machine, so left out: {', '.join(left_out)} (podtui keeps no credential; "
                        "type them in the form)"
                    ),
                    severity="warning",
                    timeout=12,
                    markup=False,
                )
        self.needs.navigator.open_create_pod(prefill=spec)

    def action_forget(self) -> None:
        record = self.selected
        if record is None:
            self.notify("no pod is highlighted", severity="warning", markup=False)
            return
        self._forget(record.pod_id, record.name)

    @in_thread(group="recreate-forget", description="forgetting a pod", exclusive=True)
    def _forget(self, pod_id: str, name: str) -> None:
        try:
            self.memory.forget(pod_id)
        except (LookupError, OSError) as e:
            self.app.call_from_thread(self._status, f"could not forget {name}: {e}", True)
            return
        again = " (it is still on the account: the next poll remembers it again)" if pod_id in self.live else ""
        self.app.call_from_thread(self.notify, visible(f"forgot {name}{again}"), markup=False)
        self.app.call_from_thread(self._loaded, self.memory.records(), None, self._now, None)

    def action_back(self) -> None:
        self.app.pop_screen()
