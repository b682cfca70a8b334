"""A console in the app on a simulated pod: open it, type into it, read its screen back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.pilot import Pilot

from podtui.console.widget import TerminalView
from tests.helpers.pilot import loaded, wait_until

if TYPE_CHECKING:
    from podtui.ui.app import PodtuiApp

SIZE = (98, 30)  # under the panes' 100x30: `c` opens the consoles' own screen (docs/architecture.md#panes)
PROMPT = "/workspace#"  # screen lines come back with trailing blanks trimmed
SCROLLBACK = 2000  # the consoles' scrollback in these tests


def screen_text(view: TerminalView) -> str:
    return "\n".join(view.link.emulator.screen_lines())


def last_line(view: TerminalView) -> str:
    lines = [line for line in view.link.emulator.screen_lines() if line.strip()]
    return lines[-1] if lines else ""


async def open_console(pilot: Pilot[None], app: PodtuiApp, down: int = 0) -> TerminalView:
    """`c` on the pod `down` rows from the top, once its shell's prompt is there."""
    await loaded(pilot, app)
    for _ in range(down):
        await pilot.press("j")
    await pilot.press("c")
    await wait_until(pilot, lambda: isinstance(app.focused, TerminalView), 10)
    view = app.focused
    assert isinstance(view, TerminalView)
    try:
        await wait_until(pilot, lambda: view.link.state == "connected" and last_line(view).endswith(PROMPT), 15)
    except AssertionError:
        raise AssertionError(f"{view.link.state} {view.link.detail} {screen_text(view)!r}") from None
    return view


async def run(pilot: Pilot[None], view: TerminalView, command: str) -> None:
    """Type a command key by key, as a person would, and press enter."""
    await pilot.press(*[{" ": "space"}.get(c, c) for c in command], "enter")
