"""The Sync tab in the real app on the whole simulator (docs/sync.md): the form starts a sync to the gateway pod and
to the direct one, the tab shows the plan, then the result with the verified count; a second sync has nothing to
copy."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from tests.helpers.sim import DEMO_IDS, DIRECT_POD, GATEWAY_POD, needs_sshd, pod_workspace
from tests.sync_pane.conftest import PANES, fill, open_form, shown, sync_panel, synced

ROUTES = [
    pytest.param(GATEWAY_POD, DEMO_IDS["idle"], "console", id="gateway"),
    pytest.param(DIRECT_POD, DEMO_IDS["train"], "rsync", id="direct", marks=needs_sshd),
]


@pytest.mark.parametrize(("name", "pod_id", "route"), ROUTES)
async def test_a_sync_from_the_form_then_nothing_to_copy(
    make_full_app: Callable[..., PodtuiApp],
    full_sim: Simulator,
    sim_api: V2Api,
    proj: Path,
    name: str,
    pod_id: str,
    route: str,
) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await sync_panel(pilot, app, pod_id)
        assert "No sync with" in shown(panel)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        await pilot.press("ctrl+s")
        done = await synced(pilot, app, pod_id)
        last = done.snap.last
        assert last is not None and last.ok, last
        assert last.route == route
        assert sorted(p for p, _ in last.verified) == [".gitignore", "README.md", "src/train.py"]
        text = shown(panel)
        assert "~/proj → " + name + ":/workspace/proj" in text
        assert "3 new · 0 changed" in text and "1 ignored" in text
        assert "3 verified" in text and f"via {route}" in text
        ws = pod_workspace(full_sim, sim_api, name)
        assert (ws / "proj" / "src" / "train.py").read_text() == "print('training')\n"
        assert not (ws / "proj" / "run.log").exists()
        assert any("3 files verified on both ends" in str(n.message) for n in app._notifications)  # the alert

        await pilot.press("r")  # again, as last time: nothing changed
        again = await synced(pilot, app, pod_id, runs=2)
        assert again.snap.last is not None and again.snap.last.ok and not again.snap.last.verified
        assert "nothing to copy" in shown(panel) and "3 unchanged" in shown(panel)


async def test_the_palette_opens_the_form_and_syncs_again(make_full_app: Callable[..., PodtuiApp], proj: Path) -> None:
    from podtui.ui.commands import PodCommands
    from podtui.ui.screens.sync_form import SyncFormScreen
    from tests.helpers.pilot import wait_until

    pod_id = DEMO_IDS["idle"]
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await sync_panel(pilot, app, pod_id)
        await pilot.press("escape")  # back to the list: the palette's commands follow its selection

        def command(name: str) -> Callable[[], object] | None:
            return next((run for n, run, _ in PodCommands(app.screen)._commands() if n == name), None)

        ask = command(f"Sync a folder with {GATEWAY_POD}")
        assert ask is not None and command(f"Sync {GATEWAY_POD} again") is None  # nothing to do again yet
        ask()
        await wait_until(pilot, lambda: isinstance(app.screen, SyncFormScreen) and app.screen.is_mounted)
        await pilot.pause()
        form = app.screen
        assert isinstance(form, SyncFormScreen)
        await fill(pilot, form, local="~/proj", remote="proj")
        await pilot.press("ctrl+s")
        await synced(pilot, app, pod_id)
        again = command(f"Sync {GATEWAY_POD} again")
        assert again is not None
        again()
        await synced(pilot, app, pod_id, runs=2)


async def test_a_pod_that_is_not_running_is_said_and_no_form_opens(
    make_full_app: Callable[..., PodtuiApp], proj: Path
) -> None:
    from tests.helpers.pilot import wait_until

    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await sync_panel(pilot, app, DEMO_IDS["stopped"])
        assert "No sync with notebook-4090" in shown(panel)
        await pilot.press("n")
        await wait_until(pilot, lambda: any("a sync needs it running" in str(n.message) for n in app._notifications))
        assert app.screen.__class__.__name__ == "PodListScreen"


async def test_below_100x30_the_sync_is_a_screen_of_its_own(
    make_full_app: Callable[..., PodtuiApp], proj: Path
) -> None:
    from podtui.ui.screens.console import ConsoleScreen
    from podtui.ui.screens.pod_list import PodListScreen
    from podtui.ui.screens.sync import SyncScreen
    from tests.helpers.pilot import wait_until

    pod_id = DEMO_IDS["idle"]
    app = make_full_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        panel = await sync_panel(pilot, app, pod_id)
        assert isinstance(app.screen, SyncScreen)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        await pilot.press("ctrl+s")
        await synced(pilot, app, pod_id)
        assert "3 verified" in shown(panel)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))
        await pilot.press("Y")
        await wait_until(pilot, lambda: isinstance(app.screen, SyncScreen))
        await pilot.pause()
        await pilot.press("c")  # a console on the pod, to run what was synced
        await wait_until(pilot, lambda: isinstance(app.screen, ConsoleScreen))


async def test_a_pull_from_the_form_makes_the_folder_here(
    make_full_app: Callable[..., PodtuiApp], full_sim: Simulator, sim_api: V2Api, isolated_home: Path
) -> None:
    from textual.widgets import Checkbox, RadioButton

    from tests.helpers.pilot import wait_until

    outputs = pod_workspace(full_sim, sim_api, GATEWAY_POD) / "runs" / "7"
    (outputs / "ckpt").mkdir(parents=True)
    (outputs / "ckpt" / "adapter.bin").write_bytes(b"\0weights\n" * 1000)
    (outputs / "metrics.json").write_text('{"loss": 0.42}\n')
    pod_id = DEMO_IDS["idle"]
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await sync_panel(pilot, app, pod_id)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/results", remote="runs/7")
        form.query_one("#pull", RadioButton).value = True
        await wait_until(pilot, lambda: form.query_one("#watch", Checkbox).disabled)  # a pull has nothing to watch
        await pilot.press("ctrl+s")
        done = await synced(pilot, app, pod_id)
        assert done.snap.last is not None and done.snap.last.ok and len(done.snap.last.verified) == 2
        here = isolated_home / "results"
        assert (here / "ckpt" / "adapter.bin").read_bytes() == b"\0weights\n" * 1000
        assert (here / "metrics.json").read_text() == '{"loss": 0.42}\n'
        assert f"{GATEWAY_POD}:/workspace/runs/7 → ~/results" in shown(panel) and "pull" in shown(panel)
        await pilot.press("w")  # the watch follows local changes: for a pull, the form, with its way to change
        await wait_until(pilot, lambda: isinstance(app.screen, type(form)) and app.screen is not form)
