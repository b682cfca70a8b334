"""The Volumes view driven with its keys against the simulated RunPod: the table with the pods using each volume
and the totals; n creates (cost shown, fields checked as typed, RunPod's refusal in the form), g grows, r renames,
d deletes (refused while a pod mounts it; the name typed; Cancel focused), c opens the create form on the volume,
read-only mode refuses every change, and a failed load is said in the status line."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.widgets import Button, DataTable, Input, Select, Static

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.volume_delete import VolumeDeleteScreen
from podtui.ui.screens.volume_edit import VolumeEditScreen
from podtui.ui.screens.volume_form import VolumeFormScreen
from podtui.ui.screens.volumes import VolumesScreen
from tests.helpers.pilot import opened_by_key, wait_until
from tests.volumes.conftest import CHECKPOINTS, DATASETS

SIZE = (120, 32)


def _text(screen: object, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())  # type: ignore[attr-defined]


async def _opened(pilot, app: PodtuiApp) -> VolumesScreen:  # type: ignore[no-untyped-def]
    screen = await opened_by_key(pilot, app, "v", VolumesScreen)
    await wait_until(pilot, lambda: screen.volumes is not None)
    return screen


async def _on(pilot, screen: VolumesScreen, volume_id: str) -> None:  # type: ignore[no-untyped-def]
    table = screen.query_one(DataTable)
    ids = [v.id for v in screen.volumes or ()]
    table.move_cursor(row=ids.index(volume_id))
    await pilot.pause()


async def test_the_table_the_pods_and_the_totals(volumes: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        table = screen.query_one(DataTable)
        assert table.row_count == 2
        row = [str(c) for c in table.get_row(DATASETS.id)]
        assert row[:6] == ["datasets", DATASETS.id, "200 GB", "EU-RO-1", "std", "$14.00"]
        assert row[6] == "llama-lora-3090"
        assert [str(c) for c in table.get_row(CHECKPOINTS.id)][6] == "—"
        assert "2 volumes · 250 GB · $17.50/month" in _text(screen, "#totals")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, VolumesScreen))


async def test_create_checks_as_typed_shows_the_cost_and_creates(
    volumes: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, VolumeFormScreen))
        form = app.screen
        assert isinstance(form, VolumeFormScreen)
        await wait_until(pilot, lambda: bool(form.centres))
        assert all(c.takes_volumes for c in form.centres) and "CA-MTL-1" not in {c.id for c in form.centres}
        form.query_one("#size", Input).value = "5"
        await pilot.pause()
        assert "from 10 to 4096" in _text(form, "#err-size")
        await pilot.click("#create")
        await pilot.pause()
        assert "fix the fields marked in red" in _text(form, "#error")
        assert len(volumes.world.volumes) == 2  # nothing was sent
        form.query_one("#name", Input).value = "models"
        form.query_one("#size", Input).value = "300"
        form.query_one("#dc", Select).value = "US-KS-2"
        await pilot.pause()
        form.query_one("#type", Select).value = "HIGH_PERFORMANCE"
        await pilot.pause()
        assert "$21.00/month" in _text(form, "#cost")
        assert "$21.00/month" in str(form.query_one("#create", Button).label)
        await pilot.click("#create")
        await wait_until(pilot, lambda: app.screen is screen)
        made = next(v for v in volumes.world.volumes.values() if v.name == "models")
        assert (made.size_gb, made.data_centre, made.type) == (300, "US-KS-2", "HIGH_PERFORMANCE")
        await wait_until(pilot, lambda: screen.selected is not None and screen.selected.id == made.id)


async def test_runpods_refusal_stays_in_the_form_and_nothing_typed_is_lost(
    volumes: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _opened(pilot, app)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, VolumeFormScreen))
        form = app.screen
        assert isinstance(form, VolumeFormScreen)
        await wait_until(pilot, lambda: bool(form.centres))
        form.query_one("#name", Input).value = "models"
        volumes.faults.add("server_error", 503, times=1, only="POST /v2/network-volumes")
        await pilot.click("#create")
        await wait_until(pilot, lambda: "RunPod did not create the volume" in _text(form, "#error"))
        assert app.screen is form and form.query_one("#name", Input).value == "models"
        assert not form.query_one("#create", Button).disabled
        await pilot.click("#create")  # again, and now it goes through
        await wait_until(pilot, lambda: app.screen is not form)
        assert any(v.name == "models" for v in volumes.world.volumes.values())


async def test_grow_and_rename(volumes: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await _on(pilot, screen, CHECKPOINTS.id)
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, VolumeEditScreen))
        dialog = app.screen
        box = dialog.query_one("#value", Input)
        box.value = "40"
        await pilot.pause()
        assert "cannot shrink" in _text(dialog, "#problem")
        await pilot.press("enter")
        await pilot.pause()
        assert volumes.world.volumes[CHECKPOINTS.id].size_gb == 50  # nothing was sent
        box.value = "100"
        await pilot.pause()
        assert "$7.00/month from now on (was $3.50/month)" in _text(dialog, "#problem")
        assert "$7.00/month" in str(dialog.query_one("#save", Button).label)  # what Grow commits to
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen)
        assert volumes.world.volumes[CHECKPOINTS.id].size_gb == 100
        table = screen.query_one(DataTable)
        await wait_until(pilot, lambda: "100 GB" in [str(c) for c in table.get_row(CHECKPOINTS.id)])
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, VolumeEditScreen))
        dialog = app.screen
        dialog.query_one("#value", Input).value = "ckpts"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen)
        assert volumes.world.volumes[CHECKPOINTS.id].name == "ckpts"


async def test_a_refused_grow_can_be_sent_again_at_once(
    volumes: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await _on(pilot, screen, CHECKPOINTS.id)
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, VolumeEditScreen))
        dialog = app.screen
        dialog.query_one("#value", Input).value = "100"
        await pilot.pause()
        volumes.faults.add("server_error", 503, times=1, only=f"PATCH /v2/network-volumes/{CHECKPOINTS.id}")
        await pilot.click("#save")
        await wait_until(pilot, lambda: bool(_text(dialog, "#error")))
        assert app.screen is dialog and dialog.query_one("#value", Input).value == "100"
        await pilot.click("#save")  # the second press, at once, is not swallowed by the first's
        await wait_until(pilot, lambda: app.screen is screen)
        assert volumes.world.volumes[CHECKPOINTS.id].size_gb == 100


async def test_delete_refused_while_in_use_then_the_name_typed(
    volumes: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await _on(pilot, screen, DATASETS.id)
        await pilot.press("d")
        await pilot.pause()
        assert app.screen is screen  # no dialog: refused before anything is typed
        assert "in use by pod llama-lora-3090" in _text(screen, "#status")
        await _on(pilot, screen, CHECKPOINTS.id)
        await pilot.press("delete")
        await wait_until(pilot, lambda: isinstance(app.screen, VolumeDeleteScreen))
        dialog = app.screen
        assert dialog.focused is dialog.query_one("#cancel", Button)
        await pilot.press(*"checkpoint", "enter")  # one letter short
        await pilot.pause()
        assert app.screen is dialog and dialog.query_one("#confirm", Button).disabled
        assert CHECKPOINTS.id in volumes.world.volumes
        await pilot.press("s")
        await pilot.pause()
        assert not dialog.query_one("#confirm", Button).disabled
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen)
        assert CHECKPOINTS.id not in volumes.world.volumes
        await wait_until(pilot, lambda: screen.query_one(DataTable).row_count == 1)


async def test_escape_cancels_the_delete(volumes: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await _on(pilot, screen, CHECKPOINTS.id)
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, VolumeDeleteScreen))
        await pilot.press(*"checkpoints", "escape")
        await wait_until(pilot, lambda: app.screen is screen)
        assert CHECKPOINTS.id in volumes.world.volumes


async def test_read_only_refuses_every_change(volumes: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await _on(pilot, screen, CHECKPOINTS.id)
        for key in ("n", "g", "r", "d"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen, key
        assert len(volumes.world.volumes) == 2


async def test_a_failed_load_is_said_and_refresh_tries_again(
    volumes: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        volumes.faults.add("server_error", 500, times=1, only="GET /v2/network-volumes")
        screen = await opened_by_key(pilot, app, "v", VolumesScreen)
        await wait_until(pilot, lambda: "cannot load the network volumes" in _text(screen, "#status"))
        assert screen.query_one("#status").has_class("-error")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: screen.volumes is not None and len(screen.volumes) == 2)
        assert not screen.query_one("#status").has_class("-error")


async def test_c_opens_the_create_form_on_the_volume(volumes: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    from podtui.ui.screens.create_pod import CreatePodScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await _on(pilot, screen, DATASETS.id)
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CreatePodScreen))
        form = app.screen
        assert isinstance(form, CreatePodScreen) and form.prefill is not None
        assert form.prefill.network_volume_id == DATASETS.id and form.prefill.volume_gb == 0
        assert form.prefill.data_centre_ids == ("EU-RO-1",)


async def _form(pilot, app: PodtuiApp) -> VolumeFormScreen:  # type: ignore[no-untyped-def]
    await _opened(pilot, app)
    await pilot.press("n")
    await wait_until(pilot, lambda: isinstance(app.screen, VolumeFormScreen))
    form = app.screen
    assert isinstance(form, VolumeFormScreen)
    await wait_until(pilot, lambda: bool(form.centres))
    form.query_one("#name", Input).value = "datasets"  # names are not unique: the one there is not ours
    form.query_one("#dc", Select).value = "EU-RO-1"
    await pilot.pause()
    return form


async def test_a_lost_answer_finds_the_volume_made_after_all(
    volumes: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        form = await _form(pilot, app)
        volumes.faults.add("malformed", times=1, only="POST /v2/network-volumes")
        await pilot.click("#create")
        await wait_until(pilot, lambda: app.screen is not form)
        named = [v for v in volumes.world.volumes.values() if v.name == "datasets"]
        assert len(named) == 2 and volumes.rest_requests.count("POST /v2/network-volumes") == 1


@pytest.mark.parametrize(("fault", "value"), [("status", 502), ("raw", "{}")], ids=["gateway-page", "not-a-volume"])
async def test_a_lost_answer_is_never_said_to_have_failed_and_create_stays_off(
    volumes: SimApiServer,
    make_app: Callable[..., PodtuiApp],
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    value: object,
) -> None:
    """No volume listed after a lost answer: it may still appear, and a second create would bill a second one."""
    monkeypatch.setattr(VolumeFormScreen, "lookup_delays", (0.0,))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        form = await _form(pilot, app)
        volumes.faults.add(fault, value, times=1, only="POST /v2/network-volumes")  # type: ignore[arg-type]
        await pilot.click("#create")
        await wait_until(pilot, lambda: "may have been created" in _text(form, "#error"))
        said = _text(form, "#error")
        assert "did not create" not in said and "look at the volumes list" in said.lower()
        assert form.query_one("#create", Button).disabled and form.query_one("#name", Input).value == "datasets"
        form.query_one("#name", Input).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is form and volumes.rest_requests.count("POST /v2/network-volumes") == 1
