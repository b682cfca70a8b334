"""A create whose answer was lost: the request went out, no usable answer came back, and the thing asked for (a
pod, a network volume, a template) may exist. Creating again could make and bill a second one, so podtui looks for
it instead, and never says it was not made (docs/storage.md#network-volumes, docs/launch.md)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from podtui.core.api.errors import ApiError, ApiResponseError, ApiUnavailable

T = TypeVar("T")

# Seconds to wait before each look at the list after a lost answer: RunPod may not list the new one at once.
LOOKUP_DELAYS: tuple[float, ...] = (0.0, 3.0)


def answer_lost(e: ApiError) -> bool:
    """The request went out and its answer was lost (cut off, unreadable, timed out, a gateway's 5xx page): what it
    asked for may have been done. A refusal, a connection never made or RunPod's own 5xx problem say it was not."""
    if isinstance(e, ApiResponseError):
        return True
    if isinstance(e, ApiUnavailable):
        said_by_runpod = e.by_runpod and e.status is not None and 500 <= e.status < 600
        return not e.not_sent and not said_by_runpod
    return False


def look_for_created(
    listing: Callable[[], Iterable[T]],
    made: Callable[[T], bool],
    delays: Sequence[float] = LOOKUP_DELAYS,
    sleep: Callable[[float], None] = time.sleep,
) -> T | None:
    """After a lost answer: the item `made` recognises in `listing`, looked for after each delay. None only when the
    last look succeeded and found none; raises the last ApiError when it failed (the item's absence is not known)."""
    error: ApiError | None = None
    for delay in delays:
        sleep(delay)
        try:
            items = tuple(listing())
        except ApiError as e:
            error = e
            continue
        error = None
        found = [item for item in items if made(item)]
        if found:
            return found[-1]
    if error is not None:
        raise error
    return None


def lost_create_message(what: str, lost: ApiError, lookup_error: ApiError | None, where: str) -> str:
    """What to say when the answer to creating `what` was lost and it was not found (or could not be looked for):
    never that it was not made, which may be false, and would invite a second create."""
    if lookup_error is not None:
        return (
            f"RunPod's answer was lost ({lost}): {what} may have been created, and podtui could not look "
            f"({lookup_error}). Look at {where} before trying again: a second create could make a second one"
        )
    return (
        f"RunPod's answer was lost ({lost}): {what} may have been created, and is not listed yet. Look at {where} in "
        "a minute before trying again: a second create could make a second one"
    )
