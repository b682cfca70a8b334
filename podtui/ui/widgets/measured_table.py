"""Filling a DataTable whose columns are as wide as their widest cell from the first frame on.

A DataTable left to size its columns itself (auto width) measures new rows only when it is next idle, and caches
each cell as drawn, without the width it was drawn at. On a busy machine the screen is drawn before that idle:
the cells are cached at the headers' widths and the columns stay chopped until the table is resized. Columns
given their width as the rows arrive draw right whenever the screen is drawn."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable

Cell = str | Text  # a str is read as markup by the table: only for text podtui writes


def cell_width(cell: Cell) -> int:
    return cell.cell_len if isinstance(cell, Text) else Text.from_markup(cell).cell_len


def fill_measured(
    table: DataTable[Cell], columns: Sequence[tuple[str, str]], rows: Sequence[tuple[str, Sequence[Cell]]]
) -> None:
    """The table's columns anew, (key, header) each as wide as its header or its widest cell, then the rows
    (key, cells). The cursor goes back to the first row, as after DataTable.clear."""
    table.clear(columns=True)
    for i, (key, header) in enumerate(columns):
        width = max([cell_len(header), *(cell_width(cells[i]) for _, cells in rows)])
        table.add_column(header, width=width, key=key)
    for key, cells in rows:
        table.add_row(*cells, key=key)
