"""SVG snapshots of the edit screen and its review, at 80x24, 120x32 and 200x50, on the simulator's frozen clock.

Update after reviewing the report: pytest tests/edit/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.edit_pod import EditPodScreen
from tests.helpers.pilot import loaded, steady, wait_until

SIZES = [(80, 24), (120, 32), (200, 50)]


@pytest.fixture(autouse=True)
def runpods_gateway(sim: SimApiServer) -> None:
    sim.world.gateway_address = ("ssh.runpod.io", 22)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_edit_screen(snap_compare: Any, make_app: Callable[..., PodtuiApp], size: tuple[int, int]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("j", "j", "e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditPodScreen) and bool(app.screen.query("#env")))
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_edit_review(snap_compare: Any, make_app: Callable[..., PodtuiApp], size: tuple[int, int]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("j", "j", "e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditPodScreen) and bool(app.screen.query("#env")))
        app.screen.query_one("#image", Input).value = "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)
