"""df for a simulated pod's /workspace: the pod's volume size, holding what the image left there plus what is in
the sandbox folder now. Run with `python -S pod_df.py IMAGE_DIR WORKSPACE [df options] PATH...` (stdlib only)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path


def used_bytes(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size
    return total


def human(n: float) -> str:
    for unit in ("K", "M", "G", "T"):
        n /= 1024
        if n < 1024 or unit == "T":
            return f"{n:.1f}{unit}" if n < 10 else f"{n:.0f}{unit}"
    return str(n)


def main(argv: list[str]) -> int:
    image, workspace, args = Path(argv[0]), Path(argv[1]), argv[2:]
    volume = json.loads((image / "volume.json").read_text())
    if not volume["size_gb"]:  # no volume: /workspace is a folder on the container disk, the overlay root
        volume = {
            "size_gb": volume.get("container_gb", 20),
            "used_gb": volume["used_gb"],
            "fs": "overlay",
            "mount": "/",
        }
    fs, mount = volume.get("fs", "/dev/sdb"), volume.get("mount", "/workspace")
    size = int(volume["size_gb"] * 2**30)
    used = min(size, int(volume["used_gb"] * 2**30) + used_bytes(workspace))
    free = size - used
    pct = f"{-(-used * 100 // size) if size else 0}%"
    if "-h" in args:
        print(f"{'Filesystem':<15} {'Size':>5} {'Used':>5} {'Avail':>5} Use% Mounted on")
        print(f"{fs:<15} {human(size):>5} {human(used):>5} {human(free):>5} {pct:>4} {mount}")
    else:
        print(f"{'Filesystem':<15} {'1024-blocks':>11} {'Used':>10} {'Available':>10} Capacity Mounted on")
        print(f"{fs:<15} {size // 1024:>11} {used // 1024:>10} {free // 1024:>10} {pct:>8} {mount}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
