"""Console scrollback: what 5 consoles keep of 10,000 lines x 200 columns, and what it costs in memory.

Goal: each console keeps `console_scrollback` lines (10,000 here) on both engines, and its memory stays bounded:
20,000 lines more, twice, leave the lines kept where they were and the RSS at a ceiling (libghostty's byte budget
fills to its page slack, then stays). --shape truecolour shows the worst case: fewer lines, the same ceiling.
Each engine runs in a fresh process, so its peak RSS is its own. The baseline is that process's RSS after the
imports and before any emulator exists; with --pyte, pyte's HistoryScreen keeping the same history (one console,
it is slow) is measured too.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from podtui.console.emulator import Emulator, available_engines, make_emulator

CONSOLES = 5
COLS, ROWS = 200, 50
SCROLLBACK = 10_000
FIRST, MORE = 10_000, 20_000


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def line(i: int, shape: str) -> bytes:
    head = f"L{i:07d} "
    if shape == "log":  # a training log's few colours, COLS visible characters
        text = f"{head}step {i} loss=0.{i % 9973:04d} lr=3.0e-04 grad_norm=1.23 "
        text += "." * (COLS - 5 - len(text))
        return f"\x1b[32mINFO\x1b[0m {text[:40]}\x1b[2m{text[40:]}\x1b[0m".encode()
    if shape == "truecolour":  # the worst case for memory: a new 24-bit colour on every character
        tail = "".join(f"\x1b[38;2;{(i * 7 + x) % 256};{(x * 13) % 256};{(i + x * 3) % 256}m#" for x in range(COLS - 9))
        return f"{head}{tail}\x1b[0m".encode()
    return (head + "x" * (COLS - len(head))).encode()


def feed(e: Emulator, start: int, stop: int, shape: str) -> None:
    for chunk in range(start, stop, 300):  # about 64 KiB at a time, as the SSH reader delivers it
        e.feed(b"".join(line(i, shape) + b"\r\n" for i in range(chunk, min(chunk + 300, stop))))


def kept(e: Emulator) -> tuple[int, int]:
    """(lines of history, the number of the first one)."""
    e.scroll(-10**9)
    back, top = e.frame().offset, re.search(r"L(\d{7}) ", e.screen_lines()[0])
    e.scroll_to_bottom()
    return back, int(top.group(1)) if top else -1


def one_engine(engine: str, shape: str) -> dict[str, Any]:
    """RSS and what each console keeps after each stage: FIRST lines, then MORE, then MORE again."""
    base = rss_mb()
    emus = [make_emulator(COLS, ROWS, scrollback=SCROLLBACK, engine=engine) for _ in range(CONSOLES)]
    stages, fed = [], 0
    for size in (FIRST, MORE, MORE):
        start = time.perf_counter()
        for e in emus:
            feed(e, fed, fed + size, shape)
        seconds = time.perf_counter() - start
        fed += size
        stages.append({"fed": fed, "rss": rss_mb(), "kept": [kept(e) for e in emus], "seconds": seconds})
    return {"base": base, "stages": stages, "peak": peak_mb()}


def ghostty_defaults(shape: str) -> int:
    """Lines of history a pyghostty Terminal keeps with libghostty's default byte limit: the old behaviour."""
    from pyghostty import Terminal

    t = Terminal(COLS, ROWS, scrollback=SCROLLBACK)
    for i in range(0, FIRST, 300):
        t.feed(b"".join(line(j, shape) + b"\r\n" for j in range(i, min(i + 300, FIRST))))
    return int(t.get("scrollback_rows", "size_t"))


def pyte_run(shape: str) -> dict[str, Any]:
    import pyte

    base = rss_mb()
    screen = pyte.HistoryScreen(COLS, ROWS, history=SCROLLBACK)
    stream = pyte.ByteStream(screen)
    start = time.perf_counter()
    for i in range(0, FIRST, 300):
        stream.feed(b"".join(line(j, shape) + b"\r\n" for j in range(i, min(i + 300, FIRST))))
    return {"engine": "pyte", "base": base, "after_first": rss_mb(), "peak": peak_mb(),
            "kept": len(screen.history.top), "first_s": time.perf_counter() - start}


def child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", help=argparse.SUPPRESS)
    ap.add_argument("--shape", choices=("plain", "log", "truecolour"), default="plain",
                    help="truecolour: the worst case; fewer lines are kept, memory stays within the same budget")
    ap.add_argument("--pyte", action="store_true", help="also measure pyte's HistoryScreen (one console, slow)")
    a = ap.parse_args()
    if a.engine == "ghostty-defaults":
        print(json.dumps({"kept": ghostty_defaults(a.shape)}))
        return
    if a.engine:
        print(json.dumps(pyte_run(a.shape) if a.engine == "pyte" else one_engine(a.engine, a.shape)))
        return
    print(f"{CONSOLES} consoles {COLS}x{ROWS}, console_scrollback = {SCROLLBACK:,}, {a.shape} lines {COLS} wide, "
          f"fed {FIRST:,}, then {MORE:,} more, twice; RSS of a fresh process per engine")
    for engine in available_engines():
        r = child(["--engine", engine, "--shape", a.shape])
        base = float(r["base"])
        print(f"{engine}: RSS before any console {base:.0f} MB (the baseline)")
        for stage in r["stages"]:
            fed, rss = int(stage["fed"]), float(stage["rss"])
            # after n lines ending in CR LF the screen holds the last ROWS-1: history is the rest, up to the setting
            want = min(fed - (ROWS - 1), SCROLLBACK)
            first = fed - (ROWS - 1) - want
            right = all(n == want and top == first for n, top in stage["kept"])
            print(f"  after {fed:6,} lines: history {sorted({n for n, _ in stage['kept']})} lines a console "
                  f"(+{ROWS - 1} on the screen; all {want:,} with the right first line: {right}); "
                  f"RSS {rss:4.0f} MB = {rss / base:4.1f}x the baseline, {(rss - base) / CONSOLES:5.1f} MB a console; "
                  f"fed in {float(stage['seconds']):.2f} s")
        print(f"  peak RSS {float(r['peak']):.0f} MB = {float(r['peak']) / base:.1f}x the baseline")
    if "ghostty" in available_engines():
        print(f"(a pyghostty Terminal on libghostty's default byte limit keeps "
              f"{child(['--engine', 'ghostty-defaults', '--shape', a.shape])['kept']} lines of history of the same)")
    if a.pyte:
        r = child(["--engine", "pyte", "--shape", a.shape])
        base, after = float(r["base"]), float(r["after_first"])
        print(f"pyte, one console: lines kept {r['kept']}; RSS before {base:.0f} MB, after {FIRST:,} lines "
              f"{after:.0f} MB ({after - base:.1f} MB a console); fed in {float(r['first_s']):.1f} s")


if __name__ == "__main__":
    main()
