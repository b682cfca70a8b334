"""The console's terminal emulation: feed throughput of podtui's adapter vs pyte, on recorded output.

Goal (README.md#benchmarks): at least 100x pyte on each of three shapes (coloured ls, a log, carriage-return
progress bars). pyte is what textual-terminal uses. Each engine is fed the same bytes in 64 KiB chunks, as the SSH
reader thread delivers them; pyte gets its ByteStream, which decodes UTF-8 as it goes. 'drawn': the widget's side of
a frame after each chunk, in a headless app (the frame read back, then every row's strip, as the compositor asks).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pyte

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.recordings import shapes
from podtui.console.engines import available_engines, make_emulator

CHUNK = 65536
PYTE_BYTES = 600_000  # pyte manages well under 1 MB/s: a slice keeps the run short


def chunks(data: bytes) -> list[bytes]:
    return [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]


def pyte_rate(data: bytes) -> float:
    data = data[:PYTE_BYTES]
    screen = pyte.Screen(120, 40)  # pyte's fastest screen (no history): the most generous baseline
    stream = pyte.ByteStream(screen)
    start = time.perf_counter()
    for c in chunks(data):
        stream.feed(c)
    return len(data) / (time.perf_counter() - start)


def adapter_rate(engine: str, data: bytes) -> tuple[float, float]:
    """(feed throughput in bytes per second, milliseconds to read back a frame whose every row changed)."""
    emu = make_emulator(120, 40, scrollback=10_000, engine=engine)
    parts = chunks(data)
    start = time.perf_counter()
    for c in parts:
        emu.feed(c)
    feed = len(data) / (time.perf_counter() - start)
    costs = []
    for c in parts[:40]:  # after each chunk the whole screen has scrolled: every row is new
        emu.feed(c)
        t = time.perf_counter()
        emu.frame()
        costs.append(time.perf_counter() - t)
    return feed, sorted(costs)[len(costs) // 2] * 1000


class _Link:
    """What the widget needs of a console link: an emulator, no shell."""

    def __init__(self, engine: str) -> None:
        self.emulator = make_emulator(120, 40, scrollback=10_000, engine=engine)
        self.on_change: Any = None
        self.label = self.title = "bench"

    def take_change(self) -> bool:
        return True

    def resize(self, cols: int, rows: int) -> None:
        self.emulator.resize(cols, rows)

    def send(self, data: bytes) -> bool:
        return True


def drawn_ms(engine: str, data: bytes) -> float:
    """Median milliseconds the widget spends on a frame after each chunk: reading it and building every row."""
    from textual.app import App, ComposeResult

    from podtui.console.widget import TerminalView

    link = _Link(engine)

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield TerminalView(link)  # type: ignore[arg-type]

    async def run() -> float:
        app = One()
        async with app.run_test(size=(120, 40)) as pilot:
            view = app.query_one(TerminalView)
            await pilot.pause()
            costs = []
            for c in chunks(data):
                link.emulator.feed(c)
                t = time.perf_counter()
                view._draw()
                for y in range(view.size.height):
                    view.render_line(y)
                costs.append(time.perf_counter() - t)
            return statistics.median(costs) * 1000

    return asyncio.run(run())


def main() -> None:
    recorded = shapes()
    engines = available_engines()
    print("terminal emulation throughput, MB/s (120x40, 10,000 lines of scrollback, 64 KiB chunks)")
    print(
        f"{'shape':22s} {'size':>7s} {'pyte':>7s}  "
        + "  ".join(f"{e + ' feed':>13s} {'ratio':>7s} {'full frame':>11s}" for e in engines)
    )
    for name, data in recorded.items():
        base = pyte_rate(data)
        row = f"{name:22s} {len(data) / 1e6:5.1f}MB {base / 1e6:7.2f}  "
        for engine in engines:
            feed, frame_ms = adapter_rate(engine, data)
            row += f"{feed / 1e6:13.1f} {feed / base:6.0f}x {frame_ms:8.1f} ms  "
        print(row)
    print("goal: adapter feed at least 100x pyte on each shape. 'full frame': reading back a screen whose every")
    print("row changed (a flood); the widget draws at most 60 frames a second and spends at most a third of")
    print("its time drawing, so floods are parsed at close to the feed rate")
    # after the feeds, so that the apps' leftovers weigh on no feed measured above
    print(
        f"\nthe widget's share of a frame, drawn after each chunk in a headless app (median ms)\n{'shape':22s} "
        + "  ".join(f"{e:>8s}" for e in engines)
    )
    for name, data in recorded.items():
        print(f"{name:22s} " + "  ".join(f"{drawn_ms(engine, data):8.2f}" for engine in engines))
    print("reading the frame back, then every row's strip as the compositor asks for it")


if __name__ == "__main__":
    main()
