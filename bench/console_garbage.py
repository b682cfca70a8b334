"""Console faults at full size, through the headless app and the simulated gateway's PTY:

- 100 MB of random bytes (`head -c 100000000 /dev/urandom`): MB/s, peak RSS of this process (app and in-process
  simulator), the scrollback kept, and whether the shell answers a command afterwards;
- a program that floods for a full minute while a key is typed every second: how long each key takes to reach
  the pod (the pod logs when it reads each one; same clock: loopback), and whether all arrived.
tests/console/test_console_matrix.py runs the same with 5 MB and 10 s. Options: --mb N, --flood-s S.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.simulated import Bench, simulated
from podtui.console.widget import TerminalView
from podtui.core.config import Config
from podtui.core.services import Services
from podtui.ui.app import PodtuiApp
from podtui.ui.build import build_app

RESET = r"printf '\030\033\\\033c'"  # CAN, ST, RIS: ends whatever the garbage left open
SCROLLBACK = 10_000
# On the pod: floods its terminal and logs when each typed byte arrives.
KEYS = r"""
import os, sys, threading, time, tty
tty.setraw(0)
done = threading.Event()
def flood():
    out = os.fdopen(1, "w", buffering=1 << 16)
    while not done.is_set():
        out.write("epoch 3 step 1234 loss 0.4321 lr 3e-4 grad_norm 1.234 tokens/s 11000\r\n")
threading.Thread(target=flood, daemon=True).start()
with open("keys.log", "w") as log:
    while True:
        b = os.read(0, 1)
        log.write(f"{time.time():.6f} {b!r}\n"); log.flush()
        if b in (b"q", b""):
            done.set()
            break
"""


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def screen(view: TerminalView) -> str:
    return "\n".join(view.link.emulator.screen_lines())


async def until(pilot: object, condition: object, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > end:
            raise TimeoutError("condition not met")
        await pilot.pause(0.02)  # type: ignore[attr-defined]


async def open_view(pilot: object, app: PodtuiApp, pod: object) -> TerminalView:
    view = await app.navigator.open_console(pod)  # type: ignore[arg-type]
    assert view is not None
    await until(pilot, lambda: screen(view).rstrip().endswith("/workspace#"), 30)
    return view


async def typed(pilot: object, text: str) -> None:
    await pilot.press(*[{" ": "space"}.get(c, c) for c in text], "enter")  # type: ignore[attr-defined]


def console_app(bench: Bench) -> PodtuiApp:
    return build_app(
        Services(
            bench.api, demo=True, ssh_settings=lambda: bench.settings, config=Config(console_scrollback=SCROLLBACK)
        ),
        poll_interval_s=600,
    )


async def garbage(mb: int) -> None:
    with simulated() as bench:
        pod = bench.pod("eval-a100")  # gateway only: RunPod's usual way in
        app = console_app(bench)
        async with app.run_test(size=(120, 40)) as pilot:
            view = await open_view(pilot, app, pod)
            before, fed = rss_mb(), view.link.emulator.bytes_fed
            start = time.perf_counter()
            await typed(pilot, f"head -c {mb * 1_000_000} /dev/urandom; {RESET}; echo GARBAGE-$((40+2))")
            await until(pilot, lambda: "GARBAGE-42" in screen(view), 3600)
            elapsed = time.perf_counter() - start
            got = view.link.emulator.bytes_fed - fed
            await pilot.pause(0.5)
            await pilot.press("ctrl+c")  # the shell read the console's answers to queries in the garbage
            await pilot.pause(0.5)
            await typed(pilot, "echo still-$((6*7))")
            try:
                await until(pilot, lambda: "\nstill-42" in screen(view), 15)
                answers = "yes"
            except TimeoutError:
                answers = "NO"
            print(
                f"random bytes: {got / 1e6:.1f} MB in {elapsed:.1f} s = {got / 1e6 / elapsed:.2f} MB/s; "
                f"peak RSS {rss_mb():.0f} MB (+{rss_mb() - before:.0f} MB); scrollback "
                f"{view.link.emulator.frame().history} lines (limit {SCROLLBACK}); state {view.link.state}; "
                f"shell answers afterwards: {answers}"
            )


async def flood(seconds: float) -> None:
    with simulated() as bench:
        pod = bench.pod("eval-a100")
        ws = bench.workspace("eval-a100")
        (ws / "keys.py").write_text(KEYS)
        app = console_app(bench)
        async with app.run_test(size=(120, 40)) as pilot:
            view = await open_view(pilot, app, pod)
            await typed(pilot, "python3 keys.py; stty sane")
            await until(pilot, lambda: view.link.emulator.bytes_fed > 1_000_000, 30)
            sent: list[float] = []
            start = time.time()
            keys = "abcdefghijklmnoprstuvwxyz"
            while time.time() - start < seconds:
                sent.append(time.time())
                await pilot.press(keys[len(sent) % len(keys)])
                await pilot.pause(1.0)
            fed = view.link.emulator.bytes_fed
            await pilot.press("q")
            await asyncio.sleep(2)
            arrived = [float(line.split()[0]) for line in (ws / "keys.log").read_text().splitlines()][: len(sent)]
            lat = sorted((a - s) * 1000 for a, s in zip(arrived, sent, strict=False))
            p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))] if lat else float("nan")
            print(
                f"flood for {seconds:g} s: {fed / 1e6:.0f} MB shown at {fed / 1e6 / seconds:.1f} MB/s; "
                f"{len(arrived)}/{len(sent)} keys arrived; latency median "
                f"{statistics.median(lat) if lat else float('nan'):.1f} ms, p95 {p95:.1f} ms, max "
                f"{max(lat) if lat else float('nan'):.1f} ms (goal p95 < 50 ms); peak RSS {rss_mb():.0f} MB"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--flood-s", type=float, default=60.0)
    args = parser.parse_args()
    asyncio.run(garbage(args.mb))
    asyncio.run(flood(args.flood_s))


if __name__ == "__main__":
    main()
