"""Textual key names to the bytes a terminal sends, following the modes the remote program has set.

xterm's encodings: modifiers as CSI 1;m X, application cursor keys as SS3, alt as an ESC prefix. When a program
has enabled the kitty keyboard protocol (engines that support it report the flags), ctrl and alt combinations
and escape are sent unambiguously as CSI codepoint;m u.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.keys import key_to_character

if TYPE_CHECKING:
    from podtui.console.emulator import Modes

# The key that gives focus back to podtui; every other key goes to the pod.
RELEASE_KEY = "ctrl+right_square_bracket"
RELEASE_KEY_LABEL = "ctrl+]"

_CURSOR = {"up": "A", "down": "B", "right": "C", "left": "D", "home": "H", "end": "F"}
_TILDE = {
    "insert": 2,
    "delete": 3,
    "pageup": 5,
    "pagedown": 6,
    "f5": 15,
    "f6": 17,
    "f7": 18,
    "f8": 19,
    "f9": 20,
    "f10": 21,
    "f11": 23,
    "f12": 24,
    "f13": 25,
    "f14": 26,
    "f15": 28,
    "f16": 29,
    "f17": 31,
    "f18": 32,
    "f19": 33,
    "f20": 34,
}
_SS3_F = {"f1": "P", "f2": "Q", "f3": "R", "f4": "S"}
_CTRL_PUNCT = {
    "@": 0,
    "[": 27,
    "\\": 28,
    "]": 29,
    "^": 30,
    "_": 31,
    "?": 127,
    " ": 0,
    "2": 0,
    "3": 27,
    "4": 28,
    "5": 29,
    "6": 30,
    "7": 31,
    "8": 127,
}
_SIMPLE = {"enter": "\r", "tab": "\t", "escape": "\x1b", "backspace": "\x7f", "space": " "}
_NAMED = {"underscore": "_", "circumflex_accent": "^"}
_KITTY_CODE = {"enter": 13, "tab": 9, "escape": 27, "backspace": 127, "space": 32}


def _split(key: str) -> tuple[set[str], str]:
    *mods, base = key.split("+")  # Textual names "+" itself "plus", so "+" only separates
    return set(mods), base


def _mod_param(mods: set[str]) -> int:
    # xterm: 1 + shift(1) + alt(2) + ctrl(4) + super(8)
    return 1 + ("shift" in mods) + 2 * bool(mods & {"alt", "meta"}) + 4 * ("ctrl" in mods) + 8 * ("super" in mods)


def _char_of(base: str, character: str | None) -> str | None:
    if len(base) == 1:
        return base
    ch = _NAMED.get(base) or key_to_character(base)
    if ch is None and character is not None and len(character) == 1 and character.isprintable():
        ch = character
    return ch


def encode_key(key: str, character: str | None, modes: Modes) -> bytes | None:
    """The bytes for one key press, or None for a key a terminal would not send anything for."""
    mods, base = _split(key)
    m = _mod_param(mods)
    kitty = bool(modes.kitty_flags & 1)
    if base in _CURSOR:
        final = _CURSOR[base]
        if m > 1:
            return f"\x1b[1;{m}{final}".encode()
        return f"\x1b{'O' if modes.app_cursor else '['}{final}".encode()
    if base in _TILDE:
        n = _TILDE[base]
        return f"\x1b[{n};{m}~".encode() if m > 1 else f"\x1b[{n}~".encode()
    if base in _SS3_F:
        return f"\x1b[1;{m}{_SS3_F[base]}".encode() if m > 1 else f"\x1bO{_SS3_F[base]}".encode()
    if base in _SIMPLE:
        return _simple(base, mods, m, kitty)
    ch = _char_of(base, character)
    if ch is None:
        return character.encode() if character and character.isprintable() else None
    alt = bool(mods & {"alt", "meta"})
    if kitty and (alt or "ctrl" in mods):
        return f"\x1b[{ord(ch.lower())};{m}u".encode()
    if "shift" in mods and len(ch) == 1 and ch.isalpha():
        ch = ch.upper()
    if "ctrl" in mods:
        code = _ctrl(ch)
        if code is None:
            return None
        data = bytes([code])
    else:
        data = ch.encode()
    return b"\x1b" + data if alt else data


def _ctrl(ch: str) -> int | None:
    low = ch.lower()
    if "a" <= low <= "z":
        return ord(low) - 96
    return _CTRL_PUNCT.get(ch)


def _simple(base: str, mods: set[str], m: int, kitty: bool) -> bytes:
    if base == "tab" and mods == {"shift"}:
        return b"\x1b[Z"
    if kitty and (m > 1 or base == "escape"):
        return f"\x1b[{_KITTY_CODE[base]}{'' if m == 1 else f';{m}'}u".encode()
    if base == "space" and "ctrl" in mods:
        data = b"\x00"
    elif base == "backspace" and "ctrl" in mods:
        data = b"\x08"
    else:
        data = _SIMPLE[base].encode()
    return b"\x1b" + data if mods & {"alt", "meta"} else data
