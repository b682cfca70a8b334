"""What a running simulated pod reports about itself: GPU and container load following its pattern, and its ports.

The answer has GraphQL's shape (`runtime { uptimeInSeconds ports gpus container }`, docs/runpod-facts.md#graphql);
pod_v2.py turns it into REST v2's.
"""

from __future__ import annotations

import math
import random
import zlib

from podtui.sim.sim_pod import SimPod

_MEMORY_BASE = {"training": 78.0, "idle": 6.0, "bursty": 41.0}


def noise(seed: int, pod: SimPod, t: float, salt: int) -> float:
    # A stable seed (not hash(), which varies per process) keeps screenshots reproducible.
    return random.Random(zlib.crc32(f"{seed}:{pod.id}:{int(t / 2)}:{salt}".encode())).random()


def gpu_util(seed: int, pod: SimPod, t: float, gpu_index: int) -> float:
    n = noise(seed, pod, t, gpu_index)
    if pod.pattern == "training":
        return round(91 + 8 * n)
    if pod.pattern == "idle":
        return round(2 * n)
    # bursty: a minute-long cycle, busy for about half of it
    phase = math.sin(2 * math.pi * ((t - (pod.started_at or 0)) / 60.0) + gpu_index)
    return round(70 + 25 * n) if phase > 0 else round(4 * n)


def runtime(seed: int, pod: SimPod, t: float) -> dict[str, object] | None:
    """A RUNNING pod's runtime now (None for any other pod)."""
    if pod.status != "RUNNING" or pod.started_at is None:
        return None
    gpus = []
    for i in range(pod.gpu_count):
        util = gpu_util(seed, pod, t, i)
        mem = _MEMORY_BASE[pod.pattern] + 3 * noise(seed, pod, t, 50 + i)
        gpus.append({"id": f"GPU-{pod.id[:8]}-{i}", "gpuUtilPercent": util, "memoryUtilPercent": round(mem)})
    ports: list[dict[str, object]] = [
        {"ip": "100.65.0.2", "isIpPublic": False, "privatePort": 8888, "publicPort": 60888, "type": "http"}
    ]
    if pod.direct_ssh_port and pod.public_ip:
        ports.append(
            {
                "ip": pod.public_ip,
                "isIpPublic": True,
                "privatePort": 22,
                "publicPort": pod.direct_ssh_port,
                "type": "tcp",
            }
        )
    utils = [float(g["gpuUtilPercent"]) for g in gpus]  # type: ignore[arg-type]
    busy = sum(utils) / len(utils) if utils else gpu_util(seed, pod, t, 0)  # a CPU pod: its own pattern
    return {
        "uptimeInSeconds": int(t - pod.started_at),
        "ports": ports,
        "gpus": gpus,
        "container": {"cpuPercent": round(5 + busy * 0.6), "memoryPercent": round(20 + busy * 0.4)},
    }
