"""The terminal's own desktop notification: OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty, Ghostty) and OSC 777
(urxvt, foot, Ghostty, some VTE builds), which those terminals turn into a system notification
(docs/alerts.md#the-terminals-notification).

The text is made safe first: no control character at all (so no BEL or ST can end the sequence early, and no
escape can start another), `;` kept out of OSC 777's title (its field separator), a length cap, secrets masked.
OSC 9's text always starts with "podtui: ", never with a digit and `;`, which ConEmu reads as a command of its own.
Inside tmux the sequence is wrapped in tmux's DCS passthrough with every ESC doubled; tmux passes it on only with
`set -g allow-passthrough on`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from podtui.core import secret
from podtui.core.alert_rules import Osc
from podtui.core.alerts import Alert
from podtui.core.visible import visible

MAX_CHARS = 240  # a notification shows a line or two; a huge name must not make a huge write
BEL = "\x07"


def safe_text(text: str, limit: int = MAX_CHARS) -> str:
    """`text` with secrets masked and every control character made inert (visible), cut to `limit` characters."""
    text = visible(secret.redact(text))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def osc9(text: str, source: str = "podtui") -> str:
    """source: "podtui", or "podtui (work)" on a profile; always first, so never a digit and `;`."""
    return f"\x1b]9;{safe_text(source, 60)}: {safe_text(text)}{BEL}"


def osc777(title: str, body: str) -> str:
    return f"\x1b]777;notify;{safe_text(title, 80).replace(';', ',')};{safe_text(body)}{BEL}"


def tmux_wrapped(sequence: str) -> str:
    """tmux's passthrough: DCS tmux; the sequence with each ESC doubled; ST."""
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"


def sequences(alert: Alert, osc: Osc, in_tmux: bool) -> str:
    """What to write to the terminal for `alert`."""
    out = []
    if osc in ("9", "both"):
        out.append(osc9(alert.text, alert.source))
    if osc in ("777", "both"):
        out.append(osc777(alert.title, alert.text))
    if in_tmux:
        out = [tmux_wrapped(s) for s in out]
    return "".join(out)


class TerminalNotifier:
    """A sink: `write` puts the sequence on the terminal (the App's driver, or `podtui watch`'s terminal)."""

    def __init__(self, write: Callable[[str], None], osc: Osc = "9", environ: Mapping[str, str] | None = None) -> None:
        self.write = write
        self.osc = osc
        self.in_tmux = bool((os.environ if environ is None else environ).get("TMUX"))

    def __call__(self, alert: Alert) -> None:
        self.write(sequences(alert, self.osc, self.in_tmux))
