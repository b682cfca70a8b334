"""The add-transfer form's local path: tab completes it as a shell does (the common start, then the choices), and
moves the focus on when there is nothing to complete; an upload of a path that is not there is refused next to the
field, in the form and on the command line, before anything is queued."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input, RadioSet, Static

from podtui.cli.main import main
from podtui.core.paths import Paths
from podtui.sim.exchange import Exchange
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.path_completion import Completion, complete_local, completion_of
from podtui.ui.screens.add_transfer import AddTransferScreen
from tests.helpers.pilot import loaded, wait_until

SIZE = (80, 24)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    here = tmp_path / "files"
    (here / "alpine").mkdir(parents=True)
    for name in ("alpha.bin", "beta.txt", ".hidden"):
        (here / name).write_text(name)
    (here / "alpine" / "only.cfg").write_text("x")
    return here


def test_completion_is_the_common_start_and_the_choices(folder: Path) -> None:
    base = f"{folder}/"
    assert completion_of(base + "al") == Completion(base + "alp", ("alpha.bin", "alpine/"))
    assert completion_of(base + "alph") == Completion(base + "alpha.bin", ())
    assert completion_of(base + "b") == Completion(base + "beta.txt", ())
    assert completion_of(base + "alpine/") == Completion(base + "alpine/only.cfg", ())
    assert completion_of(base + "zz") is None  # nothing fits
    assert completion_of(base) == Completion(base, ("alpha.bin", "alpine/", "beta.txt"))  # hidden ones not listed
    assert completion_of(base + ".h") == Completion(base + ".hidden", ())  # unless a dot is typed
    assert completion_of(".") is None and completion_of("..") is None and completion_of("") is None
    (folder / "al\x1bx").write_text("x")  # a name with a control character is never offered
    assert completion_of(base + "al") == Completion(base + "alp", ("alpha.bin", "alpine/"))
    # the grey suggestion while typing: what tab adds, nothing when it adds nothing
    assert complete_local(base + "al") == base + "alp" and complete_local(base + "alp") is None


async def open_form(pilot: object, app: PodtuiApp) -> AddTransferScreen:
    await loaded(pilot, app)  # type: ignore[arg-type]
    await pilot.press("j", "u")  # type: ignore[attr-defined]
    await wait_until(pilot, lambda: isinstance(app.screen, AddTransferScreen))  # type: ignore[arg-type]
    screen = app.screen
    assert isinstance(screen, AddTransferScreen)
    return screen


def focused(app: PodtuiApp) -> str | None:
    return app.focused.id if app.focused is not None else None


def in_view(screen: AddTransferScreen, line: Static) -> bool:
    """On screen inside the dialog, clear of its buttons' bar: a line shown under the box below the fold is scrolled
    to."""
    view, foot, box = screen.query_one("#dialog").content_region, screen.query_one("#foot").region, line.region
    return view.contains_region(box) and not box.overlaps(foot)


def choices(screen: AddTransferScreen) -> str:
    line = screen.query_one("#local-choices", Static)
    return str(line.render()) if line.display and line.has_class("-shown") else ""


async def test_tab_completes_the_local_path_then_moves_on(
    make_app: Callable[..., PodtuiApp], folder: Path, tmp_path: Path
) -> None:
    app = make_app(transfer_work_dir=tmp_path / "work")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_form(pilot, app)
        await pilot.press("tab")  # from the pod's path: tab moves on as everywhere (the List button)
        assert focused(app) == "browse"
        box = screen.query_one("#local", Input)
        box.focus()
        box.value = f"{folder}/al"
        box.cursor_position = len(box.value)
        await pilot.press("tab")  # ambiguous: the common start, and the choices listed under the box
        await wait_until(pilot, lambda: box.value == f"{folder}/alp" and "alpine/" in choices(screen))
        await wait_until(pilot, lambda: in_view(screen, screen.query_one("#local-choices", Static)))
        assert "alpha.bin" in choices(screen) and focused(app) == "local"
        await pilot.press("tab")  # nothing more to add, the choices already shown: the focus moves on
        await wait_until(pilot, lambda: app.focused is not box)
        assert focused(app) == "via" and box.value == f"{folder}/alp"
        await pilot.press("shift+tab")  # and back
        assert focused(app) == "local"
        await pilot.press("i", "tab")  # one fits now: completed, the choices gone
        await wait_until(pilot, lambda: box.value == f"{folder}/alpine/")
        assert focused(app) == "local" and choices(screen) == ""
        await pilot.press("tab")
        await wait_until(pilot, lambda: box.value == f"{folder}/alpine/only.cfg")
        await pilot.press("tab")  # complete: tab moves on
        await wait_until(pilot, lambda: app.focused is not box)
        box.focus()
        box.value = f"{folder}/nothing-here"
        await pilot.press("tab")  # nothing fits: the focus moves on at once, the value as typed
        await wait_until(pilot, lambda: app.focused is not box)
        assert box.value == f"{folder}/nothing-here"


async def test_an_upload_of_nothing_is_refused_by_the_field(
    make_app: Callable[..., PodtuiApp], folder: Path, tmp_path: Path
) -> None:
    app = make_app(transfer_work_dir=tmp_path / "work")
    results: list[object] = []
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        screen = AddTransferScreen(list(app.feed.snapshot.pods), None)  # type: ignore[union-attr]
        await app.push_screen(screen, results.append)
        await pilot.click("#push")
        assert screen.query_one(RadioSet).pressed_button is screen.query_one("#push")
        box = screen.query_one("#local", Input)
        box.value = f"{folder}/no-such.bin"
        await pilot.click("#add")
        error = screen.query_one("#local-error", Static)
        await wait_until(pilot, lambda: error.display and "no such file or folder" in str(error.render()))
        assert f"{folder}/no-such.bin" in str(error.render()) and "nothing was added" in str(error.render())
        await wait_until(pilot, lambda: in_view(screen, error))
        assert app.screen is screen and results == [] and app.transfers.queue().jobs() == []
        assert focused(app) == "local"
        await pilot.press("x")  # typing clears the message
        assert not error.display
        box.value = f"{folder}/alpha.bin"
        await pilot.click("#add")
        await wait_until(pilot, lambda: bool(results))
        job = results[0]
        assert job is not None and (job.direction, job.source) == ("push", f"{folder}/alpha.bin")  # type: ignore[attr-defined]


async def test_a_download_to_a_new_folder_is_not_refused(make_app: Callable[..., PodtuiApp], tmp_path: Path) -> None:
    """Only an upload's path must exist: a download's folder is made if need be."""
    app = make_app(transfer_work_dir=tmp_path / "work")
    results: list[object] = []
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        screen = AddTransferScreen(list(app.feed.snapshot.pods), None)  # type: ignore[union-attr]
        await app.push_screen(screen, results.append)
        screen.query_one("#remote", Input).value = "outputs/x.bin"
        screen.query_one("#local", Input).value = str(tmp_path / "new" / "folder") + "/"
        await pilot.click("#add")
        await wait_until(pilot, lambda: bool(results))
        assert results[0] is not None


def test_the_cli_refuses_a_push_of_nothing_before_anything_is_asked(
    cli_env: SimApiServer,
    capsys: pytest.CaptureFixture[str],
    exchanges: list[Exchange],
    paths: Paths,
    tmp_path: Path,
) -> None:
    missing = tmp_path / "no-such.bin"
    assert main(["push", "llama-lora-3090", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err == f"podtui: push: no such file or folder here: {missing}; nothing was queued\n"
    assert exchanges == []  # RunPod was not even asked for the pod
    assert not (paths.data_dir / "transfers.json").exists()
