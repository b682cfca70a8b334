"""Consoles on simulated pods, over real SSH: typing, keys that must reach the pod, tabs, reconnects, paste, save."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import events
from textual.pilot import Pilot

from podtui.console.widget import TerminalView
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.console import ConsoleScreen
from podtui.ui.screens.pod_list import PodListScreen
from tests.helpers.console import PROMPT, SIZE, last_line, open_console, run, screen_text
from tests.helpers.pilot import wait_until


async def test_typing_reaches_the_shell_and_output_comes_back(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        assert "data-prep-a5000 · connected" in view.link.title
        await run(pilot, view, "echo $((6*7))")
        await wait_until(pilot, lambda: "\n42\n" in screen_text(view))
        # the prompt shows the pod's paths, as on RunPod
        assert "root@w9e3r5t7y1u2io:/workspace# echo" in screen_text(view)


async def test_ctrl_c_interrupts_a_running_command(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        await run(pilot, view, "sleep 60")
        await pilot.pause(0.3)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: "^C" in screen_text(view) and last_line(view).endswith(PROMPT), 5)


async def test_arrow_keys_walk_the_shell_history(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        await run(pilot, view, "echo first")
        await run(pilot, view, "echo second")
        await wait_until(pilot, lambda: screen_text(view).count("\nsecond") == 1)
        await pilot.press("up", "up", "enter")  # back two: "echo first" again
        await wait_until(pilot, lambda: screen_text(view).count("\nfirst") == 2)


async def test_ctrl_q_and_ctrl_p_reach_the_pod(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        # raw mode: the shell's terminal hands every byte to od, which prints them in hex
        await run(pilot, view, "stty raw -echo; echo RAW-READY; od -An -tx1 -N3; stty sane")
        await wait_until(pilot, lambda: "\nRAW-READY" in screen_text(view))
        await pilot.press("ctrl+q", "ctrl+p", "tab")
        await wait_until(pilot, lambda: "11 10 09" in screen_text(view), 5)
        assert app.is_running and isinstance(app.screen, ConsoleScreen)  # no quit, no palette


async def test_release_key_leaves_the_console_and_it_keeps_its_screen(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        await run(pilot, view, "echo kept")
        await wait_until(pilot, lambda: "\nkept" in screen_text(view))
        await pilot.press("ctrl+right_square_bracket")
        assert not isinstance(app.focused, TerminalView)
        await pilot.press("escape")
        assert isinstance(app.screen, PodListScreen)
        await pilot.press("C")
        assert isinstance(app.screen, ConsoleScreen)
        await pilot.press("enter")
        assert app.focused is view and "\nkept" in screen_text(view)


async def test_tabs_on_two_pods_keep_separate_screens(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        first = await open_console(pilot, app)
        await run(pilot, first, "echo on-first")
        await pilot.press("ctrl+right_square_bracket", "escape", "j")
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.focused, TerminalView) and app.focused is not first)
        second = app.focused
        assert isinstance(second, TerminalView)
        await wait_until(pilot, lambda: last_line(second).endswith(PROMPT), 15)
        await run(pilot, second, "echo on-second")
        await wait_until(pilot, lambda: "\non-second" in screen_text(second))
        screen = app.screen
        assert isinstance(screen, ConsoleScreen)
        assert [v.link.label for v in screen.views()] == ["data-prep-a5000", "eval-a100"]
        await pilot.press("ctrl+right_square_bracket", "left_square_bracket", "enter")
        assert app.focused is first
        assert "on-first" in screen_text(first) and "on-second" not in screen_text(first)


async def test_a_dropped_connection_reconnects_and_marks_the_gap(
    console_app: Callable[[], PodtuiApp], full_sim: Simulator
) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app, down=1)  # eval-a100: reachable only through the gateway
        await run(pilot, view, "echo before-the-drop")
        await wait_until(pilot, lambda: "\nbefore-the-drop" in screen_text(view))
        full_sim.gateway.drop_connections()
        await wait_until(pilot, lambda: view.link.gaps == 1, 5)
        await wait_until(pilot, lambda: "reconnected after" in view.link.emulator.text(), 15)
        await wait_until(pilot, lambda: view.link.state == "connected" and last_line(view).endswith(PROMPT), 10)
        text = view.link.emulator.text()
        assert text.index("before-the-drop") < text.index("connection lost") < text.index("reconnected after")
        tab = app.screen.query_one("#--content-tab-console-1")
        await wait_until(pilot, lambda: str(tab.label).endswith("eval-a100 · connected"))  # type: ignore[attr-defined]
        await run(pilot, view, "echo after")
        await wait_until(pilot, lambda: "\nafter" in screen_text(view))


async def test_pasting_several_lines_asks_first(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        view.post_message(events.Paste("echo pasted-one\necho pasted-two\n"))
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        # bash asks for bracketed paste: the lines wait in its editor until enter, instead of running one by one
        assert view.link.emulator.modes().bracketed_paste
        await wait_until(pilot, lambda: "echo pasted-two" in screen_text(view), 5)
        assert "\npasted-one" not in screen_text(view)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "\npasted-one\n" in screen_text(view) and "\npasted-two" in screen_text(view))
        view.post_message(events.Paste("echo x\necho never\n"))
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")
        await pilot.pause(0.3)
        assert "never" not in screen_text(view) and app.focused is view


async def test_output_is_saved_as_plain_text(console_app: Callable[[], PodtuiApp], tmp_path: Path) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        await run(pilot, view, "printf '\\033[31mred-text\\033[0m\\n'")
        await wait_until(pilot, lambda: "\nred-text" in screen_text(view))
        await pilot.press("ctrl+right_square_bracket", "S")
        box = app.screen.query_one("Input")
        box.value = str(tmp_path / "out.txt")  # type: ignore[attr-defined]
        await pilot.press("enter")
        target = tmp_path / "out.txt"
        await wait_until(pilot, target.exists)
        saved = target.read_text()
        assert "\nred-text\n" in saved and "\x1b" not in saved
        assert stat.S_IMODE(target.stat().st_mode) == 0o600  # output may hold secrets printed in the shell


def test_console_snapshot_of_a_coloured_program(snap_compare: Any, console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()

    async def ready(pilot: Pilot[None]) -> None:
        view = await open_console(pilot, app)
        await pilot.press(*"clear", "semicolon", "space", *"bash", "space", *"colors.sh", "enter")
        await wait_until(pilot, lambda: "checkpoints" in screen_text(view) and last_line(view).endswith(PROMPT))
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(100, 20), run_before=ready)


async def test_resizing_podtui_resizes_the_pods_terminal(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        await run(pilot, view, "stty size")
        rows, cols = view.size.height, view.size.width
        await wait_until(pilot, lambda: f"\n{rows} {cols}\n" in screen_text(view))
        await pilot.resize_terminal(90, 24)
        await wait_until(pilot, lambda: view.size.width == 90)
        await run(pilot, view, "stty size")
        await wait_until(pilot, lambda: f"\n{view.size.height} 90\n" in screen_text(view))


async def test_mouse_reports_reach_a_program_that_asks(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        # the program turns on SGR mouse reporting, then prints what the terminal sends it
        await run(
            pilot, view, "printf '\\033[?1000h\\033[?1006h'; stty raw -echo; echo RAW-READY; od -An -c -N9; stty sane"
        )
        await wait_until(pilot, lambda: "\nRAW-READY" in screen_text(view))
        assert view.link.emulator.modes().mouse == 1000
        await pilot.click(TerminalView, offset=(4, 2))
        await wait_until(pilot, lambda: "<   0   ;   5   ;   3   M" in screen_text(view), 5)
        assert app.clipboard == ""  # a click the program asked for is not a selection


async def test_drag_selects_and_copies_when_the_program_does_not_use_the_mouse(
    console_app: Callable[[], PodtuiApp],
) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        await run(pilot, view, "clear; echo alpha beta gamma")
        await wait_until(
            pilot, lambda: screen_text(view).startswith("alpha beta gamma") or "\nalpha beta gamma" in screen_text(view)
        )
        row = next(i for i, line in enumerate(view.link.emulator.screen_lines()) if line == "alpha beta gamma")
        await pilot.mouse_down(TerminalView, offset=(6, row))
        await pilot.hover(TerminalView, offset=(9, row))
        await pilot.mouse_up(TerminalView, offset=(9, row))
        assert app.clipboard == "beta"


async def test_scrollback_with_keys_and_wheel_and_back_on_typing(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        await run(pilot, view, "seq 1 300")
        await wait_until(pilot, lambda: "\n300\n" in screen_text(view))
        await pilot.press("shift+pageup")
        frame = view.link.emulator.frame()
        assert frame.offset == view.size.height - 1 and "300" not in screen_text(view)
        await pilot.press("shift+pagedown")
        assert view.link.emulator.frame().offset == 0
        view.post_message(events.MouseScrollUp(view, 5, 5, 0, -1, 0, False, False, False))  # one wheel notch
        await wait_until(pilot, lambda: view.link.emulator.frame().offset == 3)
        await pilot.press("space")  # typing goes back to the live screen
        assert view.link.emulator.frame().offset == 0


async def test_garbage_bytes_never_break_the_widget(console_app: Callable[[], PodtuiApp]) -> None:
    import random

    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        rng = random.Random(11)
        for _ in range(60):
            junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
            view.link.emulator.feed(junk + rng.choice([b"\x1b[", b"\xcc\x81", b"\xe4\xb8", b"\x1b]0;", b"\r\n"]))
            view.post_message(TerminalView.Output())
            await pilot.pause(0.01)
        view.link.emulator.feed(b"\x1bc")  # reset: the shell is still there underneath
        await run(pilot, view, "echo still-alive")
        await wait_until(pilot, lambda: "still-alive" in screen_text(view), 5)


async def test_command_palette_saves_console_output(console_app: Callable[[], PodtuiApp], tmp_path: Path) -> None:
    from podtui.ui.screens.save_as import SaveAsScreen

    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_console(pilot, app)
        await run(pilot, view, "echo from-the-palette")
        await wait_until(pilot, lambda: "\nfrom-the-palette" in screen_text(view))
        await pilot.press("ctrl+right_square_bracket", "ctrl+p")
        await pilot.press(*"save", "space", *"console")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, SaveAsScreen))
        box = app.screen.query_one("Input")
        box.value = str(tmp_path / "palette.txt")  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait_until(pilot, (tmp_path / "palette.txt").exists)
        assert "\nfrom-the-palette\n" in (tmp_path / "palette.txt").read_text()
