"""`console_scrollback` is what each console keeps, on both engines: full-width lines, wide and narrow terminals,
before and after a resize, and never more than the setting; heavy output too (a colour, a combining mark or a
hyperlink on every character, emoji), while libghostty's memory stays within its ceiling whatever arrives."""

from __future__ import annotations

import pytest

from podtui.console.emulator import Emulator
from podtui.console.engines import available_engines, make_emulator
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
    e.scroll(-(10**9))
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


def ghostty_only() -> None:
    if "ghostty" not in ENGINES:
        pytest.skip("libghostty-vt is not installed here")


def test_ghostty_stores_a_bounded_amount_past_the_setting() -> None:
    ghostty_only()
    from podtui.console.ghostty_engine import GhosttyEmulator, ceiling_bytes, history_targets

    for cols, n in ((200, 10_000), (80, 10_000), (80, 0), (300, 500), (2, 1000), (1000, 300)):
        e = make_emulator(cols, ROWS, scrollback=n, engine="ghostty")
        assert isinstance(e, GhosttyEmulator)
        _, high = history_targets(n, cols)
        feed_lines(e, 0, n + 2 * (1 << 20) // (8 * cols) + 2 * high, cols)  # well past the budget
        stored = e._history()
        assert n <= stored <= high
        assert e._limit <= ceiling_bytes(n, cols, ROWS)
        # trimmed to what plain lines cost (9-10 bytes a cell), give or take a page
        assert e._limit <= (stored + ROWS) * cols * 10 + (1 << 20)


# Heavy but ordinary output, each line one row on each engine (avt gives a combining mark and a zero-width joiner a
# cell of their own), and zalgo: pathological.
FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 8 cells on libghostty, 11 on avt
HEAVY = ("truecolour", "combining", "hyperlinks", "emoji")


def heavy_line(i: int, kind: str, cols: int, engine: str) -> bytes:
    head = f"L{i:07d} "
    n = cols - len(head)
    if kind == "truecolour":
        tail = "".join(f"\x1b[38;2;{(i * 7 + x) % 256};{(x * 13) % 256};{(i + x * 3) % 256}m#" for x in range(n))
        return f"{head}{tail}\x1b[0m".encode()
    if kind in ("combining", "zalgo"):
        marks = 1 if kind == "combining" else 6
        cells = n if engine == "ghostty" else n // (1 + marks)
        tail = "".join(
            "aeiou"[x % 5] + "".join(chr(0x300 + (x * 7 + k * 11) % 0x70) for k in range(marks)) for x in range(cells)
        )
        return f"{head}{tail}".encode()
    if kind == "hyperlinks":
        tail = "".join(f"\x1b]8;;https://example.com/runs/{i}/{x}\x1b\\#" for x in range(n))
        return f"{head}{tail}\x1b]8;;\x1b\\".encode()
    assert kind == "emoji"
    return f"{head}{FAMILY * (n // (8 if engine == 'ghostty' else 11))}".encode()


def feed_heavy(e: Emulator, start: int, stop: int, kind: str, cols: int, size: int = 1 << 16) -> None:
    chunk = bytearray()
    for i in range(start, stop):  # `size` at a time: the SSH reader hands over what arrived, up to 1 MiB
        chunk += heavy_line(i, kind, cols, e.name) + b"\r\n"
        if len(chunk) >= size:
            e.feed(bytes(chunk))
            chunk.clear()
    e.feed(bytes(chunk))


def assert_kept(e: Emulator, fed: int, n: int, rows: int = ROWS) -> None:
    """History is the setting (or all there was), from the right line, to the last one."""
    want = min(fed - (rows - 1), n)
    back, top = kept(e)
    assert back == want
    assert top.startswith(f"L{fed - (rows - 1) - want:07d} ")
    lines = e.text().split("\n")
    assert len(lines) == want + rows - 1
    assert lines[0].startswith(f"L{fed - (rows - 1) - want:07d} ") and lines[-1].startswith(f"L{fed - 1:07d} ")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", HEAVY)
def test_heavy_output_keeps_the_setting(engine: str, kind: str) -> None:
    n, cols = 3000, 200
    e = make_emulator(cols, ROWS, scrollback=n, engine=engine)
    feed_heavy(e, 0, n - 500, kind, cols)
    assert_kept(e, n - 500, n)  # fewer than the setting: every one, the first too
    feed_heavy(e, n - 500, 2 * n + 2000, kind, cols)
    assert_kept(e, 2 * n + 2000, n)
    if engine == "ghostty":
        from podtui.console.ghostty_engine import ceiling_bytes

        assert e._limit < ceiling_bytes(n, cols, ROWS)  # trimmed: ordinary output is not what the ceiling is for


@pytest.mark.parametrize("engine", ENGINES)
def test_heavy_output_resized_wider_keeps_the_setting(engine: str) -> None:
    n = 2000
    e = make_emulator(200, ROWS, scrollback=n, engine=engine)
    feed_heavy(e, 0, n + 1000, "combining", 200)
    e.resize(500, ROWS)
    assert kept(e)[0] <= n
    feed_heavy(e, n + 1000, 2 * n + 3000, "combining", 500)
    assert_kept(e, 2 * n + 3000, n)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", ["truecolour", "combining"])
def test_heavier_output_after_plain_keeps_the_setting(engine: str, kind: str) -> None:
    """The lines kept stay the setting while heavier output replaces lighter, even a MiB of it at once; and
    right after it (fewer heavy lines than the setting yet), so do the plain lines before them."""
    n, cols = 3000, 200
    e = make_emulator(cols, ROWS, scrollback=n, engine=engine)
    feed_lines(e, 0, 2 * n, cols)  # plain: libghostty's budget is trimmed to what plain lines cost
    feed_heavy(e, 2 * n, 2 * n + 1000, kind, cols, 1 << 20)
    assert_kept(e, 2 * n + 1000, n)
    feed_heavy(e, 2 * n + 1000, 3 * n + 1000, kind, cols, 1 << 20)
    assert_kept(e, 3 * n + 1000, n)


def test_pathological_output_stops_at_the_ceiling() -> None:
    """Six combining marks on every character: libghostty keeps what its ceiling holds, fewer lines, and no more."""
    ghostty_only()
    from podtui.console.ghostty_engine import CEILING_PER_CELL, ceiling_bytes

    n, cols = 2000, 200
    e = make_emulator(cols, ROWS, scrollback=n, engine="ghostty")
    feed_lines(e, 0, 2 * n, cols)
    feed_heavy(e, 2 * n, 4 * n, "zalgo", cols)  # after plain lines: libghostty would hold more than its budget
    ceiling = ceiling_bytes(n, cols, ROWS)
    assert e._limit == ceiling == (n + ROWS) * (cols * CEILING_PER_CELL + 16) + (1 << 20)
    back, top = kept(e)
    assert 0 < back < n and top.startswith("L")
    assert e.text().split("\n")[-1].startswith(f"L{4 * n - 1:07d} ")


def test_the_budget_follows_the_output_both_ways() -> None:
    """Heavy output raises libghostty's budget, plain output after it lowers it again; a clear and the alternate
    screen change nothing that lasts."""
    ghostty_only()
    n, cols = 2000, 200
    e = make_emulator(cols, ROWS, scrollback=n, engine="ghostty")
    feed_lines(e, 0, 3 * n, cols)
    plain = e._limit
    feed_heavy(e, 3 * n, 5 * n, "truecolour", cols)
    heavy = e._limit
    assert heavy > 3 * plain
    feed_lines(e, 5 * n, 8 * n, cols)
    assert e._limit < heavy / 3
    assert_kept(e, 8 * n, n)
    e.feed(b"\x1b[H\x1b[2J\x1b[3J")  # `clear`: the history goes
    assert kept(e)[0] == 0
    feed_lines(e, 8 * n, 11 * n, cols)
    assert e._limit < heavy / 3
    assert_kept(e, 11 * n, n, ROWS)
    e.feed(b"\x1b[?1049h" + b"x\r\n" * 500)  # a full-screen program
    e.feed(b"\x1b[?1049l")
    assert kept(e)[0] == n and e._limit < heavy / 3


def test_the_default_setting_is_ten_thousand_lines() -> None:
    assert Config().console_scrollback == 10_000
