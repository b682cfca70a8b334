"""SVG snapshots of the Spend view at the sizes podtui supports (the last 7 days, by pod), by day and the last 30
days at 80x24, against the simulator on a frozen clock.

Update after reviewing the report: pytest tests/spend/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.ui.app import PodtuiApp
from podtui.ui.screens.spend import SpendScreen
from tests.helpers.pilot import loaded, steady, wait_until

SIZES = [(80, 24), (120, 32), (200, 50)]


async def _week(pilot: Pilot[None], app: PodtuiApp, *keys: str, days: int = 7) -> None:
    await loaded(pilot, app)
    await pilot.press("dollar_sign")
    await wait_until(pilot, lambda: isinstance(app.screen, SpendScreen) and app.screen.report is not None)
    screen = app.screen
    assert isinstance(screen, SpendScreen)
    await pilot.press("w" if days == 7 else "m", *keys)
    await wait_until(
        pilot, lambda: screen.report is not None and screen.report.window.days == days and not screen.loading
    )
    await steady(pilot, app)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_spend(snap_compare: Any, make_app: Callable[..., PodtuiApp], size: tuple[int, int]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await _week(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)


def test_by_day(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await _week(pilot, app, "d")

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)


def test_month(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await _week(pilot, app, days=30)

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)
