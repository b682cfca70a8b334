"""SVG snapshots of the pod list and a pod's details, rendered against the simulator with a frozen clock: sorted
and filtered, the terminate question, data gone stale, and a locked pod in a small terminal. The simulated API
names RunPod's gateway as RunPod does (no gateway listens here: nothing connects), so the SSH column and the
details read as they do against RunPod.

Update after reviewing the report: pytest tests/pods/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from tests.helpers.pilot import loaded, polled

SIZE = (120, 32)
SIZES = [(80, 24), (120, 32), (200, 50)]  # the list alone; with the pane under it; with the pane beside it


@pytest.fixture(autouse=True)
def runpods_gateway(sim: SimApiServer) -> None:
    sim.world.gateway_address = ("ssh.runpod.io", 22)  # what RunPod's `ssh.proxy` says (its port 22 is left out)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_pod_list(snap_compare: Any, make_app: Callable[..., PodtuiApp], size: tuple[int, int]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES[1:], ids=lambda s: f"{s[0]}x{s[1]}")
def test_pane_on_another_pod_zoomed(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], size: tuple[int, int]
) -> None:
    """The pane follows the cursor; tab puts the focus in it and z gives it the whole screen."""
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("j", "j", "tab", "tab", "z")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=ready)


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

    assert snap_compare(app, terminal_size=(96, 44), run_before=ready)  # under 100 columns: a screen of its own


def test_terminate_confirmation(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("j", "T")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)


def test_stale_data(snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        sim.faults.add("status", 502)
        sim.world.clock.advance(95)
        await polled(pilot, app)
        app._tick()  # the every-second tick, now: whether the timer's came after the clock moved is a race
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=ready)


def test_detail_of_a_locked_pod_in_a_small_terminal(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    """sweep-h100x2 at 80x24: locked and still provisioning, so RunPod offers terminate only; stop and restart stay
    live in the footer (they say why not), resume is greyed out."""
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("G", "enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)
