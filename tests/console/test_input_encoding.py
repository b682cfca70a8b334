"""Keys, mouse and paste become the bytes xterm would send, following the program's modes."""

from __future__ import annotations

import pytest

from podtui.console.emulator import Modes
from podtui.console.keys import encode_key
from podtui.console.mouse import encode_mouse
from podtui.console.paste import encode_paste, needs_warning

PLAIN = Modes()


@pytest.mark.parametrize(
    ("key", "char", "expected"),
    [
        ("a", "a", b"a"),
        ("A", "A", b"A"),
        ("é", "é", "é".encode()),
        ("ctrl+c", None, b"\x03"),
        ("ctrl+q", None, b"\x11"),
        ("ctrl+p", None, b"\x10"),
        ("ctrl+d", None, b"\x04"),
        ("ctrl+left_square_bracket", None, b"\x1b"),
        ("ctrl+underscore", None, b"\x1f"),
        ("ctrl+space", None, b"\0"),
        ("alt+x", "x", b"\x1bx"),
        ("alt+enter", None, b"\x1b\r"),
        ("alt+backspace", None, b"\x1b\x7f"),
        ("enter", "\r", b"\r"),
        ("tab", "\t", b"\t"),
        ("shift+tab", None, b"\x1b[Z"),
        ("escape", "\x1b", b"\x1b"),
        ("backspace", None, b"\x7f"),
        ("up", None, b"\x1b[A"),
        ("shift+up", None, b"\x1b[1;2A"),
        ("ctrl+right", None, b"\x1b[1;5C"),
        ("home", None, b"\x1b[H"),
        ("end", None, b"\x1b[F"),
        ("pageup", None, b"\x1b[5~"),
        ("ctrl+delete", None, b"\x1b[3;5~"),
        ("f1", None, b"\x1bOP"),
        ("f5", None, b"\x1b[15~"),
        ("shift+f12", None, b"\x1b[24;2~"),
        ("question_mark", "?", b"?"),
        ("plus", "+", b"+"),
        ("space", " ", b" "),
    ],
)
def test_keys_in_normal_mode(key: str, char: str | None, expected: bytes) -> None:
    assert encode_key(key, char, PLAIN) == expected


def test_application_cursor_keys() -> None:
    app = Modes(app_cursor=True)
    assert encode_key("up", None, app) == b"\x1bOA"
    assert encode_key("home", None, app) == b"\x1bOH"
    assert encode_key("shift+up", None, app) == b"\x1b[1;2A"  # modified keys are the same in both modes


def test_kitty_protocol_disambiguates_when_the_program_asks() -> None:
    kitty = Modes(kitty_flags=1)
    assert encode_key("ctrl+c", None, kitty) == b"\x1b[99;5u"
    assert encode_key("escape", None, kitty) == b"\x1b[27u"
    assert encode_key("ctrl+shift+a", None, kitty) == b"\x1b[97;6u"
    assert encode_key("a", "a", kitty) == b"a"
    assert encode_key("enter", "\r", kitty) == b"\r"


def test_unknown_keys_send_nothing() -> None:
    assert encode_key("ctrl+f99", None, PLAIN) is None


def test_mouse_only_when_asked() -> None:
    assert encode_mouse("press", 3, 4, PLAIN) is None
    x10 = Modes(mouse=9)
    assert encode_mouse("press", 0, 0, x10) == b"\x1b[M !!"
    assert encode_mouse("release", 0, 0, x10) is None


def test_mouse_sgr_and_legacy() -> None:
    sgr = Modes(mouse=1000, mouse_sgr=True)
    assert encode_mouse("press", 9, 4, sgr) == b"\x1b[<0;10;5M"
    assert encode_mouse("release", 9, 4, sgr) == b"\x1b[<0;10;5m"
    assert encode_mouse("press", 9, 4, sgr, button=2, ctrl=True) == b"\x1b[<18;10;5M"
    assert encode_mouse("wheel_down", 0, 0, sgr) == b"\x1b[<65;1;1M"
    assert encode_mouse("drag", 1, 1, sgr) is None  # 1000 does not report motion
    assert encode_mouse("drag", 1, 1, Modes(mouse=1002, mouse_sgr=True)) == b"\x1b[<32;2;2M"
    assert encode_mouse("move", 1, 1, Modes(mouse=1003, mouse_sgr=True)) == b"\x1b[<35;2;2M"
    legacy = Modes(mouse=1000)
    assert encode_mouse("release", 0, 0, legacy) == b"\x1b[M#!!"
    assert encode_mouse("press", 300, 0, legacy) is None  # beyond what one byte can carry


def test_paste_bracketed_and_sanitised() -> None:
    assert encode_paste("ls\nrm -rf x\n", PLAIN) == b"ls\rrm -rf x\r"
    bracketed = Modes(bracketed_paste=True)
    assert encode_paste("a\x1b[201~; evil\n", bracketed) == b"\x1b[200~a; evil\r\x1b[201~"


def test_paste_warning_for_several_lines_into_a_shell() -> None:
    assert needs_warning("one\ntwo", PLAIN)
    assert not needs_warning("one line\n", PLAIN)
    assert not needs_warning("one\ntwo", Modes(alt_screen=True))  # an editor takes it as text
