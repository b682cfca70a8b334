"""runpodctl's progress bar, as the simulator's stand-in draws it: schollz/progressbar v3.14.3 (or v3.8.6) as croc
sets it up, and the size and duration formats Go prints (docs/runpod-facts.md#runpodctl-progress, and step 3 of
#runpodctl-send for the header lines). Stdlib only."""

from __future__ import annotations

import math
import time
import unicodedata
from collections.abc import Callable

# --- sizes and durations, as Go prints them ------------------------------------------------------------


def byte_count(b: int) -> str:
    """croc's utils.ByteCountDecimal, used in the header lines: base 1024, labelled kB/MB/GB."""
    if b < 1024:
        return f"{b} B"
    div, exp, n = 1024, 0, b // 1024
    while n >= 1024:
        div, exp, n = div * 1024, exp + 1, n // 1024
    return f"{b / div:.1f} {'kMGTPE'[exp]}B"


def humanize(x: float, old: bool) -> tuple[str, str]:
    """progressbar's humanizeBytes: v3.14.3 base 1000 with " B"; v3.8.6 base 1024 and "B" with no space."""
    base = 1024.0 if old else 1000.0
    if x < 10:
        return f"{x:2.0f}", "B" if old else " B"
    e = math.floor(math.log(x) / math.log(base))
    val = math.floor(x / base**e * 10 + 0.5) / 10
    return (f"{val:.1f}" if val < 10 else f"{val:.0f}"), (" B", " kB", " MB", " GB", " TB", " PB", " EB")[e]


def go_duration(seconds: int) -> str:
    """time.Duration.String() for whole seconds: "0s", "5s", "1m5s", "1h0m3s"."""
    if seconds <= 0:
        return "0s"
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m}m{s}s" if h else f"{m}m{s}s" if m else f"{s}s"


def display_width(text: str) -> int:
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
        if c != "\r"
    )


# --- the progress bar ----------------------------------------------------------------------------------


class Bar:
    """schollz/progressbar as croc sets it up: width 20, the file name as description, ShowBytes, ShowCount,
    RenderBlankState, throttled to one frame per 100 ms, "\\n" on completion.

    v3.14.3 writes the blank 0% frame at once; v3.8.6's blank render is swallowed by the throttle, and it
    blanks with "\\r" + N spaces + "\\r" even when N is 0, so its stream starts "\\r\\r\\r"."""

    WIDTH, THROTTLE_S = 20, 0.1

    def __init__(self, total: int, description: str, old: bool, emit: Callable[[str], None]) -> None:
        self.emit = emit  # straight to stderr, unbuffered
        self.max = max(total, 1)  # croc draws an empty file as a bar of 1
        self.desc, self.old = description, old
        now = time.monotonic()
        self.start = self.counter_time = now
        self.last_shown = -math.inf if not old else now  # v3.14.3's RenderBlank forgets the throttle
        self.num, self.bytes, self.since_last = 0, 0.0, 0
        self.rates: list[float] = []
        self.saucer = self.percent = self.widest = 0
        self.finished = False
        self.max_h, self.max_suffix = humanize(self.max, old)
        self.render()

    def add(self, n: int) -> None:
        if self.num < self.max:
            self.num += n
        self.bytes += n
        self.since_last += n
        now = time.monotonic()
        if now - self.counter_time > 0.5:  # the rolling average of the last ten half-second rates
            self.rates = [*self.rates, self.since_last / (now - self.counter_time)][-10:]
            self.counter_time, self.since_last = now, 0
        fraction = self.num / self.max
        self.saucer, self.percent = int(fraction * self.WIDTH), int(fraction * 100)
        if self.num <= self.max:
            self.render()

    def render(self) -> None:
        now = time.monotonic()
        if now - self.last_shown < self.THROTTLE_S and self.num < self.max:
            return
        if self.widest or self.old:
            self.emit("\r" + " " * self.widest + "\r")
        if not self.finished and self.num >= self.max:
            self.finished = True
            self._frame(now)
            self.emit("\n")  # croc's fmtPrintUpdate for a single file
        if self.finished:
            return
        self.widest = max(self.widest, self._frame(now))
        self.last_shown = now

    def _frame(self, now: float) -> int:
        elapsed = now - self.start
        rate = (
            sum(self.rates) / len(self.rates)
            if self.rates and not self.finished
            else (self.bytes / elapsed if elapsed > 0 else 0.0)
        )
        cur, suffix = humanize(self.bytes, self.old)
        counts = (
            f"{cur}/{self.max_h}{self.max_suffix}"
            if suffix == self.max_suffix
            else f"{cur}{suffix}/{self.max_h}{self.max_suffix}"
        )
        if self.old:  # v3.8.6 always writes the comma, and its own kB/s or MB/s
            kb = rate / 1024
            speed = f"{kb / 1024:0.3f} MB/s" if kb > 1024 else f"{kb:0.3f} kB/s" if kb > 0 else ""
            counts += ", " + speed
        elif rate > 0:
            speed, unit = humanize(rate, False)
            counts += f", {speed}{unit}/s"
        eta = int((self.max - self.num) / rate) if rate > 0 else 0  # Go: 1/0 overflows to 0s
        bar = "█" * self.saucer + " " * (self.WIDTH - self.saucer)
        frame = f"\r{self.desc}{self.percent:4d}% |{bar}| ({counts})"
        if self.percent != 100:
            frame += f" [{go_duration(int(elapsed))}:{go_duration(max(eta, 0))}]"
        self.emit(frame)
        return display_width(frame)
