"""The sync form: each kind of bad input is refused in words in the form, with nothing typed lost and nothing
started; a push in read-only mode and a second sync on a pod already syncing are refused there too; keys pressed
twice start one sync (docs/architecture.md#forms)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Checkbox, Input, Select, Static, TextArea

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.sync_form import SyncFormScreen
from tests.helpers.pilot import wait_until
from tests.helpers.sim import DEMO_IDS, GATEWAY_POD, needs_sshd, pod_workspace
from tests.sync_pane.conftest import PANES, SYNC_S, fill, open_form, sync_panel, synced, view

POD = DEMO_IDS["idle"]


def said(form: SyncFormScreen, line: str) -> str:
    box = form.query_one(f"#{line}", Static)
    return str(box.render()) if box.display and (line == "error" or box.has_class("-shown")) else ""


@pytest.mark.parametrize(
    ("local", "remote", "excludes", "field", "words"),
    [
        ("~/nope", "proj", "", "err-local", "does not exist here; nothing to sync from"),
        ("~/proj/README.md", "proj", "", "err-local", "is not a folder; sync works on folders"),
        ("", "proj", "", "err-local", "which folder on this machine?"),
        ("~/proj", "", "", "err-remote", "which folder on the pod?"),
        ("~/proj", "/", "", "err-remote", "REMOTE_DIR / is the pod's whole filesystem"),
        ("~/proj", "../..", "", "err-remote", "REMOTE_DIR / is the pod's whole filesystem"),
        ("~/proj", "proj", "*.log\n[z-a]", "err-excludes", "line 2: '[z-a]' is not a gitignore pattern"),
    ],
)
async def test_bad_input_stays_in_the_form(
    make_full_app: Callable[..., PodtuiApp],
    proj: Path,
    local: str,
    remote: str,
    excludes: str,
    field: str,
    words: str,
) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local=local, remote=remote)
        form.query_one("#excludes", TextArea).text = excludes
        form.query_one("#delete", Checkbox).value = True
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "fix the fields" in said(form, "error"))
        assert words in said(form, field)
        delete = form.query_one("#delete", Checkbox)
        delete.value = False
        await pilot.pause()
        delete.value = True  # the same input checked again as typed, after the refusal: the marks stay
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert words in said(form, field)
        assert app.screen is form and not form.query_one("#sync").disabled
        assert form.query_one("#local", Input).value == local and form.query_one("#remote", Input).value == remote
        assert form.query_one("#excludes", TextArea).text == excludes and form.query_one("#delete", Checkbox).value
        assert not view(app, POD).busy and view(app, POD).spec is None  # nothing started, nothing remembered


async def test_a_missing_folder_is_said_as_it_is_typed(make_full_app: Callable[..., PodtuiApp], proj: Path) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES) as pilot:
        await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/pro")
        await wait_until(pilot, lambda: "does not exist here" in said(form, "err-local"))
        assert said(form, "err-remote") == ""  # not typed into yet: an empty box is not wrong yet
        await fill(pilot, form, local="~/proj")
        await wait_until(pilot, lambda: said(form, "err-local") == "")


async def test_a_push_in_read_only_mode_is_refused_in_the_form(
    make_full_app: Callable[..., PodtuiApp], proj: Path
) -> None:
    app = make_full_app(read_only=True)
    async with app.run_test(size=PANES) as pilot:
        await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "read-only mode" in said(form, "error"))
        assert app.screen is form and not view(app, POD).busy


async def test_keys_pressed_twice_start_one_sync(make_full_app: Callable[..., PodtuiApp], proj: Path) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        await pilot.press("ctrl+s", "ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, SyncFormScreen), SYNC_S)
        await synced(pilot, app, POD)
        assert view(app, POD).snap.runs == 1
        await pilot.press("r", "r")  # again, twice in one read: the second finds the first under way
        await synced(pilot, app, POD, runs=2)
        await pilot.pause(0.5)
        assert view(app, POD).snap.runs == 2
        assert any("under way" in str(n.message) for n in app._notifications)


async def test_a_second_sync_on_a_pod_already_syncing_is_refused_in_the_form(
    make_full_app: Callable[..., PodtuiApp], proj: Path
) -> None:
    import os

    (proj / "big.bin").write_bytes(os.urandom(24_000_000))  # long enough to be under way while the form is sent
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: view(app, POD).snap.done_bytes > 0, SYNC_S)
        form = await open_form(pilot, app)  # filled in with the sync under way
        assert form.query_one("#remote", Input).value == "proj"
        await fill(pilot, form, remote="other")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "under way" in said(form, "error"), SYNC_S)
        assert app.screen is form and form.query_one("#remote", Input).value == "other"
        await pilot.press("escape")
        await pilot.press("x")
        await synced(pilot, app, POD)


async def test_a_check_for_typing_does_not_swallow_sync(make_full_app: Callable[..., PodtuiApp], proj: Path) -> None:
    """Sync pressed, and in the same moment a field changes event lands (the last key typed before it): the check
    the change starts must not cancel the one Sync started, or the form waits for ever with Sync greyed out."""
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        form.action_submit()
        form._changed()  # what an Input.Changed handled right after Sync does
        await wait_until(pilot, lambda: app.syncs.busy(POD) or not form._busy, SYNC_S)
        assert app.syncs.busy(POD) or view(app, POD).snap.runs, said(form, "error")
        await synced(pilot, app, POD)


async def test_a_dry_run_from_the_form_lists_and_changes_nothing(
    make_full_app: Callable[..., PodtuiApp], proj: Path, full_sim: Simulator, sim_api: V2Api
) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await sync_panel(pilot, app, POD)
        form = await open_form(pilot, app)
        await fill(pilot, form, local="~/proj", remote="proj")
        form.query_one("#watch", Checkbox).value = True
        form.query_one("#dry-run", Checkbox).value = True
        await pilot.pause()
        assert form.query_one("#watch", Checkbox).disabled  # a dry run has nothing to do again
        assert "is listed; nothing is copied" in str(form.query_one("#what", Static).render())
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, SyncFormScreen), SYNC_S)
        last = (await synced(pilot, app, POD)).snap.last
        assert last is not None and last.spec.dry_run and last.plan is not None
        assert sorted(c.path for c in last.plan.new) == [".gitignore", "README.md", "src/train.py"]
        assert not last.verified and not view(app, POD).watching
        assert not (pod_workspace(full_sim, sim_api, GATEWAY_POD) / "proj").exists()
        form = await open_form(pilot, app, "w")  # a watch after a dry run: the form, for real this time
        assert form.query_one("#remote", Input).value == "proj" and not form.query_one("#dry-run", Checkbox).value
        assert form.query_one("#watch", Checkbox).value and not view(app, POD).busy


@needs_sshd
async def test_the_route_chosen_is_the_route_taken(
    make_full_app: Callable[..., PodtuiApp], proj: Path, isolated_home: Path
) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await sync_panel(pilot, app, POD)  # through the gateway only: the routes of direct SSH are not offered
        form = await open_form(pilot, app)
        assert [v for _, v in form.query_one("#via", Select)._options] == ["auto", "console"]
        await pilot.press("escape")
        train = DEMO_IDS["train"]
        await sync_panel(pilot, app, train)
        form = await open_form(pilot, app)
        assert [v for _, v in form.query_one("#via", Select)._options] == ["auto", "rsync", "sftp", "console"]
        await fill(pilot, form, local="~/proj", remote="proj")
        form.query_one("#via", Select).value = "sftp"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not isinstance(app.screen, SyncFormScreen), SYNC_S)
        last = (await synced(pilot, app, train)).snap.last
        assert last is not None and last.error is None and not last.failed, last
        assert last.spec.via == "sftp" and "sftp" in last.route.lower(), last.route
        assert len(last.verified) == 3
        form = await open_form(pilot, app)  # the route is remembered with the rest
        assert form.query_one("#via", Select).value == "sftp"
