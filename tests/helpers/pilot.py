"""Driving the app with Pilot: wait for what a worker thread does instead of sleeping."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from textual.pilot import Pilot
from textual.screen import Screen

if TYPE_CHECKING:
    from podtui.core.pod import Pod
    from podtui.ui.app import PodtuiApp

S = TypeVar("S", bound=Screen[Any])


async def wait_until(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until `condition` holds: workers finish in threads, so poll rather than sleep."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.02)


async def loaded(pilot: Pilot[None], app: PodtuiApp) -> None:
    """Wait for the first data to be on screen: patiently, since on a loaded machine the first fetches can time out
    and the next ones come after the poll's backoff (5, 10, 20 s)."""
    await wait_until(pilot, lambda: app.feed.snapshot is not None and not app.poller.polling, 75)
    await pilot.pause()


async def polled(pilot: Pilot[None], app: PodtuiApp) -> None:
    """Poll now and wait until that poll's result is on screen."""
    target = app.poller.done + (2 if app.poller.polling else 1)
    app.poll_now()
    await wait_until(pilot, lambda: app.poller.done >= target)
    await pilot.pause()


async def steady(pilot: Pilot[None], app: PodtuiApp) -> None:
    """No blinking text cursor: a snapshot taken mid-blink would differ from run to run."""
    from textual.widgets import Input, TextArea

    for box in app.screen.query(Input):
        box.cursor_blink = False
    for area in app.screen.query(TextArea):
        area.cursor_blink = False
    await pilot.pause()


def details_shown(app: PodtuiApp) -> Pod | None:
    """The pod whose details are on screen: on the details screen (a small terminal), else in the main screen's
    pane (docs/architecture.md#panes)."""
    from podtui.ui.screens.pod_detail import PodDetailScreen
    from podtui.ui.screens.pod_list import PodListScreen
    from podtui.ui.widgets.pod_details import PodDetails

    screen = app.screen
    if isinstance(screen, PodDetailScreen):
        return screen.pod
    assert isinstance(screen, PodListScreen) and screen.panes_on, f"no details on screen: {screen}"
    return screen.pane.query_one(PodDetails).pod


async def opened_by_key(pilot: Pilot[None], app: PodtuiApp, key: str, kind: type[S]) -> S:
    """Once the data is in: press `key` and wait for the screen of `kind` it opens."""
    await loaded(pilot, app)
    await pilot.press(key)
    await wait_until(pilot, lambda: isinstance(app.screen, kind))
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, kind)
    return screen
