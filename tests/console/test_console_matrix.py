"""Console faults: random bytes by the megabyte, escape sequences cut at every read boundary, a program that floods
while the user types, and a storm of resizes. Figures (MB/s, a full minute of flood, 100 MB) are in
bench/console_garbage.py; here only what the user sees and that nothing breaks."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable

import pytest
from textual import events
from textual.geometry import Size
from textual.pilot import Pilot

from podtui.console.cells import row_cells
from podtui.console.emulator import Emulator
from podtui.console.engines import available_engines, make_emulator
from podtui.console.replies import BURST, PER_SECOND
from podtui.console.widget import TerminalView
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.console import ConsoleScreen
from podtui.ui.screens.pod_list import PodListScreen
from tests.helpers.console import PROMPT, SCROLLBACK, SIZE, last_line, open_console, run, screen_text
from tests.helpers.pilot import wait_until

GARBAGE_BYTES = 5_000_000
# Ends whatever the random bytes left open: CAN aborts a sequence, ST ends a string, RIS resets the terminal.
RESET = r"printf '\030\033\\\033c'"


async def still_answers(pilot: Pilot[None], app: PodtuiApp, view: TerminalView) -> None:
    """podtui's own keys work: out to the pod list and back into the console."""
    await pilot.press("ctrl+right_square_bracket", "escape")
    await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen), 10)
    await pilot.press("C")
    await wait_until(pilot, lambda: isinstance(app.screen, ConsoleScreen), 10)
    await pilot.press("enter")
    await wait_until(pilot, lambda: app.focused is view, 10)


# --- random bytes --------------------------------------------------------------------------------------------


async def test_random_bytes(console_app: Callable[[], PodtuiApp]) -> None:
    """5 MB here: the whole headless app takes random bytes at 1-4 MB/s on this machine (text: 15-25 MB/s), so 20 MB
    would take much of the suite's budget; bench/console_garbage.py pushes 100 MB through and prints the figures."""
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app, down=1)  # eval-a100: through the gateway's PTY
        before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        fed = view.link.emulator.bytes_fed
        started = time.monotonic()
        await run(pilot, view, f"head -c {GARBAGE_BYTES} /dev/urandom; {RESET}; echo GARBAGE-$((40+2))")
        await wait_until(pilot, lambda: view.link.emulator.bytes_fed - fed > 500_000, 20)
        await still_answers(pilot, app, view)  # while the garbage still pours in
        await wait_until(pilot, lambda: "GARBAGE-42" in view.link.emulator.text(), 60)
        took = time.monotonic() - started
        assert view.link.emulator.bytes_fed - fed >= GARBAGE_BYTES and view.link.state == "connected"
        # The garbage holds hundreds of queries (device attributes...). Every answer becomes typed input to the
        # shell once the command ends; xterm sends them all, pages of `62;22c` that push the output off the screen.
        # podtui answers a program's burst, then a few a second.
        replies = view.link.replies
        assert replies.dropped > 100, replies.dropped
        assert replies.sent <= BURST + PER_SECOND * took + 1, (replies.sent, took)
        await pilot.pause(0.5)
        await pilot.press("ctrl+c")  # what is left of the answers on the prompt line
        await wait_until(pilot, lambda: last_line(view).endswith(PROMPT), 10)
        await run(pilot, view, "echo still-$((6*7))")  # the shell still answers, through the same console
        await wait_until(pilot, lambda: "\nstill-42" in screen_text(view), 10)
        assert view.link.emulator.frame().history <= SCROLLBACK  # memory bounded by the scrollback setting
        grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before_kb) / 1024
        assert grew_mb < 200, f"peak RSS grew {grew_mb:.0f} MB for {GARBAGE_BYTES / 1e6:g} MB of output"


# --- escape sequences cut at every read boundary ---------------------------------------------------------------

SEQUENCES = [
    b"\x1b[38;2;255;128;0mtrue\x1b[0m",  # true colour
    b"\x1b[1;4;38;5;196mbold-256\x1b[m",
    b"\x1b]0;a window title\x07\x1b]2;another\x1b\\",  # OSC, ended by BEL and by ST
    b"\x1b[5;10Hat-5-10\x1b[2;3H",  # cursor moves
    "日本語 wide, e\u0301 combining, 🙂\r\n".encode(),  # multi-byte UTF-8
    b"\x1b[?1049h\x1b[Halt-screen\x1b[?1049l",
    b"\x1b[?2004h\x1b[?1000h\x1b[?1006h\x1b[?1h\x1b=",  # modes: bracketed paste, SGR mouse, app cursor/keypad
    b"\x1bPq#0;2;0;0;0#0~~\x1b\\after-dcs",  # DCS (sixel) then text
    b"\x1b[3;20r\x1b[20;1H\n\n\x1b[r",  # scroll region
    b"\x1b(0lqk\x1b(B line drawing",
    b"\x1b[2J\x1b[3J\x1b[1;1Hcleared",
]
STREAM = b"plain start\r\n" + b"\r\n".join(SEQUENCES) + b"\r\nend\r\n"


def state(e: Emulator) -> tuple[object, ...]:
    frame = e.frame()
    return ([row_cells(r) for r in frame.rows], frame.cursor, e.modes(), e.text())


@pytest.mark.parametrize("engine", available_engines())
def test_every_split_of_every_sequence_gives_the_same_screen(engine: str) -> None:
    def fed(*parts: bytes) -> Emulator:
        e = make_emulator(60, 12, 100, engine=engine)
        for p in parts:
            e.feed(p)
        return e

    whole = state(fed(STREAM))
    assert state(fed(*[bytes([b]) for b in STREAM])) == whole  # one byte per read
    for seq in SEQUENCES:
        at = STREAM.index(seq)
        for cut in range(at + 1, at + len(seq)):  # every boundary inside the sequence
            assert state(fed(STREAM[:cut], STREAM[cut:])) == whole, (seq, cut - at)


# --- a program that floods while the user types -----------------------------------------------------------------


async def test_keys_reach_a_pod_that_floods_for_10_s(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app, down=1)
        # floods for 10 s; meanwhile `read` takes what the user types, and says what arrived once the flood ends
        await run(
            pilot,
            view,
            "timeout 10 yes 'epoch 3 step 1234 loss 0.4321 lr 3e-4 tokens/s 11000' & "
            "read -r got; wait; " + RESET + '; echo "GOT-[$got]"',
        )
        fed = view.link.emulator.bytes_fed
        await wait_until(pilot, lambda: view.link.emulator.bytes_fed - fed > 1_000_000, 10)
        typed = "keys-reach"
        for ch in typed:
            await pilot.press(ch)
            await pilot.pause(0.4)  # spread over the flood
        await pilot.press("enter")
        await wait_until(pilot, lambda: f"GOT-[{typed}]" in screen_text(view), 30)
        await run(pilot, view, "echo after-$((6*7))")
        await wait_until(pilot, lambda: "\nafter-42" in screen_text(view), 10)


# --- a resize storm ---------------------------------------------------------------------------------------------


def resize_burst(app: PodtuiApp, sizes: list[tuple[int, int]]) -> None:
    """Resize events back to back, as a window being dragged sends them, with no pause between them."""
    for w, h in sizes:
        size = Size(w, h)
        app._driver._size = size  # type: ignore[union-attr]  # the headless driver's size, as Pilot sets it
        app.post_message(events.Resize(size, size))


async def test_resize_storm(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app, down=1)
        await run(pilot, view, "seq 1 300000")  # output keeps coming during the storm
        resize_burst(app, [(40 + (i * 7) % 100, 8 + (i * 5) % 40) for i in range(400)] + [(97, 27)])
        view.link.resize(30, 9)  # and straight at the link from this thread, as a reconnect does
        await wait_until(pilot, lambda: view.size.width == 97, 10)
        await pilot.pause(0.3)
        rows, cols = view.size.height, view.size.width
        await run(pilot, view, f"{RESET}; stty size")
        try:
            await wait_until(pilot, lambda: f"\n{rows} {cols}" in "\n" + screen_text(view), 20)
        except AssertionError:
            raise AssertionError(f"{rows} {cols}: {screen_text(view)[-300:]!r}") from None
        assert (view.link.emulator.cols, view.link.emulator.rows) == (cols, rows)
        assert view.link.state == "connected" and app.is_running
