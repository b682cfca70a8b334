"""SVG snapshots of the Recreate view at the sizes podtui supports: one pod gone, the others still there, against
the simulator on a frozen clock.

Update after reviewing the report: pytest tests/recreate/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.core.launch_memory import LaunchMemory
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.recreate import RecreateScreen
from tests.helpers.pilot import loaded, steady, wait_until
from tests.helpers.sim import DEMO_IDS

SIZES = [(80, 24), (120, 32), (200, 50)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_recreate(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer, size: tuple[int, int]
) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        memory = LaunchMemory.for_services(app.services)
        await wait_until(pilot, lambda: len(memory.records()) > 0)
        sim.world.terminate(DEMO_IDS["bursty"])
        await pilot.press("N")
        await wait_until(pilot, lambda: isinstance(app.screen, RecreateScreen) and app.screen.records is not None)
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)
