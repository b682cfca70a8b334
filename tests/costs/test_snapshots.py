"""SVG snapshots of the cost ticker, rendered against the simulator with a frozen clock: a runway running low, and
an idle pod under a daily budget.

Update after reviewing the report: pytest tests/costs/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from podtui.core.config import Config
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from tests.helpers.pilot import loaded, polled, wait_until

SIZE = (130, 32)


def test_ticker_low_runway(snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        sim.world.set_balance(3.10)  # under 4 h at this burn: red, and the line says what $0 would delete
        await polled(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_ticker_idle_pod(snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app(config=Config(daily_budget=15.0))  # today (UTC) stood near $9 at start: under it

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: app.costs.before_known)  # today: the ledger's part before the session too
        for _ in range(4):  # eval-a100 sits at 0% GPU: after 15 simulated minutes it is idle
            sim.world.clock.advance(300)
            await polled(pilot, app)
            app.cost_tick()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)
