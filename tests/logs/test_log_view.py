"""The log view's bounded buffer (docs/architecture.md#logs): once full, the oldest lines leave it and the shown
lines with them, in order, the filter applied, whatever the batches' sizes; a paused view holds still."""

from __future__ import annotations

import random

import pytest

from podtui.core.logs import LogLine
from podtui.ui.widgets.log_view import LogView


def _line(i: int) -> LogLine:
    return LogLine(
        event_id=str(i), ts="2026-11-30T09:00:00Z", source="container", text=f"step {i} {'odd' if i % 2 else 'even'}"
    )


@pytest.mark.parametrize("query", ["", "odd", "step 1"])
def test_a_full_buffer_keeps_the_newest_lines_and_the_filter(query: str) -> None:
    view = LogView(kept=50)
    view.set_query(query)
    rnd, n = random.Random(1), 0
    for _ in range(200):
        size = rnd.choice([1, 3, 7, 20, 49, 50, 51, 120])
        view.add(_line(n + k) for k in range(size))
        n += size
        kept = [_line(i) for i in range(max(0, n - 50), n)]
        assert view.kept == len(kept)
        assert list(view.shown) == [line for line in kept if all(w in line.text for w in query.split())]


def test_paused_it_holds_still_and_catches_up() -> None:
    view = LogView(kept=10)
    view.add(_line(i) for i in range(5))
    view.set_paused(True)
    view.add(_line(i) for i in range(5, 30))
    assert [line.event_id for line in view.shown] == [str(i) for i in range(5)] and view.held == 25
    view.set_paused(False)
    assert [line.event_id for line in view.shown] == [str(i) for i in range(20, 30)] and view.held == 0


def test_find_starts_again_when_the_lines_change() -> None:
    view = LogView(kept=50)
    view.add(_line(i) for i in range(20))
    view.found_at = 7  # where find last went
    view.set_query("odd")
    assert view.found_at is None
    view.found_at = 3
    view.clear()
    assert view.found_at is None
