"""SVG snapshots of the create form when GPUs are scarce (a network volume chosen, a second GPU to try, the stock
where the pod would go) and of the GPU advisor's line of data centres, at 80x24, 120x32 and 200x50, against the
simulator on a frozen clock.

Update after reviewing the report: pytest tests/gpu/test_launch_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Select

from podtui.core.api import V2Api
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.create_pod import CreatePodScreen
from podtui.ui.screens.gpus import GpusScreen
from tests.helpers.pilot import loaded, steady, wait_until

SIZES = [(80, 24), (120, 32), (200, 50)]
R4090, R3090 = "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090"


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_create_form_on_a_volume_with_candidates(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], api: V2Api, size: tuple[int, int]
) -> None:
    # EU-RO-1 has both a 4090 and a 3090 free on community cloud in the simulator's market
    volume = api.create_network_volume("scratch", 100, "EU-RO-1")
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, CreatePodScreen))
        form = app.screen
        assert isinstance(form, CreatePodScreen)
        await wait_until(pilot, lambda: form.catalogue is not None and bool(form.templates) and bool(form.volumes))
        form.query_one("#netvol", Select).value = volume.id
        await pilot.pause()
        form.query_one("#gpu", Select).value = R4090
        await pilot.pause()
        form.query_one("#gpu2", Select).value = R3090
        await wait_until(pilot, lambda: "Tries in order" in str(form.query_one("#review").render()))
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_gpu_advisor_says_where_the_type_is_free(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], size: tuple[int, int]
) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("P")
        await wait_until(pilot, lambda: isinstance(app.screen, GpusScreen))
        screen = app.screen
        assert isinstance(screen, GpusScreen)
        await wait_until(pilot, lambda: screen.catalogue is not None)
        await pilot.press("down", "down")  # the RTX 4090
        await wait_until(pilot, lambda: "RTX 4090 free in" in str(screen.query_one("#where").render()))
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)
