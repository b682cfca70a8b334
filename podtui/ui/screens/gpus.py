"""GPU types with VRAM, prices and stock; a model size and method give the VRAM estimate, and the cheapest
types that fit are starred (in the theme's colour for good), with the reasoning. The line under the table says
where the highlighted type is free: its data centres and their stock on each cloud
(docs/runpod-facts.md#data-centres-and-stock). Enter opens the create-pod form with the GPU under the cursor.

The table's columns are given their widths as its rows are filled (podtui/ui/widgets/measured_table.py): left to
the table, they stayed as wide as their headers when the screen was drawn first, on a busy machine."""

from __future__ import annotations

from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Input, Select, Static

from podtui.core.api import ApiError
from podtui.core.gpu import Advice, Cloud, GpuCatalogue, GpuType, Method, advise, estimate, parse_params
from podtui.core.pod_spec import CreatedPod
from podtui.core.visible import visible, visible_fields
from podtui.ui import colours, keymap
from podtui.ui.colours import Palette
from podtui.ui.needs import Needs, Opens, Served, subscribe
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.measured_table import Cell, fill_measured
from podtui.ui.widgets.prompt_line import PromptLine
from podtui.ui.worker_errors import failures_shown, in_thread

METHODS = [
    ("LoRA", Method.LORA.value),
    ("QLoRA (4-bit)", Method.QLORA.value),
    ("full fine-tune", Method.FULL.value),
    ("inference", Method.INFERENCE.value),
]


TITLE = "RunPod GPU types: $/hr and stock (community/secure) for one GPU"
TITLE_ADVISED = "RunPod GPU types: $/hr and stock (community/secure) for the GPUs the job needs"
# (key, header): the keys name the columns for update_cell
COLUMNS = (
    ("star", ""),
    ("gpu", "GPU"),
    ("vram", "VRAM"),
    ("count", "GPUs"),
    ("community", "community"),
    ("secure", "secure"),
    ("stock", "stock C/S"),
)


def _price(value: float | None, n: int = 1) -> str:
    return "—" if value is None else f"${value * n:.2f}"


# the advice's marks: the cheapest types that fit, the best of them, every type that fits (None: no estimate)
Marks = tuple[set[str], str | None, set[str] | None]


def _marked(g: GpuType, marks: Marks, palette: Palette) -> tuple[Text, Text]:
    """The star and the name: the cheapest types that fit in bold good, those that do not fit dimmed."""
    marked, best, fits = marks
    good = palette.spec("bold good")  # "bold green" in textual-dark
    style = good if g.id in marked else ("dim" if fits is not None and g.id not in fits else "")
    star = "★ best" if g.id == best else ("★" if g.id in marked else "")
    return Text(star, style=good), Text(g.display_name, style=style)


class GpusNeeds(Served, Opens, Protocol):
    """The API, and opening the create form."""


class GpusScreen(Screen[None]):
    CSS_PATH = "gpus.tcss"
    BINDINGS = keymap.bindings("gpus")

    def __init__(self, model: str = "", method: Method = Method.LORA) -> None:
        super().__init__()
        self._model, self._method = model, method
        self.catalogue: GpuCatalogue | None = None
        self.advice: Advice | None = None

    needs = Needs[GpusNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        yield Static(TITLE, id="title")
        with Horizontal(id="inputs"):
            yield PromptLine(
                lambda: self.query_one(DataTable),
                self._model,
                back=("gpus.back", self.action_back),
                placeholder="model size: 1.5B, 7B…",
                id="model",
            )
            yield Select(METHODS, value=self._method.value, allow_blank=False, id="method")
        yield DataTable[Cell](id="gpus", cursor_type="row", zebra_stripes=True)
        yield Static("", id="where", markup=False)
        with VerticalScroll(id="notes"):
            yield Static("loading RunPod's GPU list…", id="status", markup=False)
            yield Static("", id="estimate", markup=False)
            yield Static("", id="advice", markup=False)
        yield FittedFooter()  # the keys that fit, whole, at 80 columns too

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        fill_measured(table, COLUMNS, [])
        table.focus()
        subscribe(self, self.app.theme_changed_signal, self._recolour)
        self.action_refresh()

    def action_refresh(self) -> None:
        self._status("loading RunPod's GPU list…")
        self._load()

    @in_thread(group="gpu-types", description="loading GPU types", exclusive=True)
    def _load(self) -> None:
        try:
            catalogue = self.needs.services.api.gpu_types()
        except ApiError as e:
            self.app.call_from_thread(self._status, f"cannot load GPU types: {e}", True)
            return
        self.app.call_from_thread(self._loaded, catalogue)

    def show_failure(self, line: str) -> None:
        self._status(f"cannot load GPU types: {line}", True)

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(visible(text))
        status.set_class(error, "-error")

    def _loaded(self, catalogue: GpuCatalogue) -> None:
        self.catalogue = catalogue = visible_fields(catalogue)  # names as RunPod sent them, made safe to show
        problems = (
            f"; {len(catalogue.problems)} problem{'s' if len(catalogue.problems) > 1 else ''} in RunPod's list: "
            + "; ".join(catalogue.problems[:3])
            if catalogue.problems
            else ""
        )
        self._status(f"{len(catalogue.types)} GPU types{problems}", bool(catalogue.problems))
        self._update()

    # --- the estimate and the table -----------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "model":
            self._update()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "method":
            self._update()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    def _update(self) -> None:
        text = self.query_one("#model", Input).value.strip()
        method = Method(str(self.query_one("#method", Select).value))
        self.advice = None
        note = ""
        if text:
            try:
                need = estimate(parse_params(text), method)
            except ValueError as e:
                note = str(e)
            else:
                if self.catalogue is not None:
                    self.advice = advise(self.catalogue, need)
                note = "\n".join(need.lines())
        else:
            note = "Type a model size (e.g. 7B) and pick a method: the GPUs that fit it cheapest get a ★."
        self.query_one("#estimate", Static).update(note)
        self.query_one("#advice", Static).update("\n".join(self.advice.explanation[1:]) if self.advice else "")
        self._fill()

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        keep = self.selected_gpu.id if self.selected_gpu else None
        if self.catalogue is None:
            table.clear()
            return
        marks = self._marks()
        _, best, _ = marks
        self.query_one("#title", Static).update(TITLE_ADVISED if self.advice else TITLE)
        palette = colours.palette(self.app)
        rows: list[tuple[str, tuple[Cell, ...]]] = []
        for g in self.catalogue.types:
            # prices and stock for the count the job needs on this type (one GPU when it does not fit)
            n = (self.advice.count_for(g.id) if self.advice else None) or 1
            stock = f"{g.stock_for(Cloud.COMMUNITY, n).label}/{g.stock_for(Cloud.SECURE, n).label}"
            cells = (f"{g.memory_gb} GB", str(n), _price(g.community_price, n), _price(g.secure_price, n), stock)
            rows.append((g.id, (*_marked(g, marks, palette), *cells)))
        fill_measured(table, COLUMNS, rows)
        if keep is not None or best is not None:
            target = best if self.advice and best else keep
            ids = [g.id for g in self.catalogue.types]
            if target in ids:
                table.move_cursor(row=ids.index(target))
        self._where()

    def _marks(self) -> Marks:
        if self.advice is None:
            return set(), None, None
        best = self.advice.best.gpu.id if self.advice.best else None
        return (self.advice.recommended_ids, best, {o.gpu.id for opts in self.advice.by_kind.values() for o in opts})

    def _recolour(self, _theme: object) -> None:
        """A new theme: the stars and names again, in place (the cursor and scroll stay)."""
        if self.catalogue is None:
            return
        table, marks, palette = self.query_one(DataTable), self._marks(), colours.palette(self.app)
        for g in self.catalogue.types:
            if g.id in table.rows:
                for (column, _), value in zip(COLUMNS, _marked(g, marks, palette), strict=False):
                    table.update_cell(g.id, column, value)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._where()

    def _where(self) -> None:
        """Where the highlighted type is free, for the count its row shows, on each cloud that carries it."""
        gpu = self.selected_gpu
        line = self.query_one("#where", Static)
        if gpu is None:
            line.update("")
            return
        n = (self.advice.count_for(gpu.id) if self.advice else None) or 1
        what = gpu.display_name if n == 1 else f"{n} x {gpu.display_name}"
        clouds = "  ·  ".join(
            f"{c.label}: {gpu.where_words(c, n, 4)}"
            for c in (Cloud.COMMUNITY, Cloud.SECURE)
            if gpu.price(c) is not None
        )
        line.update(f"{what} free in  {clouds or 'no cloud carries it'}")

    @property
    def selected_gpu(self) -> GpuType | None:
        if self.catalogue is None:
            return None
        table = self.query_one(DataTable)
        if table.row_count == 0 or table.cursor_row < 0:
            return None
        row = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((g for g in self.catalogue.types if g.id == row), None)

    # --- actions ------------------------------------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_create()

    def action_create(self) -> None:
        from podtui.ui.screens.create_pod import CreatePodScreen

        if self.catalogue is None:
            self.notify("the GPU list has not loaded yet", severity="warning")
            return
        gpu = self.selected_gpu
        # the advised count and cloud for the type under the cursor, starred or not; one GPU when it does not fit
        option = self.advice.option_for(gpu.id) if self.advice and gpu else None
        count, cloud = (option.count, Cloud(option.kind.upper())) if option else (1, None)
        self.needs.open_screen(
            CreatePodScreen(self.catalogue, gpu.id if gpu else None, count, cloud), ("create",), self._created
        )

    def _created(self, created: CreatedPod | None) -> None:
        if created is not None and self.app.screen is self:
            self.dismiss()  # back to the pods, where the new one is starting

    def action_focus_model(self) -> None:
        self.set_focus(self.query_one("#model", Input))  # at once: the size typed right after the key goes in

    def action_back(self) -> None:
        if isinstance(self.focused, Input):  # escape leaves the box first, then the screen
            self.set_focus(self.query_one(DataTable))  # at once: the key typed after it acts on the table
            return
        self.app.pop_screen()
