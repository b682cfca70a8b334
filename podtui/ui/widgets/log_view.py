"""A pod's log on screen: a Line-API view over a bounded buffer, so a log of 100,000 lines scrolls as fast as one
of ten (docs/architecture.md#logs). It follows the end unless the user scrolled up or paused it; a filter shows
only the lines with its words. Lines arrive already safe to show (core/logs.py `shown`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from rich.segment import Segment
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from podtui.core.logs import LogLine
from podtui.ui import colours

KEPT = 100_000  # lines kept; the oldest go first
_TS_WIDTH = 19  # 2026-12-01T09:30:00: the time to the second, the rest of RunPod's stamp left off
_SHORT_TS = slice(11, 19)  # 09:30:00: the time alone, where the view is narrow
NARROW = 100  # below this many columns the day is left off the stamps


class LogView(ScrollView, can_focus=True):
    DEFAULT_CSS = """
    LogView { height: 1fr; scrollbar-size-vertical: 1; }
    """

    def __init__(self, *, kept: int = KEPT, id: str | None = None) -> None:
        super().__init__(id=id)
        self._lines: deque[LogLine] = deque(maxlen=kept)
        self._query = ""
        self._shown: list[LogLine] = []  # the lines the filter lets through, in order
        self._widest = 0
        self.paused = False
        self.following = True  # at the end, moving with it: until the user scrolls up
        self.held = 0  # lines that came while paused, not shown yet
        self.show_source = True

    # --- lines in ------------------------------------------------------------------------------------

    def add(self, lines: Iterable[LogLine]) -> None:
        """New lines at the end. While paused they are kept but not shown (the view holds still to be read)."""
        new = list(lines)
        if not new:
            return
        dropped = max(0, len(self._lines) + len(new) - (self._lines.maxlen or 0))
        self._lines.extend(new)
        if self.paused:
            self.held += len(new)
            return
        if dropped:  # the buffer's oldest went: the shown list is made again from it
            self._refilter()
            return
        added = [line for line in new if self._matches(line)]
        self._shown.extend(added)
        self._widest = max([self._widest, *(self._width(line) for line in added)])
        self._resize()

    def clear(self) -> None:
        self._lines.clear()
        self._shown.clear()
        self._widest = self.held = 0
        self.following = True
        self._resize()

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        if not paused and self.held:
            self.held = 0
            self._refilter()

    def set_query(self, query: str) -> None:
        self._query = query.strip().lower()
        self._refilter()

    @property
    def words(self) -> str:
        """The filter's words (lower case)."""
        return self._query

    @property
    def shown(self) -> list[LogLine]:
        return self._shown

    @property
    def kept(self) -> int:
        return len(self._lines)

    def text(self) -> str:
        """What is shown, one line each, for saving."""
        return "".join(f"{line.ts} {line.source} {line.text}\n" for line in self._shown)

    def _matches(self, line: LogLine) -> bool:
        return not self._query or all(word in line.text.lower() for word in self._query.split())

    def _refilter(self) -> None:
        self._shown = [line for line in self._lines if self._matches(line)]
        self._widest = max((self._width(line) for line in self._shown), default=0)
        self._resize()

    def _width(self, line: LogLine) -> int:
        return self._stamp_width + 1 + (10 if self.show_source else 0) + len(line.text)

    @property
    def _narrow(self) -> bool:
        return self.size.width < NARROW

    @property
    def _stamp_width(self) -> int:
        return _SHORT_TS.stop - _SHORT_TS.start if self._narrow else _TS_WIDTH

    def _stamp(self, ts: str) -> str:
        return ts[_SHORT_TS] if self._narrow and len(ts) >= _TS_WIDTH else ts[:_TS_WIDTH]

    def on_resize(self) -> None:
        """Narrower or wider than NARROW: the stamps' width changed, and the lines' with them."""
        widest = max((self._width(line) for line in self._shown), default=0)
        if widest != self._widest:
            self._widest = widest
            self._resize()

    def _resize(self) -> None:
        self.virtual_size = Size(self._widest, len(self._shown))
        if self.following:  # once the new size is laid out
            self.call_after_refresh(self.scroll_end, animate=False, x_axis=False)
        self.refresh()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        # a scroll away from the end (the user's) stops following; one back to it follows again
        self.following = new >= self.max_scroll_y

    # --- drawing -------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        index = scroll_y + y
        if index >= len(self._shown):
            return Strip.blank(width, self.rich_style)
        line = self._shown[index]
        st = colours.palette(self.app).style
        base = self.rich_style  # the widget's background under every part of the line
        segments = [Segment(self._stamp(line.ts) + " ", base + st("muted"))]
        if self.show_source:
            source = st("warn") if line.source == "system" else st("muted")
            segments.append(Segment(f"{line.source[:9]:<9} ", base + source))
        segments.append(Segment(line.text, self.rich_style))
        return Strip(segments).crop_extend(scroll_x, scroll_x + width, self.rich_style)
