"""What an emulator hands the widget: rows of styled runs, the same whichever engine parsed the bytes."""

from __future__ import annotations

from typing import NamedTuple

# A colour is a palette index (0-255), an (r, g, b) triple, or None for the terminal's default.
Color = int | tuple[int, int, int] | None


class CellStyle(NamedTuple):
    fg: Color = None
    bg: Color = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    blink: bool = False
    reverse: bool = False
    invisible: bool = False
    strike: bool = False


PLAIN = CellStyle()
Run = tuple[str, CellStyle]
Row = tuple[Run, ...]


class Cursor(NamedTuple):
    x: int
    y: int
    visible: bool


def row_text(row: Row) -> str:
    return "".join(text for text, _ in row)


def row_cells(row: Row) -> list[tuple[str, CellStyle]]:
    """One entry per column: a wide character fills its column and leaves "" in the next one."""
    from rich.cells import cell_len

    out: list[tuple[str, CellStyle]] = []
    for text, style in row:
        for ch in text:
            out.append((ch, style))
            if ch > "\x7f" and cell_len(ch) == 2:
                out.append(("", style))
    return out
