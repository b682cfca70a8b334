"""The console's terminal emulation: feed throughput of podtui's adapter vs pyte, on recorded output.

Goal (issue 4): at least 100x pyte on each of three shapes (coloured ls, a log, carriage-return progress bars).
pyte is what textual-terminal uses. Each engine is fed the same bytes in 64 KiB chunks, as the SSH reader
thread delivers them; pyte gets its ByteStream, which decodes UTF-8 as it goes.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pyte

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.recordings import shapes
from podtui.console.emulator import available_engines, make_emulator

CHUNK = 65536
PYTE_BYTES = 600_000  # pyte manages well under 1 MB/s: a slice keeps the run short


def chunks(data: bytes) -> list[bytes]:
    return [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]


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


def main() -> None:
    recorded = shapes()
    engines = available_engines()
    print("terminal emulation throughput, MB/s (120x40, 10,000 lines of scrollback, 64 KiB chunks)")
    print(f"{'shape':22s} {'size':>7s} {'pyte':>7s}  " + "  ".join(f"{e + ' feed':>13s} {'ratio':>7s} "
                                                           f"{'full frame':>11s}" for e in engines))
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


if __name__ == "__main__":
    main()
