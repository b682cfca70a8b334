"""The account's network volumes: size, data centre, type, cost per month and the pods using each, with totals;
create, grow, rename and delete them, or create a pod on one (docs/storage.md#network-volumes).

Everything RunPod sent is made visible as it arrives (docs/architecture.md#text-from-outside); the volumes and the
pods are asked for together in a thread worker, and what went wrong is said in the status line."""

from __future__ import annotations

from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Static

from podtui.core.api import ApiError
from podtui.core.pod import Pod
from podtui.core.pod_spec import PodSpec
from podtui.core.visible import visible, visible_fields
from podtui.core.volume import NetworkVolume, delete_refusal, money_per_month, totals
from podtui.ui import keymap
from podtui.ui.needs import Needs, Opens, Served
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.measured_table import Cell, fill_measured
from podtui.ui.worker_errors import failures_shown, in_thread

TITLE = "Network volumes: storage in one data centre that outlives its pods"
# the tiers, short: the table must fit 80 columns
TIERS = {"STANDARD": "std", "HIGH_PERFORMANCE": "HPS"}
COLUMNS = (
    ("name", "name"),
    ("id", "id"),
    ("size", "size"),
    ("dc", "data centre"),
    ("type", "tier"),
    ("cost", "$/month"),
    ("pods", "pods on it"),
)


class OpensCreateForm(Protocol):
    """The navigator, as the storage and launch screens use it: the create form filled in from a spec."""

    def open_create_pod(self, prefill: PodSpec | None = None) -> None: ...


class VolumesNeeds(Served, Opens, Protocol):
    """The API, opening the volume dialogs, and the create form (a pod on a volume)."""

    @property
    def navigator(self) -> OpensCreateForm: ...


class VolumesScreen(Screen[None]):
    CSS_PATH = "volumes.tcss"
    BINDINGS = keymap.bindings("volumes")

    def __init__(self) -> None:
        super().__init__()
        self.volumes: tuple[NetworkVolume, ...] | None = None  # None: not loaded yet
        self.pods: tuple[Pod, ...] = ()

    needs = Needs[VolumesNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        yield Static(TITLE, id="title")
        yield DataTable[Cell](id="volumes", cursor_type="row", zebra_stripes=True)
        yield Static("", id="totals", markup=False)
        yield Static("loading the network volumes…", id="status", markup=False)
        yield FittedFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        fill_measured(table, COLUMNS, [])
        table.focus()
        self.action_refresh()

    def action_refresh(self) -> None:
        self._status("loading the network volumes…")
        self._load()

    @in_thread(group="volumes", description="loading the network volumes", exclusive=True)
    def _load(self, select: str | None = None) -> None:
        """The volumes and the pods; `select`: the volume to put the cursor on (one just made or changed)."""
        api = self.needs.services.api
        try:
            volumes = api.network_volumes()
            pods = api.fetch_snapshot().pods
        except ApiError as e:
            self.app.call_from_thread(self._status, f"cannot load the network volumes: {e}", True)
            return
        self.app.call_from_thread(self._loaded, volumes, pods, select)

    def show_failure(self, line: str) -> None:
        self._status(f"cannot load the network volumes: {line}", True)

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(visible(text))
        status.set_class(error, "-error")

    def _loaded(self, volumes: tuple[NetworkVolume, ...], pods: tuple[Pod, ...], select: str | None = None) -> None:
        keep = select or (self.selected.id if self.selected else None)
        self.volumes = visible_fields(tuple(sorted(volumes, key=lambda v: v.name.lower())))
        self.pods = visible_fields(pods)
        rows: list[tuple[str, tuple[Cell, ...]]] = []
        for v in self.volumes:
            users = ", ".join(p.name for p in v.users(self.pods))
            rows.append(
                (
                    v.id,
                    (
                        Text(v.name),
                        Text(v.id),
                        Text(f"{v.size_gb} GB", justify="right"),
                        Text(v.data_centre),
                        Text(TIERS.get(v.type or "", v.type or "?")),
                        Text(f"${v.cost_per_month:,.2f}", justify="right"),
                        Text(users or "—", style="" if users else "dim"),
                    ),
                )
            )
        table = self.query_one(DataTable)
        fill_measured(table, COLUMNS, rows)
        ids = [v.id for v in self.volumes]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
        gb, money = totals(self.volumes)
        n = len(self.volumes)
        self.query_one("#totals", Static).update(
            f"{n} volume{'' if n == 1 else 's'} · {gb:,} GB · {money_per_month(money)}, billed with or without a pod"
            if n
            else keymap.fill(self.app, "no network volumes on the account: {volumes.create} creates one")
        )
        self._status(keymap.fill(self.app, "enter or {volumes.pod}: a pod on the volume · {volumes.create}: a new one"))

    @property
    def selected(self) -> NetworkVolume | None:
        if not self.volumes:
            return None
        table = self.query_one(DataTable)
        if table.row_count == 0 or table.cursor_row < 0:
            return None
        row = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((v for v in self.volumes if v.id == row), None)

    def _picked(self) -> NetworkVolume | None:
        volume = self.selected
        if volume is None:
            self.notify(
                "no volume is highlighted" if self.volumes is not None else "the volumes have not loaded yet",
                severity="warning",
                markup=False,
            )
        return volume

    def _refused(self, what: str) -> bool:
        if self.needs.read_only:
            self.notify(f"read-only mode: {what} is switched off", severity="warning", markup=False)
            return True
        return False

    # --- actions ------------------------------------------------------------------------------------------

    def action_create(self) -> None:
        from podtui.ui.screens.volume_form import VolumeFormScreen

        if not self._refused("creating a network volume"):
            self.needs.open_screen(VolumeFormScreen(), ("volume-form",), self._changed)

    def action_grow(self) -> None:
        self._edit("grow")

    def action_rename(self) -> None:
        self._edit("rename")

    def _edit(self, what: str) -> None:
        from podtui.ui.screens.volume_edit import VolumeEditScreen

        volume = self._picked()
        if volume is None or self._refused(f"{'growing' if what == 'grow' else 'renaming'} a network volume"):
            return
        self.needs.open_screen(VolumeEditScreen(volume, what), ("volume-edit", volume.id), self._changed)

    def action_delete(self) -> None:
        from podtui.ui.screens.volume_delete import VolumeDeleteScreen

        volume = self._picked()
        if volume is None or self._refused("deleting a network volume"):
            return
        refusal = delete_refusal(volume, self.pods)
        if refusal is not None:  # RunPod keeps a volume a pod mounts: said before anything is typed
            self._status(refusal, True)
            self.notify(refusal, severity="warning", markup=False)
            return
        self.needs.open_screen(VolumeDeleteScreen(volume), ("volume-delete", volume.id), self._deleted)

    def action_create_pod(self) -> None:
        volume = self._picked()
        if volume is None:
            return
        prefill = PodSpec(
            name=f"{volume.name}-pod"[:60],
            gpu_type_id="",
            volume_gb=0,
            network_volume_id=volume.id,
            data_centre_ids=(volume.data_centre,),
        )
        self.needs.navigator.open_create_pod(prefill=prefill)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_create_pod()

    def _changed(self, volume: NetworkVolume | None) -> None:
        if volume is not None:
            self._status(f"{volume.name}: {volume.size_gb} GB in {volume.data_centre}, loading…")
            self._load(volume.id)

    def _deleted(self, volume: NetworkVolume | None) -> None:
        if volume is not None:
            self.notify(f"deleted network volume {volume.name} ({volume.id})", markup=False)
            self.action_refresh()

    def action_back(self) -> None:
        self.app.pop_screen()
