"""The GPU advisor at 80x24 and after a slow load: every column as wide as its widest cell whenever the table is
drawn (a table left to measure its own columns drew them at their headers' widths on a busy machine, for good).

Update after reviewing the report: pytest tests/gpu/test_gpus_screen.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable

from podtui.core.api.catalog import CATALOG_PATH
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.gpus import COLUMNS, GpusScreen
from podtui.ui.widgets.measured_table import fill_measured
from tests.helpers.pilot import loaded, steady, wait_until

SIZES = [(80, 24), (200, 50), (80, 24)]


async def open_advisor(pilot: Pilot[None], app: PodtuiApp) -> GpusScreen:
    await loaded(pilot, app)
    await pilot.press("P")
    await wait_until(pilot, lambda: isinstance(app.screen, GpusScreen))
    assert isinstance(app.screen, GpusScreen)
    return app.screen


def drawn(table: DataTable[Any]) -> list[str]:
    """The table's lines as it draws them now, header first."""
    return ["".join(s.text for s in table.render_line(y)) for y in range(table.size.height)]


def assert_drawn_whole(table: DataTable[Any]) -> None:
    """Every visible row shows each of its cells whole, in its column, in order."""
    lines = drawn(table)
    assert all(h in lines[0] for _, h in COLUMNS if h)
    rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
    shown = [line for line in lines[1:] if line.strip()]
    assert shown
    for line, row in zip(shown, rows, strict=False):
        at = 0
        for value in (v for v in row if v):
            found = line.find(value, at)
            assert found >= 0, (value, line)
            at = found + len(value)


def test_gpu_advisor_at_80x24(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await open_advisor(pilot, app)
        await pilot.press("m", "ctrl+a", *"7B", "tab")
        await wait_until(pilot, lambda: "Cheapest" in str(app.screen.query_one("#advice").render()))
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)


async def test_columns_are_whole_after_a_slow_load_and_on_resize(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    sim.faults.add("latency", 1.0, only=f"GET {CATALOG_PATH}")  # the screen is drawn, empty, long before the rows
    app = make_app()
    async with app.run_test(size=SIZES[0]) as pilot:
        screen = await open_advisor(pilot, app)
        await pilot.pause()
        assert screen.catalogue is None  # still loading: drawn with the headers alone
        await wait_until(pilot, lambda: screen.catalogue is not None, 20)
        await pilot.pause()
        table = screen.query_one(DataTable)
        assert table.row_count == 10
        assert_drawn_whole(table)
        for size in SIZES[1:]:
            await pilot.resize_terminal(*size)
            await pilot.pause()
            assert_drawn_whole(table)


async def test_rows_are_drawn_whole_before_the_table_measures_them(make_app: Callable[..., PodtuiApp]) -> None:
    """Drawn at once after the fill, before the table's next idle (what a busy machine does): nothing cut."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_advisor(pilot, app)
        await wait_until(pilot, lambda: screen.catalogue is not None)
        await pilot.pause()
        table = screen.query_one(DataTable)
        rows = [(str(i), tuple(table.get_row_at(i))) for i in range(table.row_count)]
        fill_measured(table, COLUMNS, [])  # a table as the screen opens: headers only
        drawn(table)
        fill_measured(table, COLUMNS, rows)
        assert_drawn_whole(table)  # no await in between: the table has not been idle
