"""The doctor's panel as the person uses it: enter on a line with nothing to type says so, the results are marked
out of date and checked again on coming back from the console a fix was typed into, and it fits 80x24.

Update after reviewing the report: pytest tests/doctor/test_doctor_screen.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from podtui.console.keys import RELEASE_KEY
from podtui.console.widget import TerminalView
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.console import ConsoleScreen
from podtui.ui.screens.doctor import DoctorScreen
from tests.helpers.pilot import loaded, wait_until

BROKEN = "data-prep-a5000"  # transformers 5 on torch 2.1 and a full volume (podtui/sim/demo.py)


async def open_doctor(pilot: Pilot[None], app: PodtuiApp, pod: str = BROKEN) -> DoctorScreen:
    await loaded(pilot, app)
    app.navigator.open_doctor(app.feed.snapshot.find(pod))  # type: ignore[union-attr]
    await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen) and app.screen.report is not None, 20)
    await pilot.pause()
    assert isinstance(app.screen, DoctorScreen)
    return app.screen


def shown(screen: DoctorScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def check_at(screen: DoctorScreen, check_id: str) -> int:
    assert screen.report is not None
    return next(i for i, c in enumerate(screen.report.checks) if c.id == check_id)


def test_doctor_at_80x24(snap_compare: Any, make_full_app: Callable[..., PodtuiApp]) -> None:
    app = make_full_app()

    async def ready(pilot: Pilot[None]) -> None:
        await open_doctor(pilot, app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)


async def test_enter_on_a_line_without_a_fix_says_so(make_full_app: Callable[..., PodtuiApp]) -> None:
    app = make_full_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_doctor(pilot, app)
        options = screen.query_one(OptionList)
        for check_id, words in [
            ("torch", "torch: passed, no fix needed"),
            ("python", "python / python3: nothing to type for this check; its fix, in words, is on its line"),
        ]:
            options.highlighted = check_at(screen, check_id)
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, DoctorScreen)  # no console opened
            assert shown(screen, "#said").startswith(words)
            assert screen.query_one("#said").region.height > 0  # on the screen, not only in a toast
            assert any(n.message.startswith(words) for n in app._notifications)


async def test_back_from_the_console_the_checks_run_again(make_full_app: Callable[..., PodtuiApp]) -> None:
    app = make_full_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_doctor(pilot, app)
        assert screen.highlighted_check() is not None and screen.highlighted_check().id == "transformers"  # type: ignore[union-attr]
        await pilot.press("enter")  # the fix, typed into a console and not run
        await wait_until(pilot, lambda: isinstance(app.screen, ConsoleScreen), 10)
        view = app.screen.current  # type: ignore[attr-defined]
        assert isinstance(view, TerminalView)

        def console() -> str:
            return "\n".join(view.link.emulator.screen_lines())

        await wait_until(pilot, lambda: "torch==2.5.1" in console(), 15)
        await pilot.press("enter")  # the person runs it
        await wait_until(pilot, lambda: "Successfully installed torch-2.5.1" in console(), 60)
        await pilot.press(RELEASE_KEY, "escape")  # out of the console, back to the doctor
        await wait_until(pilot, lambda: app.screen is screen)
        # checked again without pressing r (the old results meanwhile marked out of date)
        await wait_until(pilot, lambda: "checked again after the console" in shown(screen, "#summary"), 20)
        assert screen.report is not None
        checks = {c.id: c.status for c in screen.report.checks}
        assert checks["transformers"] == "pass" and checks["disk"] == "fail"
        assert "1 fail" in shown(screen, "#summary")
