"""SVG snapshots of the pod list and a pod's details, rendered against the simulator with a frozen clock: sorted
and filtered, the terminate question, and data gone stale.

Update after reviewing the report: pytest tests/pods/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from tests.helpers.pilot import loaded, polled

SIZE = (130, 32)


def test_pod_list(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_pod_list_filtered_and_sorted(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("o", "o", "o", "o", "O")  # by GPU util, busiest first
        await pilot.press("slash", *"running", "enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_detail_view(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("j", "j", "enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 48), run_before=ready)


def test_terminate_confirmation(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("j", "T")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_stale_data(snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        sim.faults.add("status", 502)
        sim.world.clock.advance(95)
        await polled(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)
