"""Local paths completed as a shell completes them: tab adds what every entry that fits agrees on, then lists them
when more than one fits; with nothing (more) to add or list, tab moves the focus as it does everywhere else. The
grey suggestion shown while typing is that same unambiguous completion, so what is shown is what tab adds."""

from __future__ import annotations

import asyncio
import itertools
import os
from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.suggester import Suggester
from textual.widgets import Input

from podtui.core.visible import is_clean

LIMIT = 2000  # entries read from one folder; a huge folder must not stall the completion
WAIT_S = 2.0  # a folder that does not answer by then (a dead network mount) has nothing to complete


@dataclass(frozen=True)
class Completion:
    value: str  # the value completed as far as every entry that fits agrees
    choices: tuple[str, ...]  # when more than one entry fits: their names, sorted (folders end with "/")


def complete_local(value: str) -> str | None:
    """`value` completed as far as every entry that fits agrees; None when that adds nothing."""
    done = completion_of(value)
    return done.value if done is not None and done.value != value else None


def completion_of(value: str) -> Completion | None:
    """How far `value` completes on this machine; None when nothing fits (or it names "." or ".." itself)."""
    expanded = os.path.expanduser(value)
    folder, prefix = os.path.split(expanded)
    if not value or prefix in (".", ".."):
        return None
    try:
        with os.scandir(folder or ".") as it:
            entries = list(itertools.islice(it, LIMIT))
        # a name with control characters is never offered: the box would draw it raw (a folder pulled from a
        # pod keeps the pod's names); hidden entries only once a dot is typed, as in a shell
        names = sorted(
            e.name + ("/" if e.is_dir() else "")
            for e in entries
            if e.name.startswith(prefix) and (prefix.startswith(".") or not e.name.startswith(".")) and is_clean(e.name)
        )
    except OSError:
        return None
    if not names:
        return None
    # the text every name starts with: that of the first and the last in sorted order
    first, last = names[0], names[-1]
    shared = 0
    while shared < min(len(first), len(last)) and first[shared] == last[shared]:
        shared += 1
    common = first[:shared]
    return Completion(value + common[len(prefix) :], tuple(names) if len(names) > 1 else ())


async def completed(value: str) -> Completion | None:
    """completion_of off the event loop (it reads the disk), given up after WAIT_S."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(completion_of, value), WAIT_S)
    except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
        return None


class LocalPathSuggester(Suggester):
    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        return await asyncio.to_thread(complete_local, value)  # off the event loop: it reads the disk


class LocalPathInput(Input):
    """A box for a path on this machine: tab completes it (see the module's docstring)."""

    class Listed(Message):
        """Tab found more than one entry that fits `value` (choices), or completed it to one (no choices)."""

        def __init__(self, box: LocalPathInput, value: str, choices: tuple[str, ...]) -> None:
            super().__init__()
            self.box, self.value, self.choices = box, value, choices

        @property
        def control(self) -> LocalPathInput:
            return self.box

    def __init__(self, value: str = "", *, id: str | None = None) -> None:
        # select_on_focus off: coming back to the box to type on must not replace the path with the next letter
        super().__init__(value, id=id, suggester=LocalPathSuggester(), select_on_focus=False)
        self._listed_for: str | None = None  # the value whose choices were last listed

    async def on_key(self, event: events.Key) -> None:
        if event.key != "tab":
            return
        before = self.value
        done = await completed(before)
        if self.value != before:  # typed on meanwhile: this tab's answer is stale; it still was a tab here
            event.prevent_default()
            event.stop()
            return
        if done is None or (done.value == before and (not done.choices or self._listed_for == before)):
            return  # nothing to add, nothing new to list: the screen's tab moves the focus on
        event.prevent_default()
        event.stop()
        if done.value != before:
            self.value = done.value
            self.cursor_position = len(done.value)
        self._listed_for = done.value if done.choices else None
        self.post_message(self.Listed(self, done.value, done.choices))
