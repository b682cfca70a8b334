"""Start-up without the cyclic garbage collector (docs/architecture.md#start-up).

Importing the app and building its first screen allocates tens of thousands of objects that live as long as the
app does; the collector's passes over them on the way to the first frame find nothing to free and cost a start
several milliseconds. The CLI pauses the collector as it starts; the app resumes it once its first frame is out,
and a command once its arguments are parsed. Reference counting frees everything else meanwhile, as always.
"""

from __future__ import annotations

import gc

_paused = False


def pause_collector() -> None:
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_collector() -> None:
    """Resume the collector if this module paused it (never one that someone else turned off)."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
