"""The key reference (`?`) at 80x24 and on a wide terminal: it never overflows the screen, the keys column is as wide
as the widest key, the words wrap beside it, and what does not fit scrolls inside its frame.

Update after reviewing the report: pytest tests/app/test_help_screen.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rich.table import Table
from textual.pilot import Pilot
from textual.widgets import Static

from podtui.ui import keymap
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.dialog import Frame
from podtui.ui.screens.help import HelpScreen
from tests.helpers.pilot import opened_by_key, wait_until


async def open_help(pilot: Pilot[None], app: PodtuiApp) -> HelpScreen:
    return await opened_by_key(pilot, app, "question_mark", HelpScreen)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_help_fits(snap_compare: Any, make_app: Callable[..., PodtuiApp], size: tuple[int, int]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await open_help(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)


async def test_help_at_80x24_stays_on_screen_and_scrolls_to_its_end(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_help(pilot, app)
        frame = screen.query_one(Frame)
        assert app.screen.region.contains_region(frame.region)
        assert frame.max_scroll_y > 0  # more keys than lines: they scroll, inside the frame
        widest = max(len(key) for _, rows in keymap.help_rows(app) for key, _ in rows)
        for grid in screen.query(".keys").results(Static):
            table = grid.content
            assert isinstance(table, Table) and table.columns[0].width == widest  # the same in every section
        await pilot.press("end")
        await wait_until(pilot, lambda: frame.scroll_y == frame.max_scroll_y)
        note = screen.query_one("#help-note")
        assert frame.region.contains_region(note.region)  # the last line in view
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))
