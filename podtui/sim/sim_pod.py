"""A simulated pod as the World keeps it, and the ways the World refuses a request.

The World keeps RunPod's GraphQL statuses (CREATED, RUNNING, RESTARTING, EXITED, PAUSED, DEAD, TERMINATED,
docs/runpod-facts.md#graphql); pod_v2.py shows them as REST v2's (docs/runpod-facts.md#rest-v2).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

Pattern = Literal["training", "idle", "bursty"]


class SimError(Exception):
    """Refused the way RunPod refuses: a GraphQL error message, or a REST v2 problem with `status`."""

    status = 400


class SimNotFound(SimError):
    status = 404


class SimNoBalance(SimError):
    """Not enough money on the account: 402 on REST v2 (docs/runpod-facts.md#rest-v2)."""

    status = 402


class SimConflict(SimError):
    """Not possible in the pod's state now: 409 on REST v2."""

    status = 409


@dataclass
class SimPod:
    id: str
    name: str
    gpu_type: str  # the GPU's display name ("RTX 3090"), or the CPU flavour of a CPU pod
    gpu_count: int  # 0: a CPU pod
    cost_per_hr: float
    pattern: Pattern = "training"
    status: str = "RUNNING"
    image: str = "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04"
    location: str = "CA"
    vcpu_count: int = 8
    memory_gb: int = 31
    container_disk_gb: int = 20
    volume_gb: int = 50
    volume_mount_path: str = "/workspace"
    ports: str = "8888/http,22/tcp"
    env: dict[str, str] = field(default_factory=dict)
    public_ip: str | None = "127.0.0.1"
    direct_ssh_port: int | None = None
    network_volume: str | None = None
    host_suffix: str = "00000000"
    machine_id: str = "sim-machine"
    started_at: float | None = None  # current run's start (sim clock)
    ready_at: float | None = None  # CREATED until then
    gone_at: float | None = None  # TERMINATED, removed from the list at this time
    last_status_change: str = ""
    stale_runtime: dict[str, object] | None = None  # what an EXITED pod still reports
    # The account's keys as its container got them when it started (PUBLIC_KEY; the image's start script writes
    # them into authorized_keys once): a key registered later opens the pod only after a restart or resume.
    # None: not started under the simulator yet (World.container_keys).
    public_key: str | None = None
    locked: bool = False  # RunPod will not stop or restart it (REST v2 `locked`)
    cloud: str = "COMMUNITY"  # SECURE or COMMUNITY
    created_at: float | None = None  # sim clock; World.add sets it
    # when its last run began, kept once it stops (v2's startedAt); None: it has never run
    last_started_at: float | None = None
    docker_args: str = ""
    cpu_flavor: str | None = None  # a CPU pod's flavour ("cpu3c"); None for GPU pods
    # The pod's own API key (RUNPOD_API_KEY in its environment), good for this pod only; World.add makes it.
    api_key: str = field(default="", repr=False, compare=False)
    template: str | None = None  # the template it was made from (REST v2 `template`)
    # The account's secrets its env refers to, as its container got them when it started (pod_secrets.py); None:
    # not started under the simulator yet (World.container_keys)
    secrets: dict[str, str] | None = field(default=None, repr=False, compare=False)

    @property
    def pod_host_id(self) -> str:
        return f"{self.id}-{self.host_suffix}"

    def port_list(self) -> list[str]:
        return [p.strip() for p in self.ports.split(",") if p.strip()]

    def http_ports(self) -> list[int]:
        """The ports RunPod's HTTP proxy serves (`NNNN/http`), each once, in order (docs/runpod-facts.md#rest-v2)."""
        out: list[int] = []
        for part in self.port_list():
            number, _, kind = part.partition("/")
            if kind == "http" and number.isdigit() and 0 < int(number) < 65536 and int(number) not in out:
                out.append(int(number))
        return out


def status_time(t: float) -> str:
    # RunPod's lastStatusChange is free text with a JS-style date (docs/runpod-facts.md#graphql).
    return time.strftime("%a %b %d %Y %H:%M:%S GMT+0000 (Coordinated Universal Time)", time.gmtime(t))
