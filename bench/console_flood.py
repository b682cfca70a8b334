"""The console end to end: a flood over SSH on loopback through session, emulator and widget.

Goals (README.md#benchmarks):
- throughput of a flood (`cat` of a large training log) through a console in the headless app, at least 75% of
  paramiko's raw `recv` of the same flood from the same sshd;
- while flooding, a keypress reaches the remote side within 50 ms at the 95th percentile;
- the app with 5 consoles open, each having received 50 MB, under 300 MB RSS (run with --memory; a fresh process).
Uses a simulated pod's direct SSH: a real OpenSSH sshd on 127.0.0.1 (needs root and sshd).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.recordings import LOG_SCRIPT, record
from bench.simulated import Bench, simulated
from podtui.console.widget import TerminalView
from podtui.core.config import Config
from podtui.core.services import Services
from podtui.core.ssh.connect import connect, endpoints_for
from podtui.sim.sshd import sshd_available
from podtui.ui.app import PodtuiApp
from podtui.ui.build import build_app

FLOOD_MB = 100
ROUNDS = 3
MARK = b"FLOOD-DONE"
COMMAND = b"cat flood.log; echo FLOOD-DON''E\r"  # quoted so the echoed command line does not match
COLS, ROWS = 120, 40

# Runs on the pod: floods its terminal, and logs when each byte typed at it arrives (same clock: loopback).
KEYS_SCRIPT = r"""
import os, sys, threading, time, tty
tty.setraw(0)
done = threading.Event()
line = ("\033[32mINFO\033[0m trainer: step 1234 loss=0.4321 lr=3.0e-04 grad_norm=1.234 tokens/s=11000 " * 1)[:110]
def flood():
    out = os.fdopen(1, "w", buffering=1 << 16)
    while not done.is_set():
        out.write(line + "\r\n")
with open("keys.log", "w") as log:
    threading.Thread(target=flood, daemon=True).start()
    while True:
        b = os.read(0, 1)
        log.write(f"{time.time():.6f} {b!r}\n"); log.flush()
        if b in (b"q", b""):
            done.set()
            break
"""


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


class World:
    """The simulated pods, each with a flood to cat and the keypress logger in its /workspace."""

    def __init__(self, bench: Bench) -> None:
        self.api, self.settings = bench.api, bench.settings
        self.pods = [bench.pod(n) for n in ("llama-lora-3090", "data-prep-a5000")]
        log = record([sys.executable, "-c", LOG_SCRIPT, "20000"]).replace(b"\r\n", b"\n")
        for pod in self.pods:
            ws = bench.workspace(pod.name)
            (ws / "flood.log").write_bytes(log * (FLOOD_MB * 1_000_000 // len(log) + 1))
            (ws / "keys.py").write_text(KEYS_SCRIPT)
        self.workspace = bench.workspace(self.pods[0].name)

    def app(self) -> PodtuiApp:
        return build_app(
            Services(self.api, demo=True, ssh_settings=lambda: self.settings, config=Config(console_scrollback=10_000)),
            poll_interval_s=600,
        )


def raw_paramiko(w: World) -> tuple[int, float]:
    """paramiko's recv of the same flood from the same sshd, in a PTY of the same size: the baseline."""
    pod = w.pods[0]
    conn = connect(endpoints_for(pod, w.settings, "direct")[0], w.settings)
    chan = conn.transport.open_session()
    chan.get_pty(term="xterm-256color", width=COLS, height=ROWS)
    chan.invoke_shell()
    time.sleep(0.5)
    while chan.recv_ready():
        chan.recv(65536)
    chan.sendall(COMMAND)
    total, tail = 0, b""
    start = time.perf_counter()
    while True:
        data = chan.recv(65536)
        total += len(data)
        if MARK in tail + data:
            break
        tail = data[-16:]
    elapsed = time.perf_counter() - start
    conn.close()
    return total, elapsed


async def wait_for(pilot: object, condition: object, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > end:
            raise TimeoutError("condition not met")
        await pilot.pause(0.01)  # type: ignore[attr-defined]


async def open_view(pilot: object, app: PodtuiApp, pod: object) -> TerminalView:
    view = await app.navigator.open_console(pod)  # type: ignore[arg-type]
    assert view is not None
    await wait_for(pilot, lambda: any(line.endswith("#") for line in view.link.emulator.screen_lines()))
    return view


def watch_marker(view: TerminalView) -> dict[str, float | int]:
    """Wrap the reader's output hook to time the flood without adding work to the path being timed."""
    seen: dict[str, float | int] = {"bytes": 0}
    inner = view.link.session.on_output
    assert inner is not None
    tail = [b""]

    def on_output(data: bytes) -> None:
        inner(data)
        seen["bytes"] = int(seen["bytes"]) + len(data)
        if "done" not in seen and MARK in tail[0] + data:
            seen["done"] = time.perf_counter()
        tail[0] = data[-16:]

    view.link.session.on_output = on_output
    return seen


async def through_podtui(
    w: World, rounds: int, raw: list[tuple[int, float]]
) -> tuple[list[tuple[int, float, int]], list[float]]:
    """Floods through a console, alternating with raw paramiko runs so both see the same machine load."""
    app = w.app()
    runs: list[tuple[int, float, int]] = []
    async with app.run_test(size=(COLS, ROWS + 4)) as pilot:
        view = await open_view(pilot, app, w.pods[0])
        for _ in range(rounds):
            raw.append(await asyncio.to_thread(raw_paramiko, w))
            seen = watch_marker(view)
            frames0 = view.frames_drawn
            start = time.perf_counter()
            view.link.send(COMMAND)
            await wait_for(pilot, lambda: "done" in seen, 120)  # noqa: B023 (awaited here, in this iteration)
            runs.append((int(seen["bytes"]), float(seen["done"]) - start, view.frames_drawn - frames0))
            await pilot.pause(0.5)

        # keypress latency while the pod floods the console
        (w.workspace / "keys.log").unlink(missing_ok=True)
        view.link.send(b"python3 keys.py\r")
        await pilot.pause(1.0)
        sent: list[float] = []
        for _ in range(60):
            sent.append(time.time())
            await pilot.press("a")
            await pilot.pause(0.05)
        await pilot.press("q")
        await pilot.pause(1.0)
        arrived = [
            float(line.split()[0])
            for line in (w.workspace / "keys.log").read_text().splitlines()
            if line.endswith("b'a'")
        ]
        latencies = [(a - s) * 1000 for s, a in zip(sent, arrived, strict=False)]
        return runs, latencies


async def memory(w: World) -> tuple[float, float]:
    """RSS of this process (app plus the in-process simulator) before and after 5 consoles took 50 MB each."""
    app = w.app()
    async with app.run_test(size=(COLS, ROWS + 4)) as pilot:
        await pilot.pause(0.5)
        before = rss_mb()
        views = [await open_view(pilot, app, w.pods[i % 2]) for i in range(5)]
        watches = [watch_marker(v) for v in views]
        for v in views:
            v.link.send(b"head -c 50000000 flood.log; echo FLOOD-DON''E\r")
        await wait_for(pilot, lambda: all("done" in s for s in watches), 300)
        await pilot.pause(0.5)
        received = sum(int(s["bytes"]) for s in watches)
        print(f"  received {received / 1e6:.0f} MB over 5 consoles")
        return before, rss_mb()


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    if not sshd_available():
        sys.exit("needs root and /usr/sbin/sshd (scripts/setup-test-env.sh)")
    with simulated() as bench:
        w = World(bench)
        if "--memory" in sys.argv:
            before, after = asyncio.run(memory(w))
            print(
                f"RSS with the app and simulator running: {before:.0f} MB; with 5 consoles after 50 MB each: "
                f"{after:.0f} MB (goal under 300 MB)"
            )
            return
        raw: list[tuple[int, float]] = []
        runs, lat = asyncio.run(through_podtui(w, ROUNDS, raw))
        raw_rates = [b / s / 1e6 for b, s in raw]
        our_rates = [b / s / 1e6 for b, s, _ in runs]
        fps = [f / s for _, s, f in runs]
        raw_rate, ours_rate = statistics.median(raw_rates), statistics.median(our_rates)
        print(f"flood of {FLOOD_MB} MB (cat of a coloured training log) over OpenSSH on loopback, {COLS}x{ROWS} PTY;")
        print(f"{ROUNDS} rounds, raw and console alternating; medians (each run in brackets)")
        print(f"  paramiko raw recv           {raw_rate:7.1f} MB/s  [{', '.join(f'{r:.1f}' for r in raw_rates)}]")
        print(
            f"  podtui console (headless)   {ours_rate:7.1f} MB/s  [{', '.join(f'{r:.1f}' for r in our_rates)}]"
            f"  {statistics.median(fps):.0f} frames/s drawn"
        )
        print(f"  ratio                       {ours_rate / raw_rate:7.0%} of raw (goal at least 75%)")
        print(
            f"keypress to the pod while it floods the console: {len(lat)} presses, median "
            f"{statistics.median(lat):.1f} ms, p95 {percentile(lat, 95):.1f} ms, max {max(lat):.1f} ms "
            f"(goal p95 under 50 ms)"
        )


if __name__ == "__main__":
    main()
