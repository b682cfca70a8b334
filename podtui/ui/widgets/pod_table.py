"""The pod list: a DataTable kept in step with each snapshot by changing only what changed."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widgets import DataTable

from podtui.core.pod import Pod
from podtui.ui.pod_view import COLUMNS, Cells, arrange, row_cells


class PodTable(DataTable[Text | str]):
    BINDINGS = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g", "scroll_top", "Top", show=False),
        Binding("G", "scroll_bottom", "Bottom", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self._cells: dict[str, Cells] = {}
        self._order: list[str] = []
        self._pods: dict[str, Pod] = {}
        self.sort_key = "name"
        self.sort_reverse = False
        self.filter_text = ""

    def on_mount(self) -> None:
        for column in COLUMNS:
            self.add_column(self._heading(column.key, column.label), key=column.key)

    def _heading(self, key: str, label: str) -> Text:
        if key != self.sort_key:
            return Text(label)
        return Text.assemble(label, (" ▼" if self.sort_reverse else " ▲", "bold"))

    @property
    def selected_pod(self) -> Pod | None:
        if not self._order or self.cursor_row < 0 or self.cursor_row >= len(self._order):
            return None
        return self._pods.get(self._order[self.cursor_row])

    @property
    def visible_ids(self) -> list[str]:
        return list(self._order)

    def show(self, pods: Sequence[Pod]) -> None:
        """Bring the table in line with `pods`, keeping the cursor on the same pod."""
        self._pods = {p.id: p for p in pods}
        arranged = arrange(pods, self.filter_text, self.sort_key, self.sort_reverse)
        order = [p.id for p in arranged]
        selected = self._order[self.cursor_row] if 0 <= self.cursor_row < len(self._order) else None
        new_cells = {p.id: row_cells(p) for p in arranged}
        if order != self._order:
            self.clear(columns=False)
            for pid in order:
                self.add_row(*new_cells[pid], key=pid)
            self._order = order
        else:
            for pid in order:
                old = self._cells.get(pid)
                new = new_cells[pid]
                for column, before, after in zip(COLUMNS, old or (), new, strict=False):
                    if before != after:
                        self.update_cell(pid, column.key, after, update_width=True)
        self._cells = new_cells
        if selected in order:
            self.move_cursor(row=order.index(selected), animate=False)

    async def _on_idle(self, event: events.Idle) -> None:
        # DataTable measures new rows on idle but keys its line cache without column widths, so lines
        # drawn before the measurement would stay narrow. Drop them when the widths move (Textual 8.2).
        widths = [c.content_width for c in self.columns.values()]
        await super()._on_idle(event)
        if widths != [c.content_width for c in self.columns.values()]:
            self._clear_caches()
            self._update_count += 1
            self.refresh()

    def set_sort(self, key: str, reverse: bool) -> None:
        self.sort_key, self.sort_reverse = key, reverse
        for column in COLUMNS:
            self.columns[column.key].label = self._heading(column.key, column.label)  # type: ignore[index]
        self._clear_caches()
        self.refresh()
        self.show(list(self._pods.values()))

    def set_query(self, query: str) -> None:
        self.filter_text = query
        self.show(list(self._pods.values()))
