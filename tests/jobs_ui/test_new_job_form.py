"""The new-job form (docs/jobs.md): every kind of bad input is refused in words under its field and nothing is
started; a second press while the first is on its way starts one job; a refusal from the pod keeps what was typed
and lets Start be pressed again (docs/architecture.md#forms)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.widgets import Button, Input, Static, TextArea

from podtui.core.api import V2Api
from podtui.core.jobs.job import Pull
from podtui.core.jobs.remote_jobs import list_jobs
from podtui.core.jobs.typed_spec import parse_pull, parse_pulls, problems, typed_spec
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.new_job import NewJobScreen
from tests.helpers.job_follow import OpenShell
from tests.helpers.jobs_tab import PANES, POD, jobs_panel, new_job
from tests.helpers.pilot import wait_until

NOT_PATHS = [":out", "/", "//", "~", "~/", ".", "..", "out:", "a\x1b[31mb", "ok\x00no", "x:\x07y", "  :  "]


@pytest.mark.parametrize("line", NOT_PATHS, ids=repr)
def test_a_pull_that_is_not_a_path_is_refused_in_words(line: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_pull(line)
    said = str(refused.value)
    assert said and "\x1b" not in said and "\x00" not in said and "\x07" not in said


def test_pulls_as_typed() -> None:
    assert parse_pulls("out/model.bin\n\n  logs/ : here/logs \n/root/x.txt:~/x.txt\n") == (
        Pull("out/model.bin"),
        Pull("logs/", "here/logs"),
        Pull("/root/x.txt", "~/x.txt"),
    )
    spec = typed_spec("  python train.py  ", " run ", "", "stop", "w.bin")
    assert (spec.command, spec.name, spec.workdir, spec.then, spec.pulls) == (
        "python train.py",
        "run",
        None,
        "stop",
        (Pull("w.bin"),),
    )


def test_terminate_with_nothing_pulled_is_refused_where_it_would_delete_the_work() -> None:
    said = problems("python train.py", "", "", "", "terminate", None)
    assert "would delete everything the job writes" in said["then"]
    assert problems("python train.py", "", "", "out/w.bin", "terminate", None) == {}
    assert problems("python train.py", "", "runs/a", "", "terminate", "vol-1") == {}  # a network volume stays


def _error(form: NewJobScreen, field: str) -> str:
    return str(form.query_one(f"#err-{field}", Static).render())


async def test_bad_input_is_marked_and_nothing_starts(
    make_full_app: Callable[..., PodtuiApp], open_shell: OpenShell
) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await jobs_panel(pilot, app)
        form = await new_job(pilot, app, "")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "type the command to run" in _error(form, "command")
        assert "fix the fields marked in red" in str(form.query_one("#error", Static).render())
        form.query_one("#name", Input).value = "a\x1b]52;c;aGk=\x07b"
        form.query_one("#workdir", Input).value = "/work\x1b[2Jspace"
        form.query_one("#command", Input).value = "echo ok"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert _error(form, "command") == ""
        assert "no control characters" in _error(form, "name") and "\x1b" not in _error(form, "name")
        assert "no control characters" in _error(form, "workdir")
        assert app.screen is form
        form.query_one("#name", Input).value = "fine"
        form.query_one("#workdir", Input).value = "/workspace"
        for line in NOT_PATHS:
            form.query_one("#pulls", TextArea).text = f"good.txt\n{line}"
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert app.screen is form, line
            assert _error(form, "pulls"), line
            assert "\x1b" not in _error(form, "pulls")
        assert isinstance(app.screen, NewJobScreen)
    with open_shell() as sh:
        assert list_jobs(sh, POD).jobs == ()  # nothing reached the pod


async def test_start_pressed_twice_starts_one_job(
    make_full_app: Callable[..., PodtuiApp], open_shell: OpenShell
) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await jobs_panel(pilot, app)
        await new_job(pilot, app, "echo once")
        await pilot.press("ctrl+s", "ctrl+s", "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, NewJobScreen), 90)
        await pilot.pause(0.5)
    with open_shell() as sh:
        assert [j.command for j in list_jobs(sh, POD).jobs] == ["echo once"]


async def test_a_refusal_keeps_what_was_typed(make_full_app: Callable[..., PodtuiApp], sim_api: V2Api) -> None:
    app = make_full_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await jobs_panel(pilot, app)
        form = await new_job(pilot, app, "python train.py", "out/model.bin")
        sim_api.stop_pod(POD)  # gone from under the form: its shell cannot be reached
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "the job was not started" in str(form.query_one("#error", Static).render()), 90)
        assert isinstance(app.screen, NewJobScreen)
        assert form.query_one("#command", Input).value == "python train.py"
        assert form.query_one("#pulls", TextArea).text == "out/model.bin"
        assert not form.query_one("#start", Button).disabled
