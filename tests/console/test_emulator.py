"""Byte streams checked cell by cell through the adapter, with both engines."""

from __future__ import annotations

import random

import pytest

from podtui.console.cells import PLAIN, CellStyle
from podtui.console.emulator import Emulator
from podtui.console.engines import available_engines, make_emulator
from tests.helpers.repo import REPO

ENGINES = available_engines()


def test_both_engines_are_installed_here() -> None:
    # CI runs on Linux x86_64, where both have wheels: each test below runs against each engine
    assert ENGINES == ["ghostty", "avt"]


@pytest.fixture(params=ENGINES)
def emu(request: pytest.FixtureRequest) -> Emulator:
    return make_emulator(20, 5, scrollback=100, engine=request.param)


def style_at(e: Emulator, x: int, y: int) -> CellStyle:
    _, style = e.cell(x, y)
    assert isinstance(style, CellStyle)
    return style


def test_plain_text_and_cursor(emu: Emulator) -> None:
    emu.feed(b"hello\r\nworld")
    assert emu.screen_lines()[:2] == ["hello", "world"]
    frame = emu.frame()
    assert frame.cursor is not None and (frame.cursor.x, frame.cursor.y) == (5, 1)


def test_sixteen_256_and_true_colour(emu: Emulator) -> None:
    emu.feed(b"\x1b[31mr\x1b[0m\x1b[38;5;208mo\x1b[48;2;10;20;30mt\x1b[0m\x1b[94mb\x1b[0mp")
    assert style_at(emu, 0, 0).fg == 1
    assert style_at(emu, 1, 0).fg == 208
    assert style_at(emu, 2, 0).fg == 208 and style_at(emu, 2, 0).bg == (10, 20, 30)
    assert style_at(emu, 3, 0).fg == 12  # bright blue is palette 12
    assert style_at(emu, 4, 0) == PLAIN


def test_attributes(emu: Emulator) -> None:
    emu.feed(b"\x1b[1mB\x1b[0m\x1b[3mI\x1b[0m\x1b[4mU\x1b[0m\x1b[7mR\x1b[0m\x1b[2mD\x1b[0m\x1b[9mS\x1b[0m")
    b, i, u, r, d, s = (style_at(emu, x, 0) for x in range(6))
    assert (b.bold, i.italic, u.underline, r.reverse, d.dim, s.strike) == (True,) * 6
    assert not (b.italic or i.bold or u.reverse)


def test_cursor_movement_overwrites_in_place(emu: Emulator) -> None:
    emu.feed(b"abcdef\x1b[3;5HX\x1b[1;3HY\x1b[2D\x1b[1CZ")
    lines = emu.screen_lines()
    assert lines[0] == "abZdef"  # ESC[1;3H puts Y at column 3; two left then one right lands on it again
    assert lines[2] == "    X"


def test_erase_line_with_background_keeps_the_colour(emu: Emulator) -> None:
    emu.feed(b"ab\x1b[44m\x1b[K\x1b[0m")
    assert style_at(emu, 5, 0).bg == 4
    assert style_at(emu, 0, 0).bg is None


def test_alternate_screen_keeps_the_primary(emu: Emulator) -> None:
    emu.feed(b"shell line\r\n$ ")
    emu.feed(b"\x1b[?1049h\x1b[H\x1b[2Jeditor")
    assert emu.modes().alt_screen
    assert emu.screen_lines()[0] == "editor"
    emu.feed(b"\x1b[?1049l")
    assert not emu.modes().alt_screen
    assert emu.screen_lines()[:2] == ["shell line", "$"]


def test_scroll_region_scrolls_only_inside(emu: Emulator) -> None:
    emu.feed(b"top\r\n1\r\n2\r\n3\r\nbottom")
    emu.feed(b"\x1b[2;4r\x1b[4;1H\nnew")  # region rows 2-4; a line feed at its foot scrolls it alone
    assert emu.screen_lines() == ["top", "2", "3", "new", "bottom"]


def test_wide_characters_take_two_columns(emu: Emulator) -> None:
    emu.feed("中文x".encode())
    assert emu.screen_lines()[0] == "中文x"
    assert emu.cell(0, 0)[0] == "中" and emu.cell(1, 0)[0] == "" and emu.cell(4, 0)[0] == "x"
    frame = emu.frame()
    assert frame.cursor is not None and frame.cursor.x == 5


def test_utf8_split_across_chunks(emu: Emulator) -> None:
    data = "é中".encode()
    for i in range(len(data)):
        emu.feed(data[i : i + 1])
    assert emu.screen_lines()[0] == "é中"


def test_resize_changes_the_grid(emu: Emulator) -> None:
    emu.feed(b"0123456789abcdefghij")
    emu.resize(30, 8)
    frame = emu.frame()
    assert len(frame.rows) == 8 and emu.cols == 30
    assert sum(len(t) for t, _ in frame.rows[0]) >= 20
    emu.feed(b"\x1b[8;30Hz")
    assert emu.screen_lines()[7].endswith("z") and len(emu.screen_lines()[7]) == 30


def test_scrollback_and_view_offset(emu: Emulator) -> None:
    emu.feed(b"".join(b"line %d\r\n" % i for i in range(30)))
    assert emu.screen_lines()[-2] == "line 29"
    emu.scroll(-10)
    frame = emu.frame()
    assert frame.offset == 10 and frame.cursor is None
    assert emu.screen_lines()[0] == "line 16"
    emu.scroll_to_bottom()
    assert emu.frame().offset == 0 and emu.screen_lines()[-2] == "line 29"
    assert "line 0\nline 1\n" in emu.text()


def test_scrollback_is_bounded(emu: Emulator) -> None:
    emu.feed(b"".join(b"line %d\r\n" % i for i in range(5000)))
    text = emu.text()
    assert "line 4999" in text and "\nline 10\n" not in text
    # exactly the limit on both engines (more in tests/console/test_scrollback.py)
    assert text.split("\n")[0] == "line 4896" and text.count("\n") == 100 + 3


def test_modes_follow_the_program(emu: Emulator) -> None:
    assert emu.modes().mouse == 0 and not emu.modes().bracketed_paste
    emu.feed(b"\x1b[?1h\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[?25l")
    m = emu.modes()
    assert (m.app_cursor, m.bracketed_paste, m.mouse, m.mouse_sgr, m.cursor_visible) == (True, True, 1002, True, False)
    emu.feed(b"\x1b[?1002l\x1b[?2004l\x1b[?1l")
    m = emu.modes()
    assert (m.app_cursor, m.bracketed_paste, m.mouse) == (False, False, 0)


def test_mode_sequence_split_across_chunks(emu: Emulator) -> None:
    emu.feed(b"\x1b[?20")
    emu.feed(b"04h")
    assert emu.modes().bracketed_paste


def test_cursor_position_query_is_answered() -> None:
    for engine in ENGINES:
        replies: list[bytes] = []
        e = make_emulator(20, 5, 10, on_reply=replies.append, engine=engine)
        e.feed(b"abc\x1b[6n")
        assert b"\x1b[1;4R" in b"".join(replies), engine


def test_only_changed_rows_are_reported(emu: Emulator) -> None:
    emu.feed(b"a\r\nb\r\nc")
    emu.frame()
    emu.feed(b"\x1b[2;1HB")
    frame = emu.frame()
    assert frame.changed == {1}
    assert emu.frame().changed == frozenset()


def test_random_bytes_never_raise(emu: Emulator) -> None:
    rng = random.Random(4)
    specials = [b"\x1b[", b"\x1b]", b"\x1bP", b"\x1b[?", b";", b"m", b"H", b"\x07", b"\x1b\\", b"\xe4\xb8", b"\r\n"]
    for _ in range(300):
        chunk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        if rng.random() < 0.5:
            chunk += rng.choice(specials) + str(rng.randrange(-5, 99999)).encode()
        emu.feed(chunk)
        if rng.random() < 0.1:
            emu.resize(rng.randrange(1, 60), rng.randrange(1, 30))
        if rng.random() < 0.1:
            emu.scroll(rng.randrange(-50, 50))
        frame = emu.frame()
        assert len(frame.rows) == emu.rows
        emu.modes()
    emu.text()


def test_every_platform_installs_exactly_one_engine() -> None:

    from packaging.requirements import Requirement

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    engines = [r for r in map(Requirement, deps) if r.name in ("pyghostty", "pyavt")]
    assert {r.name for r in engines} == {"pyghostty", "pyavt"}
    for platform, machine, expected in [
        ("linux", "x86_64", "pyghostty"),
        ("linux", "aarch64", "pyghostty"),
        ("darwin", "arm64", "pyghostty"),
        ("darwin", "x86_64", "pyavt"),
        ("win32", "AMD64", "pyavt"),
        ("linux", "armv7l", "pyavt"),
    ]:
        env = {"sys_platform": platform, "platform_machine": machine}
        chosen = [r.name for r in engines if r.marker is None or r.marker.evaluate(env)]
        assert chosen == [expected], (platform, machine)
