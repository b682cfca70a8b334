"""The cyclic collector is paused on the way to the first frame and always resumed (docs/architecture.md#start-up):
by the app once its first frame is out, by a command once parsed, and on every way out of the CLI."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator

import pytest

from podtui.cli import main
from podtui.core import start_up
from podtui.ui.app import PodtuiApp
from tests.helpers.pilot import wait_until


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    start_up.resume_collector()
    gc.enable()
    yield
    start_up.resume_collector()
    gc.enable()


def test_resume_turns_on_only_what_pause_turned_off() -> None:
    start_up.pause_collector()
    assert not gc.isenabled()
    start_up.resume_collector()
    assert gc.isenabled()
    gc.disable()  # someone else's choice: left as it is
    start_up.pause_collector()
    start_up.resume_collector()
    assert not gc.isenabled()


async def test_the_app_resumes_it_after_its_first_frame(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    start_up.pause_collector()  # as the CLI does before it builds the app
    async with app.run_test(size=(120, 32)) as pilot:
        await wait_until(pilot, gc.isenabled)


@pytest.mark.parametrize("argv", [["--version"], ["--size", "bad"], ["config", "show"], ["psod"]])
def test_every_way_out_of_the_cli_resumes_it(argv: list[str], isolated_home: object) -> None:
    with contextlib.suppress(SystemExit):  # argparse's own exits (--version, a mistake)
        main.main(argv)
    assert gc.isenabled()


def test_a_command_runs_with_it_on(monkeypatch: pytest.MonkeyPatch, isolated_home: object) -> None:
    seen: list[bool] = []

    def show(paths: object, **kw: object) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr("podtui.cli.config_cmd.cmd_show", show)
    assert main.main(["config", "show"]) == 0
    assert seen == [True]
