"""SVG snapshots of the Hugging Face check, against the simulated Hub on a fixed port (its links are part of what
the screen shows, so they must be the same in every run).

Update after reviewing the report: pytest tests/hf/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.core.hf.token import found
from podtui.sim.hub import SimHub
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.hf_check import HfCheckScreen
from tests.helpers.pilot import loaded, steady, wait_until

SIZE = (130, 40)
HUB_PORT = 38517  # fixed: the Hub's address is part of what the screen shows


@pytest.fixture
def fixed_hub() -> Iterator[SimHub]:
    h = SimHub(port=HUB_PORT).start()
    yield h
    h.stop()


def test_hf_check_of_a_gated_repo(snap_compare: Any, make_app: Callable[..., PodtuiApp], fixed_hub: SimHub) -> None:
    app = make_app(hf_endpoint=lambda: fixed_hub.endpoint, hf_token=lambda: found(fixed_hub.token("read"), "test"))

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("H")
        await wait_until(pilot, lambda: isinstance(app.screen, HfCheckScreen))
        await pilot.press(*"podtui-sim/gemma-mini", "enter")
        await wait_until(pilot, lambda: app.screen.report is not None)  # type: ignore[attr-defined]
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)
