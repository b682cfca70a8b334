"""A sync cancelled from the Sync tab mid-copy leaves nothing half-written under a final name; a watch turned on
from the tab syncs a local change by itself until it is turned off (docs/sync.md#watch)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from tests.helpers.pilot import wait_until
from tests.helpers.sim import DEMO_IDS, GATEWAY_POD, pod_workspace
from tests.helpers.sync import no_leftovers
from tests.helpers.transfer import wait_for
from tests.sync_pane.conftest import PANES, SYNC_S, fill, open_form, shown, sync_panel, synced, view

POD = DEMO_IDS["idle"]  # eval-a100, through the gateway: the console route, the slowest
BIG = 48_000_000  # random bytes, so nothing on the way compresses them away


async def test_cancel_mid_copy(
    make_full_app: Callable[..., PodtuiApp], full_sim: Simulator, sim_api: V2Api, proj: Path
) -> None:
    (proj / "big.bin").write_bytes(os.urandom(BIG))
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: view(app, POD).snap.done_bytes > 0, SYNC_S)
        text = shown(panel)
        assert "In flight" in text and "of 48 MB" in text, text
        await pilot.press("x")
        ended = await synced(pilot, app, POD)
        last = ended.snap.last
        assert last is not None and last.cancelled and "big.bin" not in [p for p, _ in last.verified]
        assert "cancelled" in shown(panel)
        remote = pod_workspace(full_sim, sim_api, GATEWAY_POD) / "proj"
        assert not (remote / "big.bin").exists() and no_leftovers(remote)


async def test_watch_on_syncs_a_change_then_off(
    make_full_app: Callable[..., PodtuiApp], full_sim: Simulator, sim_api: V2Api, proj: Path
) -> None:
    app = make_full_app()
    remote = pod_workspace(full_sim, sim_api, GATEWAY_POD) / "proj"
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        await pilot.press("ctrl+s")
        await synced(pilot, app, POD)
        await pilot.press("w")  # the last sync, again after each local change
        await wait_until(pilot, lambda: view(app, POD).watching and view(app, POD).snap.runs >= 2, SYNC_S)
        assert "watching" in shown(panel)
        (proj / "src" / "train.py").write_text("print('training, changed')\n")

        def arrived() -> bool:
            last = view(app, POD).snap.last
            return last is not None and [p for p, _ in last.verified] == ["src/train.py"]

        await wait_until(pilot, arrived, SYNC_S)
        assert (remote / "src" / "train.py").read_text() == "print('training, changed')\n"
        await pilot.pause(0.2)  # the result drawn
        assert "1 changed" in shown(panel) and "1 verified" in shown(panel)
        assert view(app, POD).watching
        await pilot.press("w")  # off
        await wait_until(pilot, lambda: not view(app, POD).busy, SYNC_S)
        assert not view(app, POD).watching and "watching" not in shown(panel)
        runs = view(app, POD).snap.runs
        (proj / "README.md").write_text("# proj, changed after the watch\n")
        await pilot.pause(1.5)  # longer than the watch's debounce: a watch still on would have started a sync
        assert view(app, POD).snap.runs == runs and not view(app, POD).busy


async def test_the_app_ending_cancels_the_sync_under_way(
    make_full_app: Callable[..., PodtuiApp], full_sim: Simulator, sim_api: V2Api, proj: Path
) -> None:
    (proj / "big.bin").write_bytes(os.urandom(BIG))
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: view(app, POD).snap.done_bytes > 0, SYNC_S)
        state = app.syncs._entry(POD).state  # the sync's thread reports here after the app has gone
        await pilot.press("q")  # quit: no console is open, so nothing is asked
    wait_for(lambda: not state.snapshot().running, SYNC_S)
    last = state.snapshot().last
    assert last is not None and last.cancelled
    remote = pod_workspace(full_sim, sim_api, GATEWAY_POD) / "proj"
    assert not (remote / "big.bin").exists() and no_leftovers(remote)
