"""A key pressed twice (key repeat, a laggy link, a trackpad double tap, a double click): two events that arrive
in one read must never open a screen twice, and never crash the app."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual import events
from textual.screen import Screen
from textual.widgets import Input

from podtui.ui.app import PodtuiApp
from podtui.ui.screens.add_transfer import AddTransferScreen
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.copy import CopyScreen
from podtui.ui.screens.create_pod import CreatePodScreen
from podtui.ui.screens.doctor import DoctorScreen
from podtui.ui.screens.gpus import GpusScreen
from podtui.ui.screens.help import HelpScreen
from podtui.ui.screens.hf_check import HfCheckScreen
from podtui.ui.screens.keys import KeysScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.screens.terminate import TerminateScreen
from podtui.ui.screens.transfers import TransfersScreen
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.pilot import loaded, polled, wait_until

ONE_SCREEN = (130, 29)  # under the panes' 100x30: enter opens the details screen (docs/architecture.md#panes)
CASES: list[tuple[int, str, str | None, type[Screen[object]]]] = [
    (2, "enter", "\r", PodDetailScreen),
    (2, "s", "s", ConfirmScreen),
    (3, "r", "r", ConfirmScreen),
    (2, "T", "T", TerminateScreen),
    (2, "D", "D", DoctorScreen),
    (0, "P", "P", GpusScreen),
    (0, "n", "n", CreatePodScreen),
    (0, "H", "H", HfCheckScreen),
    (0, "K", "K", KeysScreen),
    (0, "t", "t", TransfersScreen),
    (2, "u", "u", AddTransferScreen),
    (2, "y", "y", CopyScreen),
]


def _twice(app: PodtuiApp, key: str, character: str | None) -> None:
    """Both events queued before the first is handled: what one read of two bytes gives the app."""
    app.post_message(events.Key(key, character))
    app.post_message(events.Key(key, character))


@pytest.mark.parametrize(("row", "key", "character", "screen"), CASES, ids=[c[1] for c in CASES])
async def test_a_key_twice_opens_one_screen(
    make_app: Callable[..., PodtuiApp], row: int, key: str, character: str | None, screen: type[Screen[object]]
) -> None:
    app = make_app()
    async with app.run_test(size=ONE_SCREEN) as pilot:
        await loaded(pilot, app)
        app.screen.query_one(PodTable).cursor_row = row
        _twice(app, key, character)
        await polled(pilot, app)  # new data reaching every screen, one of them just pushed
        await pilot.pause(0.1)
        assert app.return_code is None, "the app exited"
        assert sum(isinstance(s, screen) for s in app.screen_stack) == 1, [type(s).__name__ for s in app.screen_stack]


async def test_help_twice_opens_and_closes_it(make_app: Callable[..., PodtuiApp]) -> None:
    """? toggles the help: twice in one read opens it and closes it again, as the same two keys typed slowly do."""
    app = make_app()
    async with app.run_test(size=ONE_SCREEN) as pilot:
        await loaded(pilot, app)
        _twice(app, "question_mark", "?")
        await polled(pilot, app)
        assert app.return_code is None
        assert not any(isinstance(s, HelpScreen) for s in app.screen_stack)
        _twice(app, "question_mark", "?")
        app.post_message(events.Key("question_mark", "?"))  # read with the answer that closed it: it was for it
        await polled(pilot, app)
        assert not any(isinstance(s, HelpScreen) for s in app.screen_stack)
        await pilot.press("question_mark")  # a later read opens it
        assert sum(isinstance(s, HelpScreen) for s in app.screen_stack) == 1


async def test_details_pushed_twice_from_the_row(make_app: Callable[..., PodtuiApp]) -> None:
    """The reported crash: the second push ran show_feed on a screen that had not composed."""
    app = make_app()
    async with app.run_test(size=ONE_SCREEN) as pilot:
        await loaded(pilot, app)
        table = app.screen.query_one(PodTable)
        table.cursor_row = 2
        for _ in range(3):
            table.post_message(PodTable.Selected(table.selected_pod))  # type: ignore[arg-type]
        app.poll_now()
        await polled(pilot, app)
        assert [type(s) for s in app.screen_stack][-1] is PodDetailScreen
        assert sum(isinstance(s, PodDetailScreen) for s in app.screen_stack) == 1


async def test_double_click_on_a_row(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=ONE_SCREEN) as pilot:
        await loaded(pilot, app)
        await pilot.click(PodTable, offset=(5, 2), times=2)
        await polled(pilot, app)
        assert sum(isinstance(s, PodDetailScreen) for s in app.screen_stack) == 1


async def test_the_same_pod_from_the_palette_while_its_details_are_open(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=ONE_SCREEN) as pilot:
        await loaded(pilot, app)
        pod = app.feed.snapshot.pods[0]  # type: ignore[union-attr]
        app.navigator.open_details(pod.id)
        app.navigator.open_details(pod.id)
        await pilot.pause()
        app.navigator.open_details(pod.id)
        await polled(pilot, app)
        assert sum(isinstance(s, PodDetailScreen) for s in app.screen_stack) == 1


# --- answering a dialog twice -------------------------------------------------------------------------------


def _names(app: PodtuiApp) -> list[str]:
    return [type(s).__name__ for s in app.screen_stack]


async def test_enter_twice_in_the_terminate_box_terminates_once_and_keeps_the_list(
    make_app: Callable[..., PodtuiApp],
) -> None:
    app = make_app()
    calls: list[object] = []
    async with app.run_test(size=(130, 40)) as pilot:
        await loaded(pilot, app)
        app.pod_actions.start = lambda *a: calls.append(a)  # type: ignore[method-assign]
        app.screen.query_one(PodTable).cursor_row = 2
        await pilot.press("T")
        await pilot.pause(0.3)
        assert isinstance(app.screen, TerminateScreen)
        box = app.screen.query_one(Input)
        box.value = app.navigator.selected_pod().name  # type: ignore[union-attr]
        box.focus()
        await pilot.pause()
        _twice(app, "enter", "\r")
        await pilot.pause(0.5)
        assert _names(app) == ["Screen", "PodListScreen"] and len(calls) == 1 and app.return_code is None


async def test_enter_twice_in_the_add_transfer_dialog_adds_once(
    make_app: Callable[..., PodtuiApp], tmp_path: Path
) -> None:
    app = make_app(transfer_work_dir=tmp_path / "work")
    async with app.run_test(size=(130, 40)) as pilot:
        await loaded(pilot, app)
        app.screen.query_one(PodTable).cursor_row = 2
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, AddTransferScreen) and bool(app.screen.query("#remote")))
        box = app.screen.query_one("#remote", Input)
        box.value = "README-demo.txt"
        box.focus()
        await pilot.pause()
        _twice(app, "enter", "\r")
        await wait_until(pilot, lambda: not isinstance(app.screen, AddTransferScreen))
        await pilot.pause(0.5)  # time for a second add, were there one
        assert "PodListScreen" in _names(app) and app.return_code is None
        assert len(app.transfers.queue().jobs()) == 1


@pytest.mark.parametrize("answer", ["enter", "escape", "y"])
async def test_a_question_answered_twice(make_app: Callable[..., PodtuiApp], answer: str) -> None:
    app = make_app()
    async with app.run_test(size=(130, 40)) as pilot:
        await loaded(pilot, app)
        app.screen.query_one(PodTable).cursor_row = 2
        await pilot.press("s")
        await pilot.pause(0.3)
        assert isinstance(app.screen, ConfirmScreen)
        _twice(app, answer, {"enter": "\r", "escape": "\x1b"}.get(answer, answer))
        await pilot.pause(0.5)
        assert _names(app) == ["Screen", "PodListScreen"] and app.return_code is None
