"""asciinema's avt through pyavt: the engine for platforms pyghostty has no wheel for."""

from __future__ import annotations

import codecs
from typing import Any

import avt

from podtui.console.cells import CellStyle, Color, Cursor, Row
from podtui.console.emulator import STYLE_CACHE, Emulator, Frame, Modes, Reply
from podtui.console.mode_tracker import ModeTracker


def _color(c: Any) -> Color:
    if c is None:
        return None
    if isinstance(c, avt.Color.Indexed):
        return int(c[0])
    return (int(c[0]), int(c[1]), int(c[2]))


def _style(pen: Any) -> CellStyle:
    return CellStyle(
        fg=_color(pen.foreground),
        bg=_color(pen.background),
        bold=pen.bold,
        dim=pen.faint,
        italic=pen.italic,
        underline=pen.underline,
        blink=pen.blink,
        reverse=pen.inverse,
        strike=pen.strikethrough,
    )


class AvtEmulator(Emulator):
    name = "avt"
    zero_width_own_cell = True

    def __init__(self, cols: int, rows: int, scrollback: int, on_reply: Reply | None = None) -> None:
        super().__init__(cols, rows, scrollback, on_reply)
        self._vt = avt.Vt(self.cols, self.rows, scrollback_limit=self.scrollback)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._tracker = ModeTracker()
        self._changed: set[int] = set(range(self.rows))
        self._rows: list[Row] = [()] * self.rows
        self._styles: dict[str, CellStyle] = {}
        self._offset = 0
        self._history = 0  # as of the last frame, to keep a scrolled-back view still while output arrives
        self._view_moved = False

    def _feed(self, data: bytes) -> None:
        text = self._decoder.decode(data)
        if text:
            changed, _dropped = self._vt.feed_str(text)
            self._changed.update(changed)
        self._tracker.scan(data, self.on_reply, self._cursor_xy)

    def _cursor_xy(self) -> tuple[int, int]:
        c = self._vt.cursor
        return int(c.col), int(c.row)

    def _resize(self, cols: int, rows: int) -> None:
        self._vt.resize(cols, rows)
        self._changed = set(range(rows))
        self._rows = [()] * rows

    def _new_style(self, key: str, pen: Any) -> CellStyle:
        if len(self._styles) >= STYLE_CACHE:  # true-colour gradients make endless styles: start over
            self._styles.clear()
        style = self._styles[key] = _style(pen)
        return style

    def _row(self, line: Any) -> Row:
        runs: list[tuple[str, CellStyle]] = []
        chars: list[str] = []
        last = ""
        style = CellStyle()
        styles = self._styles
        for cell in line.cells:
            if cell.width == 0:  # the second column of a wide character
                continue
            pen = cell.pen
            key = repr(pen)
            if key != last:
                if chars:
                    runs.append(("".join(chars), style))
                    chars = []
                style = styles.get(key) or self._new_style(key, pen)
                last = key
            chars.append(cell.char)
        if chars:
            runs.append(("".join(chars), style))
        return tuple(runs)

    def _frame(self) -> Frame:
        if self._offset == 0:
            lines = self._vt.view()
            changed = {y for y in self._changed if y < self.rows}
            if self._view_moved:
                changed = set(range(self.rows))
            for y in changed:
                self._rows[y] = self._row(lines[y])
            history = self._history
        else:
            every = self._vt.lines()
            history = max(len(every) - self.rows, 0)
            self._offset = min(self._offset + max(history - self._history, 0), history)  # stay on the same lines
            start = history - self._offset
            self._rows = [self._row(line) for line in every[start : start + self.rows]]
            changed = set(range(self.rows))
        self._history, self._changed, self._view_moved = history, set(), False
        c = self._vt.cursor
        cursor = Cursor(int(c.col), int(c.row), bool(c.visible)) if self._offset == 0 else None
        return Frame(list(self._rows), frozenset(changed), cursor, self._offset, history)

    def _scroll(self, delta: int) -> None:
        history = max(len(self._vt.lines()) - self.rows, 0)
        new = min(max(self._offset - delta, 0), history)
        if new != self._offset:
            self._offset, self._history, self._view_moved = new, history, True

    def _scroll_to_bottom(self) -> None:
        if self._offset:
            self._offset, self._view_moved = 0, True

    def _modes(self) -> Modes:
        t = self._tracker
        return Modes(
            app_cursor=bool(self._vt.cursor_key_app_mode),
            app_keypad=t.keypad,
            bracketed_paste=2004 in t.set,
            mouse=t.mouse(),
            mouse_sgr=1006 in t.set,
            focus_events=1004 in t.set,
            alt_screen=t.alt_screen(),
            cursor_visible=25 in t.set,
        )

    def _text(self) -> str:
        return "\n".join(line.text.rstrip() for line in self._vt.lines()).rstrip("\n")
