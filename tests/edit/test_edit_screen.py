"""The edit screen driven with Pilot: e opens it on the list and on the details screen, it reads the pod from
RunPod (not the list's copy made fit to show), secret env values show masked and are kept, the review shows the
diff and the restart, the save goes to RunPod unless the pod changed meanwhile, a refusal is said in the form with
nothing lost, and read-only mode refuses it."""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import Checkbox, Input, TextArea

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


def form_loaded(app: PodtuiApp) -> bool:
    """The edit form is up and filled from the pod RunPod sent."""
    screen = app.screen
    return isinstance(screen, EditPodScreen) and screen.loaded and bool(screen.query("#name"))


async def open_form(pilot: Pilot[None], app: PodtuiApp, *keys: str) -> EditPodScreen:
    await pilot.press(*keys)
    await wait_until(pilot, lambda: form_loaded(app))
    screen = app.screen
    assert isinstance(screen, EditPodScreen)
    return screen


def error(app: PodtuiApp) -> str:
    return str(app.screen.query_one("#error").render())


async def test_edit_review_and_save(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    token = sim.world.pods[TRAIN].env["HF_TOKEN"]
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await open_form(pilot, app, "j", "j", "e")  # llama-lora-3090
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
        await open_form(pilot, app, "j", "j", "e")
        await pilot.press("ctrl+s")
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
        await open_form(pilot, app, "j", "j", "e")
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
        await open_form(pilot, app, "e")
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


async def test_an_env_value_with_a_line_break_survives_another_edit(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    """The list's copy shows it as the text `\\n`; the form reads the pod itself, so the value goes back as it was."""
    sim.world.pods[TRAIN].env["NOTE"] = "line1\nline2"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await open_form(pilot, app, "j", "j", "e")
        env = app.screen.query_one("#env", TextArea)
        assert "NOTE=•••••• (hidden)" in env.text and "line1" not in env.text
        env.text = env.text + "\nEPOCHS=3"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "NOTE" not in str(app.screen.query_one("#body").render())  # not a change
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: sim.world.pods[TRAIN].env.get("EPOCHS") == "3")
        assert sim.world.pods[TRAIN].env["NOTE"] == "line1\nline2"


async def test_a_pod_whose_name_has_an_escape_can_be_locked(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    sim.world.pods[TRAIN].name = "llama\x1b[31m"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await open_form(pilot, app, "j", "j", "e")
        assert app.screen.query_one("#name", Input).value == ""  # never drawn raw: empty keeps it
        assert "\\x1b" in str(app.screen.query_one("#title").render())
        app.screen.query_one("#locked", Checkbox).value = True
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        body = str(app.screen.query_one("#body").render())
        assert "locked         no -> yes" in body and "name" not in body
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: sim.world.pods[TRAIN].locked)
        assert sim.world.pods[TRAIN].name == "llama\x1b[31m"


async def test_a_token_rotated_elsewhere_is_not_put_back(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    """The form sends the whole env: a value changed on RunPod after the form read the pod stops the save, and the
    next review is made against the pod as it is now, keeping what was typed and the new token."""
    rotated = "hf_" + "r" * 30
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await open_form(pilot, app, "j", "j", "e")
        app.screen.query_one("#name", Input).value = "llama-2"
        sim.world.pods[TRAIN].env["HF_TOKEN"] = rotated  # someone rotates it meanwhile
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, EditPodScreen) and "changed on RunPod" in error(app))
        assert "nothing sent" in error(app) and sim.world.pods[TRAIN].name == "llama-lora-3090"
        assert sim.world.pods[TRAIN].env["HF_TOKEN"] == rotated
        assert app.screen.query_one("#name", Input).value == "llama-2"  # what was typed is kept
        await pilot.press("ctrl+s")  # review again: against the pod as it is now
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "HF_TOKEN" not in str(app.screen.query_one("#body").render())
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: sim.world.pods[TRAIN].name == "llama-2")
        assert sim.world.pods[TRAIN].env["HF_TOKEN"] == rotated


async def test_a_touched_stand_in_is_refused_in_the_form(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    token = sim.world.pods[TRAIN].env["HF_TOKEN"]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await open_form(pilot, app, "j", "j", "e")
        env = app.screen.query_one("#env", TextArea)
        env.text = env.text.replace("HF_TOKEN=•••••• (hidden)", "HF_TOKEN=•••••• (hidden)x")
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, EditPodScreen) and "type the whole new value" in error(app)
        assert sim.world.pods[TRAIN].env["HF_TOKEN"] == token


async def test_unchanged_odd_values_do_not_stop_an_unlock(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    """RunPod took a key like my.var and a 2 GB container disk: unlocking the pod leaves them alone, unchecked."""
    pod = sim.world.pods[TRAIN]
    pod.env["my.var"] = "1"
    pod.container_disk_gb = 2
    pod.locked = True
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await open_form(pilot, app, "j", "j", "e")
        app.screen.query_one("#locked", Checkbox).value = False
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: not sim.world.pods[TRAIN].locked)
        assert pod.env["my.var"] == "1" and pod.container_disk_gb == 2


async def test_a_locked_running_pod_is_told_to_unlock_before_anything_is_sent(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    sim.world.pods[TRAIN].locked = True
    image = sim.world.pods[TRAIN].image
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await open_form(pilot, app, "j", "j", "e")
        app.screen.query_one("#image", Input).value = "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04"
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, EditPodScreen) and "unlock it in the same edit" in error(app)
        assert sim.world.pods[TRAIN].image == image


async def test_the_form_says_when_the_pod_cannot_be_read(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add("status", 502, only=f"GET /v2/pods/{TRAIN}")
        await pilot.press("j", "j", "e")

        def said() -> str:
            return str(app.screen.query_one("#loading").render())

        await wait_until(pilot, lambda: isinstance(app.screen, EditPodScreen) and "could not read" in said())
        assert "502" in said()
        screen = app.screen
        assert isinstance(screen, EditPodScreen) and not screen.loaded and not screen.query("#name")
        assert app.screen.query_one("#review").disabled
        await pilot.press("ctrl+s")  # nothing to review: nothing happens
        assert app.screen is screen
        await pilot.press("escape")
        assert isinstance(app.screen, PodListScreen)


async def test_closed_while_loading_is_quiet(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        sim.faults.add("hang", 0.5, times=1, only=f"GET /v2/pods/{TRAIN}")
        await pilot.press("j", "j", "e")
        await wait_until(pilot, lambda: isinstance(app.screen, EditPodScreen))
        await pilot.press("escape")
        assert isinstance(app.screen, PodListScreen)
        await pilot.pause(1.0)  # the answer comes to a closed form
        assert isinstance(app.screen, PodListScreen)
        assert not [n for n in app._notifications if n.severity == "error"]
