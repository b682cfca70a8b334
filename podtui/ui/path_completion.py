"""Completion for local paths as they are typed: the first entry of the folder that starts with what was typed."""

from __future__ import annotations

import asyncio
import itertools
import os
from pathlib import Path

from textual.suggester import Suggester

from podtui.core.visible import is_clean

LIMIT = 2000  # entries read from one folder; a huge folder must not stall the suggestion


def complete_local(value: str) -> str | None:
    if not value:
        return None
    expanded = os.path.expanduser(value)
    folder, prefix = os.path.split(expanded)
    try:
        with os.scandir(folder or ".") as it:
            entries = list(itertools.islice(it, LIMIT))
        # a name with control characters is never suggested: the box would draw it raw (a folder pulled from a
        # pod keeps the pod's names)
        names = sorted(
            e.name + ("/" if e.is_dir() else "")
            for e in entries
            if e.name.startswith(prefix) and (prefix.startswith(".") or not e.name.startswith(".")) and is_clean(e.name)
        )
    except OSError:
        return None
    if not names or names[0] == prefix:
        return None
    return value + names[0][len(prefix) :]


class LocalPathSuggester(Suggester):
    def __init__(self) -> None:
        super().__init__(use_cache=False, case_sensitive=True)

    async def get_suggestion(self, value: str) -> str | None:
        return await asyncio.to_thread(complete_local, value)  # disk I/O off the event loop


def is_local_folder(value: str) -> bool:
    return Path(value).expanduser().is_dir()
