"""The CLI's output boundary: everything the commands print passes one sanitiser on its way to the terminal.

The commands print pod names, paths, RunPod's and runpodctl's words: text from outside. Instead of trusting each
print to remember, stdout and stderr are wrapped while a command runs, so nothing reaches the terminal as a
control sequence (docs/architecture.md#text-from-outside). podtui's own carriage return (a progress line
redrawn in place) is the one control character it writes, through `rewrite_line`. JSON output is written with
every non-ASCII character escaped, so it passes unchanged and stays faithful to the data.

A terminal or redirect that cannot encode a character (PYTHONIOENCODING=ascii, some Windows consoles) gets a
replacement character instead of a crash.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator, Sequence
from typing import TextIO, cast

from rich.cells import cell_len

from podtui.core.visible import visible


class SafeStream(io.TextIOBase):
    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner

    def _put(self, text: str) -> None:
        try:
            self.inner.write(text)
        except UnicodeEncodeError:
            encoding = getattr(self.inner, "encoding", None) or "ascii"
            self.inner.write(text.encode(encoding, "replace").decode(encoding, "replace"))

    def write(self, s: str) -> int:
        self._put(visible(s, lines=True))
        return len(s)

    def rewrite_line(self, text: str) -> None:
        """Go back to the start of the line and write `text` (made safe) over it."""
        self._put("\r" + visible(text))

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", None) or "utf-8"

    def close(self) -> None:
        # the wrapper only: the stream it wraps belongs to whoever made it (IOBase closes on garbage collection)
        super().close()


def write_table(out: TextIO, rows: Sequence[Sequence[str]]) -> None:
    """Columns aligned by what each cell takes on screen (a wide character takes two), every cell one line."""
    shown = [[visible(cell) for cell in row] for row in rows]
    widths = [max(cell_len(row[i]) for row in shown) for i in range(len(shown[0]))] if shown else []
    for row in shown:
        out.write("  ".join(c + " " * (w - cell_len(c)) for c, w in zip(row, widths, strict=True)).rstrip() + "\n")


def notes(problems: Sequence[str], limit: int = 5) -> None:
    """What was odd in RunPod's answer (a field of the wrong type, an amount that is not money), on stderr so
    that stdout stays the table: shown as "—", and why."""
    for problem in problems[:limit]:
        sys.stderr.write(f"podtui: note: {visible(problem)}\n")
    if len(problems) > limit:
        sys.stderr.write(f"podtui: note: and {len(problems) - limit} more\n")


def rewrite_line(stream: TextIO, text: str) -> None:
    """A progress line redrawn in place, on a stream that may or may not be the wrapped one."""
    if isinstance(stream, SafeStream):
        stream.rewrite_line(text)
    else:
        stream.write("\r" + visible(text))


@contextlib.contextmanager
def safe_streams() -> Iterator[None]:
    """sys.stdout and sys.stderr wrapped for the duration (nesting is harmless)."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, SafeStream):
        sys.stdout = cast(TextIO, SafeStream(sys.stdout))
    if not isinstance(sys.stderr, SafeStream):
        sys.stderr = cast(TextIO, SafeStream(sys.stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


@contextlib.contextmanager
def raw_streams() -> Iterator[None]:
    """The streams as they were, for the full-screen app: Textual draws with escape sequences of its own."""
    saved = sys.stdout, sys.stderr
    if isinstance(sys.stdout, SafeStream):
        sys.stdout = sys.stdout.inner
    if isinstance(sys.stderr, SafeStream):
        sys.stderr = sys.stderr.inner
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
