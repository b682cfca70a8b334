"""run_remote's round trip, and SSH connection setup, on loopback.

Goal (README.md#benchmarks): a trivial command through run_remote's gateway path (the PTY shell with markers) under 3x
paramiko's raw `exec_command` round trip against the same sshd. Both run against one real OpenSSH sshd on
127.0.0.1 (a simulated pod's direct SSH); the gateway path is also timed against the simulated gateway.

--flood: `yes` for longer than its timeout (15 s), through the simulated gateway, the PTY path and the exec
path on the same sshd: seconds until run_remote returns (baseline: the timeout; goal: within 2 s of it), what
arrived, what was kept (at most the cap), and the peak RSS during each run against the RSS before it.
Needs root and OpenSSH's sshd (scripts/setup-test-env.sh installs it).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.simulated import Bench, simulated
from podtui.core.ssh.connect import connect, endpoints_for
from podtui.core.ssh.errors import RemoteTimeout
from podtui.core.ssh.remote import MAX_OUTPUT_BYTES, RemoteShell, open_remote
from podtui.sim.sshd import sshd_available

ROUNDS = 200


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class PeakRss:
    """The highest RSS of this process while the block runs, sampled every 50 ms."""

    def __enter__(self) -> PeakRss:
        self.before = self.peak = rss_mb()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._done.wait(0.05):
            self.peak = max(self.peak, rss_mb())

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb())


def flood(b: Bench, seconds: float, cap: int) -> None:
    pod = b.pod("llama-lora-3090")
    _, gateway = endpoints_for(pod, b.settings)
    print(f"`yes` with a {seconds:g} s timeout, output cap {cap / (1 << 20):g} MiB (this process holds the simulator)")
    for label, via in (
        ("simulated gateway, PTY", "gateway"),
        ("OpenSSH sshd, PTY path", "pty"),
        ("OpenSSH sshd, exec path", "exec"),
    ):
        endpoint = gateway if via == "gateway" else endpoints_for(pod, b.settings)[0]
        shell = RemoteShell(
            lambda ep=endpoint: connect(ep, b.settings),  # type: ignore[misc]
            "exec" if via == "exec" else "pty",
            max_output_bytes=cap,
        ).open()
        with shell, PeakRss() as rss:
            start = time.monotonic()
            try:
                shell.run("yes", timeout_s=seconds)
                raise SystemExit("yes finished?")
            except RemoteTimeout as e:
                took = time.monotonic() - start
                error = e
        kept, usable = len(error.output), error.session_usable  # `yes` prints ASCII: a character is a byte
        dropped = re.search(r"([\d,]+) bytes of its output were dropped", str(error))
        received = kept + (int(dropped.group(1).replace(",", "")) if dropped else 0)
        del error
        print(
            f"  {label:26s} returned after {took:5.2f} s = {took / seconds:.3f}x the timeout "
            f"(goal: within 2 s); {received / 1e6:5.0f} MB arrived, {kept / (1 << 20):4.1f} MiB kept; "
            f"peak RSS {rss.peak:4.0f} MB (+{rss.peak - rss.before:3.0f} MB over {rss.before:.0f} MB before); "
            f"shell usable after: {usable}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--flood", action="store_true", help="a `yes` flood past its timeout instead of round trips")
    ap.add_argument("--seconds", type=float, default=15.0, help="the flood's timeout")
    ap.add_argument("--cap-mb", type=float, default=MAX_OUTPUT_BYTES / (1 << 20), help="output kept, MiB")
    args = ap.parse_args()
    if not sshd_available():
        sys.exit("needs root and /usr/sbin/sshd (scripts/setup-test-env.sh)")
    if args.flood:
        with simulated() as b:
            flood(b, args.seconds, int(args.cap_mb * (1 << 20)))
        return
    with simulated() as b:
        pod = b.pod("llama-lora-3090")  # has direct SSH (real sshd) and the gateway
        settings = b.settings
        direct, gateway = endpoints_for(pod, settings)

        setups: dict[str, list[float]] = {"direct": [], "gateway": []}
        for _ in range(20):
            for name, ep in (("direct", direct), ("gateway", gateway)):
                c = connect(ep, settings)
                setups[name].append(c.setup_s)
                c.close()

        # paramiko's raw exec_command round trip: one channel per command, as `ssh host cmd` does
        conn = connect(direct, settings)
        raw = []
        for _ in range(ROUNDS):
            t = time.perf_counter()
            chan = conn.transport.open_session()
            chan.exec_command("true")
            chan.recv_exit_status()
            chan.close()
            raw.append(time.perf_counter() - t)
        conn.close()

        results: dict[str, list[float]] = {}
        for label, via, target in (
            ("run_remote, PTY path, same sshd", "pty", pod),
            ("run_remote, exec path, same sshd", "exec", pod),
        ):
            with open_remote(target, settings, via) as sh:  # type: ignore[arg-type]
                results[label] = [sh.run("true").duration_s for _ in range(ROUNDS)]
        c = connect(gateway, settings)
        with RemoteShell(lambda: c).open() as sh:
            results["run_remote, PTY path, simulated gateway"] = [sh.run("true").duration_s for _ in range(ROUNDS)]

    base = median_ms(raw)
    print(f"round trip of a trivial command, median of {ROUNDS}, loopback")
    print(f"  paramiko exec_command (raw), OpenSSH sshd    {base:6.2f} ms")
    for label, values in results.items():
        ms = median_ms(values)
        print(f"  {label:44s} {ms:6.2f} ms   ratio {ms / base:4.2f}x   (goal < 3x for the PTY path)")
    print("connection setup (TCP + handshake + host key check + key auth), median of 20")
    for name, values in setups.items():
        print(f"  {name:44s} {median_ms(values):6.1f} ms")


if __name__ == "__main__":
    main()
