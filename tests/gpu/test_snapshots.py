"""SVG snapshots of the GPU advisor and the create-pod form, rendered against the simulator with a frozen clock.

Update after reviewing the report: pytest tests/gpu/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from podtui.ui.app import PodtuiApp
from podtui.ui.screens.create_pod import CreatePodScreen
from podtui.ui.screens.gpus import GpusScreen
from tests.helpers.pilot import loaded, steady, wait_until

SIZE = (130, 40)


def test_gpu_advisor(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("P")
        await wait_until(pilot, lambda: isinstance(app.screen, GpusScreen))
        await pilot.press("m", "ctrl+a", *"7B", "tab")
        await wait_until(pilot, lambda: "Cheapest" in str(app.screen.query_one("#advice").render()))
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_create_form_shows_the_cost(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, CreatePodScreen))
        await wait_until(pilot, lambda: "/hr" in str(app.screen.query_one("#cost").render()))
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=(130, 44), run_before=ready)
