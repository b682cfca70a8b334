"""nvidia-smi for a simulated pod: asks the simulated RunPod API for this pod's live GPU figures.

Run as a script inside a pod's sandbox (stdlib only). Prints the familiar table, or CSV for
`--query-gpu=... --format=csv[,noheader][,nounits]` as scripts and watchdogs use it.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from typing import Any

MEMORY_MIB = {
    "RTX 3090": 24576,
    "RTX 4090": 24564,
    "RTX A5000": 24564,
    "A100 80GB PCIe": 81920,
    "H100 80GB HBM3": 81559,
    "L40S": 46068,
}
DRIVER, CUDA = "550.54.15", "12.4"


def fetch() -> list[tuple[str, dict[str, Any]]]:
    pod_id = os.environ["RUNPOD_POD_ID"]
    query = (
        f'{{ pod(input: {{podId: "{pod_id}"}}) {{ machine {{ gpuDisplayName }} '
        "runtime { gpus { id gpuUtilPercent memoryUtilPercent } } } }"
    )
    req = urllib.request.Request(
        os.environ["PODTUI_SIM_API"] + "/graphql",
        json.dumps({"query": query}).encode(),
        {"Authorization": "Bearer " + os.environ["PODTUI_SIM_KEY"], "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        pod = json.load(r)["data"]["pod"]
    name = full_name((pod.get("machine") or {}).get("gpuDisplayName") or "Unknown")
    return [(name, g) for g in ((pod.get("runtime") or {}).get("gpus") or [])]


def full_name(display_name: str) -> str:
    """RunPod's display name as the driver reports it: "RTX 3090" is "NVIDIA GeForce RTX 3090"."""
    geforce = display_name.startswith("RTX ") and not display_name.startswith(("RTX A", "RTX PRO"))
    return ("NVIDIA GeForce " if geforce else "NVIDIA ") + display_name


def total_mib(name: str) -> int:
    return next((v for k, v in MEMORY_MIB.items() if name.endswith(k)), 16384)


def main(args: list[str]) -> int:
    try:
        rows = fetch()
    except Exception as e:
        print(f"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. ({e})")
        return 9
    query = next((a.split("=", 1)[1] for a in args if a.startswith("--query-gpu=")), None)
    if query:
        fields = [f.strip() for f in query.split(",")]
        fmt = next((a.split("=", 1)[1] for a in args if a.startswith("--format=")), "csv")
        units = "nounits" not in fmt
        if "noheader" not in fmt:
            print(", ".join(fields))
        for i, (name, g) in enumerate(rows):
            total = total_mib(name)
            used = int(total * (g["memoryUtilPercent"] or 0) / 100)
            values = {
                "index": str(i),
                "name": name,
                "uuid": g["id"],
                "driver_version": DRIVER,
                "utilization.gpu": f"{g['gpuUtilPercent'] or 0:.0f}{' %' if units else ''}",
                "memory.total": f"{total}{' MiB' if units else ''}",
                "memory.used": f"{used}{' MiB' if units else ''}",
            }
            print(", ".join(values.get(f, "[N/A]") for f in fields))
        return 0
    line = "+" + "-" * 89 + "+"
    print(time.strftime("%a %b %d %H:%M:%S %Y"))
    print(line)
    print(f"| NVIDIA-SMI {DRIVER}              Driver Version: {DRIVER}      CUDA Version: {CUDA}     |")
    print(line)
    for i, (name, g) in enumerate(rows):
        total = total_mib(name)
        used = int(total * (g["memoryUtilPercent"] or 0) / 100)
        util = g["gpuUtilPercent"] or 0
        print(f"| {i:3d}  {name[:36]:36s}|   {used:6d}MiB / {total:6d}MiB |   {util:3.0f}%      Default |")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
