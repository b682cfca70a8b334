"""A pod's log, 100,000 lines, into the logs screen against `tail -f` of the same lines into a terminal.

README.md#benchmarks: long logs stay fast; the lines per second the log view ingests, against `tail -n +1
-f FILE` writing the same file into a pseudo-terminal (what a terminal shows a user who follows a file; the
terminal's own drawing is not counted), measured in the same run. podtui's figure is the whole way: RunPod's log
stream (Server-Sent Events over HTTP from the simulated API), the follower's parsing and making each line safe to
show, the panel's batches, and the Line-API view, in the headless app at 120x32. Then the cost of a frame of the
view scrolled anywhere in the 100,000 lines (the smooth scrolling the issue asks for).

Run: python bench/log_ingest.py [--lines 100000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from podtui.core.api import V2Api
from podtui.core.services import Services
from podtui.sim import pod_logs
from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, demo_world
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.build import build_app
from podtui.ui.screens.logs import LogsScreen
from podtui.ui.widgets.log_view import LogView

POD = "q7x2m9fk4r8t1a"  # llama-lora-3090
SIZE = (120, 32)


def training_lines(n: int) -> list[str]:
    """A training run's output: steps with loss and speed, now and then a coloured warning."""
    rnd = random.Random(7)
    out = []
    for i in range(n):
        if i % 500 == 499:
            out.append(f"\x1b[33mWARNING\x1b[0m step {i}: grad norm {rnd.uniform(5, 50):.1f} clipped to 1.0")
        else:
            out.append(
                f"epoch {i // 20000 + 1} | step {i}/{n} | loss {rnd.uniform(0.3, 0.9):.4f} | lr 2.0e-04 | "
                f"{rnd.uniform(2.5, 4):.2f} it/s | tokens/s {rnd.randint(9000, 12000)}"
            )
    return out


def tail_f(path: Path, n: int) -> float:
    """Seconds until `tail -n +1 -f` has written all n lines into a pseudo-terminal."""
    master, slave = os.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(["tail", "-n", "+1", "-f", str(path)], stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    seen = 0
    try:
        while seen < n:
            seen += os.read(master, 1 << 16).count(b"\n")
        return time.perf_counter() - start
    finally:
        proc.kill()
        proc.wait()
        os.close(master)


def tail_in_tmux(path: Path, n: int) -> float | None:
    """Seconds until tmux (a terminal emulator) has taken in `tail -n +1` of the file in a 120x32 window; None
    without tmux."""
    if shutil.which("tmux") is None:
        return None
    sock = f"podtui-bench-{os.getpid()}"
    tmux = ["tmux", "-L", sock, "-f", "/dev/null"]
    script = f"tail -n +1 {shlex.quote(str(path))}; tmux -L {sock} wait-for -S done; sleep 60"
    start = time.perf_counter()
    subprocess.run([*tmux, "new-session", "-d", "-x", "120", "-y", "32", script], check=True)
    try:
        subprocess.run([*tmux, "wait-for", "done"], check=True, timeout=600)
        return time.perf_counter() - start
    finally:
        subprocess.run([*tmux, "kill-server"], check=False, stderr=subprocess.DEVNULL)


async def podtui_ingest(lines: list[str]) -> tuple[float, float]:
    """Seconds until the logs screen holds every line, and the median ms of a frame of the view scrolled to a
    random place in them."""
    # the simulated pod keeps its last 20,000 lines, as RunPod keeps a bounded log: here it keeps them all, so that
    # one stream carries the whole file
    pod_logs.KEPT = max(pod_logs.KEPT, len(lines) + 10_000)
    clock = SimClock(start=SCREENSHOT_EPOCH, frozen=True)
    world = demo_world(clock)
    pod = world.pods[POD]
    first = clock.now() - len(lines) * 0.01 - 60
    with world.logs.changed:
        world.logs.entries(pod, first - 1)  # the pod's own lines until then; ours after them, in time order
        log = world.logs._log(pod.id)
        for i, line in enumerate(lines):
            log.add(first + i * 0.01, "container", line)
    with SimApiServer(world).start() as sim:
        api = V2Api(sim.api_key, sim.url, clock=clock.now)
        app = build_app(Services(api, demo=True, clock=clock.now), poll_interval_s=3600)
        async with app.run_test(size=SIZE) as pilot:
            while app.feed.snapshot is None:
                await pilot.pause(0.05)
            snap = app.feed.snapshot
            target = next(p for p in snap.pods if p.id == POD)
            screen = LogsScreen(target)
            await app.push_screen(screen)
            panel = screen.panel
            panel.stop()
            await pilot.pause()
            panel.source = "container"
            panel.since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(first - 1))
            view = panel.view
            start = time.perf_counter()
            panel._restarted()
            while view.kept < len(lines):
                await pilot.pause(0.01)
            await pilot.pause()  # the frame with the last lines drawn
            took = time.perf_counter() - start
            frames = await _frames(app, view)
            panel.stop()
            return took, frames


async def _frames(app: PodtuiApp, view: LogView, n: int = 200) -> float:
    """Median ms to draw a whole screen of the view at a random place in its lines."""
    rnd = random.Random(3)
    height = view.size.height
    times = []
    for _ in range(n):
        view.scroll_to(y=rnd.randrange(0, max(1, int(view.max_scroll_y))), animate=False, immediate=True)
        start = time.perf_counter()
        for y in range(height):
            view.render_line(y)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    lines = training_lines(args.lines)
    with tempfile.TemporaryDirectory(prefix="podtui-bench-") as tmp:
        path = Path(tmp) / "train.log"
        path.write_text("".join(line + "\n" for line in lines))
        print(f"{args.lines:,} lines, {path.stat().st_size / 1e6:.1f} MB, {args.rounds} rounds each, taking turns")
        tails, tmuxes, ours, frames = [], [], [], []
        for _ in range(args.rounds):
            tails.append(tail_f(path, args.lines))
            in_tmux = tail_in_tmux(path, args.lines)
            if in_tmux is not None:
                tmuxes.append(in_tmux)
            took, frame = asyncio.run(podtui_ingest(lines))
            ours.append(took)
            frames.append(frame)
    t, p = statistics.median(tails), statistics.median(ours)
    print(f"tail -f into a pseudo-terminal: {args.lines / t:,.0f} lines/s ({t:.2f} s)")
    if tmuxes:
        m = statistics.median(tmuxes)
        print(f"tail into tmux (a terminal emulator drawing it): {args.lines / m:,.0f} lines/s ({m:.2f} s)")
    print(
        f"podtui's logs screen (the simulated API in the same process): {args.lines / p:,.0f} lines/s ({p:.2f} s), "
        f"{t / p:.3f}x tail -f into a pseudo-terminal" + (f", {m / p:.2f}x tail into tmux" if tmuxes else "")
    )
    print(f"a frame of the view scrolled anywhere in {args.lines:,} lines: {statistics.median(frames):.2f} ms")


if __name__ == "__main__":
    main()
