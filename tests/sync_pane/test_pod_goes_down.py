"""A watch whose pod stops, or leaves the account, ends with a word of why, once a poll shows it: it would otherwise
try a sync at every local save and fail each time, and the tab would go on saying "watching" (docs/sync.md#watch)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Checkbox

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from tests.helpers.pilot import wait_until
from tests.helpers.sim import DEMO_IDS
from tests.sync_pane.conftest import PANES, SYNC_S, fill, open_form, shown, sync_panel, synced, view

POD = DEMO_IDS["idle"]


@pytest.mark.parametrize("how", ["stop", "terminate"])
async def test_a_watch_ends_when_its_pod_goes_down(
    make_full_app: Callable[..., PodtuiApp], full_sim: Simulator, sim_api: V2Api, proj: Path, how: str
) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        form.query_one("#watch", Checkbox).value = True
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: view(app, POD).watching and view(app, POD).snap.runs >= 1, SYNC_S)
        runs = view(app, POD).snap.runs
        if how == "stop":
            sim_api.stop_pod(POD)
        else:
            sim_api.terminate_pod(POD)
        app.poll_now()
        ended = await synced(pilot, app, POD, runs)
        assert not ended.watching and not ended.busy
        assert any("watch" in str(n.message) and "ended" in str(n.message) for n in app._notifications)
        assert "watching" not in shown(panel)
