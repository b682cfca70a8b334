"""Who gets the keys: a console's bar says TYPING (every key to the pod but ctrl+]) or PODTUI KEYS, the footer shows
only the keys that work in that mode, C opens the consoles without handing the keys to a pod, and R never tears down
a working shell."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot
from textual.widgets._footer import FooterKey

from podtui.console.keys import RELEASE_KEY
from podtui.console.widget import TerminalView
from podtui.core.config import Config
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.console import ConsoleScreen
from podtui.ui.screens.gpus import GpusScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.widgets.console_box import ConsoleBox, console_focused
from tests.helpers.console import PROMPT, SCROLLBACK, last_line, open_console, run, screen_text
from tests.helpers.pilot import loaded, wait_until

SMALL = (80, 24)  # under the panes' size: `c` opens the consoles' own screen

TYPING = "TYPING INTO data-prep-a5000 · ctrl+] gives podtui its keys back · shift+PgUp scrolls back"
PODTUI_KEYS = "PODTUI KEYS · enter or i types into the console"
# the console's keys while podtui has the keys, with one console open (no tab keys); the App's come after them
CONSOLE_BOUND = ["escape", "enter", "i", "x", "R", "S"]
CONSOLE_KEYS = ["escape", "enter", "x", "R", "S"]  # the footer shows a binding's first key


def box_of(app: PodtuiApp) -> ConsoleBox:
    boxes = [b for b in app.screen.query(ConsoleBox) if b.display and b.view.region.area]
    assert len(boxes) == 1, boxes
    return boxes[0]


def bar(app: PodtuiApp) -> str:
    return str(box_of(app).query_one(".console-mode").render())


def state(app: PodtuiApp) -> str:
    return str(box_of(app).query_one(".console-state").render())


def bound(app: PodtuiApp) -> list[str]:
    """The keys the screen would show in its footer now, in the binding chain's order."""
    return [key for key, active in app.screen.active_bindings.items() if active.binding.show]


def footer(app: PodtuiApp) -> list[str]:
    """The keys the footer draws."""
    return [k.key for k in sorted(app.screen.query(FooterKey), key=lambda k: k.region.x)]


async def footer_shows(pilot: Pilot[None], app: PodtuiApp, keys: list[str]) -> None:
    """The footer lays itself out after a refresh: wait for it."""
    try:
        await wait_until(pilot, lambda: footer(app) == keys, 5)
    except AssertionError:
        raise AssertionError(f"footer shows {footer(app)}, not {keys}") from None


async def test_the_bar_and_the_footer_follow_who_has_the_keys(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SMALL) as pilot:
        view = await open_console(pilot, app)
        # c opened it typing: the bar says so, and the footer shows the one key podtui still takes
        assert console_focused(app.screen) and box_of(app).view is view
        await wait_until(pilot, lambda: state(app) == "● connected")
        assert bar(app) == TYPING and box_of(app).has_class("-typing")
        assert bound(app) == [RELEASE_KEY]
        await footer_shows(pilot, app, [RELEASE_KEY])

        await pilot.press("ctrl+right_square_bracket")
        assert not console_focused(app.screen) and not isinstance(app.focused, TerminalView)
        assert bar(app) == PODTUI_KEYS and not box_of(app).has_class("-typing")
        assert bound(app)[: len(CONSOLE_BOUND)] == CONSOLE_BOUND
        assert RELEASE_KEY not in bound(app) and "q" in bound(app) and "question_mark" in bound(app)
        assert not {"left_square_bracket", "right_square_bracket"} & set(bound(app))  # one tab: nothing to switch
        await wait_until(pilot, lambda: set(CONSOLE_KEYS) <= set(footer(app)), 5)
        assert RELEASE_KEY not in footer(app)

        await pilot.press("i")  # types into it again
        assert app.focused is view and bar(app) == TYPING
        await footer_shows(pilot, app, [RELEASE_KEY])
        await run(pilot, view, "echo quit-not")  # q and x reach the pod again
        await wait_until(pilot, lambda: "\nquit-not" in screen_text(view))
        assert isinstance(app.screen, ConsoleScreen)


async def test_the_release_key_in_the_footer_gives_the_keys_back(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SMALL) as pilot:
        await open_console(pilot, app)
        await footer_shows(pilot, app, [RELEASE_KEY])
        await pilot.click(FooterKey)
        await wait_until(pilot, lambda: not console_focused(app.screen))
        assert bar(app) == PODTUI_KEYS


async def test_two_consoles_bring_the_tab_keys(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SMALL) as pilot:
        first = await open_console(pilot, app)
        await pilot.press("ctrl+right_square_bracket", "escape", "j", "c")
        await wait_until(pilot, lambda: isinstance(app.focused, TerminalView) and app.focused is not first)
        second = app.focused
        assert isinstance(second, TerminalView)
        await wait_until(pilot, lambda: last_line(second).endswith(PROMPT), 15)
        assert bar(app).startswith("TYPING INTO eval-a100 · ")  # the bar of the tab shown
        assert bound(app) == [RELEASE_KEY]
        await pilot.press("ctrl+right_square_bracket")
        assert {"left_square_bracket", "right_square_bracket"} <= set(bound(app))
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: box_of(app).view is first)
        assert bar(app) == PODTUI_KEYS  # switching tabs hands no keys to the pod


async def test_C_with_no_console_says_how_to_open_one(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await loaded(pilot, app)
        await pilot.press("C")
        await wait_until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        assert str(app.screen.query_one("#empty").render()) == "no console open: press c on a running pod"
        assert not console_focused(app.screen)
        # back to the pods, and the App's keys; nothing that needs a console
        assert bound(app)[0] == "escape" and not {"enter", "x", "R", "S"} & set(bound(app))
        await wait_until(pilot, lambda: footer(app)[:1] == ["escape"] and "x" not in footer(app), 5)
        await pilot.press("enter", "x", "R", "S")  # nothing to act on, nothing said
        assert isinstance(app.screen, ConsoleScreen) and not app._notifications


async def test_C_shows_the_consoles_with_podtuis_keys(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SMALL) as pilot:
        view = await open_console(pilot, app)
        await pilot.press("ctrl+right_square_bracket", "escape")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))
        await pilot.press("C")
        await wait_until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        assert not console_focused(app.screen) and bar(app) == PODTUI_KEYS
        await pilot.press("enter")
        assert app.focused is view and bar(app) == TYPING


async def test_a_screen_over_a_typing_console_takes_its_keys_away(console_app: Callable[[], PodtuiApp]) -> None:
    """A screen opened over a console while it had the keys (as a pod action's screen can be): back on the consoles,
    podtui's keys work and the bar says so, rather than keys going to the pod unannounced."""
    app = console_app()
    async with app.run_test(size=SMALL) as pilot:
        await open_console(pilot, app)
        app.navigator.open_gpus()
        await wait_until(pilot, lambda: isinstance(app.screen, GpusScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        assert not console_focused(app.screen) and bar(app) == PODTUI_KEYS
        await wait_until(pilot, lambda: set(CONSOLE_KEYS) <= set(footer(app)), 5)


async def test_R_on_a_live_console_keeps_its_shell(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        view = await open_console(pilot, app)
        await run(pilot, view, "KEPT=same-shell")
        session = view.link.session.channel
        await pilot.press("ctrl+right_square_bracket", "R")
        said = [n.message for n in app._notifications]
        assert said == ["data-prep-a5000: already connected; x closes it, then c on the pod opens a new one"]
        await pilot.press("enter")
        await run(pilot, view, "echo $KEPT-$((6*7))")
        await wait_until(pilot, lambda: "\nsame-shell-42" in screen_text(view))
        assert view.link.session.channel is session and view.link.gaps == 0
        assert "reconnected" not in view.link.emulator.text()


async def test_R_on_a_closed_console_opens_a_fresh_shell(console_app: Callable[[], PodtuiApp]) -> None:
    app = console_app()
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        view = await open_console(pilot, app, down=1)  # eval-a100: through the gateway
        view.link.reconnect_attempts = 1
        await run(pilot, view, "KEPT=old-shell")
        await run(pilot, view, "exit")
        await wait_until(pilot, lambda: view.link.state == "closed", 15)
        await wait_until(pilot, lambda: state(app) == "○ closed")
        await pilot.press("ctrl+right_square_bracket", "R")
        await wait_until(pilot, lambda: view.link.state == "connected" and last_line(view).endswith(PROMPT), 15)
        await wait_until(pilot, lambda: state(app) == "● connected")
        assert not app._notifications
        await pilot.press("enter")
        await run(pilot, view, "echo [$KEPT]")
        await wait_until(pilot, lambda: "\n[]" in screen_text(view))  # a fresh shell


async def test_the_bar_names_the_remapped_key(make_full_app: Callable[..., PodtuiApp]) -> None:
    app = make_full_app(config=Config(console_scrollback=SCROLLBACK, keys={"console.type": "t"}))
    async with app.run_test(size=SMALL) as pilot:
        await open_console(pilot, app)
        await pilot.press("ctrl+right_square_bracket")
        assert bar(app) == "PODTUI KEYS · t types into the console"


# --- snapshots --------------------------------------------------------------------------------------------------


def _snap(snap_compare: Any, app: PodtuiApp, release: bool) -> bool:
    async def ready(pilot: Pilot[None]) -> None:
        view = await open_console(pilot, app)
        await run(pilot, view, "clear")
        await wait_until(pilot, lambda: screen_text(view).startswith("root@") and last_line(view).endswith(PROMPT))
        if release:
            await pilot.press("ctrl+right_square_bracket")
        await wait_until(pilot, lambda: bool(footer(app)) and (RELEASE_KEY in footer(app)) != release, 5)
        await pilot.pause(0.2)

    return bool(snap_compare(app, terminal_size=SMALL, run_before=ready))


def test_snapshot_typing(snap_compare: Any, console_app: Callable[[], PodtuiApp]) -> None:
    assert _snap(snap_compare, console_app(), release=False)


def test_snapshot_podtui_keys(snap_compare: Any, console_app: Callable[[], PodtuiApp]) -> None:
    assert _snap(snap_compare, console_app(), release=True)
