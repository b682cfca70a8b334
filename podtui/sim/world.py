"""The simulated account and its pods, living in (simulated) real time.

Behaviour follows docs/runpod-facts.md: pods bill per second, runtime is null while a pod starts and stale
once it has exited, podResume passes through CREATED, and at a $0 balance every pod is stopped and pods
without a network volume are terminated. Each pod has an API key of its own, good for that pod only
(docs/runpod-facts.md#ssh-direct).

The account also has network volumes (billed by the second from the balance, like pods), templates and secrets;
GPUs come from the market's stock per cloud and data centre, which other tenants' pods move as time passes
(docs/runpod-facts.md#data-centres-and-stock).
"""

from __future__ import annotations

import math
import secrets
import threading
from collections.abc import Callable
from typing import Any

from podtui.sim import billing, deploy, loopback, pod_secrets, telemetry
from podtui.sim.clock import SimClock
from podtui.sim.deploy import Blocked
from podtui.sim.gpu_market import SETTLED_TICKS, STOCK_TICK_S, SimGpuType, market
from podtui.sim.pod_logs import PodLogs
from podtui.sim.sim_pod import Pattern, SimConflict, SimError, SimNoBalance, SimNotFound, SimPod, status_time
from podtui.sim.templates import SimTemplate
from podtui.sim.volumes import SimVolume

__all__ = [
    "RESUME_NO_GPUS",
    "Pattern",
    "SimConflict",
    "SimError",
    "SimNoBalance",
    "SimNotFound",
    "SimPod",
    "World",
]

HOLDING = ("RUNNING", "CREATED", "RESTARTING", "DEAD")  # states a pod holds its machine in


# RunPod's answer to podResume when the pod's machine has rented its GPUs to others while it was stopped.
RESUME_NO_GPUS = (
    "There are not enough free GPUs on the host machine to start this pod. Please try again later or deploy a new pod."
)


class World:
    def __init__(
        self,
        clock: SimClock | None = None,
        balance: float = 25.0,
        spend_limit: float = 80.0,
        boot_s: float = 8.0,
        terminate_s: float = 1.5,
        seed: int = 7,
        restart_s: float = 0.0,
    ) -> None:
        self.clock = clock or SimClock()
        self.lock = threading.RLock()
        self.pods: dict[str, SimPod] = {}
        self._balance = balance
        self.spend_limit = spend_limit
        self.boot_s = boot_s
        self.terminate_s = terminate_s
        # how long a restart keeps the pod STARTING (its container made again); 0: at once
        self.restart_s = restart_s
        self.pub_key = ""
        self.pub_key_listeners: list[Callable[[str], None]] = []
        self.gpu_types: dict[str, SimGpuType] = {g.id: g for g in market()}
        self.pod_created_listeners: list[Callable[[SimPod], None]] = []  # the simulator starts direct SSH
        # a pod's container (re)started: create, resume, restart; the simulator hands its sshd the keys
        self.pod_started_listeners: list[Callable[[SimPod], None]] = []
        # a pod's container ended: stop, terminate, out of money (called with the world's lock held)
        self.pod_stopped_listeners: list[Callable[[SimPod], None]] = []
        # the account's volumes, templates or secrets changed, or a pod was edited (a saved world is saved again)
        self.changed_listeners: list[Callable[[], None]] = []
        # Pods made by create() draw GPUs from the market: pod id -> (GPU type id, cloud, count). `_holding` are
        # the ones whose GPUs are taken now (from the pod's data centre); a stopped or terminated pod gives them
        # back, a resumed one retakes them.
        self._gpu_source: dict[str, tuple[str, str, int]] = {}
        self._holding: set[str] = set()
        self.volumes: dict[str, SimVolume] = {}  # the account's network volumes, by id
        self.templates: dict[str, SimTemplate] = {}  # the account's own templates, by id
        # the account's secrets, name -> value: what `{{ RUNPOD_SECRET_<name> }}` in a pod's env becomes in its
        # container (pod_secrets.py)
        self.secrets: dict[str, str] = {}
        self.user_id = "user_sim"
        # set by a simulator whose pods share this machine's filesystem: the folder holding each pod's folder,
        # which the API shows in the pods' env (podtui.core.demo_sandbox keeps transfers inside it)
        self.unisolated_root: str | None = None
        # where the SSH gateway listens while it runs (the simulator sets it): REST v2's ssh.proxy names it
        self.gateway_address: tuple[str, int] | None = None
        self._pod_keys: dict[str, str] = {}  # a pod's own API key -> its id
        # each pod's own loopback address, for this run (docs/services.md#loopback-addresses-and-localhost); the
        # counter starts anywhere in the range, so that two simulators on this machine seldom meet
        self._addresses: dict[str, str] = {}
        self._next_address = secrets.randbelow(loopback.ADDRESSES)
        self._seed = seed
        self._last = self.clock.now()
        self.logs = PodLogs(seed)  # each pod's system and container log (GET /v2/pods/{id}/logs)
        # what every pod and volume was billed, when: the balance is drained from the same accounting (billing.py)
        self.usage = billing.Usage()

    @property
    def seed(self) -> int:
        return self._seed

    def holdings(self) -> dict[str, tuple[str, str, int, bool]]:
        """Pod id -> (GPU type, cloud, count, holding them now) for pods made by create(): what a saved world keeps."""
        with self.lock:
            return {pid: (*src, pid in self._holding) for pid, src in self._gpu_source.items()}

    def restore_holding(self, pod_id: str, gpu_id: str, cloud: str, count: int, holding: bool) -> None:
        with self.lock:
            self._gpu_source[pod_id] = (gpu_id, cloud, count)
            if holding:
                self._holding.add(pod_id)

    def container_keys(self, pod: SimPod) -> str:
        """The keys `pod` accepts: the account's when its container started. A pod already running when the
        simulator first looks at it started then (and got the account's secrets then too)."""
        with self.lock:
            if pod.public_key is None and pod.status in ("RUNNING", "CREATED"):
                pod.public_key = self.pub_key
            if pod.secrets is None and pod.status in ("RUNNING", "CREATED"):
                self._hand_secrets(pod)
            return pod.public_key or ""

    def _hand_secrets(self, pod: SimPod) -> None:
        """The secrets its env refers to, as they are now: what its container starts with."""
        pod.secrets = {n: self.secrets[n] for n in pod_secrets.referenced(pod.env) if n in self.secrets}

    def _container_starts(self, pod: SimPod) -> None:
        """What a new run of its container gets from the account: the keys and the secrets as they are now."""
        pod.public_key = self.pub_key
        self._hand_secrets(pod)

    def _started(self, pod: SimPod) -> None:
        for listener in list(self.pod_started_listeners):
            listener(pod)

    def _stopped(self, pod: SimPod) -> None:
        for listener in list(self.pod_stopped_listeners):
            listener(pod)

    def changed(self) -> None:
        for listener in list(self.changed_listeners):
            listener()

    def set_pub_key(self, text: str) -> None:
        """The account's SSH keys (one newline-separated string, as RunPod keeps them)."""
        with self.lock:
            self.pub_key = text
            listeners = list(self.pub_key_listeners)
        for listener in listeners:
            listener(text)

    # --- time --------------------------------------------------------------------------------------

    def advance(self) -> None:
        """Bring the world up to the clock's now: finish boots and restarts, drop terminated pods, drain the
        balance, and let other tenants' pods come and go in the market."""
        with self.lock:
            now = self.clock.now()
            for pod in list(self.pods.values()):
                if pod.status == "TERMINATED" and pod.gone_at is not None and now >= pod.gone_at:
                    del self.pods[pod.id]
                    self._gpu_source.pop(pod.id, None)
            start, self._last = self._last, now
            ticks = math.floor(now / STOCK_TICK_S) - math.floor(start / STOCK_TICK_S) if now > start else 0
            if ticks > SETTLED_TICKS:  # a long stretch: the market is back where it usually is
                self._bill_settling(start, now)
                for gpu in self.gpu_types.values():
                    gpu.settle()
                return
            t = start
            while t < now:  # stretch by stretch, each ending where other tenants' pods come and go
                tick = math.floor(t / STOCK_TICK_S) + 1
                edge = min(now, tick * STOCK_TICK_S)
                self._bill_settling(t, edge)
                if edge == tick * STOCK_TICK_S:
                    for gpu in self.gpu_types.values():
                        gpu.churn(self._seed, tick)
                t = edge
            self._bill_settling(now, now)  # a boot that ends right now

    def _bill_settling(self, start: float, end: float) -> None:
        """Bill [start, end), each boot or restart finishing at its own moment in it: a pod bills from when it runs."""
        while True:
            due = [
                p
                for p in self.pods.values()
                if p.status in ("CREATED", "RESTARTING") and p.ready_at is not None and p.ready_at <= end
            ]
            at = max(start, min((p.ready_at for p in due if p.ready_at is not None), default=end))
            self._bill(start, at)
            if not due:
                return
            for pod in due:
                if pod.ready_at is not None and pod.ready_at <= at and pod.status in ("CREATED", "RESTARTING"):
                    self._settle(pod, pod.ready_at)
            start = at

    @staticmethod
    def _settle(pod: SimPod, ready_at: float) -> None:
        if pod.status == "CREATED":
            pod.last_status_change = f"Rented by User: {status_time(ready_at)}"
        pod.status = "RUNNING"
        pod.started_at = pod.last_started_at = ready_at
        pod.ready_at = None

    def _bill(self, start: float, end: float) -> None:
        """The pods' and volumes' cost from `start` to `end`, written in the usage record and taken from the balance
        (billing.charge); at $0 RunPod steps in, then."""
        self._balance, ran_out_at = billing.charge(
            self.usage, self.pods.values(), self.volumes.values(), start, end, self._balance
        )
        if ran_out_at is not None:  # the pods stop when the money ran out, not when the stretch ends
            self._out_of_money(ran_out_at)

    def _out_of_money(self, now: float) -> None:
        # At $0 every pod is stopped; pods without a network volume are terminated, losing data
        # (docs/runpod-facts.md#pricing-and-the-balance).
        for pod in list(self.pods.values()):
            if pod.status in HOLDING:
                self._exit(pod, now, "Exited by RunPod: Insufficient balance")
            if pod.network_volume is None and pod.status != "TERMINATED":
                pod.status = "TERMINATED"
                pod.gone_at = now + self.terminate_s

    @property
    def billed_until(self) -> float:
        """The moment the balance and the usage record have been billed up to."""
        with self.lock:
            return self._last

    @property
    def balance(self) -> float:
        with self.lock:
            return self._balance

    def set_balance(self, value: float) -> None:
        with self.lock:
            self.advance()
            self._balance = value

    def storage_per_hr(self) -> float:
        """What the network volumes cost, $/hr (docs/runpod-facts.md#pricing-and-the-balance). Not in
        spend_per_hr, which is the pods' burn that GraphQL's currentSpendPerHr reports."""
        return billing.per_hr((), self.volumes.values())

    def spend_per_hr(self) -> float:
        return billing.per_hr(self.pods.values(), ())

    # --- telemetry ---------------------------------------------------------------------------------

    def gpu_util(self, pod: SimPod, t: float, gpu_index: int) -> float:
        return telemetry.gpu_util(self._seed, pod, t, gpu_index)

    def runtime(self, pod: SimPod) -> dict[str, object] | None:
        with self.lock:
            if pod.status == "EXITED":
                return pod.stale_runtime
            return telemetry.runtime(self._seed, pod, self.clock.now())

    # --- actions -----------------------------------------------------------------------------------

    def add(self, pod: SimPod) -> SimPod:
        with self.lock:
            now = self.clock.now()
            if pod.status == "RUNNING" and pod.started_at is None:
                pod.started_at = now
            if pod.started_at is not None:
                pod.last_started_at = pod.started_at
            if pod.status == "CREATED" and pod.ready_at is None:
                pod.ready_at = now + self.boot_s
            if not pod.last_status_change:
                pod.last_status_change = f"Rented by User: {status_time(pod.started_at or now)}"
            if pod.created_at is None:
                pod.created_at = min(now, pod.started_at or now)
            if not pod.api_key:
                pod.api_key = "rpa_pod_" + secrets.token_hex(20)
            self._pod_keys[pod.api_key] = pod.id
            self.pods[pod.id] = pod
            if pod.status == "CREATED" and pod.ready_at is not None:
                self.logs.provisioning(pod, now, max(0.0, pod.ready_at - now))
            elif pod.status == "RUNNING" and pod.started_at is not None:
                self.logs.already_running(pod, pod.started_at)
            return pod

    def pod_address(self, pod_id: str) -> str:
        """The pod's own loopback address, the same for as long as this world runs: the next of the world's
        counter whose address has the pod's HTTP ports free (another simulator here may hold some)."""
        with self.lock:
            known = self._addresses.get(pod_id)
            if known is not None:
                return known
            pod = self.pods.get(pod_id)
            ports = pod.http_ports() if pod is not None else []
            taken = set(self._addresses.values())
            for _ in range(64):
                address = loopback.address(self._next_address)
                self._next_address += 1
                if address not in taken and loopback.ports_free(address, ports):
                    break
            self._addresses[pod_id] = address
            return address

    def pod_for_key(self, key: str) -> SimPod | None:
        """The pod whose own API key this is, while the pod exists (a terminated pod's key opens nothing)."""
        with self.lock:
            pod = self.pods.get(self._pod_keys.get(key, ""))
            return pod if pod is not None and pod.status != "TERMINATED" else None

    def get(self, pod_id: str) -> SimPod:
        self.advance()
        pod = self.pods.get(pod_id)
        if pod is None or pod.status == "TERMINATED":
            raise SimNotFound("pod not found")
        return pod

    def _release_gpus(self, pod: SimPod) -> None:
        """Back to the pool of its data centre: a stopped pod's machine may rent its GPUs to someone else
        (docs/runpod-facts.md#pricing-and-the-balance)."""
        if pod.id in self._holding:
            self._holding.discard(pod.id)
            gpu_id, cloud, count = self._gpu_source[pod.id]
            self.gpu_types[gpu_id].give(cloud, pod.location, count)

    def gpu_type_of(self, pod: SimPod) -> SimGpuType | None:
        """The market's type for a GPU pod (the World keeps its display name), None for a CPU pod."""
        if pod.cpu_flavor or not pod.gpu_count:
            return None
        for gpu in self.gpu_types.values():
            if pod.gpu_type in (gpu.id, gpu.display_name):
                return gpu
        return None

    def _exit(self, pod: SimPod, now: float, why: str) -> None:
        self.logs.stopped(pod, now, why)
        self._release_gpus(pod)
        # its last uptime is the one it had at `now`, which a stop for want of money puts before the clock's now
        pod.stale_runtime = telemetry.runtime(self._seed, pod, now)
        pod.status = "EXITED"
        pod.started_at = None
        pod.ready_at = None
        pod.last_status_change = f"{why}: {status_time(now)}"
        self._stopped(pod)

    def stop(self, pod_id: str) -> SimPod:
        with self.lock:
            pod = self.get(pod_id)
            if pod.status == "EXITED":
                raise SimConflict("Pod is already stopped.")
            if pod.locked:
                raise SimConflict("Pod is locked: unlock it to stop it.")
            self._exit(pod, self.clock.now(), "Exited by user")
            return pod

    def resume(self, pod_id: str, gpu_count: int, blocked: Blocked | None = None) -> SimPod:
        """Start a stopped pod again on its machine, which needs its GPUs free in its data centre (blocked: a
        fault saying a GPU type cannot be had somewhere now)."""
        with self.lock:
            pod = self.get(pod_id)
            if pod.status in ("RUNNING", "CREATED", "RESTARTING"):
                raise SimConflict("Pod is already running.")
            if self._balance <= 0 or self._balance < pod.cost_per_hr:  # as create: an hour's GPU time at least
                raise SimNoBalance("Your balance is too low to start this pod: add funds to your account.")
            if gpu_count != pod.gpu_count:
                raise SimError(f"There are only {pod.gpu_count} GPUs on this pod's machine.")
            gpu = self.gpu_type_of(pod)
            if gpu is not None and blocked is not None and blocked(gpu.id, pod.location):
                raise SimError(RESUME_NO_GPUS)
            source = self._gpu_source.get(pod.id)
            if source is not None and pod.id not in self._holding:
                gpu_id, cloud, count = source
                market_gpu = self.gpu_types[gpu_id]
                if market_gpu.free_in(cloud, pod.location) < count:
                    raise SimError(RESUME_NO_GPUS)
                market_gpu.take(cloud, pod.location, count)
                self._holding.add(pod.id)
            now = self.clock.now()
            pod.status = "CREATED"
            pod.stale_runtime = None
            pod.ready_at = now + self.boot_s
            pod.last_status_change = f"Resumed by user: {status_time(now)}"
            self._container_starts(pod)
            self.logs.provisioning(pod, now, self.boot_s)
        self._started(pod)
        return pod

    def restart(self, pod_id: str, why: str = "Restarted by user", new_image: bool = False) -> SimPod:
        """The pod's container starts again on the same machine (its GPUs kept): a new run, with the account's
        keys and secrets as they are now. With restart_s it is STARTING (RESTARTING) that long first.
        new_image: an edit changed the image, which is pulled first (docs/runpod-facts.md#editing-a-pod)."""
        with self.lock:
            pod = self.get(pod_id)
            if pod.status != "RUNNING":
                raise SimConflict("Pod is not running.")
            if pod.locked:
                raise SimConflict("Pod is locked: unlock it to restart it.")
            now = self.clock.now()
            boot = max(0.0, self.restart_s)
            self.logs.restarted(pod, now, boot, pulling=pod.image if new_image else None)
            if boot:
                pod.status = "RESTARTING"
                pod.ready_at = now + boot
                pod.started_at = None
                pod.last_started_at = now
            else:
                pod.started_at = pod.last_started_at = now
            pod.last_status_change = f"{why}: {status_time(now)}"
            self._container_starts(pod)
        self._started(pod)
        return pod

    def terminate(self, pod_id: str) -> None:
        with self.lock:
            pod = self.get(pod_id)
            now = self.clock.now()
            if pod.status in HOLDING:
                self.logs.stopped(pod, now, "Terminated by user")
            self._release_gpus(pod)
            pod.status = "TERMINATED"
            pod.started_at = None
            pod.gone_at = now + self.terminate_s
            pod.last_status_change = f"Terminated by user: {status_time(now)}"
            self._stopped(pod)

    def _on_volume(self, spec: dict[str, Any]) -> dict[str, Any]:
        """`spec` placed in its network volume's data centre, the one place a pod on it can run; refused when the
        volume is not the account's or the request's data centres leave it out (docs/runpod-facts.md#network-volumes).
        """
        volume_id = spec.get("networkVolumeId")
        if not volume_id:
            return spec
        volume = self.volumes.get(str(volume_id))
        if volume is None:
            raise SimError(f"network volume {str(volume_id)!r} not found")
        named = "dataCenterIds" if spec.get("dataCenterIds") else "dataCenterId"
        wanted = deploy.centres(spec)
        if wanted and volume.data_centre not in wanted:
            raise SimError(
                f"network volume {volume.id} is in {volume.data_centre}, which {named} leaves out: a pod runs in "
                "its network volume's data center"
            )
        return {**spec, "dataCenterIds": [volume.data_centre]}

    def create(self, spec: dict[str, Any], blocked: Blocked | None = None) -> SimPod:
        """podFindAndDeployOnDemand: find a machine with the GPUs free, or refuse as RunPod does (blocked: a fault
        saying a GPU type cannot be had somewhere now)."""
        with self.lock:
            self.advance()
            placed = deploy.place(self.gpu_types, self._on_volume(spec), blocked)
            pod = placed.pod
            if self._balance < pod.cost_per_hr:  # podtui's model: at least an hour's GPU time on the account
                raise SimNoBalance("Your balance is too low to deploy this pod: add funds to your account.")
            if self.spend_per_hr() + pod.cost_per_hr > self.spend_limit:
                raise SimError(f"This pod would take your spend over your limit of ${self.spend_limit:.2f}/hr.")
            pod.last_status_change = f"Rented by User: {status_time(self.clock.now())}"
            pod.template = str(spec["templateId"]) if spec.get("templateId") else None
            self._container_starts(pod)
            self.add(pod)
            if placed.gpu is not None:
                placed.gpu.take(placed.cloud, placed.centre, placed.count)
                self._gpu_source[pod.id] = (placed.gpu.id, placed.cloud, placed.count)
                self._holding.add(pod.id)
            listeners = list(self.pod_created_listeners)
        for listener in listeners:
            listener(pod)
        self._started(pod)
        return pod

    def fail(self, pod_id: str, why: str = "Container exited with an error") -> SimPod:
        """The pod's container dies and stays down (RunPod's DEAD, REST v2's ERROR): it keeps its machine and GPUs,
        and bills, until it is started again or terminated."""
        with self.lock:
            pod = self.get(pod_id)
            now = self.clock.now()
            self.logs.failed(pod, now, why)
            pod.status = "DEAD"
            pod.started_at = None
            pod.ready_at = None
            pod.stale_runtime = None
            pod.last_status_change = f"{why}: {status_time(now)}"
            self._stopped(pod)
            return pod

    def visible_pods(self) -> list[SimPod]:
        with self.lock:
            self.advance()
            return list(self.pods.values())
