"""SVG snapshots of the bulk terminate dialog and the resume offer, at 80x24, 120x32 and 200x50, on the simulator's
frozen clock.

Update after reviewing the report: pytest tests/bulk/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.bulk_action import BulkActionScreen
from podtui.ui.screens.resume_offer import ResumeOfferScreen
from tests.helpers.pilot import loaded, steady, wait_until

SIZES = [(80, 24), (120, 32), (200, 50)]


@pytest.fixture(autouse=True)
def runpods_gateway(sim: SimApiServer) -> None:
    sim.world.gateway_address = ("ssh.runpod.io", 22)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_bulk_terminate(snap_compare: Any, make_app: Callable[..., PodtuiApp], size: tuple[int, int]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("a", "T")
        await wait_until(pilot, lambda: isinstance(app.screen, BulkActionScreen))
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_resume_offer(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer, size: tuple[int, int]
) -> None:
    from tests.helpers.sim import DEMO_IDS

    sim.world.stop(DEMO_IDS["idle"])  # eval-a100: its data on a network volume, so recreate is offered
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        sim.faults.add("no_capacity")
        await pilot.press("j", "r", "tab", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ResumeOfferScreen))
        app.clear_notifications()  # "sent…" may or may not still be up: it depends on how fast the answer came
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)
