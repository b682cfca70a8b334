"""Answers to terminal queries: all of a program's, in order; not a flood's."""

from __future__ import annotations

import threading

from podtui.console.replies import ReplyPump


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def pump(burst: int = 4, per_second: float = 2.0) -> tuple[ReplyPump, list[bytes], Clock, threading.Event]:
    sent: list[bytes] = []
    clock = Clock()
    done = threading.Event()

    def send(data: bytes) -> None:
        sent.append(data)
        if data == b"last":
            done.set()

    return ReplyPump(send, burst=burst, per_second=per_second, clock=clock), sent, clock, done


def test_a_programs_questions_are_all_answered_in_order() -> None:
    p, sent, _clock, done = pump(burst=4)
    for data in (b"a", b"b", b"c", b"last"):
        p.reply(data)
    assert done.wait(5)
    assert sent == [b"a", b"b", b"c", b"last"] and p.dropped == 0


def test_a_flood_of_questions_is_cut_to_the_burst_then_the_rate() -> None:
    p, sent, clock, done = pump(burst=4, per_second=2.0)
    for _ in range(300):  # random bytes: hundreds of device-attribute queries at once
        p.reply(b"x")
    assert p.sent == 4 and p.dropped == 296
    clock.t += 1.0  # a second later: two more answers' worth
    for _ in range(10):
        p.reply(b"y")
    clock.t += 30.0  # a quiet half minute refills only up to the burst
    for _ in range(10):
        p.reply(b"z")
    p.reply(b"last")  # over the budget too: dropped
    assert p.sent == 4 + 2 + 4
    p.reply(b"never")
    clock.t += 10.0
    p.reply(b"last")
    assert done.wait(5)
    assert sent == [b"x"] * 4 + [b"y"] * 2 + [b"z"] * 4 + [b"last"]


def test_a_closed_shell_does_not_kill_the_pump() -> None:
    calls: list[bytes] = []
    done = threading.Event()

    def send(data: bytes) -> None:
        calls.append(data)
        if data == b"first":
            raise OSError("closed")
        done.set()

    p = ReplyPump(send)
    p.reply(b"first")
    p.reply(b"second")
    assert done.wait(5) and calls == [b"first", b"second"]
    p.close()
    done.clear()
    p.reply(b"after-close")  # the link can be opened again
    assert done.wait(5) and calls[-1] == b"after-close"
