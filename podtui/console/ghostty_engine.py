"""libghostty-vt through pyghostty: Ghostty's parser, screen and scrollback, read back through its render state.

Reading the render state row by row, and only the rows it marks dirty, keeps the per-frame cost to the cells that
changed. Styles are cached by their raw bytes, so each distinct style is converted once.

Scrollback: libghostty-vt bounds history by lines and by bytes, whichever is reached first, and frees it a page
at a time. A new terminal's byte limit is 10,000 bytes, which kept about 600 rows at 120 columns whatever the line
limit said; and pruning by the line limit parses 3-4x slower than pruning by bytes. So the engine sets no line
limit, and shows exactly the setting: the frame's history, the scroll range and text() stop at `scrollback` lines.
The byte budget follows what the output costs, which libghostty does not report: it starts at a ceiling
(CEILING_PER_CELL bytes a cell of the setting's lines), so every line is kept until there are a little more than
the setting; then it is lowered a page's bytes at a time until libghostty frees pages, which makes it what those
lines cost. From there libghostty frees a page for each page it adds, so heavier output keeps as many lines and
takes the memory they cost; every few MiB of output what is past the ceiling is freed and the budget measured
again. Only pathological output reaches the ceiling, and it keeps fewer lines. See
docs/architecture.md#console-engines.
"""

from __future__ import annotations

import ctypes
import weakref
from typing import Any

from pyghostty import Terminal, ffi, lib
from pyghostty.core import init_sized
from rich.cells import cell_len

from podtui.console.cells import CellStyle, Color, Cursor, Row
from podtui.console.emulator import STYLE_CACHE, Emulator, Frame, Modes, Reply

# scroll_viewport takes a tagged union by value, which cffi's ABI mode cannot pass; a struct with the same layout
# has the same calling convention (pyghostty does the same for grid refs).
ffi.cdef("typedef struct { GhosttyTerminalScrollViewportTag tag; intptr_t delta; uint64_t _pad; } PodtuiScrollS;")
_SCROLL = ffi.cast(
    "GhosttyResult(*)(GhosttyTerminal, PodtuiScrollS)", ffi.addressof(lib, "ghostty_terminal_scroll_viewport")
)
_CELLS_NEXT = lib.ghostty_render_state_row_cells_next
_CELLS_GET_MULTI = lib.ghostty_render_state_row_cells_get_multi


# What a cell of history costs libghostty, by its own accounting: 8.8-9.2 bytes for plain text or a few colours
# (measured from 20 to 1,000 columns); heavy but ordinary output up to ~62 (a combining mark on every character;
# a new 24-bit colour on every character ~55, emoji ~34, a hyperlink on every character ~17). The budget may grow
# to 80 bytes a cell of the setting's lines: all of that fits, with the margin kept past the setting and pages
# rounding up. avt takes 25-37 bytes a cell whatever the output.
CEILING_PER_CELL = 80
_BYTES_PER_ROW = 16
_PAGE_SLACK = 1 << 20
_PAGE_CELLS = 47_000  # cells in one of libghostty's standard pages: freeing one takes about this / cols rows
# A trim lowers the budget about a standard page's bytes at a time: libghostty then frees the oldest page or two,
# never the many light pages that a larger step would take when heavier ones came after them.
_TRIM_STEP = 1 << 19
_CHECK_EVERY = 4 << 20  # output between two checks against the ceiling: at least this, or a 16th of the ceiling


def ceiling_bytes(lines: int, cols: int, rows: int) -> int:
    """The most libghostty-vt may hold for `lines` lines of history at this size, whatever arrives."""
    return (lines + rows) * (cols * CEILING_PER_CELL + _BYTES_PER_ROW) + _PAGE_SLACK


def history_targets(lines: int, cols: int) -> tuple[int, int]:
    """(low, high): the lines of history libghostty is left to keep for a setting of `lines`. Below low the budget
    goes back to the ceiling; above high it is trimmed to what the lines cost. Both are past the setting by more
    than a page, so that what a prune or a trim frees is never within the setting."""
    page = _PAGE_CELLS // cols + 1
    low = lines + 2 * page
    return low, low + max(lines // 8, 2 * page)


def _check(result: int, what: str) -> None:
    if result:
        raise RuntimeError(f"libghostty-vt: {what} failed ({result})")


# A number read or set with the GIL held: it takes a microsecond, and a call that let the GIL go (as cffi's do) would
# wait to take it back behind the UI thread, up to the interpreter's 5 ms switch interval, on every feed.
_HELD = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
_GET = _HELD(int(ffi.cast("uintptr_t", ffi.addressof(lib, "ghostty_terminal_get"))))
_SET = _HELD(int(ffi.cast("uintptr_t", ffi.addressof(lib, "ghostty_terminal_set"))))
_HISTORY = lib.GHOSTTY_TERMINAL_DATA_SCROLLBACK_ROWS
_SCREEN = lib.GHOSTTY_TERMINAL_DATA_ACTIVE_SCREEN
_MAX_BYTES = lib.GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_BYTES


# Bound once here: cffi looks a function up under a lock that is not re-entrant, and a finalizer run by the garbage
# collector while that lock is held (by cffi itself, or by another finalizer) would wait for it forever.
_FREE_CELLS = lib.ghostty_render_state_row_cells_free
_FREE_ITERATOR = lib.ghostty_render_state_row_iterator_free
_FREE_RENDER_STATE = lib.ghostty_render_state_free


def _free_render_state(rs: Any, it: Any, cells: Any) -> None:
    _FREE_CELLS(cells)
    _FREE_ITERATOR(it)
    _FREE_RENDER_STATE(rs)


def _color(c: Any) -> Color:
    if c.tag == lib.GHOSTTY_STYLE_COLOR_PALETTE:
        return int(c.value.palette)
    if c.tag == lib.GHOSTTY_STYLE_COLOR_RGB:
        return (c.value.rgb.r, c.value.rgb.g, c.value.rgb.b)
    return None


class GhosttyEmulator(Emulator):
    name = "ghostty"

    def __init__(self, cols: int, rows: int, scrollback: int, on_reply: Reply | None = None) -> None:
        super().__init__(cols, rows, scrollback, on_reply)
        self._t = Terminal(self.cols, self.rows, scrollback=self.scrollback)
        self._handle = self._t._t[0]
        self._address = int(ffi.cast("uintptr_t", self._handle))
        self._number = ctypes.c_uint64()  # what _GET writes and _SET reads
        self._at = ctypes.addressof(self._number)
        self._limit = 0
        self._fed_since_check = 0
        self._size_budget(self.cols, self.rows)
        # NULL: no line limit (pyghostty sets one); the byte limit alone bounds history, starting at the ceiling
        _check(
            lib.ghostty_terminal_set(self._handle, lib.GHOSTTY_TERMINAL_OPT_SCROLLBACK_MAX_LINES, ffi.NULL),
            "scrollback lines",
        )
        self._set_limit(self._ceiling)
        if on_reply is not None:
            self._t.on_reply(on_reply)
        self._rs = ffi.new("GhosttyRenderState*")
        _check(lib.ghostty_render_state_new(ffi.NULL, self._rs), "render_state_new")
        self._it = ffi.new("GhosttyRenderStateRowIterator*")
        _check(lib.ghostty_render_state_row_iterator_new(ffi.NULL, self._it), "row_iterator_new")
        self._cells = ffi.new("GhosttyRenderStateRowCells*")
        _check(lib.ghostty_render_state_row_cells_new(ffi.NULL, self._cells), "row_cells_new")
        self._style = init_sized("GhosttyStyle")
        self._style_bytes = ffi.buffer(self._style)
        self._glyph = ffi.new("uint8_t[256]")
        self._gbuf = ffi.new("GhosttyBuffer*")
        self._gbuf.ptr, self._gbuf.cap = self._glyph, 256
        self._raw = ffi.new("GhosttyCell*")
        self._keys = ffi.new(
            "GhosttyRenderStateRowCellsData[3]",
            [
                lib.GHOSTTY_RENDER_STATE_ROW_CELLS_DATA_GRAPHEMES_UTF8,
                lib.GHOSTTY_RENDER_STATE_ROW_CELLS_DATA_STYLE,
                lib.GHOSTTY_RENDER_STATE_ROW_CELLS_DATA_RAW,
            ],
        )
        self._values = ffi.new("void*[3]", [self._gbuf, self._style, self._raw])
        self._tag = ffi.new("GhosttyCellContentTag*")
        self._palette = ffi.new("GhosttyColorPaletteIndex*")
        self._rgb = ffi.new("GhosttyColorRgb*")
        self._written = ffi.new("size_t*")
        self._bool = ffi.new("bool*")
        self._u16 = ffi.new("uint16_t*")
        self._dirty = ffi.new("GhosttyRenderStateDirty*")
        self._bar = ffi.new("GhosttyTerminalScrollbar*")
        self._styles: dict[bytes, CellStyle] = {}
        self._rows: list[Row] = []
        # the render state's native memory goes with this object (pyghostty frees the terminal itself)
        weakref.finalize(self, _free_render_state, self._rs[0], self._it[0], self._cells[0])

    def _feed(self, data: bytes) -> None:
        self._t.feed(data)
        self._watch_history(len(data))

    def _history(self) -> int:
        self._number.value = 0
        _GET(self._address, _HISTORY, self._at)
        return self._number.value

    def _watch_history(self, fed: int) -> None:
        history = self._history()
        if history > self._high:
            self._trim(self._limit, 0, self._high)
        elif history < self._low and self._limit < self._ceiling and not self._alt_screen():
            # the budget held fewer lines than the setting needs: after a clear, or heavier output
            self._set_limit(self._ceiling)
        else:
            self._fed_since_check += fed
            if self._fed_since_check >= self._check_every and self._limit < self._ceiling:
                self._check_ceiling(history)

    def _alt_screen(self) -> bool:
        # the alternate screen has no history: what shows as none is the main screen's, untouched
        self._number.value = 0
        _GET(self._address, _SCREEN, self._at)
        return self._number.value & 0xFF == 1

    def _trim(self, start: int, floor: int, lines: int) -> None:
        """Lower the budget from `start` a step at a time until libghostty has freed pages down to `lines` lines of
        history (the budget is then what they cost), or to `floor`."""
        limit = start
        while limit > floor:
            limit = max(limit - _TRIM_STEP, floor)
            self._set_limit(limit)
            if self._history() <= lines:
                return

    def _check_ceiling(self, history: int) -> None:
        # Past a trim libghostty frees one page for each page it adds, so output heavier than the lines it replaces
        # takes more memory than the budget, with as many lines: which is what keeps the setting. Once in a while,
        # what is past the ceiling is freed, and the budget measured again from there down.
        self._fed_since_check = 0
        budget = self._limit
        self._set_limit(self._ceiling)
        if self._history() < history:  # it held more than the ceiling: the ceiling is the budget
            return
        self._trim(self._ceiling, budget, history - 1)

    def _set_limit(self, nbytes: int) -> None:
        self._limit = self._number.value = nbytes
        _check(_SET(self._address, _MAX_BYTES, self._at), "scrollback bytes")

    def _size_budget(self, cols: int, rows: int) -> None:
        self._low, self._high = history_targets(self.scrollback, cols)
        self._ceiling = ceiling_bytes(self.scrollback, cols, rows)
        self._check_every = max(_CHECK_EVERY, self._ceiling // 16)  # a check steps down from the ceiling

    def _resize(self, cols: int, rows: int) -> None:
        # the reflow runs under the larger of the two ceilings; trims bring the budget down again afterwards
        old_ceiling = self._ceiling
        self._size_budget(cols, rows)
        self._set_limit(max(old_ceiling, self._ceiling))
        self._t.resize(cols, rows)
        self._set_limit(self._ceiling)

    # --- reading the screen ---------------------------------------------------------------------------

    def _style_of(self, key: bytes) -> CellStyle:
        st = self._style
        style = CellStyle(
            fg=_color(st.fg_color),
            bg=_color(st.bg_color),
            bold=bool(st.bold),
            dim=bool(st.faint),
            italic=bool(st.italic),
            underline=st.underline != 0,
            blink=bool(st.blink),
            reverse=bool(st.inverse),
            invisible=bool(st.invisible),
            strike=bool(st.strikethrough),
        )
        if len(self._styles) >= STYLE_CACHE:  # true-colour gradients make endless styles: start over
            self._styles.clear()
        self._styles[key] = style
        return style

    def _blank_bg(self, key: bytes) -> bytes:
        raw = self._raw[0]
        lib.ghostty_cell_get(raw, lib.GHOSTTY_CELL_DATA_CONTENT_TAG, self._tag)
        bg: Color = None
        if self._tag[0] == lib.GHOSTTY_CELL_CONTENT_BG_COLOR_PALETTE:
            lib.ghostty_cell_get(raw, lib.GHOSTTY_CELL_DATA_COLOR_PALETTE, self._palette)
            bg = int(self._palette[0])
        elif self._tag[0] == lib.GHOSTTY_CELL_CONTENT_BG_COLOR_RGB:
            lib.ghostty_cell_get(raw, lib.GHOSTTY_CELL_DATA_COLOR_RGB, self._rgb)
            bg = (self._rgb.r, self._rgb.g, self._rgb.b)
        if bg is None:
            return key
        bg_key = key + repr(bg).encode()
        if bg_key not in self._styles:
            base = self._styles.get(key) or self._style_of(key)
            self._styles[bg_key] = base._replace(bg=bg)
        return bg_key

    def _read_row(self) -> Row:
        _check(
            lib.ghostty_render_state_row_get(self._it[0], lib.GHOSTTY_RENDER_STATE_ROW_DATA_CELLS, self._cells),
            "row cells",
        )
        cells, gbuf, glyph, sbytes = self._cells[0], self._gbuf, self._glyph, self._style_bytes
        keys, values, written, styles = self._keys, self._values, self._written, self._styles
        runs: list[tuple[str, CellStyle]] = []
        chars: list[str] = []
        last_key = b""
        style = CellStyle()
        skip_tail = False
        while _CELLS_NEXT(cells):
            gbuf.len = 0
            _CELLS_GET_MULTI(cells, 3, keys, values, written)
            n = gbuf.len
            if n == 0 and skip_tail:  # the second column of a wide character
                skip_tail = False
                continue
            key = sbytes[:]
            if n == 0 and self._raw[0]:  # a blank that still has a colour: erased with a background set
                key = self._blank_bg(key)
            if key != last_key:
                if chars:
                    runs.append(("".join(chars), style))
                    chars = []
                style = styles.get(key) or self._style_of(key)
                last_key = key
            if n == 0:
                chars.append(" ")
                skip_tail = False
            else:
                ch = ffi.buffer(glyph, n)[:].decode("utf-8", "replace") if n > 1 or glyph[0] > 0x7F else chr(glyph[0])
                chars.append(ch)
                skip_tail = n > 1 and cell_len(ch) == 2
        if chars:
            runs.append(("".join(chars), style))
        return tuple(runs)

    def _frame(self) -> Frame:
        self._keep_view_in_range()
        rs = self._rs[0]
        _check(lib.ghostty_render_state_update(rs, self._handle), "render_state_update")
        _check(lib.ghostty_render_state_get(rs, lib.GHOSTTY_RENDER_STATE_DATA_DIRTY, self._dirty), "dirty")
        full = self._dirty[0] == lib.GHOSTTY_RENDER_STATE_DIRTY_FULL or len(self._rows) != self.rows
        changed: set[int] = set()
        if full or self._dirty[0] != lib.GHOSTTY_RENDER_STATE_DIRTY_FALSE:
            rows: list[Row] = [()] * self.rows if full else self._rows
            _check(lib.ghostty_render_state_get(rs, lib.GHOSTTY_RENDER_STATE_DATA_ROW_ITERATOR, self._it), "rows")
            it, y = self._it[0], 0
            while lib.ghostty_render_state_row_iterator_next(it) and y < self.rows:
                dirty = full
                if not dirty:
                    lib.ghostty_render_state_row_get(it, lib.GHOSTTY_RENDER_STATE_ROW_DATA_DIRTY, self._bool)
                    dirty = bool(self._bool[0])
                if dirty:
                    row = self._read_row()
                    if full or row != rows[y]:
                        changed.add(y)
                    rows[y] = row
                    self._bool[0] = False
                    lib.ghostty_render_state_row_set(it, lib.GHOSTTY_RENDER_STATE_ROW_OPTION_DIRTY, self._bool)
                y += 1
            self._rows = list(rows)
            clean = ffi.new("GhosttyRenderStateDirty*", lib.GHOSTTY_RENDER_STATE_DIRTY_FALSE)
            lib.ghostty_render_state_set(rs, lib.GHOSTTY_RENDER_STATE_OPTION_DIRTY, clean)
        offset, history = self._scrollbar()
        return Frame(list(self._rows), frozenset(changed), self._cursor() if offset == 0 else None, offset, history)

    def _cursor(self) -> Cursor | None:
        rs = self._rs[0]
        lib.ghostty_render_state_get(rs, lib.GHOSTTY_RENDER_STATE_DATA_CURSOR_VIEWPORT_HAS_VALUE, self._bool)
        if not self._bool[0]:
            return None
        lib.ghostty_render_state_get(rs, lib.GHOSTTY_RENDER_STATE_DATA_CURSOR_VIEWPORT_X, self._u16)
        x = int(self._u16[0])
        lib.ghostty_render_state_get(rs, lib.GHOSTTY_RENDER_STATE_DATA_CURSOR_VIEWPORT_Y, self._u16)
        y = int(self._u16[0])
        lib.ghostty_render_state_get(rs, lib.GHOSTTY_RENDER_STATE_DATA_CURSOR_VISIBLE, self._bool)
        return Cursor(x, y, bool(self._bool[0]))

    def _stored(self) -> tuple[int, int]:
        """(how far the view is scrolled back, lines of history) as libghostty keeps them, past the setting too."""
        bar = self._bar
        _check(lib.ghostty_terminal_get(self._handle, lib.GHOSTTY_TERMINAL_DATA_SCROLLBAR, bar), "scrollbar")
        history = max(int(bar.total) - int(bar.len), 0)
        return max(history - int(bar.offset), 0), history

    def _scrollbar(self) -> tuple[int, int]:
        offset, stored = self._stored()
        return offset, min(stored, self.scrollback)

    # --- scrollback, modes, text -----------------------------------------------------------------------

    def _view_back(self, offset: int, stored: int) -> None:
        """Put the view `offset` lines back from the bottom."""
        s = ffi.new("PodtuiScrollS*")
        s.tag, s.delta = lib.GHOSTTY_SCROLL_VIEWPORT_ROW, stored - offset  # the row at the top of the view
        _SCROLL(self._handle, s[0])

    def _keep_view_in_range(self) -> None:
        # a view left scrolled back stays on its lines while output arrives, until they are older than the setting
        offset, stored = self._stored()
        if offset > self.scrollback:
            self._view_back(self.scrollback, stored)

    def _scroll(self, delta: int) -> None:
        offset, stored = self._stored()
        wanted = min(max(offset - delta, 0), min(stored, self.scrollback))
        if wanted != offset:
            self._view_back(wanted, stored)

    def _scroll_to_bottom(self) -> None:
        s = ffi.new("PodtuiScrollS*")
        s.tag = lib.GHOSTTY_SCROLL_VIEWPORT_BOTTOM
        _SCROLL(self._handle, s[0])

    def _modes(self) -> Modes:
        t = self._t
        mouse = next((m for m in (1003, 1002, 1000, 9) if t.mode(m)), 0)
        flags = ffi.new("uint64_t*", 0)  # the C side writes a narrower integer; a zeroed wide one reads it back
        lib.ghostty_terminal_get(self._handle, lib.GHOSTTY_TERMINAL_DATA_KITTY_KEYBOARD_FLAGS, flags)
        return Modes(
            app_cursor=t.mode(1),
            app_keypad=t.mode(66),
            bracketed_paste=t.mode(2004),
            mouse=mouse,
            mouse_sgr=t.mode(1006),
            focus_events=t.mode(1004),
            alt_screen=self._alt_screen(),
            cursor_visible=t.mode(25),
            kitty_flags=int(flags[0] & 0xFF),
        )

    def _text(self) -> str:
        _, stored = self._stored()
        if stored <= self.scrollback:
            return str(self._t.contents())
        # what select_all spans, from the oldest line within the setting instead of the oldest one stored
        sel = init_sized("GhosttySelection")
        if lib.ghostty_terminal_select_all(self._handle, sel) != lib.GHOSTTY_SUCCESS:
            return ""
        sel.start = self._t.ref(0, stored - self.scrollback, "screen")[0]
        return str(self._t._format_sel(sel, unwrap=True))
