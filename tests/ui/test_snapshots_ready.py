"""SVG snapshots of the screens that get a pod ready: the GPU advisor, the create form, the Hugging Face check
(against the simulated Hub on a fixed port, so its links are the same in every run) and the first-run welcome.

Update after reviewing the report: pytest tests/ui/test_snapshots_ready.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.core.hf.token import found
from podtui.sim.hub import SimHub
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.create_pod import CreatePodScreen
from podtui.ui.screens.gpus import GpusScreen
from podtui.ui.screens.hf_check import HfCheckScreen
from tests.ui.conftest import loaded, steady, wait_until

SIZE = (130, 40)
HUB_PORT = 38517  # fixed: the Hub's address is part of what the screen shows


@pytest.fixture
def hub() -> Iterator[SimHub]:
    h = SimHub(port=HUB_PORT).start()
    yield h
    h.stop()


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


def test_hf_check_of_a_gated_repo(snap_compare: Any, make_app: Callable[..., PodtuiApp], hub: SimHub) -> None:
    app = make_app(hf_endpoint=lambda: hub.endpoint, hf_token=lambda: found(hub.token("read"), "test"))

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("H")
        await wait_until(pilot, lambda: isinstance(app.screen, HfCheckScreen))
        await pilot.press(*"podtui-sim/gemma-mini", "enter")
        await wait_until(pilot, lambda: app.screen.report is not None)  # type: ignore[attr-defined]
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)
