"""Pasting into a pod: bracketed when the program asked for it, and a warning before several lines reach a shell."""

from __future__ import annotations

from podtui.console.emulator import Modes

_BRACKET_END = "\x1b[201~"


def encode_paste(text: str, modes: Modes) -> bytes:
    # A terminal sends a newline as carriage return, as the Enter key does.
    body = text.replace("\r\n", "\r").replace("\n", "\r")
    if modes.bracketed_paste:
        # an end marker inside the text would let the pasted text escape the bracket and run as typed
        body = body.replace(_BRACKET_END, "")
        return f"\x1b[200~{body}{_BRACKET_END}".encode()
    return body.encode()


def pasted_lines(text: str) -> int:
    return len(text.rstrip("\r\n").splitlines()) if text.strip() else 0


def needs_warning(text: str, modes: Modes) -> bool:
    """Several lines into a shell prompt may run as several commands; an editor on the alternate screen is safe."""
    return pasted_lines(text) > 1 and not modes.alt_screen
