"""Templates: the account's own, or RunPod's public catalogue (official, verified, community); create a pod from
one (the create form filled in from it), make one from a pod, or delete one of yours (docs/storage.md#templates).

Loaded in a thread worker; what RunPod sent is made visible as it arrives, and what went wrong is said in the
status line. A template's env values are never shown here (a public one's may hold someone's token): its keys are,
in the create form it opens. What tells whether Enter can make a pod from a template (pod or serverless, GPU or CPU)
comes before the long columns; the id is shown only on a wide screen, and the image is cut to the width left."""

from __future__ import annotations

from typing import Literal, Protocol

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Static

from podtui.core.api import ApiError
from podtui.core.pod_spec import PodSpec, template_fill
from podtui.core.template import Template
from podtui.core.visible import visible, visible_fields
from podtui.ui import keymap
from podtui.ui.needs import Needs, Opens, Served
from podtui.ui.screens.volumes import OpensCreateForm
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.measured_table import Cell, fill_measured
from podtui.ui.worker_errors import failures_shown, in_thread

SOURCES = ("official", "verified", "community")
COLUMNS = (
    ("name", "name"),
    ("kind", "kind"),
    ("category", "category"),
    ("disk", "disk"),
    ("image", "image"),
    ("ports", "ports"),
    ("public", "public"),
    ("id", "id"),
)
IMAGE = 4  # its column
WIDE = 140  # columns from which the id is shown too
NARROW = 120  # below it a name is cut shorter
MIN_IMAGE = 16
Mode = Literal["mine", "public"]


class TemplatesNeeds(Served, Opens, Protocol):
    """The API, the dialogs, and the create form (a pod from a template)."""

    @property
    def navigator(self) -> OpensCreateForm: ...


class TemplatesScreen(Screen[None]):
    CSS_PATH = "templates.tcss"
    BINDINGS = keymap.bindings("templates")

    def __init__(self, pod_id: str | None = None) -> None:
        """pod_id: the pod selected where the screen was opened, offered first for a template from a pod."""
        super().__init__()
        self.pod_id = pod_id
        self.mode: Mode = "mine"
        self.source = SOURCES[0]
        self.templates: tuple[Template, ...] | None = None  # as shown; None: not loaded yet
        self._sent: dict[str, Template] = {}  # as RunPod sent them, by id: what a new pod is made from
        self._width = 0  # the width the table was filled for

    needs = Needs[TemplatesNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        yield Static("", id="title", markup=False)
        yield DataTable[Cell](id="templates", cursor_type="row", zebra_stripes=True)
        yield Static("", id="status", markup=False)
        yield FittedFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        fill_measured(table, self._columns(), [])
        table.focus()
        self.action_refresh()

    def on_resize(self, event: events.Resize) -> None:
        if self.templates is not None and event.size.width != self._width:
            shown = self.selected
            self._fill()
            if shown is not None and self.templates:
                ids = [t.id for t in self.templates]
                self.query_one(DataTable).move_cursor(row=ids.index(shown.id))

    def _columns(self) -> tuple[tuple[str, str], ...]:
        return COLUMNS if self.app.size.width >= WIDE else COLUMNS[:-1]

    def _title(self) -> str:
        if self.mode == "mine":
            return keymap.fill(self.app, "Your templates ({templates.toggle}: RunPod's public ones)")
        return keymap.fill(self.app, f"RunPod's public templates: {self.source} ({{templates.source}}: another source)")

    def action_refresh(self) -> None:
        self.query_one("#title", Static).update(self._title())
        self.templates = None
        self._status("loading the templates…")
        self._load(self.mode, self.source)

    @in_thread(group="templates", description="loading the templates", exclusive=True)
    def _load(self, mode: Mode, source: str) -> None:
        api = self.needs.services.api
        try:
            found = api.templates() if mode == "mine" else api.public_templates(source)
        except ApiError as e:
            self.app.call_from_thread(self._status, f"cannot load the templates: {e}", True)
            return
        self.app.call_from_thread(self._loaded, mode, source, found)

    def show_failure(self, line: str) -> None:
        self._status(f"that failed: {line}", True)

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(visible(text))
        status.set_class(error, "-error")

    def _loaded(self, mode: Mode, source: str, found: tuple[Template, ...]) -> None:
        if (mode, source) != (self.mode, self.source):  # the user switched while it loaded
            return
        self._sent = {t.id: t for t in found}
        self.templates = visible_fields(tuple(sorted(found, key=lambda t: t.name.lower())))
        self._fill()
        n = len(self.templates)
        if n:
            said = f"{n} template{'' if n == 1 else 's'} · enter or {{templates.create}}: a pod from the template"
        elif mode == "mine":
            said = "no templates of yours yet: {templates.from-pod} makes one from a pod"
        else:
            said = f"no {source} public templates"
        self._status(keymap.fill(self.app, said))

    def _fill(self) -> None:
        """The rows for the screen's width. The image is cut so that every column fits when it can, else so that the
        columns up to it do (ports and public then lie to the right): never the columns that tell what Enter does."""
        width = self._width = self.app.size.width
        columns = self._columns()
        rows: list[tuple[str, list[Text]]] = []
        for t in self.templates or ():
            name = Text(t.name)
            name.truncate(24 if width < NARROW else 40, overflow="ellipsis")  # a community name can be a sentence
            cells = [
                name,
                Text("serverless" if t.serverless else "pod"),
                Text(t.category or "?"),
                Text("—" if t.disk_gb is None else f"{t.disk_gb} GB", justify="right"),
                Text(t.image),
                Text(",".join(t.ports) or "—"),
                Text("yes" if t.public else "no"),
                Text(t.id),
            ]
            rows.append((t.id, cells[: len(columns)]))
        widths = [
            max([cell_len(header), *(cells[i].cell_len for _, cells in rows)]) + 2
            for i, (_, header) in enumerate(columns)
        ]
        room = width - 4 - sum(w for i, w in enumerate(widths) if i != IMAGE)  # 4: the image's padding, a scrollbar
        if room < MIN_IMAGE:
            room = max(width - 4 - sum(widths[:IMAGE]), MIN_IMAGE)
        for _, cells in rows:
            cells[IMAGE].truncate(room, overflow="ellipsis")
        fill_measured(self.query_one(DataTable), columns, [(key, tuple(cells)) for key, cells in rows])

    @property
    def selected(self) -> Template | None:
        if not self.templates:
            return None
        table = self.query_one(DataTable)
        if table.row_count == 0 or table.cursor_row < 0:
            return None
        row = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((t for t in self.templates if t.id == row), None)

    # --- actions ------------------------------------------------------------------------------------------

    def action_mine_or_public(self) -> None:
        self.mode = "public" if self.mode == "mine" else "mine"
        self.action_refresh()

    def action_source(self) -> None:
        if self.mode == "public":
            self.source = SOURCES[(SOURCES.index(self.source) + 1) % len(SOURCES)]
        self.mode = "public"
        self.action_refresh()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_create_pod()

    def action_create_pod(self) -> None:
        shown = self.selected
        template = self._sent.get(shown.id) if shown is not None else None
        if template is None:
            self.notify("no template is highlighted", severity="warning", markup=False)
            return
        try:
            fill = template_fill(template)
        except ValueError as e:
            self._status(visible(str(e)), True)
            return
        prefill = PodSpec(
            name=f"{template.name}-pod"[:60] if template.name.isprintable() else "podtui-pod",
            gpu_type_id="",
            image=fill.image,
            container_gb=fill.container_gb,
            volume_gb=fill.volume_gb,
            volume_mount_path=fill.volume_mount_path,
            ports=fill.ports,
            env=fill.env,
            start_ssh=fill.start_ssh,
            template_id=template.id,
        )
        self.needs.navigator.open_create_pod(prefill=prefill)

    def action_from_pod(self) -> None:
        from podtui.ui.screens.template_form import TemplateFormScreen

        if self.needs.read_only:
            self.notify("read-only mode: creating a template is switched off", severity="warning", markup=False)
            return
        self.needs.open_screen(TemplateFormScreen(self.pod_id), ("template-form",), self._made)

    def _made(self, template: Template | None) -> None:
        if template is not None:
            self.mode = "mine"
            self.action_refresh()

    def action_delete(self) -> None:
        from podtui.ui.screens.confirm import ConfirmScreen

        template = self.selected
        if template is None:
            self.notify("no template is highlighted", severity="warning", markup=False)
            return
        if self.mode != "mine":
            self.notify("only your own templates can be deleted", severity="warning", markup=False)
            return
        if self.needs.read_only:
            self.notify("read-only mode: deleting a template is switched off", severity="warning", markup=False)
            return
        question = ConfirmScreen(
            f"Delete template {template.name}?",
            f"{template.id} · {template.image}\nPods made from it keep running; it can no longer make new ones.",
            "Delete",
            danger=True,
        )
        self.needs.open_screen(
            question, ("delete-template", template.id), lambda yes: self._delete(template) if yes else None
        )

    def _delete(self, template: Template) -> None:
        self._status(f"deleting {template.name}…")
        self._send_delete(template.id, template.name)

    @in_thread(group="template-delete", description="deleting the template", exclusive=True)
    def _send_delete(self, template_id: str, name: str) -> None:
        try:
            self.needs.services.api.delete_template(template_id)
        except ApiError as e:
            self.app.call_from_thread(self._status, f"RunPod did not delete {name}: {e}", True)
            return
        self.app.call_from_thread(self._deleted, name)

    def _deleted(self, name: str) -> None:
        self.notify(f"deleted template {name}", markup=False)
        if self.mode == "mine":
            self.action_refresh()

    def action_back(self) -> None:
        self.app.pop_screen()
