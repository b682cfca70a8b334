"""runpodctl output parser throughput, on a stream shaped like a long `runpodctl receive`.

Goal (README.md#benchmarks): at least 50 MB/s. The stream is what runpodctl v2 prints for a 200 GB file at its
100 ms bar throttle (frames, each preceded by its blanking run of spaces), fed in 4 KiB chunks as a PTY delivers it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from podtui.transfer.runpodctl_output import RunpodctlParser

CHUNK = 4096


def human(n: float) -> str:
    for unit in (" B", " kB", " MB", " GB"):
        if n < 1000:
            return f"{n:.1f}{unit}" if n < 10 else f"{n:.0f}{unit}"
        n /= 1000
    return f"{n:.0f} TB"


def stream(total: int = 200_000_000_000, rate: int = 60_000_000) -> bytes:
    name = "consolidated.00.pth"
    parts = [f"connecting...\rsecuring channel...\rreceiving '{name}' (186.3 GB) \n\nreceiving (<-203.0.113.7:53412)\n"]
    width = 0
    frames = total // (rate // 10)
    for i in range(frames + 1):
        done = min(total, i * rate // 10)
        pct = done * 100 // total
        bar = "█" * (pct // 5) + " " * (20 - pct // 5)
        counts = f"{human(done)}/{human(total)}, {human(rate)}/s"
        frame = f"{name} {pct:3d}% |{bar}| ({counts}) [{i // 10}s:{(frames - i) // 10}s]"
        parts.append("\r" + " " * width + "\r\r" + frame)
        width = max(width, len(frame))
    parts.append("\n")
    return "".join(parts).encode()


def main() -> None:
    data = stream()
    chunks = [data[i : i + CHUNK] for i in range(0, len(data), CHUNK)]
    best = 0.0
    events = 0
    for _ in range(3):
        parser = RunpodctlParser()
        start = time.perf_counter()
        events = sum(len(parser.feed(c)) for c in chunks) + len(parser.close())
        best = max(best, len(data) / (time.perf_counter() - start))
    print(
        f"runpodctl parser: {len(data) / 1e6:.1f} MB stream ({events} events), best of 3: {best / 1e6:.1f} MB/s "
        f"= {best / 50e6:.2f}x the goal of 50 MB/s"
    )


if __name__ == "__main__":
    main()
