"""The logs driven through Pilot (docs/architecture.md#logs): L opens the selected pod's log, following live, full
screen below 100x30 and in the pane's Logs tab above; the source, how far back, the filter, pause and save; a dropped
stream said in words and resumed; hostile lines shown inert."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.logs import LogsScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.widgets.log_panel import LogPanel
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (90, 28)  # below 100x30: L opens the logs' own screen
PANES = (120, 32)  # the pane's Logs tab


async def _open(pilot: Pilot[None], app: PodtuiApp, pod: str = "train") -> LogPanel:
    """L on the pod: the panel it shows, once lines are in."""
    await loaded(pilot, app)
    table = app.screen.query_one(PodTable)
    table.cursor_row = table.visible_ids.index(DEMO_IDS[pod])
    list_screen = app.screen
    assert isinstance(list_screen, PodListScreen)
    await pilot.press("L")
    if list_screen.panes_on:
        await wait_until(pilot, lambda: list_screen.pane.active_tab == "logs")
        panel = list_screen.pane.log_panel
    else:
        await wait_until(pilot, lambda: isinstance(app.screen, LogsScreen))
        screen = app.screen
        assert isinstance(screen, LogsScreen)
        panel = screen.panel
    await wait_until(pilot, lambda: len(panel.view.shown) > 0)
    assert panel.view.has_focus
    return panel


def _state(panel: LogPanel) -> str:
    return str(panel.query_one("#log-state").render())


async def test_l_opens_the_log_live_and_escape_goes_back(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open(pilot, app)
        view = panel.view
        await wait_until(pilot, lambda: "live" in _state(panel))
        before = len(view.shown)
        sim.world.clock.advance(15)  # three training steps
        await wait_until(pilot, lambda: len(view.shown) >= before + 3)
        assert "loss" in view.shown[-1].text
        await wait_until(pilot, lambda: view.scroll_y == view.max_scroll_y)  # it follows the end
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, LogsScreen))


async def test_source_filter_and_pause(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open(pilot, app)
        view = panel.view
        await pilot.press("s")  # container only
        await wait_until(pilot, lambda: panel.source == "container" and len(view.shown) > 0)
        assert all(line.source == "container" for line in view.shown)
        await pilot.press("s")  # system only
        await wait_until(pilot, lambda: panel.source == "system" and len(view.shown) > 0)
        assert all(line.source == "system" for line in view.shown)
        await pilot.press("s")  # both again
        await wait_until(pilot, lambda: panel.source == "all" and len(view.shown) > 5)

        word = view.shown[0].text.split("|")[1].strip()  # one training step's number: "step 11530/20000"
        await pilot.press("slash", *word, "enter")
        await wait_until(pilot, lambda: 0 < len(view.shown) < view.kept)
        assert all(word in line.text for line in view.shown)
        await pilot.press("slash", "escape")  # the filter cleared
        await wait_until(pilot, lambda: len(view.shown) == view.kept)

        await pilot.press("space")
        held = len(view.shown)
        sim.world.clock.advance(15)
        await wait_until(pilot, lambda: view.held >= 3)
        assert len(view.shown) == held and "paused, " in _state(panel)
        await pilot.press("space")
        await wait_until(pilot, lambda: len(view.shown) >= held + 3 and view.held == 0)


async def test_a_key_typed_after_the_filters_enter_acts_on_the_log(make_app: Callable[..., PodtuiApp]) -> None:
    """`/`, the words, Enter and `p` in one read (docs/architecture.md#opening-a-screen-once): the words go to the
    filter (the `s` in them is not the source key), Enter keeps it and goes back to the lines before `p` is handed
    out, so `p` pauses; it is not typed into the filter."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open(pilot, app)
        view = panel.view
        word = view.shown[0].text.split("|")[1].strip()  # "step 11530/20000": a space and a slash in it
        names = {"/": "slash", " ": "space", "\r": "enter"}
        for character in f"/{word}\rp":  # one read
            app.post_message(events.Key(names.get(character, character), character))
        await wait_until(pilot, lambda: view.paused)
        assert panel.query_one("#log-input", Input).value == word
        assert all(word in line.text for line in view.shown)


@pytest.mark.parametrize(
    ("typed", "line"),
    [("t10m\rp", ""), ("/step\x1bp", ""), ("t10x\rp", "10xp")],
    ids=["range-enter", "filter-escape", "wrong-range"],
)
async def test_the_key_after_the_lines_answer_acts_on_the_log(
    make_app: Callable[..., PodtuiApp], typed: str, line: str
) -> None:
    """A range and Enter, or a filter's words and escape, then `p`, in one read: the line closes and `p` pauses the
    log. A wrong range keeps the line (and the focus) to be mended, so `p` is typed into it."""
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        panel = await _open(pilot, app)
        view = panel.view
        names = {"/": "slash", "\r": "enter", "\x1b": "escape"}
        for character in typed:  # one read
            app.post_message(events.Key(names.get(character, character), character))
        box = panel.query_one("#log-input", Input)
        if line:
            await wait_until(pilot, lambda: box.value == line)
            assert box.has_class("-active") and app.focused is box and not view.paused
        else:
            await wait_until(pilot, lambda: view.paused)
            assert not box.has_class("-active") and app.focused is view
            assert panel.since is not None if typed.startswith("t") else view.words == ""


async def test_save_writes_what_is_shown_for_this_user_alone(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, tmp_path: Path
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        panel = await _open(pilot, app)
        await pilot.press("w")
        await wait_until(pilot, lambda: any("saved" in str(n.message) for n in app._notifications))
        folder = Path(app.services.paths.data_dir) / "logs"
        saved = list(folder.glob("llama-lora-3090-*.log"))
        assert len(saved) == 1
        assert stat.S_IMODE(os.stat(saved[0]).st_mode) == 0o600
        lines = saved[0].read_text().splitlines()
        assert len(lines) == len(panel.view.shown)


async def test_a_drop_is_said_and_resumed_without_a_gap(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    # the first stream is cut after its backfill (the screen asks for the last 500 lines) and 20 live lines
    sim.faults.add("drop_stream", 520, times=1, only="/logs")
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open(pilot, app)
        view = panel.view
        await wait_until(pilot, lambda: "live" in _state(panel))
        sim.faults.add("status", 502, times=2, only="/logs")  # the first two reconnects are refused
        for _ in range(200):  # training lines until the 520th event cuts the stream
            if "down since" in _state(panel):
                break
            sim.world.clock.advance(5)
            await pilot.pause(0.1)
        assert "down since" in _state(panel)
        await wait_until(pilot, lambda: "live" in _state(panel), timeout=20)  # after 1 s and 2 s of backoff
        sim.world.clock.advance(10)
        stamps = [line.event_id for line in view.shown]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)


async def test_hostile_lines_are_shown_inert(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    world = sim.world
    pod = world.get(DEMO_IDS["train"])
    with world.logs.changed:
        world.logs.entries(pod, world.clock.now())
        world.logs._log(pod.id).add(world.clock.now(), "container", "\x1b]0;owned\x07\x1b[2Jwiped \u202eevil")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open(pilot, app)
        view = panel.view
        await wait_until(pilot, lambda: any("wiped" in line.text for line in view.shown))
        text = next(line.text for line in view.shown if "wiped" in line.text)
        assert text == "\\x1b]0;owned\\x07\\x1b[2Jwiped <U+202E>evil"


@pytest.mark.parametrize("size", [(80, 24), (120, 32), (200, 50)])
async def test_it_fits(make_app: Callable[..., PodtuiApp], sim: SimApiServer, size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        panel = await _open(pilot, app)
        await pilot.pause()
        if isinstance(app.screen, LogsScreen):  # full screen: the heading, the state line, the footer
            assert panel.view.size.height >= size[1] - 4
        else:
            assert panel.view.size.height >= 5 and panel.view.size.width >= 30


async def test_range_asks_how_far_back(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        panel = await _open(pilot, app)
        view = panel.view
        assert len(view.shown) == 500
        await pilot.press("t", *"20", "enter")
        await wait_until(pilot, lambda: panel.tail == 20 and len(view.shown) == 20)
        assert "last 20 lines" in str(app.screen.query_one("#head").render())
        await pilot.press("t", *"99999", "enter")  # over RunPod's limit: said, nothing changes
        await wait_until(pilot, lambda: any("5,000" in str(n.message) for n in app._notifications))
        assert panel.tail == 20
        await pilot.press("escape")  # the line at the bottom closes first
        assert isinstance(app.screen, LogsScreen)
        await pilot.press("t", *"30m", "enter")  # since half an hour ago: six training steps a minute
        await wait_until(pilot, lambda: panel.since is not None and len(view.shown) > 20)
        assert "since " in str(app.screen.query_one("#head").render())
        await pilot.press("t", *"yesterday", "enter")  # not a time: said, the line stays to be mended
        await wait_until(pilot, lambda: any("yesterday" in str(n.message) for n in app._notifications))
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, LogsScreen))


async def test_the_panes_logs_tab_follows_the_selection(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=PANES) as pilot:
        panel = await _open(pilot, app)
        screen = app.screen
        assert isinstance(screen, PodListScreen)
        assert panel.pod is not None and panel.pod.id == DEMO_IDS["train"]
        await wait_until(pilot, lambda: "live" in _state(panel))
        await pilot.press("escape")  # back to the list, the tab stays on show
        assert screen.table.has_focus
        await pilot.press("down")
        moved_to = screen.selected_pod
        assert moved_to is not None and moved_to.id != DEMO_IDS["train"]
        await wait_until(pilot, lambda: panel.pod is not None and panel.pod.id == moved_to.id)
        screen.pane.show_tab("details")  # another tab: the stream stops
        await wait_until(pilot, lambda: not panel.following)
        await pilot.press("L")  # and L brings the tab back, following again
        await wait_until(pilot, lambda: screen.pane.active_tab == "logs" and panel.following)


async def test_a_pod_still_starting_shows_why_in_its_system_log(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open(pilot, app, pod="starting")
        assert any(line.source == "system" for line in panel.view.shown)


async def test_odd_input_is_refused_in_words(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    """A Unicode digit int() refuses, and a pod name that is a path: said, or made safe; w twice saves twice."""
    sim.world.pods[DEMO_IDS["train"]].name = "../../up/and-away"
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        panel = await _open(pilot, app)
        await pilot.press("t", "²", "enter")
        await wait_until(pilot, lambda: any("²" in str(n.message) for n in app._notifications))
        assert panel.tail == 500
        await pilot.press("escape", "w", "w")
        folder = Path(app.services.paths.data_dir) / "logs"
        await wait_until(pilot, lambda: len(list(folder.iterdir())) == 2)
        assert all(p.name.startswith("up_and-away-") for p in folder.iterdir())
        assert not any("could not save" in str(n.message) for n in app._notifications)


async def test_logs_and_services_link_both_ways(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    from podtui.ui.screens.services import ServicesScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot, app)
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, ServicesScreen))
        await pilot.press("L")  # the logs it came from: back to them, not a second logs screen
        await wait_until(pilot, lambda: isinstance(app.screen, LogsScreen))
        assert sum(isinstance(s, LogsScreen) for s in app.screen_stack) == 1
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, ServicesScreen))


async def test_a_hidden_panes_logs_stream_nothing(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=PANES) as pilot:
        panel = await _open(pilot, app)
        screen = app.screen
        assert isinstance(screen, PodListScreen) and panel.following
        await pilot.resize_terminal(*SIZE)  # too small for the pane
        await wait_until(pilot, lambda: not panel.following)
        await pilot.press("j", "k")  # moving in the list opens no stream for the hidden pane
        await pilot.pause(0.2)
        assert not panel.following
        await pilot.resize_terminal(*PANES)
        await wait_until(pilot, lambda: panel.following)
        await pilot.press("escape", "z")  # the list zoomed: the pane is out of sight
        await wait_until(pilot, lambda: not panel.following)


async def test_find_goes_to_the_lines_and_round(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        panel = await _open(pilot, app)
        view = panel.view
        first, second = view.shown[10].text.split("|")[1].strip(), view.shown[200].text.split("|")[1].strip()
        await pilot.press("f", *second, "enter")  # from the top of the view, round the end
        await wait_until(pilot, lambda: view.found_at == 200)
        assert not view.following and view.found == second.lower() and len(view.shown) == view.kept  # nothing hidden
        await pilot.press("f", "ctrl+u", *first, "enter", "n")  # found, then n: round again to the same one
        await wait_until(pilot, lambda: view.found_at == 10)
        await pilot.press("N")
        assert view.found_at == 10
        await pilot.press("f", "ctrl+u", *"no such words", "enter")
        await wait_until(pilot, lambda: any("no line shown holds" in str(n.message) for n in app._notifications))


async def test_the_panes_logs_go_on_where_they_were(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    """Another tab and back: the lines on show stay, and the stream goes on after the last one, none twice."""
    app = make_app()
    async with app.run_test(size=PANES) as pilot:
        panel = await _open(pilot, app)
        screen = app.screen
        assert isinstance(screen, PodListScreen)
        await wait_until(pilot, lambda: "live" in _state(panel))
        before = len(panel.view.shown)
        screen.pane.show_tab("details")
        await wait_until(pilot, lambda: not panel.following)
        sim.world.clock.advance(15)  # three steps while the tab is away
        screen.pane.show_tab("logs")
        await wait_until(pilot, lambda: panel.following and len(panel.view.shown) >= before + 3)
        ids = [line.event_id for line in panel.view.shown]
        assert len(ids) == len(set(ids)) and ids == sorted(ids)


async def test_a_hostile_pod_name_heads_the_screen_inert(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    from podtui.ui.screens.services import ServicesScreen

    sim.world.pods[DEMO_IDS["train"]].name = "\x1b[2Jwiped"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _open(pilot, app)
        assert "\\x1b[2Jwiped" in str(app.screen.query_one("#head").render())
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, ServicesScreen))
        assert "\\x1b[2Jwiped" in str(app.screen.query_one("#head").render())


async def test_backspace_as_a_back_key_still_deletes_in_the_line(make_app: Callable[..., PodtuiApp]) -> None:
    """[keys] logs.back = "escape,backspace" (as the details' back has): in the filter's line backspace deletes, as
    the line's own key; escape still leaves."""
    from podtui.core.config import Config

    app = make_app(config=Config(keys={"logs.back": "escape,backspace"}))
    async with app.run_test(size=SIZE) as pilot:
        panel = await _open(pilot, app)
        box = panel.query_one("#log-input", Input)
        for key, character in [("slash", "/"), ("a", "a"), ("b", "b"), ("backspace", None)]:
            app.post_message(events.Key(key, character))
        await wait_until(pilot, lambda: box.value == "a")
        assert box.has_class("-active") and app.focused is box
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.focused is panel.view)
