"""`console_scrollback` is what each console keeps, on both engines: full-width lines, wide and narrow terminals,
before and after a resize, and never more than the setting."""

from __future__ import annotations

import pytest

from podtui.console.emulator import Emulator, available_engines, make_emulator
from podtui.core.config import Config

ENGINES = available_engines()
ROWS = 24


def line(i: int, cols: int) -> bytes:
    """Line i, exactly `cols` wide: a number to find it by, then filler to the edge."""
    head = f"L{i:07d} "
    return (head + "x" * (cols - len(head))).encode()[:cols]


def feed_lines(e: Emulator, start: int, stop: int, cols: int) -> None:
    for chunk in range(start, stop, 1000):
        e.feed(b"".join(line(i, cols) + b"\r\n" for i in range(chunk, min(chunk + 1000, stop))))


def kept(e: Emulator) -> tuple[int, str]:
    """How far back the view goes, and the first line there."""
    e.scroll(-10**9)
    frame = e.frame()
    assert frame.offset == frame.history
    top = e.screen_lines()[0]
    e.scroll_to_bottom()
    assert e.frame().offset == 0
    return frame.offset, top


def first_kept(fed: int, rows: int, n: int) -> int:
    # after `fed` lines each ending in CR LF, the screen holds the last rows-1 of them and an empty cursor row
    return fed - (rows - 1) - n


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cols", [200, 80])
@pytest.mark.parametrize("n", [0, 7, 500, 10_000])
def test_history_is_exactly_the_setting(engine: str, cols: int, n: int) -> None:
    e = make_emulator(cols, ROWS, scrollback=n, engine=engine)
    fed = n + n // 2 + 3000  # past the byte budget too: Ghostty frees history a page (hundreds of rows) at a time
    feed_lines(e, 0, fed, cols)
    back, top = kept(e)
    first = first_kept(fed, ROWS, n)
    assert back == n
    assert top == line(first, cols).decode()
    lines = e.text().split("\n")
    assert len(lines) == n + ROWS - 1  # the empty cursor row is trimmed
    assert lines[0] == line(first, cols).decode() and lines[-1] == line(fed - 1, cols).decode()
    assert e.screen_lines()[-2] == line(fed - 1, cols).decode()


@pytest.mark.parametrize("engine", ENGINES)
def test_fewer_lines_than_the_setting_are_all_kept(engine: str) -> None:
    e = make_emulator(200, ROWS, scrollback=10_000, engine=engine)
    feed_lines(e, 0, 4000, 200)
    back, top = kept(e)
    assert back == 4000 - (ROWS - 1) and top == line(0, 200).decode()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("before", "after"), [(200, 80), (80, 200), (200, 120)])
@pytest.mark.parametrize("n", [0, 7, 2000, 10_000])
def test_resize_keeps_the_bound_and_the_history(engine: str, before: int, after: int, n: int) -> None:
    e = make_emulator(before, ROWS, scrollback=n, engine=engine)
    feed_lines(e, 0, n + 1500, before)
    e.resize(after, ROWS + 6)
    back, _ = kept(e)
    assert back <= n
    if after < before:  # narrower: each line wraps onto more rows, so history is full
        assert back == n
    fed = 2 * n + 3000
    feed_lines(e, n + 1500, fed, after)
    back, top = kept(e)
    assert back == n
    assert top == line(first_kept(fed, ROWS + 6, n), after).decode()
    lines = e.text().split("\n")
    assert len(lines) == n + ROWS + 5 and lines[-1] == line(fed - 1, after).decode()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_view_scrolled_back_stays_within_the_setting(engine: str) -> None:
    e = make_emulator(80, ROWS, scrollback=50, engine=engine)
    feed_lines(e, 0, 200, 80)
    e.scroll(-30)
    assert e.frame().offset == 30
    feed_lines(e, 200, 5000, 80)  # the lines on view become older than the setting
    frame = e.frame()
    assert 0 < frame.offset <= 50 and frame.history == 50


def test_ghostty_stores_a_bounded_amount_past_the_setting() -> None:
    if "ghostty" not in ENGINES:
        pytest.skip("libghostty-vt is not installed here")
    from podtui.console.ghostty_engine import GhosttyEmulator, scrollback_bytes

    for cols, n in ((200, 10_000), (80, 10_000), (80, 0), (300, 500), (2, 1000), (1000, 300)):
        e = make_emulator(cols, ROWS, scrollback=n, engine="ghostty")
        assert isinstance(e, GhosttyEmulator)
        feed_lines(e, 0, n + 2 * (1 << 20) // (8 * cols), cols)  # well past the budget
        budget = scrollback_bytes(n, cols, ROWS)
        _, stored = e._stored()
        assert n <= stored <= budget // (8 * cols)  # a stored row costs at least 8 bytes a cell
        assert budget <= (n + ROWS) * (10 * cols + 16) + (1 << 20)


def test_the_default_setting_is_ten_thousand_lines() -> None:
    assert Config().console_scrollback == 10_000
