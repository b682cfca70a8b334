"""A simulated pod as REST v2's Pod record (docs/runpod-facts.md#rest-v2).

The World keeps GraphQL's statuses; here they become v2's: CREATED is PROVISIONING for the first half of its boot
and STARTING for the rest, RESTARTING is STARTING, PAUSED is EXITED, DEAD is ERROR. `actions` are the transitions
valid in that status (a locked pod can be neither stopped nor restarted), `runtime` is given only while RUNNING,
and `ssh` names the simulator's own gateway and the pod's own sshd (docs/runpod-facts.md#ssh-gateway,
docs/runpod-facts.md#ssh-direct), so a client reaches simulated pods exactly as it reaches RunPod's.
"""

from __future__ import annotations

import time
from typing import Any

from podtui.core.demo_sandbox import SANDBOX_ENV
from podtui.sim.world import SimPod, World

CUDA_VERSION = "12.4"  # what the simulated machines' driver reports (nvidia_smi.py)

_STATUS = {
    "RUNNING": "RUNNING",
    "RESTARTING": "STARTING",
    "EXITED": "EXITED",
    "PAUSED": "EXITED",
    "DEAD": "ERROR",
    "TERMINATED": "TERMINATED",
}
_ACTIONS = {
    "PROVISIONING": ["stop", "terminate"],
    "STARTING": ["stop", "terminate"],
    "RUNNING": ["stop", "restart", "terminate"],
    "EXITED": ["start", "terminate"],
    "ERROR": ["start", "terminate"],
    "TERMINATED": [],
}
LOCKED_OUT = ("stop", "restart")  # what `locked` forbids


def status(world: World, pod: SimPod) -> str:
    if pod.status == "CREATED":
        if pod.ready_at is None:
            return "PROVISIONING"
        booted_at = pod.ready_at - world.boot_s
        return "PROVISIONING" if world.clock.now() < booted_at + world.boot_s / 2 else "STARTING"
    return _STATUS.get(pod.status, "ERROR")


def actions(world: World, pod: SimPod) -> list[str]:
    valid = _ACTIONS[status(world, pod)]
    return [a for a in valid if not (pod.locked and a in LOCKED_OUT)]


def rfc3339(t: float | None) -> str | None:
    return None if t is None else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def gpu_type_id(world: World, pod: SimPod) -> str:
    """The GPU type's id ("NVIDIA GeForce RTX 3090") for the display name the World keeps ("RTX 3090")."""
    for gpu in world.gpu_types.values():
        if pod.gpu_type in (gpu.id, gpu.display_name):
            return gpu.id
    for gpu in world.gpu_types.values():
        if gpu.id.endswith(" " + pod.gpu_type):
            return gpu.id
    return pod.gpu_type


def _mounts(pod: SimPod) -> dict[str, Any]:
    if pod.network_volume:
        return {"network": [{"volumeId": pod.network_volume, "path": pod.volume_mount_path}]}
    if pod.volume_gb:
        return {"persistent": {"size": pod.volume_gb, "path": pod.volume_mount_path}}
    return {}


def _runtime(world: World, pod: SimPod) -> dict[str, Any] | None:
    live = world.runtime(pod) if pod.status == "RUNNING" else None
    if live is None:
        return None
    published = set(pod.port_list())
    ports = [
        {"private": p["privatePort"], "public": p["publicPort"], "type": p["type"], "ip": p["ip"]}
        for p in live["ports"]  # type: ignore[attr-defined]
        if f"{p['privatePort']}/{p['type']}" in published
    ]
    container: dict[str, Any] = live["container"]  # type: ignore[assignment]
    return {
        "uptime": live["uptimeInSeconds"],
        "gpus": [
            {"util": int(g["gpuUtilPercent"]), "memoryUtil": int(g["memoryUtilPercent"])}
            for g in live["gpus"]  # type: ignore[attr-defined]
        ],
        "cpu": {"util": int(container["cpuPercent"])},
        "memory": {"util": int(container["memoryPercent"])},
        "ports": ports,
    }


def ssh_endpoints(world: World, pod: SimPod) -> dict[str, Any]:
    """The gateway while the pod runs and the gateway listens; its own sshd while it runs, publishes 22/tcp and
    that sshd listens (the simulator gives it a port only then)."""
    proxy = direct = None
    if pod.status == "RUNNING" and pod.started_at is not None:
        if world.gateway_address is not None:
            host, port = world.gateway_address
            user = pod.pod_host_id
            proxy = {
                "host": host,
                "port": port,
                "username": user,
                "command": f"ssh {user}@{host} -p {port} -i ~/.ssh/id_ed25519",
            }
        if "22/tcp" in pod.port_list() and pod.direct_ssh_port and pod.public_ip:
            host, port = pod.public_ip, pod.direct_ssh_port
            direct = {
                "host": host,
                "port": port,
                "username": "root",
                "command": f"ssh root@{host} -p {port} -i ~/.ssh/id_ed25519",
            }
    return {"proxy": proxy, "direct": direct}


def _env(world: World, pod: SimPod) -> dict[str, str]:
    env = dict(pod.env)
    if world.unisolated_root:  # where this pod's files are on this machine (podtui.core.demo_sandbox)
        env[SANDBOX_ENV] = f"{world.unisolated_root}/{pod.id}"
    return env


def record(world: World, pod: SimPod) -> dict[str, Any]:
    """The pod as GET /v2/pods/{id} answers it."""
    with world.lock:
        now_status = status(world, pod)
        out: dict[str, Any] = {
            "id": pod.id,
            "name": pod.name,
            "status": now_status,
            "actions": actions(world, pod),
            "image": pod.image,
            "args": pod.docker_args,
            "disk": pod.container_disk_gb,
            "mounts": _mounts(pod),
            "ports": pod.port_list(),
            "env": _env(world, pod),
            "registry": None,
            "cloud": pod.cloud,
            "dataCenterId": pod.location or None,
            "cudaVersion": None if pod.cpu_flavor else CUDA_VERSION,
            "ssh": ssh_endpoints(world, pod),
            "template": pod.template,
            "cost": 0.0 if now_status in ("EXITED", "TERMINATED") else pod.cost_per_hr,
            "locked": pod.locked,
            "runtime": _runtime(world, pod),
            "createdAt": rfc3339(pod.created_at),
            "startedAt": rfc3339(pod.started_at or pod.last_started_at),
            "globalNetworking": {"enabled": False},
        }
        if pod.cpu_flavor:
            out["cpu"] = {"id": pod.cpu_flavor, "vcpuCount": pod.vcpu_count, "memory": pod.memory_gb}
        else:
            out["gpu"] = {"id": gpu_type_id(world, pod), "count": pod.gpu_count}
        return out
