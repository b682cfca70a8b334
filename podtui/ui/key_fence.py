"""Keys read with the answer to a question belong to the question.

Two keys in one read (a key pressed twice, a repeat) reach the app as two events queued together: the first answers
a dialog, and the second would land on the screen under it, where the same letter means something else (`y` answers
"Stop eval-a100?" and, on the list, copies). A key event carries the moment it was read; one read no later than the
moment a dialog answered was meant for the dialog, and is dropped (docs/architecture.md#opening-a-screen-once)."""

from __future__ import annotations

import weakref
from typing import Any

from textual import events
from textual._time import get_time  # the clock Textual stamps its events with
from textual.app import App

_answered_at: weakref.WeakKeyDictionary[App[Any], float] = weakref.WeakKeyDictionary()


def close_behind(app: App[Any]) -> None:
    """A dialog has answered: keys read until now were meant for it."""
    _answered_at[app] = get_time()


def holds(app: App[Any], event: events.Key) -> bool:
    """Whether this key, read before the last answer, is to be dropped rather than reach the screen under it."""
    return event.time <= _answered_at.get(app, float("-inf"))
