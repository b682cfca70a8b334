"""The pod list, drawn line by line (Textual's Line API) from cached strips.

Textual's DataTable renders every visible cell through Rich and drops all of its caches whenever one cell
changes; at 1,000 pods one refresh cost ~300 ms here (bench/pod_list.py). This table keeps a strip per
row keyed by the row's content, so a poll re-draws only rows whose figures moved, and sizes its columns
from its own cells instead of measuring them.

The columns fit the widget's own width (it may share the screen with a pane), again whenever it is resized:
narrower forms first, then the columns of least priority left out (`pod_view.fit`), so the list never scrolls
sideways while the name alone fits.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from podtui.core.pod import Pod
from podtui.ui import colours, keymap
from podtui.ui.pod_view import (
    AT_ZERO,
    AUTOSTOP,
    COLUMNS,
    CONSOLE,
    LOCKED,
    MARKS,
    PICKED,
    Cell,
    Cells,
    Layout,
    Span,
    arrange,
    fit,
    headings,
    marks_cell,
    measure,
    pod_marks,
    row_cells,
)

PAD = 1  # spaces either side of every cell


class PodTable(ScrollView, can_focus=True):
    COMPONENT_CLASSES = {"pod-table--header", "pod-table--cursor", "pod-table--even-row"}
    BINDINGS = keymap.bindings("pod-table")

    cursor_row: reactive[int] = reactive(0, always_update=True, repaint=False)

    class Selected(Message):
        """Enter (or a second click) on a pod."""

        def __init__(self, pod: Pod) -> None:
            super().__init__()
            self.pod = pod

    class SortRequested(Message):
        """A click on a column heading."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cells: Mapping[str, Cells] = {}  # every pod's cells, visible or filtered out
        self._order: list[str] = []
        self._pods: dict[str, Pod] = {}
        self._spans: tuple[Span, ...] = ()
        self._layout: Layout = ()  # the columns shown and their widths
        self._marked: tuple[frozenset[str], ...] = tuple(frozenset() for _ in MARKS)  # pod ids, for each of MARKS
        self.picked: frozenset[str] = frozenset()  # the pods marked for a stop or terminate of several
        self._slots: tuple[int, ...] = ()  # the MARKS some pod in the list has: the marks column's cells
        self._marks: dict[str, Cell] = {}  # the marked pods' marks
        self._strips: LRUCache[tuple[object, ...], Strip] = LRUCache(1024)
        self.sort_key = "name"
        self._palette = colours.CLASSIC  # the app's, from on_mount
        self.sort_reverse = False
        self.filter_text = ""

    # --- data ----------------------------------------------------------------------------------------

    @property
    def selected_pod(self) -> Pod | None:
        if 0 <= self.cursor_row < len(self._order):
            return self._pods.get(self._order[self.cursor_row])
        return None

    @property
    def visible_ids(self) -> list[str]:
        return list(self._order)

    def picked_shown(self) -> list[Pod]:
        """The marked pods the filter shows, in the order shown: the ones a stop or terminate of several acts on."""
        return [self._pods[pid] for pid in self._order if pid in self.picked]

    @property
    def picked_hidden(self) -> int:
        """How many marked pods the filter hides: left out of a stop or terminate, and still marked."""
        return len(self.picked - set(self._order))

    def show(self, pods: Sequence[Pod], cells: Mapping[str, Cells] | None = None) -> None:
        """Bring the table in line with `pods`, keeping the cursor on the same pod.

        `cells` are the pods' rows built beforehand (the poll worker builds them off the event loop);
        without them they are built here.
        """
        selected = self._order[self.cursor_row] if 0 <= self.cursor_row < len(self._order) else None
        had_rows = bool(self._order)
        self._pods = {p.id: p for p in pods}
        self._cells = cells if cells is not None else {p.id: row_cells(p) for p in pods}
        arranged = arrange(pods, self.filter_text, self.sort_key, self.sort_reverse)
        self._order = [p.id for p in arranged]
        self.picked &= self._pods.keys()  # a pod gone from the account is unmarked
        self._marked = self._with_own_marks(self._marked)
        self._place_marks()
        self._measure()
        self._fit()
        if selected in self._pods and selected in self._order:
            self.cursor_row = self._order.index(selected)
        else:
            self.cursor_row = min(self.cursor_row, max(0, len(self._order) - 1))
        if bool(self._order) != had_rows:
            self.refresh_bindings()  # the screen's pod actions (check_action) need a pod under the cursor
        self.refresh()

    @property
    def shown_columns(self) -> tuple[str, ...]:
        """The keys of the columns on screen now, left to right."""
        return tuple(COLUMNS[i].key for i, _ in self._layout)

    def _with_own_marks(self, marked: tuple[frozenset[str], ...]) -> tuple[frozenset[str], ...]:
        """`marked` with the picked pods and the marks the pods carry of themselves (locked, data deleted at $0)."""
        own = {pid: pod_marks(p) for pid, p in self._pods.items()}
        out = list(marked)
        out[PICKED] = self.picked
        out[LOCKED] = frozenset(pid for pid, (locked, _) in own.items() if locked)
        out[AT_ZERO] = frozenset(pid for pid, (_, at_zero) in own.items() if at_zero)
        return tuple(out)

    def set_picked(self, ids: Collection[str]) -> None:
        """Mark these pods (by id) for a stop or terminate of several; pods not in the list are left out."""
        self.picked = frozenset(ids) & self._pods.keys()
        self.set_marks(self._marked[CONSOLE], self._marked[AUTOSTOP])

    def set_marks(self, consoles: Collection[str], autostop: Collection[str]) -> None:
        """Mark the pods (by id) with a console open and those with podtui's autostop on (pod_view.MARKS)."""
        given = list(self._marked)
        given[CONSOLE], given[AUTOSTOP] = frozenset(consoles), frozenset(autostop)
        marked = self._with_own_marks(tuple(given))
        if marked != self._marked:
            self._marked = marked
            if self._place_marks():
                self._fit()  # the marks column came, went or changed width
            self.refresh()

    def _place_marks(self) -> bool:
        """Each marked pod's marks; whether the marks column changed width."""
        slots = tuple(k for k, ids in enumerate(self._marked) if not ids.isdisjoint(self._pods))
        self._marks = {
            pid: marks_cell([pid in ids for ids in self._marked], slots)
            for pid in set().union(*self._marked)
            if pid in self._pods
        }
        changed = len(slots) != len(self._slots)
        self._slots = slots
        return changed

    @property
    def _marks_room(self) -> int:
        return len(self._slots) + PAD if self._slots else 0  # its glyphs after a pad; the name's pad follows

    def _measure(self) -> None:
        self._spans = measure((self._cells[pid] for pid in self._order), self._headings())

    def _fit(self) -> None:
        """Lay the columns out in the widget's width, less a vertical scrollbar when the rows need one."""
        width, height = self.container_size
        room: int | None = None
        if width > 0:
            scrollbar = self.styles.scrollbar_size_vertical if len(self._order) + 1 > height else 0
            room = width - scrollbar - self._marks_room
        self._layout = fit(self._spans, room, PAD)
        self.virtual_size = Size(self._marks_room + sum(w + 2 * PAD for _, w in self._layout), len(self._order) + 1)

    def on_resize(self, _event: events.Resize) -> None:
        self._fit()
        self.refresh()

    def set_sort(self, key: str, reverse: bool) -> None:
        self.sort_key, self.sort_reverse = key, reverse
        self.show(list(self._pods.values()), self._cells)

    def set_query(self, query: str) -> None:
        self.filter_text = query
        self.show(list(self._pods.values()), self._cells)

    def _headings(self) -> Cells:
        return headings(self.sort_key, self.sort_reverse)

    # --- drawing -------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self._palette = colours.palette(self.app)
        self.app.theme_changed_signal.subscribe(self, self._recolour)

    def _recolour(self, _theme: object) -> None:
        """A new theme: its colours for the states, in every row already drawn."""
        self._palette = colours.palette(self.app)
        self._strips.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def _row_strip(self, cells: Cells, marks: Cell | None, base: Style, cursor: bool) -> Strip:
        palette = self._palette
        segments: list[Segment] = []
        pad = Segment(" " * PAD, base)

        def styled(spec: str) -> Style:
            # On the cursor row the cursor's colours win; elsewhere the cell's own colours do.
            return palette.style(spec) + base if cursor else base + palette.style(spec)

        if self._slots:
            segments.append(pad)
            if marks is None:  # the heading, or a pod with no marks
                segments.append(Segment(" " * len(self._slots), base))
            else:
                segments.extend(Segment(text, styled(spec)) for text, spec in marks.parts)
        for i, width in self._layout:
            c = cells[i].fit(width)
            segments.append(pad)
            length = c.width
            parts = c.parts
            if length > width:  # the least a column takes is narrower than this value: keep its start
                parts = ((set_cell_size(c.plain, width - 1) + "…", parts[0][1]),)
                length = width
            fill = Segment(" " * (width - length), base)
            if c.right:
                segments.append(fill)
            segments.extend(Segment(text, styled(spec)) for text, spec in parts)
            if not c.right:
                segments.append(fill)
            segments.append(pad)
        return Strip(segments, self._marks_room + sum(w + 2 * PAD for _, w in self._layout))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        marks: Cell | None = None
        if y == 0:
            base = self.get_component_rich_style("pod-table--header")
            cells = self._headings()
            key: tuple[object, ...] = ("header", cells, self._layout, self._slots, base, self._palette)
            cursor = False
        else:
            index = scroll_y + y - 1
            if index >= len(self._order):
                return Strip.blank(width, self.rich_style)
            cursor = index == self.cursor_row
            if cursor:
                base = self.get_component_rich_style("pod-table--cursor")
            elif index % 2:
                base = self.get_component_rich_style("pod-table--even-row")
            else:
                base = self.rich_style
            pid = self._order[index]
            cells = self._cells[pid]
            marks = self._marks.get(pid)
            key = (cells, marks, self._layout, self._slots, base, cursor, self._palette)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._row_strip(cells, marks, base, cursor)
            self._strips[key] = strip
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    # --- cursor and keys -----------------------------------------------------------------------------

    def watch_cursor_row(self, old: int, new: int) -> None:
        if self._order:
            clamped = max(0, min(new, len(self._order) - 1))
            if clamped != new:
                self.cursor_row = clamped
                return
        self._scroll_cursor_into_view()
        self.refresh()

    def _scroll_cursor_into_view(self) -> None:
        rows_shown = max(1, self.scrollable_content_region.height - 1)  # the header takes a line
        top = round(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + rows_shown:
            self.scroll_to(y=self.cursor_row - rows_shown + 1, animate=False)

    def action_cursor(self, delta: int) -> None:
        if self._order:
            self.cursor_row = max(0, min(len(self._order) - 1, self.cursor_row + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.scrollable_content_region.height - 2))

    def action_jump(self, where: int) -> None:
        if self._order:
            self.cursor_row = 0 if where == 0 else len(self._order) - 1

    def action_select(self) -> None:
        pod = self.selected_pod
        if pod is not None:
            self.post_message(self.Selected(pod))

    def on_click(self, event: events.Click) -> None:
        y = event.y
        if y == 0:
            x = event.x + round(self.scroll_x) - self._marks_room
            if x < 0:
                return  # the marks column sorts nothing
            for i, width in self._layout:
                x -= width + 2 * PAD
                if x < 0:
                    self.post_message(self.SortRequested(COLUMNS[i].key))
                    return
            return
        index = round(self.scroll_y) + y - 1
        if 0 <= index < len(self._order):
            if index == self.cursor_row or event.chain > 1:
                self.cursor_row = index
                self.action_select()
            else:
                self.cursor_row = index
