"""The main screen's panes (docs/architecture.md#panes): the selected pod's Details, Console and Transfers beside the
live list from 100x30, following the selection; z zooms; below 100x30 the one-screen-at-a-time flow."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from textual import events
from textual.pilot import Pilot
from textual.widgets import TabbedContent

from podtui.console.widget import TerminalView
from podtui.core.feed import PodFeed
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.pod_view import CONSOLE_MARK
from podtui.ui.screens.console import ConsoleScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.widgets.console_box import ConsoleBox
from podtui.ui.widgets.pod_details import PodDetails
from podtui.ui.widgets.pod_pane import PodPane
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.console import PROMPT, last_line, run, screen_text
from tests.helpers.pilot import loaded, polled, wait_until


def row_text(screen: PodListScreen, name: str) -> str:
    table = screen.table
    return next((t for y in range(table.size.height) if name in (t := table.render_line(y).text)), "")


def _list(app: PodtuiApp) -> PodListScreen:
    screen = app.screen
    assert isinstance(screen, PodListScreen)
    return screen


async def test_the_pane_follows_the_selection_beside_the_live_list(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        screen = _list(app)
        assert screen.panes_on and not screen.has_class("-beside")
        pane = screen.query_one(PodPane)
        assert pane.display and pane.region.height > 10
        first = screen.selected_pod
        assert first is not None
        await pilot.pause()
        assert pane.query_one(PodDetails).pod_id == first.id
        await pilot.press("j")
        await pilot.pause()
        second = screen.selected_pod
        assert second is not None and second.id != first.id
        assert pane.query_one(PodDetails).pod_id == second.id
        shown = pane.query_one(PodDetails).pod
        assert shown is not None and shown.name == second.name
        # Enter: the details are in the pane already, no screen is pushed
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen and pane.active_tab == "details"


async def test_wide_puts_the_pane_beside_and_small_falls_back(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(200, 50)) as pilot:
        await loaded(pilot, app)
        screen = _list(app)
        assert screen.panes_on and screen.has_class("-beside")
        table, pane = screen.query_one(PodTable), screen.query_one(PodPane)
        assert pane.region.x >= table.region.right and pane.region.y == table.region.y
        await pilot.resize_terminal(99, 30)
        await pilot.pause()
        assert not screen.panes_on and not screen.query_one(PodPane).display
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PodDetailScreen))


async def test_zoom_the_focused_pane_and_back(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        screen = _list(app)
        table, pane = screen.query_one(PodTable), screen.query_one(PodPane)
        await pilot.press("z")  # the list has focus: the list fills the screen
        await pilot.pause()
        assert screen.has_class("-zoom-list") and not pane.display
        await pilot.press("z")
        await pilot.pause()
        assert pane.display and table.display
        await pilot.press("tab")  # focus moves into the pane
        await pilot.pause()
        assert app.focused is not None and pane in app.focused.ancestors
        await pilot.press("z")
        await pilot.pause()
        assert screen.has_class("-zoom-pane") and not table.display
        assert pane.region.height >= 32 - 4
        await pilot.press("z")
        await pilot.pause()
        assert table.display and pane.display


async def test_zoom_says_why_not_below_the_panes_size(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await pilot.press("z")
        await pilot.pause()
        assert any("100x30" in str(n.message) for n in app._notifications)


async def test_a_console_in_the_pane_follows_its_pod(make_full_app: Callable[..., PodtuiApp]) -> None:
    """c types into the pod in the pane while the list stays live; the shell goes on while another pod is selected,
    and is shown again, with its screen, when its pod is."""
    app = make_full_app()
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        screen = _list(app)
        pane = screen.query_one(PodPane)
        pod = screen.selected_pod
        assert pod is not None
        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.focused, TerminalView), 10)
        view = app.focused
        assert isinstance(view, TerminalView) and pane in view.ancestors and app.screen is screen
        await wait_until(pilot, lambda: view.link.state == "connected" and last_line(view).endswith(PROMPT), 15)
        await run(pilot, view, "echo pane-$((6*7))")
        await wait_until(pilot, lambda: "pane-42" in screen_text(view), 10)
        assert pod.id in app.consoles.pods_with_console()
        await wait_until(pilot, lambda: CONSOLE_MARK in row_text(screen, pod.name), 5)  # marked in the list
        await pilot.press("ctrl+right_square_bracket")  # the keys back to podtui
        await pilot.pause()
        assert not isinstance(app.focused, TerminalView)
        screen.table.focus()
        await pilot.press("j")
        await wait_until(pilot, lambda: pane.console_view() is None)
        assert view.link.state == "connected"  # its shell goes on
        await pilot.press("k")
        await wait_until(pilot, lambda: pane.console_view() is not None)
        again = pane.console_view()
        assert again is not None and again.link is view.link and "pane-42" in screen_text(again)
        await pilot.press("c")  # the pod's console already open: focused, not a second shell
        await pilot.pause()
        assert app.focused is again and len(app.consoles.links) == 1
        assert not any(isinstance(s, ConsoleScreen) for s in app.screen_stack)
        assert pane.query_one(TabbedContent).active == "pane-console"


async def test_c_twice_in_one_read_opens_one_console_in_the_pane(make_full_app: Callable[..., PodtuiApp]) -> None:
    app = make_full_app()
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        app.post_message(events.Key("c", "c"))
        app.post_message(events.Key("c", "c"))
        await wait_until(pilot, lambda: isinstance(app.focused, TerminalView), 10)
        await pilot.pause(0.3)
        assert len(app.consoles.links) == 1 and len(app.screen.query(TerminalView)) == 1
        assert not any(isinstance(s, ConsoleScreen) for s in app.screen_stack)


async def _pane_console(pilot: Pilot[None], app: PodtuiApp, down: int = 0) -> TerminalView:
    await loaded(pilot, app)
    await pilot.press(*["j"] * down, "c")
    await wait_until(pilot, lambda: isinstance(app.focused, TerminalView), 10)
    view = app.focused
    assert isinstance(view, TerminalView)
    await wait_until(pilot, lambda: view.link.state == "connected" and last_line(view).endswith(PROMPT), 15)
    return view


async def test_a_pod_missing_from_an_answer_with_a_skipped_record_keeps_its_console(
    make_full_app: Callable[..., PodtuiApp],
) -> None:
    """An unreadable record is skipped: its pod may still be there, and its shell is not ended for it."""
    app = make_full_app()
    async with app.run_test(size=(120, 32)) as pilot:
        view = await _pane_console(pilot, app)
        screen = _list(app)
        snap = app.feed.snapshot
        assert snap is not None
        pod_id = screen.selected_pod.id  # type: ignore[union-attr]
        odd = dataclasses.replace(
            snap, pods=tuple(p for p in snap.pods if p.id != pod_id), problems=("a pod record has no id; skipped",)
        )
        screen.show_feed(dataclasses.replace(app.pod_data(), feed=PodFeed(snapshot=odd)))
        await pilot.pause(0.5)
        assert view.link.state == "connected" and screen.pane.has_console(pod_id)


async def test_a_terminated_pods_console_stays_readable_on_the_consoles_screen(
    make_full_app: Callable[..., PodtuiApp], full_sim: Simulator
) -> None:
    app = make_full_app()
    async with app.run_test(size=(120, 32), notifications=True) as pilot:
        view = await _pane_console(pilot, app)
        await run(pilot, view, "echo before-the-end")
        await wait_until(pilot, lambda: "before-the-end" in screen_text(view), 10)
        screen = _list(app)
        pod = screen.selected_pod
        assert pod is not None
        full_sim.world.terminate(pod.id)  # on runpod.io, not here
        await polled(pilot, app)
        await wait_until(pilot, lambda: not screen.pane.has_console(pod.id), 5)
        assert any("no longer on the account" in n.message for n in app._notifications)
        screen.table.focus()
        await pilot.press("C")  # the consoles' screen has it, with what it showed
        await wait_until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        shown = app.screen.views()  # type: ignore[attr-defined]
        assert [v.link for v in shown] == [view.link] and "before-the-end" in screen_text(shown[0])


async def test_the_pane_console_is_on_the_consoles_screen_in_a_small_terminal(
    make_full_app: Callable[..., PodtuiApp],
) -> None:
    """Resized under 100x30, C shows the console opened in the pane (one shell, drawn where it is in sight); closed
    there, it is gone from the pane too."""
    app = make_full_app()
    async with app.run_test(size=(120, 32)) as pilot:
        view = await _pane_console(pilot, app)
        await run(pilot, view, "echo from-the-pane")
        await wait_until(pilot, lambda: "from-the-pane" in screen_text(view), 10)
        await pilot.press("ctrl+right_square_bracket")
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        screen = _list(app)
        screen.table.focus()
        await pilot.press("C")
        await wait_until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        consoles = app.screen
        assert isinstance(consoles, ConsoleScreen)
        await wait_until(pilot, lambda: len(consoles.views()) == 1)
        shown = consoles.views()[0]
        assert shown.link is view.link and len(app.consoles.links) == 1
        await pilot.press("i")  # the keys there reach the same shell
        await wait_until(pilot, lambda: app.focused is shown)
        await run(pilot, shown, "echo there")
        await wait_until(pilot, lambda: "\nthere" in screen_text(shown), 10)
        await pilot.press("ctrl+right_square_bracket", "x", "y")  # close it: connected, so asked first
        await wait_until(pilot, lambda: not app.consoles.links, 10)
        await pilot.press("escape")
        await pilot.resize_terminal(120, 32)
        await wait_until(pilot, lambda: app.screen is screen and screen.panes_on)
        await pilot.pause()
        assert not screen.pane.has_console(screen.selected_pod.id)  # type: ignore[union-attr]


async def test_c_while_the_list_is_zoomed_shows_the_console_it_opens(make_full_app: Callable[..., PodtuiApp]) -> None:
    app = make_full_app()
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        screen = _list(app)
        await pilot.press("z")
        await pilot.pause()
        assert screen.has_class("-zoom-list")
        view = await _pane_console(pilot, app)
        assert not screen.has_class("-zoom-list") and screen.pane.display and view.region.height > 5


async def test_j_c_in_one_read_opens_the_console_of_the_pod_moved_to(
    make_full_app: Callable[..., PodtuiApp],
) -> None:
    app = make_full_app()
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        app.post_message(events.Key("j", "j"))
        app.post_message(events.Key("c", "c"))
        await wait_until(pilot, lambda: isinstance(app.focused, TerminalView), 10)
        view = app.focused
        assert isinstance(view, TerminalView) and view.link.label == "eval-a100"
        assert _list(app).pane.pod_id == _list(app).selected_pod.id  # type: ignore[union-attr]


async def test_c_on_a_console_whose_shell_ended_opens_a_fresh_one(make_full_app: Callable[..., PodtuiApp]) -> None:
    app = make_full_app()
    async with app.run_test(size=(120, 32)) as pilot:
        # eval-a100: reached through the gateway only, where a shell's exit ends the session (a direct session's
        # end without an exit status reads as a drop, and reconnects)
        view = await _pane_console(pilot, app, down=1)
        await run(pilot, view, "exit")
        await wait_until(pilot, lambda: view.link.state == "closed", 10)
        box = _list(app).pane.query_one(ConsoleBox)
        await wait_until(pilot, lambda: "SHELL ENDED" in str(box.mode_text()), 5)
        await pilot.press("ctrl+right_square_bracket", "c")
        await wait_until(pilot, lambda: view.link.state == "connected" and last_line(view).endswith(PROMPT), 15)
        assert len(app.consoles.links) == 1
