"""Terminal modes and queries that avt does not expose, read from the byte stream itself.

avt tracks the modes internally but reports only application-cursor mode, and it never answers queries. This
scanner follows DEC private mode sets and resets, keypad mode and reset, and answers status and attribute
queries, carrying a partial escape sequence over to the next chunk.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_SEQ = re.compile(rb"\x1b\[\?([0-9;]*)([hl])|\x1b([=>c])|\x1b\[([0-9]*)n|\x1b\[(>?)0?c")
_PARTIAL_MAX = 32
MOUSE_MODES = (9, 1000, 1002, 1003)
ALT_MODES = (47, 1047, 1049)
TRACKED = (1, 25, 1004, 1006, 2004, *MOUSE_MODES, *ALT_MODES)


class ModeTracker:
    def __init__(self) -> None:
        self.set: set[int] = {25}
        self.keypad = False
        self._tail = b""

    def reset(self) -> None:
        self.set, self.keypad = {25}, False

    def scan(self, data: bytes, reply: Callable[[bytes], None] | None, cursor: Callable[[], tuple[int, int]]) -> None:
        buf = self._tail + data
        last_end = 0
        for m in _SEQ.finditer(buf):
            last_end = m.end()
            if m.group(2):
                on = m.group(2) == b"h"
                for part in m.group(1).split(b";"):
                    if part.isdigit():
                        self._mode(int(part), on)
            elif m.group(3):
                kind = m.group(3)
                if kind == b"c":
                    self.reset()
                else:
                    self.keypad = kind == b"="
            elif m.group(4) is not None and reply is not None:
                if m.group(4) == b"6":
                    x, y = cursor()
                    reply(b"\x1b[%d;%dR" % (y + 1, x + 1))
                elif m.group(4) == b"5":
                    reply(b"\x1b[0n")
            elif m.group(5) is not None and reply is not None:
                reply(b"\x1b[>1;10;0c" if m.group(5) else b"\x1b[?62;22c")
        # keep an unfinished escape sequence at the end for the next chunk
        esc = buf.rfind(b"\x1b", last_end)
        self._tail = buf[esc:] if esc >= 0 and len(buf) - esc < _PARTIAL_MAX else b""

    def _mode(self, mode: int, on: bool) -> None:
        if mode in MOUSE_MODES and on:
            self.set.difference_update(MOUSE_MODES)  # one tracking mode at a time, as xterm does
        if on:
            self.set.add(mode)
        else:
            self.set.discard(mode)

    def mouse(self) -> int:
        return next((m for m in (1003, 1002, 1000, 9) if m in self.set), 0)

    def alt_screen(self) -> bool:
        return any(m in self.set for m in ALT_MODES)
