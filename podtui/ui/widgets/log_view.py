"""A pod's log on screen: a Line-API view over a bounded buffer, so a log of 100,000 lines scrolls as fast as one
of ten (docs/architecture.md#logs). It follows the end unless the user scrolled up or paused it; a filter shows
only the lines with its words. Lines arrive already safe to show (core/logs.py `shown`)."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
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
        # the lines the filter lets through, in order: a deque, as the oldest leave it when the buffer is full
        self._shown: deque[LogLine] = deque()
        self._widest = 0
        self.paused = False
        self.following = True  # at the end, moving with it: until the user scrolls up
        self.held = 0  # lines that came while paused, not shown yet
        self.show_source = True
        # base, muted, warn, found: set while a frame is drawn
        self._frame_styles: tuple[Style, Style, Style, Style] | None = None
        self.found = ""  # what find looks for (lower case): highlighted in the lines shown
        self.found_at: int | None = None  # the shown line find last went to

    # --- lines in ------------------------------------------------------------------------------------

    def add(self, lines: Iterable[LogLine]) -> None:
        """New lines at the end. While paused they are kept but not shown (the view holds still to be read)."""
        new = list(lines)
        if not new:
            return
        dropped = max(0, len(self._lines) + len(new) - (self._lines.maxlen or 0))
        if self.paused:
            self._lines.extend(new)
            self.held += len(new)
            return
        if dropped >= len(self._lines):  # a batch bigger than the buffer: it is all new
            self._lines.extend(new)
            self._refilter()
            return
        # the oldest lines leave the buffer, and those of them shown leave the front of the shown lines (the two
        # keep the same order): a full buffer costs a batch no more than a filling one
        gone = sum(1 for line in itertools.islice(self._lines, dropped) if self._matches(line))
        self._lines.extend(new)
        for _ in range(gone):
            self._shown.popleft()
        added = [line for line in new if self._matches(line)]
        self._shown.extend(added)
        stamp = self._stamp_width
        self._widest = max([self._widest, *(self._width(line, stamp) for line in added)])
        self._resize()

    def clear(self) -> None:
        self.found_at = None
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
        self.found_at = None  # the shown lines change: find starts again from the view
        self._refilter()

    @property
    def last_id(self) -> str | None:
        """The id of the newest line kept, to go on after it; None when there is none to send back."""
        return (self._lines[-1].event_id or None) if self._lines else None

    @property
    def words(self) -> str:
        """The filter's words (lower case)."""
        return self._query

    @property
    def shown(self) -> deque[LogLine]:
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
        self._shown = deque(line for line in self._lines if self._matches(line))
        stamp = self._stamp_width
        self._widest = max((self._width(line, stamp) for line in self._shown), default=0)
        self._resize()

    def _width(self, line: LogLine, stamp: int) -> int:
        return stamp + 1 + (10 if self.show_source else 0) + len(line.text)

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
        stamp = self._stamp_width
        widest = max((self._width(line, stamp) for line in self._shown), default=0)
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

    def render_lines(self, crop: Region) -> list[Strip]:
        """A frame's lines: the styles are worked out once a frame, not for each line (docs/architecture.md#logs)."""
        st = colours.palette(self.app).style
        base = self.rich_style  # the widget's background under every part of the line
        self._frame_styles = (base, base + st("muted"), base + st("warn"), base + Style(reverse=True))
        try:
            return super().render_lines(crop)
        finally:
            self._frame_styles = None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        styles = self._frame_styles
        if styles is None:  # drawn outside a frame (a test, a benchmark)
            st = colours.palette(self.app).style
            b = self.rich_style
            styles = (b, b + st("muted"), b + st("warn"), b + Style(reverse=True))
        base, muted, warn, found = styles
        index = scroll_y + y
        if index >= len(self._shown):
            return Strip.blank(width, base)
        line = self._shown[index]
        segments = [Segment(self._stamp(line.ts) + " ", muted)]
        if self.show_source:
            segments.append(Segment(f"{line.source[:9]:<9} ", warn if line.source == "system" else muted))
        segments.extend(self._marked(line.text, base, found))
        return Strip(segments).crop_extend(scroll_x, scroll_x + width, base)

    def _marked(self, text: str, base: Style, found: Style) -> list[Segment]:
        """The line's text, what find looks for in it shown reversed."""
        needle = self.found
        if not needle:
            return [Segment(text, base)]
        lower = text.lower()
        if len(lower) != len(text):  # a letter whose lower case is longer (İ): the places would not match
            return [Segment(text, base)]
        out, at = [], 0
        while (hit := lower.find(needle, at)) >= 0:
            out += [Segment(text[at:hit], base), Segment(text[hit : hit + len(needle)], found)]
            at = hit + len(needle)
        out.append(Segment(text[at:], base))
        return out

    # --- find ----------------------------------------------------------------------------------------

    def find(self, text: str, forward: bool = True) -> bool:
        """Go to the next (or previous) shown line holding `text`, from the one find last went to or the view's
        top, round the end; False when no shown line holds it. The view stops following, to stay on it."""
        self.found = text.strip().lower()
        if not self.found or not self._shown:
            self.refresh()
            return False
        n = len(self._shown)
        top = int(self.scroll_y)
        start = self.found_at if self.found_at is not None and self.found_at < n else (top - 1 if forward else top)
        step = 1 if forward else -1
        for k in range(1, n + 1):
            i = (start + step * k) % n
            if self.found in self._shown[i].text.lower():
                self.found_at = i
                self.following = False
                self.scroll_to(y=max(0, i - self.size.height // 3), animate=False)
                self.refresh()
                return True
        self.refresh()
        return False
