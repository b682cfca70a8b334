"""SVG snapshots of a pod's logs at the sizes podtui supports: full screen at 80x24 (no room for the pane), the
pane's Logs tab under the list at 120x32 and beside it at 200x50, against the simulator on a frozen clock.

Update after reviewing the report: pytest tests/logs/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.widgets.log_view import LogView
from tests.helpers.pilot import loaded, wait_until

SIZES = [(80, 24), (120, 32), (200, 50)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_logs(snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer, size: tuple[int, int]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("j", "j", "L")  # llama-lora-3090, training
        await wait_until(pilot, lambda: len(app.screen.query(LogView)) > 0)
        view = app.screen.query_one(LogView)
        await wait_until(pilot, lambda: len(view.shown) >= 500)
        await wait_until(pilot, lambda: "live" in str(app.screen.query_one("#log-state").render()))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=ready)
