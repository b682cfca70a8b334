"""Placing a new pod: the GPU type, cloud and machine RunPod would give it, or the refusal RunPod would answer.

The request comes with GraphQL's names (podFindAndDeployOnDemand's input); REST v2's create (pods_v2.py) is
mapped onto them. CPU pods name a flavour (`cpuFlavorId`) and a vCPU count instead of a GPU type.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from podtui.sim.gpu_market import NO_STOCK, SimGpuType
from podtui.sim.sim_pod import SimError, SimPod

# CPU flavours: $/hr per vCPU and GB of memory per vCPU (compute, general and memory-optimised machines).
CPU_FLAVORS: dict[str, tuple[float, int]] = {
    "cpu3c": (0.03, 2),
    "cpu3g": (0.04, 4),
    "cpu3m": (0.05, 8),
    "cpu5c": (0.04, 2),
    "cpu5g": (0.05, 4),
    "cpu5m": (0.06, 8),
}
CPU_MAX_VCPUS = 32
CPU_DATA_CENTER = "US-TX-3"  # where a CPU pod with no preference runs (the simulator keeps no CPU stock)
# A fault's say on whether a GPU type can be had in a data centre now (faults.no_capacity): True blocks it.
Blocked = Callable[[str, str], bool]


@dataclass
class Placement:
    pod: SimPod
    gpu: SimGpuType | None  # where its GPUs come from (None: a CPU pod)
    cloud: str
    count: int
    centre: str  # the data centre it runs in


def _image(spec: dict[str, Any]) -> str:
    from podtui.core.pod_spec import check_image  # Docker's reference grammar, as RunPod's backend checks

    try:
        return check_image(str(spec.get("imageName") or ""))
    except ValueError:
        raise SimError(
            "Invalid image name: use a Docker image reference such as "
            "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04."
        ) from None


def _new_id() -> str:
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(14))


def centres(spec: dict[str, Any]) -> list[str]:
    """The data centres the request prefers, in its order (REST v2's dataCenterIds, GraphQL's dataCenterId)."""
    wanted = [str(c) for c in spec.get("dataCenterIds") or [] if c]
    return wanted or ([str(spec["dataCenterId"])] if spec.get("dataCenterId") else [])


def _where(gpu: SimGpuType, cloud: str, count: int, among: list[str], blocked: Blocked | None) -> str | None:
    """The data centre `count` GPUs of `gpu` go to in `cloud`: the first of `among` that has them free, or with no
    preference the one with most free; None when none has them (or a fault says none can be had)."""
    if gpu.price(cloud) is None:
        return None
    candidates = among or sorted(gpu.centres(cloud), key=lambda c: -gpu.free_in(cloud, c))
    for centre in candidates:
        if gpu.free_in(cloud, centre) >= count and not (blocked is not None and blocked(gpu.id, centre)):
            return centre
    return None


def _gpu_offer(
    gpu_types: dict[str, SimGpuType], spec: dict[str, Any], blocked: Blocked | None
) -> tuple[SimGpuType, str, str, int, float]:
    gpu = gpu_types.get(str(spec.get("gpuTypeId") or ""))
    if gpu is None:
        raise SimError("There are no GPU types matching the gpuTypeId you requested.")
    count = int(spec.get("gpuCount") or 1)
    if not 1 <= count <= gpu.max_count:
        raise SimError(f"gpuCount must be between 1 and {gpu.max_count} for {gpu.display_name}.")
    _image(spec)
    wanted = str(spec.get("cloudType") or "ALL")
    clouds = ["COMMUNITY", "SECURE"] if wanted == "ALL" else [wanted]
    among = centres(spec)
    # ALL: the cheapest cloud that has the GPUs free
    offers = sorted(
        (p, c, centre)
        for c in clouds
        if (p := gpu.price(c)) is not None and (centre := _where(gpu, c, count, among, blocked)) is not None
    )
    if not offers:
        raise SimError(NO_STOCK)
    price, cloud, centre = offers[0]
    return gpu, cloud, centre, count, round(price * count, 3)


def _cpu_offer(spec: dict[str, Any]) -> tuple[str, int, int, float]:
    flavor = str(spec.get("cpuFlavorId") or "")
    if flavor not in CPU_FLAVORS:
        raise SimError(f"There is no CPU flavor {flavor!r}; flavors: {', '.join(CPU_FLAVORS)}.")
    vcpus = int(spec.get("vcpuCount") or 2)
    if vcpus < 2 or vcpus > CPU_MAX_VCPUS or vcpus & (vcpus - 1):
        raise SimError(f"vcpuCount must be a power of two from 2 to {CPU_MAX_VCPUS} for {flavor}.")
    _image(spec)
    per_vcpu, memory_per_vcpu = CPU_FLAVORS[flavor]
    return flavor, vcpus, vcpus * memory_per_vcpu, round(per_vcpu * vcpus, 3)


def place(gpu_types: dict[str, SimGpuType], spec: dict[str, Any], blocked: Blocked | None = None) -> Placement:
    """The pod `spec` asks for, CREATED, and where it would run; raises SimError as RunPod refuses. Takes nothing
    from the market: the World does, once it has checked the money."""
    gpu: SimGpuType | None = None
    if spec.get("cpuFlavorId"):
        flavor, vcpus, memory, cost = _cpu_offer(spec)
        cloud, count, gpu_name = "SECURE", 0, flavor
        centre = (centres(spec) or [CPU_DATA_CENTER])[0]
    else:
        gpu, cloud, centre, count, cost = _gpu_offer(gpu_types, spec, blocked)
        vcpus, memory, gpu_name = 8 * count, 31 * count, gpu.display_name
    image = _image(spec)  # checked again by each offer, in the order RunPod checks
    env = {str(e["key"]): str(e["value"]) for e in spec.get("env") or [] if isinstance(e, dict)}
    pod = SimPod(
        id=_new_id(),
        name=str(spec.get("name") or image.split(":")[0]),
        gpu_type=gpu_name,
        gpu_count=count,
        cost_per_hr=cost,
        pattern="idle",
        status="CREATED",
        image=image,
        location=centre,
        vcpu_count=vcpus,
        memory_gb=memory,
        container_disk_gb=int(spec.get("containerDiskInGb") or 10),
        volume_gb=int(spec.get("volumeInGb") or 0),
        volume_mount_path=str(spec.get("volumeMountPath") or "/workspace"),
        ports=str(spec.get("ports") or ""),
        env=env,
        public_ip="127.0.0.1" if spec.get("supportPublicIp") else None,
        network_volume=str(spec["networkVolumeId"]) if spec.get("networkVolumeId") else None,
        host_suffix=secrets.token_hex(4),
        machine_id=f"sim-{secrets.token_hex(4)}",
        cloud=cloud,
        docker_args=str(spec.get("dockerArgs") or ""),
        cpu_flavor=gpu_name if gpu is None else None,
    )
    return Placement(pod, gpu, cloud, count, centre)
