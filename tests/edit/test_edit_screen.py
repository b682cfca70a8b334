"""The edit screen driven with Pilot: e opens it on the list and on the details screen, secret env values show
masked and are kept, the review shows the diff and the restart, the save goes to RunPod, a refusal is said in the
form with nothing lost, and read-only mode refuses it."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import Input, TextArea

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.edit_pod import EditPodScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.screens.pod_list import PodListScreen
from tests.helpers.pilot import loaded, opened_by_key, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (120, 32)
TRAIN = DEMO_IDS["train"]


async def test_edit_review_and_save(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    token = sim.world.pods[TRAIN].env["HF_TOKEN"]
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "j", "e")  # llama-lora-3090
        await wait_until(pilot, lambda: isinstance(app.screen, EditPodScreen))
        env = app.screen.query_one("#env", TextArea)
        assert token not in env.text and "HF_TOKEN=•••••• (hidden)" in env.text
        app.screen.query_one("#name", Input).value = "llama-2"
        env.text = env.text + "\nEPOCHS=3"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        body = str(app.screen.query_one("#body").render())
        assert "llama-lora-3090 -> llama-2" in body and "env +EPOCHS" in body and token not in body
        assert "running processes end" in body
        await pilot.press("tab", "enter")  # Save and restart
        await wait_until(pilot, lambda: sim.world.pods[TRAIN].name == "llama-2")
        assert sim.world.pods[TRAIN].env["HF_TOKEN"] == token and sim.world.pods[TRAIN].env["EPOCHS"] == "3"
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))


async def test_nothing_to_change_and_bad_fields_stay_in_the_form(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "j", "e", "ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, EditPodScreen))
        assert "nothing to change" in str(app.screen.query_one("#error").render())
        app.screen.query_one("#ports", Input).value = "8888"
        app.screen.query_one("#volume", Input).value = "20"
        await pilot.press("ctrl+s")
        error = str(app.screen.query_one("#error").render())
        assert "write ports like" in error and "cannot shrink" in error
        assert isinstance(app.screen, EditPodScreen) and app.screen.query_one("#ports", Input).value == "8888"


async def test_runpods_refusal_is_said_and_nothing_typed_is_lost(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add("conflict", "pod belongs to a cluster", only="PATCH /v2/pods/")
        await pilot.press("j", "j", "e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditPodScreen))
        app.screen.query_one("#name", Input).value = "renamed"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: "cluster" in str(app.screen.query_one("#error").render()))
        assert isinstance(app.screen, EditPodScreen) and app.screen.query_one("#name", Input).value == "renamed"
        assert sim.world.pods[TRAIN].name == "llama-lora-3090"


async def test_lock_from_the_details_screen(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=(90, 30)) as pilot:  # small: the details open on a screen of their own
        await loaded(pilot, app)
        await pilot.press("j", "j", "j", "j", "enter")  # sweep-h100x2, locked
        await wait_until(pilot, lambda: isinstance(app.screen, PodDetailScreen))
        notes = str(app.screen.query_one("#notes").render())
        assert "Locked pods cannot be stopped or reset" in notes and "data deleted at $0" in notes
        await pilot.press("e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditPodScreen))
        app.screen.query_one("#locked").focus()  # scrolled into view
        await pilot.press("space")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "locked         yes -> no" in str(app.screen.query_one("#body").render())
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: not sim.world.pods[DEMO_IDS["starting"]].locked)


async def test_read_only_refuses_the_edit(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await pilot.press("e")
        assert isinstance(app.screen, PodListScreen)
        assert any("read-only mode: editing a pod" in n.message for n in app._notifications)


async def test_e_twice_opens_one_form(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await opened_by_key(pilot, app, "e", EditPodScreen)
        app.navigator.open_edit(app.screen.pod)  # type: ignore[attr-defined]
        assert len([s for s in app.screen_stack if isinstance(s, EditPodScreen)]) == 1
