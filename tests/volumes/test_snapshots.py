"""SVG snapshots of the Volumes view at the sizes podtui supports, and of its create form and delete dialog at
80x24, against the simulator on a frozen clock.

Update after reviewing the report: pytest tests/volumes/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.volume_delete import VolumeDeleteScreen
from podtui.ui.screens.volume_form import VolumeFormScreen
from podtui.ui.screens.volumes import VolumesScreen
from tests.helpers.pilot import loaded, steady, wait_until

SIZES = [(80, 24), (120, 32), (200, 50)]


async def _volumes(pilot: Pilot[None], app: PodtuiApp) -> VolumesScreen:
    await loaded(pilot, app)
    await pilot.press("v")
    await wait_until(pilot, lambda: isinstance(app.screen, VolumesScreen) and app.screen.volumes is not None)
    screen = app.screen
    assert isinstance(screen, VolumesScreen)
    return screen


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_volumes(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], volumes: SimApiServer, size: tuple[int, int]
) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await _volumes(pilot, app)
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)


def test_create_form(snap_compare: Any, make_app: Callable[..., PodtuiApp], volumes: SimApiServer) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await _volumes(pilot, app)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, VolumeFormScreen) and bool(app.screen.centres))
        app.screen.query_one("#name", Input).value = "models"
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)


def test_delete_dialog(snap_compare: Any, make_app: Callable[..., PodtuiApp], volumes: SimApiServer) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        screen = await _volumes(pilot, app)
        screen.query_one(DataTable).move_cursor(row=0)  # checkpoints, unused
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, VolumeDeleteScreen))
        await pilot.press(*"check")
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)
