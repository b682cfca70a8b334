"""The simulated account and its pods, living in (simulated) real time.

Behaviour follows docs/runpod-facts.md: pods bill per second, runtime is null while a pod starts and stale
once it has exited, podResume passes through CREATED, and at a $0 balance every pod is stopped and pods
without a network volume are terminated.
"""

from __future__ import annotations

import math
import random
import secrets
import string
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from podtui.sim.clock import SimClock
from podtui.sim.gpu_market import NO_STOCK, SimGpuType, market

Pattern = Literal["training", "idle", "bursty"]
HOURS_PER_MONTH = 730.0
# Storage prices, $/GB/month (docs/runpod-facts.md#pricing-and-the-balance).
CONTAINER_DISK_RUNNING = 0.10
VOLUME_RUNNING = 0.10
VOLUME_STOPPED = 0.20


# RunPod's answer to podResume when the pod's machine has rented its GPUs to others while it was stopped.
RESUME_NO_GPUS = (
    "There are not enough free GPUs on the host machine to start this pod. Please try again later or deploy a new pod."
)


class SimError(Exception):
    """Refused the way RunPod refuses: becomes a GraphQL error message."""


@dataclass
class SimPod:
    id: str
    name: str
    gpu_type: str
    gpu_count: int
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

    @property
    def pod_host_id(self) -> str:
        return f"{self.id}-{self.host_suffix}"


def _status_time(t: float) -> str:
    # RunPod's lastStatusChange is free text with a JS-style date (docs/runpod-facts.md#graphql).
    return time.strftime("%a %b %d %Y %H:%M:%S GMT+0000 (Coordinated Universal Time)", time.gmtime(t))


class World:
    def __init__(
        self,
        clock: SimClock | None = None,
        balance: float = 25.0,
        spend_limit: float = 80.0,
        boot_s: float = 8.0,
        terminate_s: float = 1.5,
        seed: int = 7,
    ) -> None:
        self.clock = clock or SimClock()
        self.lock = threading.RLock()
        self.pods: dict[str, SimPod] = {}
        self._balance = balance
        self.spend_limit = spend_limit
        self.boot_s = boot_s
        self.terminate_s = terminate_s
        self.pub_key = ""
        self.pub_key_listeners: list[Callable[[str], None]] = []
        self.gpu_types: dict[str, SimGpuType] = {g.id: g for g in market()}
        self.pod_created_listeners: list[Callable[[SimPod], None]] = []  # the simulator starts direct SSH
        # a pod's container (re)started: create, resume, restart; the simulator hands its sshd the keys
        self.pod_started_listeners: list[Callable[[SimPod], None]] = []
        # a pod's container ended: stop, terminate, out of money (called with the world's lock held)
        self.pod_stopped_listeners: list[Callable[[SimPod], None]] = []
        # Pods made by create() draw GPUs from the market: pod id -> (GPU type id, cloud, count). `_holding` are
        # the ones whose GPUs are taken now; a stopped or terminated pod gives them back, a resumed one retakes.
        self._gpu_source: dict[str, tuple[str, str, int]] = {}
        self._holding: set[str] = set()
        self.user_id = "user_sim"
        # set by a simulator whose pods share this machine's filesystem: the folder holding each pod's folder,
        # which the API shows in the pods' env (podtui.core.demo_sandbox keeps transfers inside it)
        self.unisolated_root: str | None = None
        self._seed = seed
        self._last = self.clock.now()

    def container_keys(self, pod: SimPod) -> str:
        """The keys `pod` accepts: the account's when its container started. A pod already running when the
        simulator first looks at it started then."""
        with self.lock:
            if pod.public_key is None and pod.status in ("RUNNING", "CREATED"):
                pod.public_key = self.pub_key
            return pod.public_key or ""

    def _started(self, pod: SimPod) -> None:
        for listener in list(self.pod_started_listeners):
            listener(pod)

    def _stopped(self, pod: SimPod) -> None:
        for listener in list(self.pod_stopped_listeners):
            listener(pod)

    def set_pub_key(self, text: str) -> None:
        """The account's SSH keys (one newline-separated string, as RunPod keeps them)."""
        with self.lock:
            self.pub_key = text
            listeners = list(self.pub_key_listeners)
        for listener in listeners:
            listener(text)

    # --- time --------------------------------------------------------------------------------------

    def advance(self) -> None:
        """Bring the world up to the clock's now: finish boots, drop terminated pods, drain the balance."""
        with self.lock:
            now = self.clock.now()
            # Settle transitions first so billing starts when a pod is actually running.
            for pod in list(self.pods.values()):
                if pod.status == "CREATED" and pod.ready_at is not None and now >= pod.ready_at:
                    pod.status = "RUNNING"
                    pod.started_at = pod.ready_at
                    pod.last_status_change = f"Rented by User: {_status_time(pod.ready_at)}"
                if pod.status == "TERMINATED" and pod.gone_at is not None and now >= pod.gone_at:
                    del self.pods[pod.id]
                    self._gpu_source.pop(pod.id, None)
            dt = max(0.0, now - self._last)
            self._last = now
            if dt and self._balance > 0:
                self._balance -= self.spend_per_hr() * dt / 3600.0
                if self._balance <= 0:
                    self._balance = 0.0
                    self._out_of_money(now)

    def _out_of_money(self, now: float) -> None:
        # At $0 every pod is stopped; pods without a network volume are terminated, losing data
        # (docs/runpod-facts.md#pricing-and-the-balance).
        for pod in list(self.pods.values()):
            if pod.status in ("RUNNING", "CREATED", "RESTARTING"):
                self._exit(pod, now, "Exited by RunPod: Insufficient balance")
            if pod.network_volume is None and pod.status != "TERMINATED":
                pod.status = "TERMINATED"
                pod.gone_at = now + self.terminate_s

    @property
    def balance(self) -> float:
        with self.lock:
            return self._balance

    def set_balance(self, value: float) -> None:
        with self.lock:
            self.advance()
            self._balance = value

    def spend_per_hr(self) -> float:
        total = 0.0
        for pod in self.pods.values():
            if pod.status == "RUNNING":
                total += pod.cost_per_hr
                total += (pod.container_disk_gb * CONTAINER_DISK_RUNNING + pod.volume_gb * VOLUME_RUNNING) / (
                    HOURS_PER_MONTH
                )
            elif pod.status in ("EXITED", "PAUSED"):
                total += pod.volume_gb * VOLUME_STOPPED / HOURS_PER_MONTH
        return total

    # --- telemetry ---------------------------------------------------------------------------------

    def _noise(self, pod: SimPod, t: float, salt: int) -> float:
        # A stable seed (not hash(), which varies per process) keeps screenshots reproducible.
        return random.Random(zlib.crc32(f"{self._seed}:{pod.id}:{int(t / 2)}:{salt}".encode())).random()

    def gpu_util(self, pod: SimPod, t: float, gpu_index: int) -> float:
        n = self._noise(pod, t, gpu_index)
        if pod.pattern == "training":
            return round(91 + 8 * n)
        if pod.pattern == "idle":
            return round(2 * n)
        # bursty: a minute-long cycle, busy for about half of it
        phase = math.sin(2 * math.pi * ((t - (pod.started_at or 0)) / 60.0) + gpu_index)
        return round(70 + 25 * n) if phase > 0 else round(4 * n)

    def runtime(self, pod: SimPod) -> dict[str, object] | None:
        with self.lock:
            if pod.status == "EXITED":
                return pod.stale_runtime
            if pod.status != "RUNNING" or pod.started_at is None:
                return None
            t = self.clock.now()
            gpus = []
            for i in range(pod.gpu_count):
                util = self.gpu_util(pod, t, i)
                mem = {"training": 78.0, "idle": 6.0, "bursty": 41.0}[pod.pattern] + 3 * self._noise(pod, t, 50 + i)
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
            busy = sum(g["gpuUtilPercent"] for g in gpus) / max(1, len(gpus))  # type: ignore[misc]
            return {
                "uptimeInSeconds": int(t - pod.started_at),
                "ports": ports,
                "gpus": gpus,
                "container": {"cpuPercent": round(5 + busy * 0.6), "memoryPercent": round(20 + busy * 0.4)},
            }

    # --- actions -----------------------------------------------------------------------------------

    def add(self, pod: SimPod) -> SimPod:
        with self.lock:
            now = self.clock.now()
            if pod.status == "RUNNING" and pod.started_at is None:
                pod.started_at = now
            if pod.status == "CREATED" and pod.ready_at is None:
                pod.ready_at = now + self.boot_s
            if not pod.last_status_change:
                pod.last_status_change = f"Rented by User: {_status_time(pod.started_at or now)}"
            self.pods[pod.id] = pod
            return pod

    def get(self, pod_id: str) -> SimPod:
        self.advance()
        pod = self.pods.get(pod_id)
        if pod is None or pod.status == "TERMINATED":
            raise SimError("pod not found")
        return pod

    def _release_gpus(self, pod: SimPod) -> None:
        """Back to the pool: a stopped pod's machine may rent its GPUs to someone else
        (docs/runpod-facts.md#pricing-and-the-balance)."""
        if pod.id in self._holding:
            self._holding.discard(pod.id)
            gpu_id, cloud, count = self._gpu_source[pod.id]
            self.gpu_types[gpu_id].free[cloud] += count

    def _exit(self, pod: SimPod, now: float, why: str) -> None:
        self._release_gpus(pod)
        pod.stale_runtime = self.runtime(pod)
        pod.status = "EXITED"
        pod.started_at = None
        pod.ready_at = None
        pod.last_status_change = f"{why}: {_status_time(now)}"
        self._stopped(pod)

    def stop(self, pod_id: str) -> SimPod:
        with self.lock:
            pod = self.get(pod_id)
            if pod.status == "EXITED":
                raise SimError("Pod is already stopped.")
            self._exit(pod, self.clock.now(), "Exited by user")
            return pod

    def resume(self, pod_id: str, gpu_count: int) -> SimPod:
        with self.lock:
            pod = self.get(pod_id)
            if pod.status in ("RUNNING", "CREATED"):
                raise SimError("Pod is already running.")
            if self._balance <= 0:
                raise SimError("Your balance is too low to start this pod.")
            if gpu_count != pod.gpu_count:
                raise SimError(f"There are only {pod.gpu_count} GPUs on this pod's machine.")
            source = self._gpu_source.get(pod.id)
            if source is not None and pod.id not in self._holding:
                gpu_id, cloud, count = source
                gpu = self.gpu_types[gpu_id]
                if gpu.free.get(cloud, 0) < count:
                    raise SimError(RESUME_NO_GPUS)
                gpu.free[cloud] -= count
                self._holding.add(pod.id)
            now = self.clock.now()
            pod.status = "CREATED"
            pod.stale_runtime = None
            pod.ready_at = now + self.boot_s
            pod.last_status_change = f"Resumed by user: {_status_time(now)}"
            pod.public_key = self.pub_key
        self._started(pod)
        return pod

    def restart(self, pod_id: str) -> SimPod:
        """The pod's container starts again on the same machine (its GPUs kept): a new run, with the account's
        keys as they are now."""
        with self.lock:
            pod = self.get(pod_id)
            if pod.status != "RUNNING":
                raise SimError("Pod is not running.")
            now = self.clock.now()
            pod.started_at = now
            pod.last_status_change = f"Restarted by user: {_status_time(now)}"
            pod.public_key = self.pub_key
        self._started(pod)
        return pod

    def terminate(self, pod_id: str) -> None:
        with self.lock:
            pod = self.get(pod_id)
            self._release_gpus(pod)
            now = self.clock.now()
            pod.status = "TERMINATED"
            pod.started_at = None
            pod.gone_at = now + self.terminate_s
            pod.last_status_change = f"Terminated by user: {_status_time(now)}"
            self._stopped(pod)

    def create(self, spec: dict[str, Any]) -> SimPod:
        """podFindAndDeployOnDemand: find a machine with the GPUs free, or refuse as RunPod does."""
        from podtui.core.pod_spec import check_image  # Docker's reference grammar, as RunPod's backend checks

        with self.lock:
            self.advance()
            gpu = self.gpu_types.get(str(spec.get("gpuTypeId") or ""))
            if gpu is None:
                raise SimError("There are no GPU types matching the gpuTypeId you requested.")
            count = int(spec.get("gpuCount") or 1)
            if not 1 <= count <= gpu.max_count:
                raise SimError(f"gpuCount must be between 1 and {gpu.max_count} for {gpu.display_name}.")
            try:
                image = check_image(str(spec.get("imageName") or ""))
            except ValueError:
                raise SimError(
                    "Invalid image name: use a Docker image reference such as "
                    "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04."
                ) from None
            wanted = str(spec.get("cloudType") or "ALL")
            clouds = ["COMMUNITY", "SECURE"] if wanted == "ALL" else [wanted]
            # ALL: the cheapest cloud that has the GPUs free
            offers = sorted(
                (p, c) for c in clouds if (p := gpu.price(c)) is not None and gpu.stock_status(c, count) is not None
            )
            if not offers:
                raise SimError(NO_STOCK)
            price, cloud = offers[0]
            cost = round(price * count, 3)
            if self._balance < cost:  # podtui's model: at least an hour's GPU time on the account
                raise SimError("Your balance is too low to deploy this pod: add funds to your account.")
            if self.spend_per_hr() + cost > self.spend_limit:
                raise SimError(f"This pod would take your spend over your limit of ${self.spend_limit:.2f}/hr.")
            gpu.free[cloud] -= count
            ports = str(spec.get("ports") or "")
            env = {str(e["key"]): str(e["value"]) for e in spec.get("env") or [] if isinstance(e, dict)}
            pid = "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(14))
            pod = SimPod(
                id=pid,
                name=str(spec.get("name") or image.split(":")[0]),
                gpu_type=gpu.display_name,
                gpu_count=count,
                cost_per_hr=cost,
                pattern="idle",
                status="CREATED",
                image=image,
                location="US-TX-3" if cloud == "SECURE" else "CA",
                vcpu_count=8 * count,
                memory_gb=31 * count,
                container_disk_gb=int(spec.get("containerDiskInGb") or 10),
                volume_gb=int(spec.get("volumeInGb") or 0),
                volume_mount_path=str(spec.get("volumeMountPath") or "/workspace"),
                ports=ports,
                env=env,
                public_ip="127.0.0.1" if spec.get("supportPublicIp") else None,
                host_suffix=secrets.token_hex(4),
                machine_id=f"sim-{secrets.token_hex(4)}",
            )
            pod.last_status_change = f"Rented by User: {_status_time(self.clock.now())}"
            pod.public_key = self.pub_key
            self.add(pod)
            self._gpu_source[pod.id] = (gpu.id, cloud, count)
            self._holding.add(pod.id)
            listeners = list(self.pod_created_listeners)
        for listener in listeners:
            listener(pod)
        self._started(pod)
        return pod

    def visible_pods(self) -> list[SimPod]:
        with self.lock:
            self.advance()
            return list(self.pods.values())
