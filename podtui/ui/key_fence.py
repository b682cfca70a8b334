"""Keys read with the answer to a question belong to the question; keys typed ahead of a focus change follow it.

Two keys in one read (a key pressed twice, a repeat) reach the app as two events queued together: the first answers
a dialog, and the second would land on the screen under it, where the same letter means something else (`y` answers
"Stop eval-a100?" and, on the list, copies). A key event carries the moment it was read; one read no later than the
moment a dialog answered was meant for the dialog, and is dropped (docs/architecture.md#opening-a-screen-once).

Likewise `/a100` typed in one go: Textual hands each key to the widget focused when it is read, so `a100` would reach
the list (where `a` is autostop) while `/` is still opening the filter. A key that reaches the app's bindings after
the focus moved away from the widget it was handed to goes to the widget focused now, as a terminal program reads
its keys in order (docs/architecture.md#opening-a-screen-once)."""

from __future__ import annotations

import weakref
from collections import deque
from typing import TYPE_CHECKING, Any

from textual import events
from textual._time import get_time  # the clock Textual stamps its events with
from textual.app import App

if TYPE_CHECKING:
    from textual.dom import DOMNode

_answered_at: weakref.WeakKeyDictionary[App[Any], float] = weakref.WeakKeyDictionary()
# each app's last keys and the widget each was handed to (a key a widget consumes never comes back: the oldest go)
_handed: weakref.WeakKeyDictionary[App[Any], deque[tuple[events.Key, DOMNode]]] = weakref.WeakKeyDictionary()


def close_behind(app: App[Any]) -> None:
    """A dialog has answered: keys read until now were meant for it."""
    _answered_at[app] = get_time()


def holds(app: App[Any], event: events.Key) -> bool:
    """Whether this key, read before the last answer, is to be dropped rather than reach the screen under it."""
    return event.time <= _answered_at.get(app, float("-inf"))


def handed(app: App[Any], event: events.Key, target: DOMNode) -> None:
    """The app hands this key, as it was read, to `target` (the widget focused then, else the screen)."""
    _handed.setdefault(app, deque(maxlen=64)).append((event, target))


def typed_ahead(app: App[Any], event: events.Key) -> bool:
    """Whether this key, back at the app's bindings, was handed to a widget that has lost the focus since (it was
    typed ahead of the key that moved it): it is to be read again, and handed to the focus now."""
    keys = _handed.get(app)
    for i, (key, target) in enumerate(keys or ()):
        if key is event:
            del keys[i]  # type: ignore[union-attr]  # found in it, so there
            return app.focused is not None and app.focused is not target
    return False
