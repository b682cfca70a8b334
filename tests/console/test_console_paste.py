"""A paste far larger than a terminal's buffers, through a console on the simulated gateway: it reaches the pod
whole, and the console answers afterwards (the relays between the gateway and the pod's terminal once hung the
session for good some 30 KB in). tests/sandbox/test_terminal_relay.py tries the relay itself, and direct SSH."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual import events

from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from tests.helpers.console import PROMPT, SIZE, last_line, open_console, run
from tests.helpers.pilot import wait_until
from tests.helpers.sim import DEMO_IDS

pytestmark = pytest.mark.timeout(180)  # a relay that deadlocks again fails here instead of hanging the run


@pytest.mark.parametrize("command", ["cat > /workspace/pasted", "tee /workspace/pasted"])
async def test_a_200_kb_paste_reaches_the_pod_whole(
    command: str, console_app: Callable[[], PodtuiApp], full_sim: Simulator
) -> None:
    """Into cat writing a file, and into tee, which also writes each line back to the terminal as it reads."""
    target = full_sim.gateway.machine(full_sim.world.pods[DEMO_IDS["bursty"]]).workspace / "pasted"
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        assert "data-prep-a5000" in view.link.title
        await run(pilot, view, command)
        # bash turns bracketed paste off as it runs a command: the command is reading now
        await wait_until(pilot, lambda: not view.link.emulator.modes().bracketed_paste)
        text = ("y" * 79 + "\n") * 2_500
        view.post_message(events.Paste(text))
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: target.exists() and target.stat().st_size == len(text), 90)
        await pilot.press("ctrl+d")
        await wait_until(pilot, lambda: last_line(view).endswith(PROMPT), 30)
        assert target.read_text() == text
        await run(pilot, view, "echo after-$((6*7))")
        await wait_until(pilot, lambda: "after-42" in "\n".join(view.link.emulator.screen_lines()))
