"""Nothing a pod prints reaches the real terminal as a control: the emulator interprets the bytes, and what it hands
back (cell text) is drawn with every character a terminal would act on as a placeholder, in the columns the
engine gave it. The console's saved output and its tab title are made visible too."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.app import App, ComposeResult
from textual.strip import Strip

from podtui.console.emulator import Emulator
from podtui.console.engines import available_engines, make_emulator
from podtui.console.link import ConsoleLink
from podtui.console.widget import PLACEHOLDER, TerminalView, inert
from podtui.core.ssh.connect import Connection
from tests.helpers.hostile import HOSTILE, unsafe_chars

ENGINES = available_engines()
COLS, ROWS = 100, 6
MARK_COL = 90  # a character put here by cursor position after the hostile text must be drawn here


class FakeLink:
    """What TerminalView needs of a ConsoleLink: an emulator, and no shell."""

    def __init__(self, engine: str) -> None:
        self.emulator: Emulator = make_emulator(COLS, ROWS, scrollback=100, engine=engine)
        self.on_change: object = None
        self.label = self.title = "pod"

    def take_change(self) -> bool:
        return True

    def resize(self, cols: int, rows: int) -> None:
        self.emulator.resize(cols, rows)

    def send(self, data: bytes) -> bool:
        return True


class ConsoleApp(App[None]):
    def __init__(self, link: FakeLink) -> None:
        super().__init__()
        self.link = link

    def compose(self) -> ComposeResult:
        yield TerminalView(self.link)  # type: ignore[arg-type]


def drawn(view: TerminalView) -> list[Strip]:
    view._draw()
    return [view.render_line(y) for y in range(view.size.height)]


@pytest.mark.parametrize("engine", ENGINES)
async def test_hostile_output_is_drawn_inert(engine: str) -> None:
    link = FakeLink(engine)
    app = ConsoleApp(link)
    async with app.run_test(size=(COLS, ROWS)) as pilot:
        view = app.query_one(TerminalView)
        view.focus()
        await pilot.pause()
        extra = ["ab\u202ecd\u2066x\u2069", "wide\u4e2d\u202e!"]
        if engine == "ghostty":  # avt gives a combining mark a cell of its own, so the columns after it move anyway
            extra.append("e\u0301\u2069z")
        for text in [*HOSTILE, *extra]:
            link.emulator.feed(b"\x1bc" + text.encode() + f"\x1b[1;{MARK_COL + 1}HZ".encode())
            strips = drawn(view)
            for y, strip in enumerate(strips):
                for segment in strip:
                    assert not unsafe_chars(segment.text), (engine, text, y, segment.text)
                assert strip.cell_length == COLS
            assert strips[0].crop(MARK_COL, MARK_COL + 1).text == "Z", (engine, text, strips[0].text)


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_control_the_engine_kept_shows_as_a_placeholder(engine: str) -> None:
    link = FakeLink(engine)
    app = ConsoleApp(link)
    async with app.run_test(size=(COLS, ROWS)) as pilot:
        view = app.query_one(TerminalView)
        await pilot.pause()
        link.emulator.feed("bidi\u202egnp.exe del\x7f end".encode())
        line = drawn(view)[0].text.rstrip()
        # avt gives U+202E a cell; libghostty joins it to the "i" before it, and that cell shows the placeholder
        assert line == ("bidi\ufffdgnp.exe del\ufffd end" if engine == "avt" else "bid\ufffdgnp.exe del\ufffd end")


@pytest.mark.parametrize("own_cells", [True, False])
def test_inert_keeps_the_columns(own_cells: bool) -> None:
    cases = {
        "plain text": "plain text",
        "a\x1bb\x7fc\x85d": "a\ufffdb\ufffdc\ufffdd",  # controls: a cell of their own on either engine
        "x\udcffy": "x\ufffdy",  # a lone surrogate (an undecodable byte)
        "\u202e": "\ufffd" if own_cells else "",  # joined to nothing: libghostty drops it, so does the drawing
    }
    for text, want in cases.items():
        assert inert(text, own_cells) == want
    joined = {
        "ab\u202ec": "a\ufffdc",
        "\u4e2d\u2066x": "\ufffd\ufffdx",
        "e\u0301\u2028f": "\ufffdf",
        "a\u2066\u2069b": "\ufffdb",
    }
    for text, want in joined.items():
        got = inert(text, own_cells)
        assert not unsafe_chars(got)
        if own_cells:  # each character its own cell: the control becomes one
            assert got == "".join(PLACEHOLDER if unsafe_chars(c) else c for c in text)
        else:  # the cell it joined shows placeholders as wide as the cell was
            assert got == want and cell_len(got) == cell_len(text)


def no_connection() -> Connection:
    raise AssertionError("nothing connects in this test")


@pytest.mark.parametrize("engine", ENGINES)
def test_saved_output_and_the_tab_title_are_visible(engine: str, tmp_path: Path) -> None:
    link = ConsoleLink(no_connection, "name\u202eevil\x1b]0;x\x07", cols=COLS, rows=ROWS, engine=engine)
    for text in HOSTILE:
        link.emulator.feed(text.encode() + b"\r\n")
    saved = link.save(tmp_path / "out.txt").read_text()
    assert not unsafe_chars(saved, newlines=True)
    assert "<U+202E>" in saved  # the bidi control made visible, not dropped
    assert not unsafe_chars(link.title) and "<U+202E>" in link.title
    link.state, link.detail = "reconnecting", "2/6 \x1b[31m"
    assert not unsafe_chars(link.title)
    link._write_marker("could not connect: banner \x1b[?1049h\x1b]52;c;eA==\x07", "31")
    assert not link.emulator.modes().alt_screen
    assert "\\x1b[?1049h" in link.emulator.text()
