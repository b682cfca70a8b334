"""Keys read with the answer to a question belong to the question; keys typed ahead of a focus change follow it.

Two keys in one read (a key pressed twice, a repeat) reach the app as two events queued together: the first answers
a dialog, and the second would land on the screen under it, where the same letter means something else (`y` answers
"Stop eval-a100?" and, on the list, copies). A key event carries the moment it was read; one read no later than the
moment a dialog answered was meant for the dialog, and is dropped (docs/architecture.md#opening-a-screen-once).

Likewise `/a100` typed in one go: Textual hands each key to the widget focused when it is read, so `a100` would reach
the list (where `a` is autostop) while `/` is still opening the filter. A key that comes back to the app's bindings
after the focus moved on, on the same screen, is read again and handed to the widget focused now, as a terminal
program reads its keys in order (docs/architecture.md#opening-a-screen-once)."""

from __future__ import annotations

import time
import weakref
from collections import deque
from typing import TYPE_CHECKING, Any

from textual import events
from textual._time import get_time  # the clock Textual stamps its events with
from textual.app import App

if TYPE_CHECKING:
    from textual.dom import DOMNode
    from textual.screen import Screen
    from textual.widget import Widget

_answered_at: weakref.WeakKeyDictionary[App[Any], float] = weakref.WeakKeyDictionary()
_type_ahead: weakref.WeakKeyDictionary[App[Any], TypeAhead] = weakref.WeakKeyDictionary()


def close_behind(app: App[Any]) -> None:
    """A dialog has answered: keys read until now were meant for it."""
    _answered_at[app] = get_time()


def holds(app: App[Any], event: events.Key) -> bool:
    """Whether this key, read before the last answer, is to be dropped rather than reach the screen under it."""
    return event.time <= _answered_at.get(app, float("-inf"))


class TypeAhead:
    """The keys an app has handed out and not seen come back, and the keys it is reading again, in order.

    The app owns one: a key a widget consumes (a letter typed into a box) never comes back, so what is kept is let
    go by age, and goes with the app."""

    KEEP_S = 10.0  # a key not back by then was consumed where it went
    AGAIN_S = 1.0  # a key posted again and not read within this was lost with the app's queue: never wait on it

    def __init__(self) -> None:
        self._handed: deque[tuple[events.Key, DOMNode, Screen[Any]]] = deque()
        self._again: deque[tuple[events.Key, float]] = deque()  # posted to the app again, not yet read; when

    def read(self, app: App[Any], event: events.Key) -> bool:
        """A key as the app reads it, before Textual hands it to the focus. False: it is held back, posted again
        behind the keys being read again, so the keys keep their order."""
        now = time.monotonic()
        read_again = any(key is event for key, _ in self._again)
        self._again = deque((key, at) for key, at in self._again if key is not event and now - at < self.AGAIN_S)
        if not read_again and self._again and self._post(app, event, now):
            return False
        while self._handed and self._handed[0][0].time < event.time - self.KEEP_S:
            self._handed.popleft()
        self._handed.append((event, app.focused or app.screen, app.screen))
        return True

    def back(self, app: App[Any], event: events.Key) -> bool:
        """A key back at the app's bindings. True: the focus moved on since it was handed out (on the same screen),
        so it has been posted to the app again, to be handed to the focus now; the caller stops it here."""
        for i, (key, target, screen) in enumerate(self._handed):
            if key is event:
                del self._handed[i]
                if app.screen is not screen or app.focused is None or app.focused is target:
                    return False
                again = events.Key(event.key, event.character)
                again.time = event.time  # read when it was typed: holds() judges it by that
                return self._post(app, again, time.monotonic())
        return False

    def astray(self, app: App[Any], event: events.Key, widget: Widget) -> bool:
        """A key reaching `widget` after the focus left it on the same screen (Enter in a line moved the focus,
        and the next key of the same read was already on its way there). True: posted to the app again, to be
        handed to the focus now; the caller drops it."""
        focused = app.screen.focused
        if widget.screen is not app.screen or focused is None or focused is widget:
            return False
        self._handed = deque(entry for entry in self._handed if entry[0] is not event)
        again = events.Key(event.key, event.character)
        again.time = event.time
        return self._post(app, again, time.monotonic())

    def _post(self, app: App[Any], event: events.Key, now: float) -> bool:
        """Posted to the app, to be read again in turn; False when the app takes no more messages."""
        if not app.post_message(event):
            return False
        self._again.append((event, now))
        return True


def type_ahead(app: App[Any]) -> TypeAhead:
    """The app's keys in flight: one per app, made on first use (by the app as it reads its first key)."""
    found = _type_ahead.get(app)
    if found is None:
        found = _type_ahead[app] = TypeAhead()
    return found
