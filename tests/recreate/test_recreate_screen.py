"""The app remembers every pod's launch after each poll (in podtui's data folder, or in memory for the demo), and
the Recreate view lists what it remembers: the pods gone and those still there (marked), enter opens the create
form filled in with the spec, d forgets one, read-only mode refuses."""

from __future__ import annotations

import json
from collections.abc import Callable

from textual.widgets import DataTable, Static

from podtui.core.launch_memory import FILE_NAME, LaunchMemory
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.recreate import RecreateScreen
from tests.helpers.pilot import loaded, opened_by_key, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (120, 32)
TOKEN = "hf_demoDemoDemoDemoDemoDemo0000"


def _row(screen: RecreateScreen, pod_id: str) -> list[str]:
    return [str(c) for c in screen.query_one(DataTable).get_row(pod_id)]


async def test_the_app_remembers_after_a_poll_in_its_data_folder(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    app = make_app(demo=False)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        path = app.services.paths.data_dir / FILE_NAME
        await wait_until(pilot, lambda: path.exists())
        text = path.read_text()
        assert TOKEN not in text
        remembered = {p["pod_id"] for p in json.loads(text)["pods"]}
        assert DEMO_IDS["train"] in remembered and DEMO_IDS["idle"] in remembered


async def test_the_demo_remembers_in_memory(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()  # the demo's services
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        memory = LaunchMemory.for_services(app.services)
        await wait_until(pilot, lambda: len(memory.records()) > 0)
        assert memory.path is None
        assert not (app.services.paths.data_dir / FILE_NAME).exists()


async def test_gone_and_live_pods_forget_and_the_create_form(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    from podtui.ui.screens.create_pod import CreatePodScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: len(LaunchMemory.for_services(app.services).records()) > 0)
        sim.world.terminate(DEMO_IDS["train"])
        screen = await opened_by_key(pilot, app, "N", RecreateScreen)
        await wait_until(pilot, lambda: screen.records is not None)
        assert _row(screen, DEMO_IDS["train"])[1] == "gone"
        assert _row(screen, DEMO_IDS["idle"])[1].startswith("●")
        assert "no longer on the account" in str(screen.query_one("#status", Static).render())
        table = screen.query_one(DataTable)
        ids = [r.pod_id for r in screen.records or ()]
        table.move_cursor(row=ids.index(DEMO_IDS["train"]))
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CreatePodScreen))
        form = app.screen
        assert isinstance(form, CreatePodScreen) and form.prefill is not None
        assert form.prefill.name == "llama-lora-3090" and "HF_TOKEN" not in dict(form.prefill.env)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)
        await pilot.press("d")
        await wait_until(pilot, lambda: DEMO_IDS["train"] not in {r.pod_id for r in screen.records or ()})
        remembered = LaunchMemory.for_services(app.services).records()
        assert DEMO_IDS["train"] not in {r.pod_id for r in remembered}


async def test_read_only_refuses_the_create_form(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened_by_key(pilot, app, "N", RecreateScreen)
        await wait_until(pilot, lambda: bool(screen.records))
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen


async def test_a_failed_look_at_the_account_still_lists_what_is_remembered(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: len(LaunchMemory.for_services(app.services).records()) > 0)
        sim.faults.add("server_error", 500, times=1, only="GET /v2/pods")
        screen = await opened_by_key(pilot, app, "N", RecreateScreen)
        await wait_until(pilot, lambda: screen.records is not None)
        assert screen.records
        status = screen.query_one("#status", Static)
        assert "cannot ask RunPod which pods are there now" in str(status.render()) and status.has_class("-error")


async def test_the_palette_opens_each_screen(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    from podtui.ui.screens.templates import TemplatesScreen
    from podtui.ui.screens.volumes import VolumesScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        for words, kind in (
            ("network volumes", VolumesScreen),
            ("templates: a pod", TemplatesScreen),
            ("recreate a pod", RecreateScreen),
        ):
            await pilot.press("ctrl+p")
            await pilot.pause(0.2)
            await pilot.press(*words)
            await pilot.pause(0.3)
            await pilot.press("enter")
            await wait_until(pilot, lambda kind=kind: isinstance(app.screen, kind))  # type: ignore[misc]
            await pilot.press("escape")
            await wait_until(pilot, lambda kind=kind: not isinstance(app.screen, kind))  # type: ignore[misc]
