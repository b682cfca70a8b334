"""A breakdown drawn as bars: one line per row, its label, its amount and a bar as long as its share of the largest
(docs/spend.md#the-spend-view). The rows' text comes made visible (the screen passes it through `visible`)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from podtui.core.bars import EIGHTHS, bar_text
from podtui.core.spend import Row

AMOUNT_W = 12  # at least: a space, "$12,345.67" and a space (wider for larger amounts)
MIN_BAR = 12


def _money(amount: float) -> str:
    return f"${amount:,.2f}"


def _cut(text: str, width: int) -> str:
    if cell_len(text) <= width:
        return text
    out = ""
    for ch in text:
        if cell_len(out + ch) > width - 1:
            break
        out += ch
    return out + "…"


class SpendBars(Widget):
    """The rows of one breakdown, largest first, each with its bar and amount."""

    COMPONENT_CLASSES = {"spend-bars--bar", "spend-bars--other", "spend-bars--note", "spend-bars--amount"}
    DEFAULT_CSS = """
    SpendBars { height: auto; padding: 0 1; }
    SpendBars > .spend-bars--bar { color: $accent; }
    SpendBars > .spend-bars--other { color: $text-muted; }
    SpendBars > .spend-bars--note { color: $text-muted; }
    SpendBars > .spend-bars--amount { text-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: tuple[Row, ...] = ()
        self.empty = ""

    def show(self, rows: Sequence[Row], empty: str = "") -> None:
        self.rows, self.empty = tuple(rows), empty
        self.refresh(layout=True)

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return max(1, len(self.rows))

    def render(self) -> Text:
        if not self.rows:
            return Text(self.empty, style=self.get_component_rich_style("spend-bars--note"))
        # the scrollbar, when there are more rows than room, is drawn over the rows' last cells: kept clear of it
        width = max(20, (self.content_region.width or 80) - 2)
        name_w = min(max(cell_len(r.label) for r in self.rows), max(10, width * 3 // 10))
        amount_w = max(AMOUNT_W, max(len(_money(r.amount)) for r in self.rows) + 2)
        note_w = min(max(cell_len(r.note) for r in self.rows), width // 4)
        if width - name_w - amount_w - note_w - 2 < MIN_BAR:
            note_w = max(0, width - name_w - amount_w - 2 - MIN_BAR)
        if note_w < 6:
            note_w = 0  # no room for a note worth reading
        bar_w = max(1, width - name_w - amount_w - (note_w + 2 if note_w else 0))
        most = max((r.amount for r in self.rows), default=0.0)
        bar_style = self.get_component_rich_style("spend-bars--bar")
        other_style = self.get_component_rich_style("spend-bars--other")
        note_style = self.get_component_rich_style("spend-bars--note")
        amount_style = self.get_component_rich_style("spend-bars--amount")
        out = Text(no_wrap=True, overflow="ellipsis")
        for i, row in enumerate(self.rows):
            if i:
                out.append("\n")
            name = _cut(row.label, name_w)
            out.append(name + " " * (name_w - cell_len(name)), style=other_style if row.other else "")
            if note_w:
                note = _cut(row.note, note_w)
                out.append("  " + note + " " * (note_w - cell_len(note)), style=note_style)
            out.append(f"{_money(row.amount):>{amount_w - 1}} ", style=amount_style)
            _bar(out, bar_text(row.amount, most, bar_w), other_style if row.other else bar_style)
        return out


def _bar(out: Text, bar: str, style: Style) -> None:
    """Whole cells as spaces on the bar's colour (a font draws "█" a little wider than a cell, and a bar of them
    runs past the box's border), the last eighths as a glyph."""
    whole = bar.rstrip(EIGHTHS[1:8])
    out.append(" " * len(whole), style=Style(bgcolor=style.color))
    out.append(bar[len(whole) :], style=style)
