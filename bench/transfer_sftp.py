"""SFTP download and upload of 200 MB on loopback: podtui (paramiko) vs OpenSSH's `sftp` client, same sshd.

Goal (README.md#benchmarks): at least 70% of OpenSSH's sftp. The sshd is a simulated pod's direct SSH (real OpenSSH);
needs root and sshd.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.simulated import sftp_batch, simulated
from podtui.core.ssh.connect import connect, endpoints_for
from podtui.sim.sshd import sshd_available
from podtui.transfer.routes import sftp

SIZE = 200_000_000


def openssh(batch: str, key: Path, port: int, tmp: Path) -> float:
    start = time.perf_counter()
    sftp_batch(batch, key, port, tmp)
    return time.perf_counter() - start


def main() -> None:
    if not sshd_available():
        sys.exit("needs root and /usr/sbin/sshd (scripts/setup-test-env.sh)")
    with simulated() as b:
        tmp, key, settings = b.tmp, b.key, b.settings
        endpoint = endpoints_for(b.pod("llama-lora-3090"), settings, "direct")[0]
        (b.workspace("llama-lora-3090") / "down.bin").write_bytes(os.urandom(SIZE))
        local = tmp / "up.bin"
        local.write_bytes(os.urandom(SIZE))

        rows = []
        for what in ("download", "upload"):
            theirs, ours = [], []
            for _ in range(3):
                if what == "download":
                    theirs.append(openssh(f"get down.bin {tmp / 'o.bin'}", key.path, endpoint.port, tmp))
                else:
                    theirs.append(openssh(f"put {local} o-up.bin", key.path, endpoint.port, tmp))
                conn = connect(endpoint, settings)
                start = time.perf_counter()
                if what == "download":
                    sftp.download(conn, "down.bin", tmp / "p.bin")
                else:
                    sftp.upload(conn, local, "p-up.bin")
                ours.append(time.perf_counter() - start)
                conn.close()
            best_t, best_o = min(theirs), min(ours)
            rows.append((what, SIZE / best_t / 1e6, SIZE / best_o / 1e6))
    print(f"SFTP of {SIZE / 1e6:.0f} MB on loopback, same OpenSSH sshd, best of 3 each")
    for what, t, o in rows:
        print(f"  {what:8s}  OpenSSH sftp {t:6.1f} MB/s   podtui {o:6.1f} MB/s   {o / t:4.0%} (goal at least 70%)")


if __name__ == "__main__":
    main()
