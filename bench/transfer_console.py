"""Files through a pod's shell on the (simulated) gateway: upload and download throughput on loopback.

Goals (README.md#benchmarks): at least 2 MB/s up and 10 MB/s down. The path for pods with neither SFTP nor runpodctl:
chunks of base64 through the PTY, each chunk checked by sha256 on arrival.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.simulated import simulated
from podtui.core.ssh.remote import open_remote
from podtui.transfer.routes import console

SIZE = 20_000_000


def main() -> None:
    with simulated() as b:
        pod = b.pod("eval-a100")  # gateway only
        local = b.tmp / "up.bin"
        local.write_bytes(os.urandom(SIZE))
        (b.workspace("eval-a100") / "down.bin").write_bytes(os.urandom(SIZE))
        with open_remote(pod, b.settings, "gateway") as shell:
            start = time.perf_counter()
            console.upload(shell, local, "up.bin")
            up = SIZE / (time.perf_counter() - start) / 1e6
            start = time.perf_counter()
            console.download(shell, "down.bin", b.tmp / "down.bin")
            down = SIZE / (time.perf_counter() - start) / 1e6
    print(f"console path, {SIZE / 1e6:.0f} MB through the simulated gateway's PTY, chunks verified")
    print(f"  upload    {up:5.2f} MB/s = {up / 2:.2f}x the goal of 2 MB/s")
    print(f"  download  {down:5.2f} MB/s = {down / 10:.2f}x the goal of 10 MB/s")


if __name__ == "__main__":
    main()
