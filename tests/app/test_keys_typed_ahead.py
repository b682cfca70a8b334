"""Keys typed ahead of a key that moves the focus follow the focus (docs/architecture.md#opening-a-screen-once):
`/` and the words after it, read together, filter the list; none of the letters acts on the list."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import pytest
from textual import events
from textual.widgets import Input

from podtui.ui import key_fence
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.pilot import loaded, wait_until

SIZE = (120, 32)


def _read_at_once(app: PodtuiApp, keys: list[tuple[str, str | None]]) -> None:
    """Every event queued before the first is handled: what one read of those bytes gives the app."""
    for key, character in keys:
        app.post_message(events.Key(key, character))


def _filter_text(screen: object) -> str | None:
    """What the filter's line holds; None before the first `/` makes it."""
    assert isinstance(screen, PodListScreen)
    return next((box.value for box in screen.query("#filter").results(Input)), None)


def _typed(text: str) -> list[tuple[str, str | None]]:
    names = {"/": "slash", " ": "space", "-": "minus"}
    return [(names.get(c, c), c) for c in text]


async def test_slash_and_the_words_after_it_filter(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        screen = app.screen
        assert isinstance(screen, PodListScreen)
        _read_at_once(app, _typed("/a100"))  # a is autostop on the list, 1 and 0 nothing
        await wait_until(pilot, lambda: _filter_text(screen) == "a100")
        table = screen.query_one(PodTable)
        await wait_until(pilot, lambda: len(table.visible_ids) == 1)
        assert app.screen is screen, "a key typed into the filter acted on the list"
        assert table.selected_pod is not None and table.selected_pod.name == "eval-a100"
        assert not app._notifications, [n.message for n in app._notifications]


async def test_a_stop_key_typed_into_the_filter_stops_nothing(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        screen = app.screen
        _read_at_once(app, [*_typed("/sweep"), ("enter", "\r")])  # s stops, w and e nothing, p the GPUs' screen
        table = screen.query_one(PodTable)
        await wait_until(pilot, lambda: len(table.visible_ids) == 1 and table.has_focus)
        await pilot.pause(0.1)
        assert app.screen is screen, type(app.screen).__name__
        assert screen.query_one("#filter", Input).value == "sweep"
        assert table.selected_pod is not None and table.selected_pod.name == "sweep-h100x2"


LEAVING = [("enter", "\r"), ("escape", "\x1b")]


@pytest.mark.parametrize("leave", LEAVING, ids=["enter", "escape"])
@pytest.mark.parametrize("burst", [False, True])
async def test_a_key_typed_after_leaving_the_filter_acts_on_the_list(
    make_app: Callable[..., PodtuiApp], burst: bool, leave: tuple[str, str]
) -> None:
    """`/a100`, Enter (or escape) and `s` typed in one go: Enter keeps the filter, escape clears it, either moves
    to the list, and `s` asks to stop the pod under the cursor; it is never typed into the filter (the key leaving
    the line is answered before the next key is handed out)."""
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        screen = app.screen
        if burst:  # the whole line in one read
            _read_at_once(app, [*_typed("/a100"), leave, ("s", "s")])
        else:  # the words typed first; the key leaving and the next one in one read
            _read_at_once(app, _typed("/a100"))
            await wait_until(pilot, lambda: _filter_text(screen) == "a100")
            _read_at_once(app, [leave, ("s", "s")])
        await wait_until(pilot, lambda: app.screen is not screen)
        assert app.screen.query("Static")  # the stop's question
        kept = leave[0] == "enter"
        assert _filter_text(screen) == ("a100" if kept else "")
        if kept:
            assert "eval-a100" in " ".join(str(w.render()) for w in app.screen.query("Static"))


async def test_an_enter_read_with_a_dialogs_answer_does_not_reach_the_filter(
    make_app: Callable[..., PodtuiApp],
) -> None:
    """A second Enter read in the same burst as a dialog's answer was meant for the dialog: reaching the filter
    (focused under it), it neither keeps the filter nor moves to the list
    (docs/architecture.md#opening-a-screen-once)."""
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        screen = app.screen
        _read_at_once(app, _typed("/a100"))
        await wait_until(pilot, lambda: _filter_text(screen) == "a100")
        box = screen.query_one("#filter", Input)
        assert app.focused is box
        late = events.Key("enter", "\r")  # read before the answer below
        key_fence.close_behind(app)
        app.post_message(late)
        await pilot.pause(0.2)
        assert app.focused is box and box.has_class("-active")


async def test_the_filter_reopened_takes_the_words_typed_after_slash(make_app: Callable[..., PodtuiApp]) -> None:
    """The filter kept with Enter, then `/` again with new words typed after it in one go: they go to the filter,
    replacing the old words (the line selects what it holds when it takes the focus), and the list keeps them."""
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        screen = app.screen
        table = screen.query_one(PodTable)
        _read_at_once(app, [*_typed("/evall"), ("enter", "\r")])
        await wait_until(pilot, lambda: table.has_focus and _filter_text(screen) == "evall")
        await wait_until(pilot, lambda: table.visible_ids == [])  # the line's last change reaches the list after
        _read_at_once(app, [*_typed("/a100"), ("enter", "\r")])
        await wait_until(pilot, lambda: table.has_focus and _filter_text(screen) == "a100")
        assert len(table.visible_ids) == 1 and app.screen is screen


async def test_a_long_burst_reaches_the_filter_whole(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        screen = app.screen
        words = "x" * 150  # more keys than any one read holds
        _read_at_once(app, _typed("/" + words))
        await wait_until(pilot, lambda: _filter_text(screen) == words)
        assert app.screen is screen


async def test_keys_typed_before_a_question_opened_never_answer_it(make_app: Callable[..., PodtuiApp]) -> None:
    """Only keys on the same screen follow the focus: a pod's name typed ahead of Terminate's question does not
    fill in its "type the name" box (the question must be read before it is answered)."""
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        screen = app.screen
        table = screen.query_one(PodTable)
        pod = table.selected_pod
        assert pod is not None
        _read_at_once(app, [("T", "T"), *_typed(pod.name), ("enter", "\r")])
        await wait_until(pilot, lambda: app.screen is not screen)
        await pilot.pause(0.3)
        boxes = list(app.screen.query(Input).results(Input))
        assert all(box.value == "" for box in boxes), [box.value for box in boxes]
        assert not any("sent" in str(n.message) for n in app._notifications)
        assert pod.id in {p.id for p in app.feed.snapshot.pods}  # type: ignore[union-attr]


class _Closing:
    """An app whose queue takes a message or not, and never reads one back."""

    def __init__(self, takes: bool) -> None:
        self.takes = takes
        self.focused = None
        self.screen = object()

    def post_message(self, message: object) -> bool:
        return self.takes


def test_a_key_posted_again_and_never_read_holds_nothing_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's queue closed, or a message lost with it: later keys are not held back behind it for ever."""
    now = [100.0]
    monkeypatch.setattr("podtui.ui.key_fence.time.monotonic", lambda: now[0])
    typed = key_fence.TypeAhead()
    app = cast(PodtuiApp, _Closing(takes=True))
    assert typed._post(app, events.Key("a", "a"), now[0])  # posted again, and lost
    assert typed.read(app, events.Key("b", "b")) is False  # held behind it while it may still come
    now[0] += key_fence.TypeAhead.AGAIN_S + 0.1
    assert typed.read(app, events.Key("c", "c")) is True  # not any more
    closing = cast(PodtuiApp, _Closing(takes=False))
    assert not typed._post(closing, events.Key("d", "d"), now[0])
    assert typed.read(closing, events.Key("e", "e")) is True


@pytest.mark.parametrize("leave", LEAVING, ids=["enter", "escape"])
async def test_a_model_size_and_leaving_then_n_opens_the_create_form(
    make_app: Callable[..., PodtuiApp], leave: tuple[str, str]
) -> None:
    """On the GPUs' screen `m7B`, Enter (or escape) and `n` in one read: the size goes to its box, the key after it
    goes back to the table, and `n` opens the create form with the advised GPU; `n` is never typed into the size."""
    from textual.widgets import DataTable

    from podtui.ui.screens.create_pod import CreatePodScreen
    from podtui.ui.screens.gpus import GpusScreen

    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        gpus = GpusScreen()
        await app.push_screen(gpus)
        await wait_until(pilot, lambda: gpus.catalogue is not None and gpus.query_one(DataTable).has_focus)
        _read_at_once(app, [*_typed("m7B"), leave, ("n", "n")])
        await wait_until(pilot, lambda: isinstance(app.screen, CreatePodScreen) and app.screen.is_mounted)
        await wait_until(pilot, lambda: isinstance(app.focused, Input) and app.focused.id == "name")  # form ready
        assert gpus.query_one("#model", Input).value == "7B"
        assert gpus.advice is not None and gpus.advice.best is not None


async def test_a_remapped_back_key_the_line_uses_stays_the_lines(make_app: Callable[..., PodtuiApp]) -> None:
    """config.toml's [keys] may put a letter on the filter's back key: typed in the filter, it is typed, as it was
    when only the screen's binding knew it; a remapped key the line has no use for leaves it, with the key after
    it acting on the list."""
    from podtui.core.config import Config

    app = make_app(config=Config(keys={"pods.clear-filter": "escape,x,f9"}))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        screen = app.screen
        _read_at_once(app, _typed("/a1x"))
        await wait_until(pilot, lambda: _filter_text(screen) == "a1x")
        _read_at_once(app, [("backspace", None), ("f9", None), ("s", "s")])
        await wait_until(pilot, lambda: app.screen is not screen)  # f9 left the filter, cleared; s asks to stop
        assert _filter_text(screen) == ""
