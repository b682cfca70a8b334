"""Console scrollback: what 5 consoles keep of 10,000 lines x 200 columns, and what it costs in memory.

Goal: each console keeps `console_scrollback` lines (10,000 here) on both engines, and its memory stays bounded:
20,000 lines more, twice, leave the lines kept where they were and the RSS where it was (libghostty's byte budget
grows to what the output costs, then stays). Shapes: plain and log (a few colours) cost libghostty the least;
truecolour (a new 24-bit colour on every character), combining (a combining mark on every character), hyperlinks
(a link of its own on every character) and emoji (ZWJ family sequences) are heavy but ordinary, and keep every line
too; zalgo (six combining marks on every character) is pathological: libghostty's budget stops at its ceiling
(CEILING_PER_CELL bytes a cell) and it keeps fewer lines. Each line fills one row on each engine (avt gives a
combining mark and a zero-width joiner a cell of their own). --resize 500: after the first 10,000 lines each console
is resized to 500 columns and fed lines that wide. --all: every shape, and combining resized to 500, one line each.
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
from podtui.console.emulator import Emulator
from podtui.console.engines import available_engines, make_emulator

CONSOLES = 5
COLS, ROWS = 200, 50
SCROLLBACK = 10_000
FIRST, MORE = 10_000, 20_000
SHAPES = ("plain", "log", "truecolour", "combining", "hyperlinks", "emoji", "zalgo")
FAMILY = "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # 8 cells on libghostty, 11 on avt


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def line(i: int, shape: str, cols: int = COLS, engine: str = "ghostty") -> bytes:
    """Line i of a shape, filling one row of `cols` on `engine`."""
    head = f"L{i:07d} "
    n = cols - len(head)
    if shape == "log":  # a training log's few colours, cols visible characters
        text = f"{head}step {i} loss=0.{i % 9973:04d} lr=3.0e-04 grad_norm=1.23 "
        text += "." * (cols - 5 - len(text))
        return f"\x1b[32mINFO\x1b[0m {text[:40]}\x1b[2m{text[40:]}\x1b[0m".encode()
    if shape == "truecolour":  # a new 24-bit colour on every character
        tail = "".join(f"\x1b[38;2;{(i * 7 + x) % 256};{(x * 13) % 256};{(i + x * 3) % 256}m#" for x in range(n))
        return f"{head}{tail}\x1b[0m".encode()
    if shape in ("combining", "zalgo"):  # one or six combining marks on every character
        marks = 1 if shape == "combining" else 6
        cells = n if engine == "ghostty" else n // (1 + marks)
        tail = "".join(
            "aeiou"[x % 5] + "".join(chr(0x300 + (x * 7 + k * 11) % 0x70) for k in range(marks)) for x in range(cells)
        )
        return f"{head}{tail}".encode()
    if shape == "hyperlinks":  # a link of its own on every character
        tail = "".join(f"\x1b]8;;https://example.com/runs/{i}/{x}\x1b\\#" for x in range(n))
        return f"{head}{tail}\x1b]8;;\x1b\\".encode()
    if shape == "emoji":
        per = 8 if engine == "ghostty" else 11
        return f"{head}{FAMILY * (n // per)}".encode()
    return (head + "x" * n).encode()


def feed(e: Emulator, start: int, stop: int, shape: str, cols: int = COLS) -> None:
    chunk = bytearray()
    for i in range(start, stop):  # about 64 KiB at a time, as the SSH reader delivers it
        chunk += line(i, shape, cols, e.name) + b"\r\n"
        if len(chunk) >= 1 << 16:
            e.feed(bytes(chunk))
            chunk.clear()
    if chunk:
        e.feed(bytes(chunk))


def kept(e: Emulator) -> tuple[int, int]:
    """(lines of history, the number of the first one)."""
    e.scroll(-(10**9))
    back, top = e.frame().offset, re.search(r"L(\d{7}) ", e.screen_lines()[0])
    e.scroll_to_bottom()
    return back, int(top.group(1)) if top else -1


def one_engine(engine: str, shape: str, consoles: int, resize: int | None) -> dict[str, Any]:
    """RSS and what each console keeps after each stage: FIRST lines, then MORE, then MORE again."""
    base = rss_mb()
    emus = [make_emulator(COLS, ROWS, scrollback=SCROLLBACK, engine=engine) for _ in range(consoles)]
    stages, fed, cols = [], 0, COLS
    for size in (FIRST, MORE, MORE):
        if fed and resize and cols != resize:
            cols = resize
            for e in emus:
                e.resize(cols, ROWS)
        start = time.perf_counter()
        for e in emus:
            feed(e, fed, fed + size, shape, cols)
        seconds = time.perf_counter() - start
        fed += size
        stages.append(
            {
                "fed": fed,
                "cols": cols,
                "rss": rss_mb(),
                "kept": [kept(e) for e in emus],
                "seconds": seconds,
                "budget": [budget_mb(e) for e in emus],
            }
        )
    return {"base": base, "stages": stages, "peak": peak_mb()}


def budget_mb(e: Emulator) -> float | None:
    """libghostty's byte budget for this console now, in MB (None on avt)."""
    limit = getattr(e, "_limit", None)
    return None if limit is None else limit / 1e6


def ghostty_defaults(shape: str) -> int:
    """Lines of history a pyghostty Terminal keeps with libghostty's default byte limit: the old behaviour."""
    from pyghostty import Terminal

    t = Terminal(COLS, ROWS, scrollback=SCROLLBACK)
    for i in range(0, FIRST, 100):
        t.feed(b"".join(line(j, shape) + b"\r\n" for j in range(i, min(i + 100, FIRST))))
    return int(t.get("scrollback_rows", "size_t"))


def pyte_run(shape: str) -> dict[str, Any]:
    import pyte

    base = rss_mb()
    screen = pyte.HistoryScreen(COLS, ROWS, history=SCROLLBACK)
    stream = pyte.ByteStream(screen)
    start = time.perf_counter()
    for i in range(0, FIRST, 100):
        stream.feed(b"".join(line(j, shape, COLS, "avt") + b"\r\n" for j in range(i, min(i + 100, FIRST))))
    return {
        "engine": "pyte",
        "base": base,
        "after_first": rss_mb(),
        "peak": peak_mb(),
        "kept": len(screen.history.top),
        "first_s": time.perf_counter() - start,
    }


def child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def want_first(fed: int) -> tuple[int, int]:
    """(lines of history, the number of the oldest) that keeping the setting means after `fed` lines."""
    # after n lines ending in CR LF the screen holds the last ROWS-1: history is the rest, up to the setting
    want = min(fed - (ROWS - 1), SCROLLBACK)
    return want, fed - (ROWS - 1) - want


def report(engine: str, r: dict[str, Any], consoles: int) -> None:
    base = float(r["base"])
    print(f"{engine}: RSS before any console {base:.0f} MB (the baseline)")
    for stage in r["stages"]:
        fed, rss = int(stage["fed"]), float(stage["rss"])
        want, first = want_first(fed)
        right = all(n == want and top == first for n, top in stage["kept"])
        budgets = {round(b) for b in stage["budget"] if b is not None}
        budget = f"; budget {'/'.join(str(b) for b in sorted(budgets))} MB" if budgets else ""
        print(
            f"  after {fed:6,} lines {stage['cols']} wide: history {sorted({n for n, _ in stage['kept']})} lines a "
            f"console (+{ROWS - 1} on the screen; all {want:,} with the right first line: {right}); "
            f"RSS {rss:4.0f} MB = {rss / base:4.1f}x the baseline, {(rss - base) / consoles:5.1f} MB a console"
            f"{budget}; fed in {float(stage['seconds']):.2f} s"
        )
    print(f"  peak RSS {float(r['peak']):.0f} MB = {float(r['peak']) / base:.1f}x the baseline")


def summary(shape: str, resize: int | None, engine: str, r: dict[str, Any], consoles: int) -> None:
    """One line: the last stage's lines kept (fewest over the consoles) and RSS a console."""
    base, last = float(r["base"]), r["stages"][-1]
    want, first = want_first(int(last["fed"]))
    fewest = min(n for n, _ in last["kept"])
    right = all(n == want and top == first for n, top in last["kept"])
    per = (float(last["rss"]) - base) / consoles
    name = f"{shape}, resized to {resize}" if resize else shape
    print(
        f"{name:26s} {engine:8s} {fewest:7,} {'yes' if right else 'no':>6s} {per:9.1f} "
        f"{(float(r['peak']) - base) / consoles:9.1f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", help=argparse.SUPPRESS)
    ap.add_argument(
        "--shape",
        choices=SHAPES,
        default="plain",
        help="heavy but ordinary output keeps every line; zalgo is pathological and meets the ceiling",
    )
    ap.add_argument("--resize", type=int, help="after the first lines, resize each console to this many columns")
    ap.add_argument("--consoles", type=int, default=CONSOLES)
    ap.add_argument("--all", action="store_true", help="every shape (and combining resized to 500), one line each")
    ap.add_argument("--pyte", action="store_true", help="also measure pyte's HistoryScreen (one console, slow)")
    a = ap.parse_args()
    if a.engine == "ghostty-defaults":
        print(json.dumps({"kept": ghostty_defaults(a.shape)}))
        return
    if a.engine:
        print(
            json.dumps(pyte_run(a.shape) if a.engine == "pyte" else one_engine(a.engine, a.shape, a.consoles, a.resize))
        )
        return
    common = ["--consoles", str(a.consoles)]
    if a.all:
        print(
            f"{a.consoles} consoles {COLS}x{ROWS} each, console_scrollback = {SCROLLBACK:,}; {FIRST + 2 * MORE:,} "
            f"lines of each shape, one row each; RSS of a fresh process per engine and shape"
        )
        print(f"{'shape':26s} {'engine':8s} {'kept':>7s} {'right':>6s} {'MB/console':>9s} {'peak MB':>9s}")
        for shape, resize in [*((s, None) for s in SHAPES), ("combining", 500)]:
            for engine in available_engines():
                extra = ["--resize", str(resize)] if resize else []
                summary(
                    shape, resize, engine, child(["--engine", engine, "--shape", shape, *common, *extra]), a.consoles
                )
        print(
            f"kept: lines of history after the last stage, fewest over the consoles (the setting is {SCROLLBACK:,}); "
            "right: every console's oldest line is the right one; MB/console: RSS over the baseline after the "
            "last stage, and at its peak"
        )
        return
    resized = f" (resized to {a.resize} columns after the first)" if a.resize else ""
    print(
        f"{a.consoles} consoles {COLS}x{ROWS}, console_scrollback = {SCROLLBACK:,}, {a.shape} lines {COLS} wide, "
        f"fed {FIRST:,}, then {MORE:,} more, twice{resized}; RSS of a fresh process per engine"
    )
    for engine in available_engines():
        extra = ["--resize", str(a.resize)] if a.resize else []
        report(engine, child(["--engine", engine, "--shape", a.shape, *common, *extra]), a.consoles)
    if "ghostty" in available_engines():
        print(
            f"(a pyghostty Terminal on libghostty's default byte limit keeps "
            f"{child(['--engine', 'ghostty-defaults', '--shape', a.shape])['kept']} lines of history of the same)"
        )
    if a.pyte:
        r = child(["--engine", "pyte", "--shape", a.shape])
        base, after = float(r["base"]), float(r["after_first"])
        print(
            f"pyte, one console: lines kept {r['kept']}; RSS before {base:.0f} MB, after {FIRST:,} lines "
            f"{after:.0f} MB ({after - base:.1f} MB a console); fed in {float(r['first_s']):.1f} s"
        )


if __name__ == "__main__":
    main()
