"""run_remote's round trip, and SSH connection setup, on loopback.

Goal (issue 3): a trivial command through run_remote's gateway path (the PTY shell with markers) under 3x
paramiko's raw `exec_command` round trip against the same sshd. Both run against one real OpenSSH sshd on
127.0.0.1 (a simulated pod's direct SSH); the gateway path is also timed against the simulated gateway.
Needs root and OpenSSH's sshd (scripts/setup-test-env.sh installs it).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.simulated import simulated
from podtui.core.ssh.connect import connect, endpoints_for
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.sim.sshd import sshd_available

ROUNDS = 200


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    if not sshd_available():
        sys.exit("needs root and /usr/sbin/sshd (scripts/setup-test-env.sh)")
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
        for label, via, target in (("run_remote, PTY path, same sshd", "pty", pod),
                                   ("run_remote, exec path, same sshd", "exec", pod)):
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
