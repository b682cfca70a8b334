"""SVG snapshots of the Templates view at the sizes podtui supports, and of its form for a template from a pod at
80x24 and 120x32, against the simulator on a frozen clock.

Update after reviewing the report: pytest tests/templates/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Select

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.template_form import TemplateFormScreen
from podtui.ui.screens.templates import TemplatesScreen
from tests.helpers.pilot import loaded, steady, wait_until
from tests.helpers.sim import DEMO_IDS

SIZES = [(80, 24), (120, 32), (200, 50)]


async def _templates(pilot: Pilot[None], app: PodtuiApp, public: bool) -> None:
    await loaded(pilot, app)
    await pilot.press("m")
    await wait_until(pilot, lambda: isinstance(app.screen, TemplatesScreen) and app.screen.templates is not None)
    screen = app.screen
    assert isinstance(screen, TemplatesScreen)
    if public:
        await pilot.press("p")
        await wait_until(pilot, lambda: screen.templates is not None and screen.mode == "public")


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_public_templates(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer, size: tuple[int, int]
) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await _templates(pilot, app, public=True)
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", [(80, 24), (120, 32)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_template_from_a_pod(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer, size: tuple[int, int]
) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await _templates(pilot, app, public=False)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, TemplateFormScreen) and bool(app.screen.pods))
        form = app.screen
        assert isinstance(form, TemplateFormScreen)
        form.query_one("#pod", Select).value = DEMO_IDS["train"]
        await wait_until(pilot, lambda: len(form._choices) == 3)
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)
