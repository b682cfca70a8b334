"""One interface over the terminal engines, so the widget never cares which one parses the bytes.

This module says what an engine must do; `engines.py` says which engines exist and picks one.

libghostty-vt (through pyghostty) is the fast one and has native wheels for Linux and Apple-silicon macOS;
asciinema's avt (through pyavt) has wheels everywhere else. Both are real VT parsers: podtui writes none.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from podtui.console.cells import Cursor, Row, row_cells, row_text

STYLE_CACHE = 4096  # distinct styles remembered; a program drawing true-colour gradients would make endless ones


@dataclass(frozen=True)
class Modes:
    """The terminal modes the remote program has asked for; keys, mouse and paste are encoded by them."""

    app_cursor: bool = False  # DECCKM: arrows send ESC O A
    app_keypad: bool = False  # DECKPAM
    bracketed_paste: bool = False  # 2004
    mouse: int = 0  # 0 off, 9 X10, 1000 press/release, 1002 drag, 1003 any motion
    mouse_sgr: bool = False  # 1006
    focus_events: bool = False  # 1004
    alt_screen: bool = False  # 1049/1047/47
    cursor_visible: bool = True  # 25
    kitty_flags: int = 0  # kitty keyboard protocol progressive-enhancement flags


class Frame(NamedTuple):
    rows: list[Row]  # the visible rows, top to bottom
    changed: frozenset[int]  # rows that differ from the previous frame
    cursor: Cursor | None  # None while scrolled back into history
    offset: int  # how many lines the view is scrolled back
    history: int  # lines of scrollback available


Reply = Callable[[bytes], None]


class Emulator(ABC):
    """A screen fed with bytes. Every public method is safe to call from any thread."""

    name: str
    # Whether a character of no width gets a cell of its own (avt) or joins the cell before it (libghostty): the
    # widget draws such a character, when it is one a terminal would act on, in the columns the engine gave it.
    zero_width_own_cell = False

    def __init__(self, cols: int, rows: int, scrollback: int, on_reply: Reply | None = None) -> None:
        self.cols, self.rows, self.scrollback = max(cols, 2), max(rows, 1), max(scrollback, 0)
        self.on_reply = on_reply
        self.lock = threading.RLock()
        self.bytes_fed = 0

    def feed(self, data: bytes) -> None:
        if not data:
            return
        with self.lock:
            self.bytes_fed += len(data)
            self._feed(data)

    def resize(self, cols: int, rows: int) -> None:
        cols, rows = max(cols, 2), max(rows, 1)
        with self.lock:
            if (cols, rows) != (self.cols, self.rows):
                self.cols, self.rows = cols, rows
                self._resize(cols, rows)

    def frame(self) -> Frame:
        with self.lock:
            return self._frame()

    def scroll(self, delta: int) -> None:
        """Move the view by delta lines: negative goes back into history."""
        with self.lock:
            self._scroll(delta)

    def scroll_to_bottom(self) -> None:
        with self.lock:
            self._scroll_to_bottom()

    def modes(self) -> Modes:
        with self.lock:
            return self._modes()

    def text(self) -> str:
        """Everything: scrollback then screen, as plain text with trailing blanks trimmed."""
        with self.lock:
            return self._text()

    def screen_lines(self) -> list[str]:
        """The visible rows as plain text, for tests and for what the user sees."""
        return [row_text(r).rstrip() for r in self.frame().rows]

    def cell(self, x: int, y: int) -> tuple[str, object]:
        cells = row_cells(self.frame().rows[y])
        return cells[x] if x < len(cells) else (" ", None)

    # --- what an engine implements ------------------------------------------------------------------

    @abstractmethod
    def _feed(self, data: bytes) -> None: ...
    @abstractmethod
    def _resize(self, cols: int, rows: int) -> None: ...
    @abstractmethod
    def _frame(self) -> Frame: ...
    @abstractmethod
    def _scroll(self, delta: int) -> None: ...
    @abstractmethod
    def _scroll_to_bottom(self) -> None: ...
    @abstractmethod
    def _modes(self) -> Modes: ...
    @abstractmethod
    def _text(self) -> str: ...
