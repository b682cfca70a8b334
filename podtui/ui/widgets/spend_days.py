"""Spend per day as a column chart: one column per UTC day, as tall as its share of the largest day, its amount
above it where the columns are wide enough and the dates below (docs/spend.md#the-spend-view)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

from podtui.core.spend import Row

BLOCKS = " ▁▂▃▄▅▆▇█"


def _short(amount: float) -> str:
    if amount >= 1000:
        return f"${amount / 1000:.1f}k"
    if amount >= 100:
        return f"${amount:.0f}"
    return f"${amount:.2f}"


class SpendDays(Widget):
    """`days` (the by-day rows, oldest first): columns of eighth blocks, the amount on top, the day below."""

    COMPONENT_CLASSES = {"spend-days--bar", "spend-days--label", "spend-days--empty"}
    DEFAULT_CSS = """
    SpendDays { height: 8; padding: 0 1; }
    SpendDays > .spend-days--bar { color: $accent; }
    SpendDays > .spend-days--label { color: $text-muted; }
    SpendDays > .spend-days--empty { color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.days: tuple[Row, ...] = ()

    def show(self, days: Sequence[Row]) -> None:
        self.days = tuple(days)
        self.refresh()

    def render(self) -> Text:
        width, height = self.content_size.width or 60, self.content_size.height or 6
        bar_style = self.get_component_rich_style("spend-days--bar")
        label_style = self.get_component_rich_style("spend-days--label")
        if not self.days:
            return Text("no days yet", style=self.get_component_rich_style("spend-days--empty"))
        n = len(self.days)
        col = max(1, min(16, width // n))
        gap = 1 if col >= 3 else 0
        bar_w = col - gap
        # the columns spread over the whole width (30 columns of 2 in 76 cells would leave 16 empty at the right)
        spread = min(width, 16 * n)
        starts = [i * spread // n for i in range(n)]
        numbers = col >= 7  # "$12.34" and a gap
        rows = max(1, height - 1 - (1 if numbers else 0))
        most = max(d.amount for d in self.days)
        lines: list[Text] = []
        if numbers:
            top = Text(no_wrap=True)
            for d, at in zip(self.days, starts, strict=True):
                top.append(" " * (at - top.cell_len))
                top.append(f"{_short(d.amount) if d.amount > 0 else '':^{bar_w}}"[:bar_w], style=label_style)
            lines.append(top)
        eighths = [round(d.amount / most * rows * 8) if most > 0 else 0 for d in self.days]
        eighths = [max(1, e) if d.amount > 0 else 0 for e, d in zip(eighths, self.days, strict=True)]
        # a whole cell is a space on the bar's colour, not a glyph: fonts draw "█" a little wider or shorter than a
        # cell, which shows as seams between rows and columns that run into each other
        solid = Style(bgcolor=bar_style.color)
        for level in range(rows, 0, -1):
            line = Text(no_wrap=True)
            for e, at in zip(eighths, starts, strict=True):
                line.append(" " * (at - line.cell_len))
                filled = max(0, min(8, e - (level - 1) * 8))
                if filled == 8:
                    line.append(" " * bar_w, style=solid)
                else:
                    line.append(BLOCKS[filled] * bar_w, style=bar_style)
            lines.append(line)
        lines.append(self._labels(starts, spread, bar_w, width, label_style))
        return Text("\n", no_wrap=True).join(lines)

    def _labels(self, starts: Sequence[int], spread: int, bar_w: int, width: int, style: Style) -> Text:
        """The day under its column: "Mon 01" where the columns are wide, else the day of the month; where a label
        needs more than its column, under every other column (or every few), counted back from today's, so that
        labels never run together."""
        texts = []
        for d in self.days:
            day = datetime.strptime(d.key, "%Y-%m-%d").replace(tzinfo=UTC)
            texts.append(f"{day:%a %d}" if bar_w >= 6 else f"{day.day}")
        n = len(texts)
        need = max(len(t) for t in texts) + 1  # a label and a space before the next
        every = next((k for k in range(1, n + 1) if k * spread // n >= need), n)
        out = Text(no_wrap=True)
        for i, (text, at) in enumerate(zip(texts, starts, strict=True)):
            if (n - 1 - i) % every or at < out.cell_len:
                continue
            out.append(" " * (at - out.cell_len))
            out.append(text[: max(0, width - at)], style=style)
        return out
