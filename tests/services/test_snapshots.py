"""SVG snapshots of a pod's services at the sizes podtui supports: full screen at 80x24, the pane's Services tab
at 120x32 and 200x50, with RunPod's own proxy addresses (the simulated API names them as RunPod does).

Update after reviewing the report: pytest tests/services/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.widgets.services_panel import ServicesPanel
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS

SIZES = [(80, 24), (120, 32), (200, 50)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_services(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer, size: tuple[int, int]
) -> None:
    sim.world.gateway_address = ("ssh.runpod.io", 22)
    sim.world.pods[DEMO_IDS["train"]].env["JUPYTER_PASSWORD"] = "never-on-screen"
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("j", "j", "S")  # llama-lora-3090: Jupyter on 8888, direct SSH on 22
        await wait_until(pilot, lambda: any(p.rows for p in app.screen.query(ServicesPanel)))
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=ready)
