"""SVG snapshots of the app as a whole, rendered against the simulator with a frozen clock: the help screen and the
first-run welcome.

Update after reviewing the report: pytest tests/app/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from podtui.ui.app import PodtuiApp
from tests.helpers.pilot import loaded, steady

SIZE = (130, 32)


def test_help(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_welcome_on_first_run(snap_compare: Any, make_app: Callable[..., PodtuiApp], tmp_path: Path) -> None:
    app = make_app(needs_key=True, save_key=lambda value: tmp_path / "config.toml")

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)
