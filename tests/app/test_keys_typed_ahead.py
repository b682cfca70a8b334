"""Keys typed ahead of a key that moves the focus follow the focus (docs/architecture.md#opening-a-screen-once):
`/` and the words after it, read together, filter the list; none of the letters acts on the list."""

from __future__ import annotations

from collections.abc import Callable

from textual import events
from textual.widgets import Input

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
        assert table.visible_ids == []
        _read_at_once(app, [*_typed("/a100"), ("enter", "\r")])
        await wait_until(pilot, lambda: table.has_focus and _filter_text(screen) == "a100")
        assert len(table.visible_ids) == 1 and app.screen is screen
