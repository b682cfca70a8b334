"""The terminal's notification (OSC 9 and 777, wrapped for tmux) and notify-send: hostile text comes out inert,
never able to end the sequence early or start another; notify-send is run with an argument list."""

from __future__ import annotations

import dataclasses
import subprocess
from typing import Any

import pytest

from podtui.core.alerts import Alert
from podtui.core.notify.desktop import NotifySend
from podtui.core.notify.terminal import MAX_CHARS, TerminalNotifier, osc9, osc777, sequences, tmux_wrapped
from tests.helpers.hostile import HOSTILE

T0 = 1_800_000_000.0


def alert(text: str, name: str = "trainer", severity: str = "warning") -> Alert:
    return Alert("idle", text, severity, T0, "o", "q", "p1", name)  # type: ignore[arg-type]


def payload(seq: str, start: str) -> str:
    assert seq.startswith(start) and seq.endswith("\x07")
    return seq[len(start) : -1]


def test_osc_bytes() -> None:
    assert osc9("trainer is idle") == "\x1b]9;podtui: trainer is idle\x07"
    seq = osc777("podtui: idle; trainer", "trainer is idle")
    assert seq == "\x1b]777;notify;podtui: idle, trainer;trainer is idle\x07"
    both = sequences(alert("x"), "both", in_tmux=False)
    assert both == "\x1b]9;podtui: x\x07\x1b]777;notify;podtui: idle trainer;x\x07"


@pytest.mark.parametrize("text", [*HOSTILE, "9;4;1;50 progress", "x" * 5000])
def test_hostile_text_stays_inside_the_sequence(text: str) -> None:
    for seq, start in ((osc9(text), "\x1b]9;"), (osc777(text, text), "\x1b]777;notify;")):
        inner = payload(seq, start)
        assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in inner), repr(inner)
        assert len(inner) <= 2 * MAX_CHARS + 20
    assert payload(osc9(text), "\x1b]9;").startswith("podtui: ")  # never "9;4;...": ConEmu's own commands
    title = payload(osc777(text, "b"), "\x1b]777;notify;").rsplit(";", 1)[0]
    assert ";" not in title


def test_inside_tmux_every_esc_is_doubled_in_its_passthrough() -> None:
    seq = osc9("hello")
    wrapped = tmux_wrapped(seq)
    assert wrapped == "\x1bPtmux;\x1b\x1b]9;podtui: hello\x07\x1b\\"
    written: list[str] = []
    TerminalNotifier(written.append, "9", environ={"TMUX": "/tmp/tmux-0/default,1,0"})(alert("hello"))
    TerminalNotifier(written.append, "9", environ={})(alert("hello"))
    assert written == [wrapped, seq]
    inner = wrapped[len("\x1bPtmux;") : -2]
    assert "\x1b\\" not in inner.replace("\x1b\x1b", "")  # nothing in it ends the passthrough early


class FakeRun:
    def __init__(self, code: int = 0, error: Exception | None = None) -> None:
        self.calls: list[list[str]] = []
        self.code, self.error = code, error

    def __call__(self, argv: list[str], **kw: Any) -> subprocess.CompletedProcess[bytes]:
        assert "shell" not in kw and kw["timeout"] > 0
        self.calls.append(argv)
        if self.error is not None:
            raise self.error
        return subprocess.CompletedProcess(argv, self.code, b"", b"Cannot autolaunch D-Bus without X11 $DISPLAY")


def _sent(n: NotifySend) -> None:
    for t in n.threads:
        t.join(5)


def test_notify_send_argv_and_failures_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    run = FakeRun(code=1)
    n = NotifySend(which=lambda _: "/usr/bin/notify-send", run=run)
    n(alert("-x <b>bold</b> & \x1b]52;c;cm0K\x07", severity="error"))
    _sent(n)
    n(alert("again"))
    _sent(n)
    argv = run.calls[0]
    assert argv[:4] == ["/usr/bin/notify-send", "--app-name=podtui", "--urgency=critical", "--"]
    assert argv[5].startswith("-x &lt;b&gt;bold&lt;/b&gt; &amp; ") and "\x1b" not in argv[5]
    assert len(run.calls) == 2
    assert sum("notify-send failed" in r.getMessage() for r in caplog.records) == 1


def test_no_notify_send_no_process() -> None:
    run = FakeRun(error=OSError("nope"))
    n = NotifySend(which=lambda _: None, run=run)
    n(alert("x"))
    assert not n.available and run.calls == []


def test_a_profile_is_named_in_the_title() -> None:
    a = dataclasses.replace(alert("trainer is idle"), profile="work")
    assert sequences(a, "both", in_tmux=False) == (
        "\x1b]9;podtui (work): trainer is idle\x07\x1b]777;notify;podtui (work): idle trainer;trainer is idle\x07"
    )
    assert NotifySend(which=lambda _: "/usr/bin/notify-send").argv(a)[-2] == "podtui (work): idle trainer"
