"""Text built to attack a terminal or a log: what a pod, RunPod's API, the Hub or a file name could carry.

Each entry is a class of attack, several of them built to survive a sanitiser that strips escape sequences in
one pass. The check below is written independently of podtui's sanitiser: what a terminal could act on.
"""

from __future__ import annotations

import unicodedata

CLIPBOARD = "cm0gLXJmIH4K"  # base64 of "rm -rf ~\n": what an OSC 52 write would put on the user's clipboard

HOSTILE = [
    f"osc52-bel\x1b]52;c;{CLIPBOARD}\x07",
    f"osc52-st\x1b]52;c;{CLIPBOARD}\x1b\\",
    f"nested-esc\x1b\x1b]52;c;{CLIPBOARD}\x07",  # an ESC before the sequence: a one-pass stripper leaves one
    f"nested-csi\x1b[\x1b]52;c;{CLIPBOARD}\x07m",  # the inner sequence removed, the outer one forms
    f"split-osc\x1b]5\x1b[0m2;c;{CLIPBOARD}\x07",  # removing the CSI joins the OSC back together
    "reset\x1bc",  # RIS: a full terminal reset
    "c1-csi\x9b2J\x9b3J",  # 8-bit CSI: erase the screen, where C1 controls are honoured
    f"c1-osc\x9d52;c;{CLIPBOARD}\x9c",
    "title\x1b]0;pwned\x07",
    "link\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "dcs\x1bP$qm\x1b\\",
    "bidi\u202egnp.exe",
    "isolate\u2066x\u2069 lrm\u200e rlm\u200f",
    "forged\r\n2026-12-01 12:00:00,000 INFO podtui: all is well",
    "overwrite\rSAFE",
    "lineseps\u2028a\u2029b",
    "bell\x07backspace\x08\x08\x08del\x7f",
    "nul\x00after",
    "tab\there",
]

_BIDI = {"\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}


def unsafe_chars(text: str, *, newlines: bool = False) -> list[str]:
    """Every character of `text` a terminal could act on: controls (C0, DEL, C1), line and paragraph separators,
    bidi controls, lone surrogates. newlines: a line feed is allowed (multi-line output)."""
    bad = []
    for ch in text:
        if newlines and ch == "\n":
            continue
        if unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") or ch in _BIDI:
            bad.append(ch)
    return bad
