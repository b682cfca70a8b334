"""SVG snapshots of every screen, rendered against the simulator with a frozen clock.

Update after reviewing the report: pytest tests/ui/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from podtui.core.config import Config
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from tests.ui.conftest import loaded, polled, steady

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


def test_help(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_ticker_low_runway(snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        sim.world.set_balance(3.10)  # under 4 h at this burn: red, and the line says what $0 would delete
        await polled(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_ticker_idle_pod(snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app(config=Config(daily_budget=5.0))

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        for _ in range(4):  # eval-a100 sits at 0% GPU: after 15 simulated minutes it is idle
            sim.world.clock.advance(300)
            await polled(pilot, app)
            app.cost_tick()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_welcome_on_first_run(snap_compare: Any, make_app: Callable[..., PodtuiApp], tmp_path: Path) -> None:
    app = make_app(needs_key=True, save_key=lambda value: tmp_path / "config.toml")

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)
