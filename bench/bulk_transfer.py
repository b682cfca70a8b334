"""Bulk transfers of 200 MB each way on loopback, one simulated pod's real sshd, side by side in one run: OpenSSH's
`sftp` (the baseline), podtui's OpenSSH route (routes/openssh.py: OpenSSH's `ssh`, with podtui hashing the file
on the way and reporting progress) and podtui's SFTP route (paramiko).

Goal (issue "Bulk transfers at the speed of the link"): the OpenSSH route at least 90% of OpenSSH `sftp` each way.
The contestants take turns within each round (the order rotating from round to round), and each one's median over
the rounds is compared, so a machine busy with something else slows them all alike. `sftp` runs twice: as it comes
(ssh's default cipher order, ChaCha20 first) and told the cipher order the route asks for (AES-GCM first), so the
route's own cost can be read apart from what the cipher gives. Needs root and sshd (scripts/setup-test-env.sh).

Run: python bench/bulk_transfer.py [--rounds 5] [--mb 200]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.simulated import sftp_batch, simulated
from podtui.core.ssh.connect import Connection, SshSettings, connect, endpoints_for
from podtui.core.ssh.openssh import bulk_cipher_options
from podtui.sim.sshd import sshd_available
from podtui.transfer.routes import openssh, sftp

GOAL = 0.90
POD = "llama-lora-3090"  # direct SSH


def contestants(
    conn: Connection, settings: SshSettings, key: Path, port: int, tmp: Path, local: Path
) -> dict[str, dict[str, Callable[[], object]]]:
    """direction -> name -> one transfer of the file; the first of each direction is the baseline."""
    gcm = bulk_cipher_options()
    reports: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:  # what the queue's Reporter is handed, at its cheapest
        reports.append((done, total))
        del reports[:-2]

    return {
        "download": {
            "OpenSSH sftp": lambda: sftp_batch(f"get down.bin {tmp / 'o.bin'}", key, port, tmp),
            "OpenSSH sftp, AES-GCM first": lambda: sftp_batch(f"get down.bin {tmp / 'o.bin'}", key, port, tmp, gcm),
            "podtui OpenSSH route": lambda: openssh.download(conn, settings, "down.bin", tmp / "r.bin", progress),
            "podtui SFTP route (paramiko)": lambda: sftp.download(conn, "down.bin", tmp / "p.bin", progress),
        },
        "upload": {
            "OpenSSH sftp": lambda: sftp_batch(f"put {local} o-up.bin", key, port, tmp),
            "OpenSSH sftp, AES-GCM first": lambda: sftp_batch(f"put {local} o-up.bin", key, port, tmp, gcm),
            "podtui OpenSSH route": lambda: openssh.upload(conn, settings, local, "r-up.bin", progress),
            "podtui SFTP route (paramiko)": lambda: sftp.upload(conn, local, "p-up.bin", progress),
        },
    }


def arrived_wrong(tmp: Path, workspace: Path, local: Path) -> list[str]:
    """Each contestant's last copy against its source (the route's under its part name: the bench does not
    verify and rename): the names of those that differ."""
    down, up = (workspace / "down.bin").read_bytes(), local.read_bytes()
    copies = {
        "sftp download": (tmp / "o.bin", down),
        "OpenSSH route download": (tmp / ".r.bin.podtui-part", down),
        "paramiko download": (tmp / ".p.bin.podtui-part", down),
        "sftp upload": (workspace / "o-up.bin", up),
        "OpenSSH route upload": (workspace / ".r-up.bin.podtui-part", up),
        "paramiko upload": (workspace / ".p-up.bin.podtui-part", up),
    }
    return [name for name, (path, source) in copies.items() if path.read_bytes() != source]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mb", type=int, default=200)
    args = parser.parse_args()
    if not sshd_available() or not openssh.available():
        sys.exit("needs root, /usr/sbin/sshd and OpenSSH's ssh and sftp (scripts/setup-test-env.sh)")
    size = args.mb * 1_000_000
    load_before = os.getloadavg()[0]  # other work on the machine slows every contestant: said with the figures
    with simulated() as b:
        tmp, settings = b.tmp, b.settings
        endpoint = endpoints_for(b.pod(POD), settings, "direct")[0]
        (b.workspace(POD) / "down.bin").write_bytes(os.urandom(size))
        local = tmp / "up.bin"
        local.write_bytes(os.urandom(size))
        conn = connect(endpoint, settings)  # pins the pod's host key, as a transfer's first connection does
        table = contestants(conn, settings, b.key.path, endpoint.port, tmp, local)
        times: dict[str, dict[str, list[float]]] = {d: {n: [] for n in runs} for d, runs in table.items()}
        for runs in table.values():  # one untimed turn each: caches warm, the known-hosts file written
            for run in runs.values():
                run()
        for r in range(args.rounds):
            for d, runs in table.items():
                names = list(runs)
                for name in names[r % len(names) :] + names[: r % len(names)]:
                    start = time.perf_counter()
                    runs[name]()
                    times[d][name].append(time.perf_counter() - start)
        conn.close()
        wrong = arrived_wrong(tmp, b.workspace(POD), local)
    shutil.rmtree(tmp, ignore_errors=True)  # 1.6 GB of files each run
    if wrong:
        sys.exit(f"not byte-identical to their source: {', '.join(wrong)}")
    print(
        f"{args.mb} MB each way on loopback, one OpenSSH sshd, {args.rounds} interleaved rounds, medians "
        f"({os.cpu_count()} cores; ssh's cipher list for the route: {' '.join(bulk_cipher_options()) or 'default'})"
    )
    print(f"load average (1 min) before: {load_before:.1f}, after: {os.getloadavg()[0]:.1f}; every copy byte-identical")
    verdicts = []
    met = True
    for d, timed in times.items():
        base = size / statistics.median(timed["OpenSSH sftp"]) / 1e6
        like = size / statistics.median(timed["OpenSSH sftp, AES-GCM first"]) / 1e6
        print(f"  {d}")
        for name, seconds in timed.items():
            rate = size / statistics.median(seconds) / 1e6
            spread = f"{size / max(seconds) / 1e6:.0f}-{size / min(seconds) / 1e6:.0f}"
            print(
                f"    {name:42s} {rate:6.1f} MB/s ({spread:>7s})  {rate / base:5.0%} of sftp  {rate / like:5.0%} +GCM"
            )
        route = size / statistics.median(timed["podtui OpenSSH route"]) / 1e6
        met = met and route >= GOAL * base
        verdicts.append(f"{d} {route / base:.0%} of sftp ({route / like:.0%} like for like)")
    print(
        f"goal: the OpenSSH route at least {GOAL:.0%} of OpenSSH sftp each way: {'met' if met else 'NOT met'} ", end=""
    )
    print(f"({'; '.join(verdicts)})")
    print("the route's figures include hashing the file on the way (sha256: its local checksum); sftp's hash nothing")


if __name__ == "__main__":
    main()
