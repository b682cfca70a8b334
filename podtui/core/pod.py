"""Pods and the account as podtui sees them, parsed defensively from RunPod's GraphQL payload.

Every field RunPod can leave null (or get wrong) is Optional here; parsing never raises on one bad field,
it records a problem and carries on, so one odd pod cannot blank the whole list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from podtui.core import secret


class PayloadError(Exception):
    """The API answered, but not with anything podtui can read."""


class PodStatus(str, Enum):
    # RunPod's desiredStatus values (docs/runpod-facts.md#graphql), plus UNKNOWN for anything new.
    CREATED = "CREATED"
    RUNNING = "RUNNING"
    RESTARTING = "RESTARTING"
    EXITED = "EXITED"
    PAUSED = "PAUSED"
    DEAD = "DEAD"
    TERMINATED = "TERMINATED"
    UNKNOWN = "UNKNOWN"

    @classmethod
    def parse(cls, raw: object) -> PodStatus:
        if isinstance(raw, str):
            try:
                return cls(raw.strip().upper())
            except ValueError:
                pass
        return cls.UNKNOWN


@dataclass(frozen=True)
class PortMapping:
    ip: str | None
    is_ip_public: bool
    private_port: int | None
    public_port: int | None
    type: str | None


@dataclass(frozen=True)
class GpuSample:
    id: str | None
    util_percent: float | None
    memory_util_percent: float | None


@dataclass(frozen=True)
class Runtime:
    uptime_s: int | None
    ports: tuple[PortMapping, ...] = ()
    gpus: tuple[GpuSample, ...] = ()
    cpu_percent: float | None = None
    memory_percent: float | None = None


@dataclass(frozen=True)
class Pod:
    id: str
    name: str
    status: PodStatus
    status_raw: str | None = None
    last_status_change: str | None = None
    image: str | None = None
    gpu_count: int | None = None
    gpu_name: str | None = None
    cost_per_hr: float | None = None
    vcpu_count: float | None = None
    memory_gb: float | None = None
    container_disk_gb: float | None = None
    volume_gb: float | None = None
    volume_mount_path: str | None = None
    ports_spec: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    pod_host_id: str | None = None
    location: str | None = None
    machine_id: str | None = None
    network_volume: str | None = None
    runtime: Runtime | None = None

    @property
    def live_runtime(self) -> Runtime | None:
        """Runtime data only while it means something: null while starting, stale once EXITED
        (docs/runpod-facts.md#graphql)."""
        return self.runtime if self.status is PodStatus.RUNNING else None

    @property
    def is_starting(self) -> bool:
        return self.status in (PodStatus.CREATED, PodStatus.RESTARTING) or (
            self.status is PodStatus.RUNNING and self.runtime is None
        )

    @property
    def state(self) -> str:
        """The status a person needs: STARTING covers CREATED and a RUNNING pod with no runtime yet."""
        if self.is_starting:
            return "STARTING"
        if self.status is PodStatus.UNKNOWN:
            return f"? {self.status_raw or 'none'}"[:14]
        return str(self.status.value)

    @property
    def gpu_label(self) -> str:
        if not self.gpu_count:
            return "CPU" if self.gpu_count == 0 else (self.gpu_name or "?")
        return f"{self.gpu_count} x {self.gpu_name or '?'}"

    def _gpu_utils(self) -> list[float]:
        rt = self.live_runtime
        return [g.util_percent for g in rt.gpus if g.util_percent is not None] if rt is not None else []

    @property
    def gpu_util(self) -> float | None:
        values = self._gpu_utils()
        return sum(values) / len(values) if values else None

    @property
    def gpu_util_max(self) -> float | None:
        """The busiest GPU: what idleness is judged by (a job may use one GPU of several)."""
        values = self._gpu_utils()
        return max(values) if values else None

    @property
    def uptime_s(self) -> int | None:
        rt = self.live_runtime
        return rt.uptime_s if rt is not None else None

    @property
    def accrued_cost(self) -> float | None:
        """What this run has cost so far: $/hr times the uptime of the current run."""
        if self.cost_per_hr is None or self.uptime_s is None:
            return None
        return self.cost_per_hr * self.uptime_s / 3600.0

    @property
    def direct_ssh(self) -> tuple[str, int] | None:
        """(ip, port) when 22/tcp is exposed on a public IP (docs/runpod-facts.md#ssh-direct)."""
        rt = self.live_runtime
        if rt is None:
            return None
        for p in rt.ports:
            if p.private_port == 22 and p.is_ip_public and p.ip and p.public_port:
                return p.ip, p.public_port
        return None

    @property
    def proxy_ssh_command(self) -> str | None:
        return f"ssh {self.pod_host_id}@ssh.runpod.io" if self.pod_host_id else None

    @property
    def direct_ssh_command(self) -> str | None:
        d = self.direct_ssh
        return f"ssh root@{d[0]} -p {d[1]}" if d else None

    @property
    def reach_label(self) -> str:
        return "+".join(self.reach) if self.reach else "—"

    @property
    def reach(self) -> tuple[str, ...]:
        ways: list[str] = []
        if self.pod_host_id and self.live_runtime is not None:
            ways.append("proxy")
        if self.direct_ssh:
            ways.append("direct")
        return tuple(ways)


@dataclass(frozen=True)
class Account:
    balance: float | None = None
    spend_per_hr: float | None = None
    spend_limit: float | None = None
    pub_key: str | None = None


@dataclass(frozen=True)
class Snapshot:
    account: Account
    pods: tuple[Pod, ...]
    fetched_at: float
    problems: tuple[str, ...] = field(default=())

    def find(self, ref: str) -> Pod:
        """A pod by exact id, exact name, or unique id/name prefix."""
        if not ref.strip():
            raise LookupError("no pod given")
        exact = [p for p in self.pods if ref in (p.id, p.name)]
        if len(exact) == 1:
            return exact[0]
        if len(exact) > 1:
            raise LookupError(f"{len(exact)} pods are called {ref!r}; use the pod id")
        prefix = [p for p in self.pods if p.id.startswith(ref) or p.name.startswith(ref)]
        if len(prefix) == 1:
            return prefix[0]
        if prefix:
            names = ", ".join(f"{p.name} ({p.id})" for p in prefix[:5])
            raise LookupError(f"{ref!r} matches several pods: {names}")
        raise LookupError(f"no pod with id or name {ref!r}")


# --- parsing -------------------------------------------------------------------------------------------


# Beyond these an amount is a bug or garbage, not money: the dearest pods cost tens of dollars an hour.
MOST_PER_HR = 10_000.0
MOST_BALANCE = 100_000_000.0


class _Fields:
    """Typed reads from one JSON object that note, rather than raise on, a field of the wrong type."""

    def __init__(self, obj: Mapping[str, Any], where: str, problems: list[str]) -> None:
        self.obj, self.where, self.problems = obj, where, problems

    def _bad(self, key: str, want: str) -> None:
        self.problems.append(f"{self.where}: {key} is not {want} ({type(self.obj[key]).__name__})")

    def text(self, key: str) -> str | None:
        v = self.obj.get(key)
        if v is None:
            return None
        if isinstance(v, str):
            # kept as sent (`pods --json` stays faithful); every output boundary makes it safe to show
            return v
        self._bad(key, "text")
        return None

    def num(self, key: str) -> float | None:
        v = self.obj.get(key)
        if v is None:
            return None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if math.isfinite(v):
                return float(v)
            self.problems.append(f"{self.where}: {key} is not finite, not a plausible amount; shown as unknown")
            return None
        elif isinstance(v, str):
            try:
                f = float(v)
            except ValueError:
                pass
            else:
                if math.isfinite(f):
                    return f
        self._bad(key, "a number")
        return None

    def amount(self, key: str, most: float) -> float | None:
        """Money: a number from 0 to `most`. A negative, NaN, infinite or absurd amount is unknown, with a note
        (shown as `$-5.000/hr` or `$inf` it would mislead, and the runway computed from it even more)."""
        v = self.num(key)
        if v is None or 0 <= v <= most:
            return v
        self.problems.append(f"{self.where}: {key} {v:g} is not a plausible amount; shown as unknown")
        return None

    def whole(self, key: str) -> int | None:
        v = self.num(key)
        return int(v) if v is not None else None

    def flag(self, key: str) -> bool:
        v = self.obj.get(key)
        if v is None or isinstance(v, bool):
            return bool(v)
        self._bad(key, "true/false")
        return False

    def mapping(self, key: str) -> Mapping[str, Any] | None:
        v = self.obj.get(key)
        if v is None or isinstance(v, Mapping):
            return v
        self._bad(key, "an object")
        return None

    def items(self, key: str) -> list[Any]:
        v = self.obj.get(key)
        if v is None:
            return []
        if isinstance(v, list):
            return v
        self._bad(key, "a list")
        return []


_ENV_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


def _parse_env(raw: object) -> tuple[tuple[str, str], ...]:
    # RunPod returns env as ["KEY=value", ...]; inputs use [{key, value}]. Accept both, and a mapping.
    pairs: list[tuple[str, str]] = []
    if isinstance(raw, Mapping):
        return tuple((str(k), str(v)) for k, v in raw.items())
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, str):
                m = _ENV_LINE.match(item)
                if m:
                    pairs.append((m.group(1), m.group(2)))
            elif isinstance(item, Mapping) and isinstance(item.get("key"), str):
                pairs.append((item["key"], str(item.get("value", ""))))
    return tuple(pairs)


def _parse_runtime(raw: Mapping[str, Any], where: str, problems: list[str]) -> Runtime:
    f = _Fields(raw, where + ".runtime", problems)
    ports = []
    for p in f.items("ports"):
        if isinstance(p, Mapping):
            pf = _Fields(p, where + ".runtime.ports", problems)
            ports.append(
                PortMapping(
                    pf.text("ip"),
                    pf.flag("isIpPublic"),
                    pf.whole("privatePort"),
                    pf.whole("publicPort"),
                    pf.text("type"),
                )
            )
    gpus = []
    for g in f.items("gpus"):
        if isinstance(g, Mapping):
            gf = _Fields(g, where + ".runtime.gpus", problems)
            gpus.append(GpuSample(gf.text("id"), gf.num("gpuUtilPercent"), gf.num("memoryUtilPercent")))
    container = f.mapping("container") or {}
    cf = _Fields(container, where + ".runtime.container", problems)
    return Runtime(
        uptime_s=f.whole("uptimeInSeconds"),
        ports=tuple(ports),
        gpus=tuple(gpus),
        cpu_percent=cf.num("cpuPercent"),
        memory_percent=cf.num("memoryPercent"),
    )


def parse_pod(raw: object, problems: list[str]) -> Pod | None:
    if not isinstance(raw, Mapping):
        problems.append(f"a pod record is not an object ({type(raw).__name__}); skipped")
        return None
    pod_id = raw.get("id")
    if not isinstance(pod_id, str) or not pod_id:
        problems.append("a pod record has no id; skipped")
        return None
    where = f"pod {pod_id}"
    f = _Fields(raw, where, problems)
    status_raw = f.text("desiredStatus")
    status = PodStatus.parse(status_raw)
    if status is PodStatus.UNKNOWN:
        problems.append(f"{where}: unknown status {status_raw!r}")
    machine = _Fields(f.mapping("machine") or {}, where + ".machine", problems)
    runtime_raw = f.mapping("runtime")
    network_volume = f.mapping("networkVolume")
    nv_name = None
    if network_volume:
        nf = _Fields(network_volume, where + ".networkVolume", problems)
        nv_name = nf.text("name") or nf.text("id")
    return Pod(
        id=pod_id,
        name=f.text("name") or pod_id,
        status=status,
        status_raw=status_raw,
        last_status_change=f.text("lastStatusChange"),
        image=f.text("imageName"),
        gpu_count=f.whole("gpuCount"),
        gpu_name=machine.text("gpuDisplayName"),
        cost_per_hr=f.amount("costPerHr", MOST_PER_HR),
        vcpu_count=f.num("vcpuCount"),
        memory_gb=f.num("memoryInGb"),
        container_disk_gb=f.num("containerDiskInGb"),
        volume_gb=f.num("volumeInGb"),
        volume_mount_path=f.text("volumeMountPath"),
        ports_spec=f.text("ports"),
        env=_secret_env(_parse_env(raw.get("env"))),
        pod_host_id=machine.text("podHostId"),
        location=machine.text("location"),
        machine_id=f.text("machineId"),
        network_volume=nv_name,
        runtime=_parse_runtime(runtime_raw, where, problems) if runtime_raw is not None else None,
    )


def parse_snapshot(payload: object, fetched_at: float) -> Snapshot:
    """Parse the answer to podtui's pods query. Raises PayloadError only when there is nothing to show."""
    if not isinstance(payload, Mapping):
        raise PayloadError(f"the API answered with {type(payload).__name__}, not a JSON object")
    data = payload.get("data")
    if not isinstance(data, Mapping):
        raise PayloadError("the API answer has no 'data' object")
    myself = data.get("myself")
    if not isinstance(myself, Mapping):
        raise PayloadError("the API answer has no account ('myself') in it")
    problems: list[str] = []
    f = _Fields(myself, "account", problems)
    account = Account(
        balance=f.amount("clientBalance", MOST_BALANCE),
        spend_per_hr=f.amount("currentSpendPerHr", MOST_PER_HR * 1000),
        spend_limit=f.amount("spendLimit", MOST_BALANCE),
        pub_key=f.text("pubKey"),
    )
    if "pods" in myself and not isinstance(myself["pods"], (list, type(None))):
        raise PayloadError("the API answer's pod list is not a list")
    pods = []
    seen: set[str] = set()
    for raw in f.items("pods"):
        pod = parse_pod(raw, problems)
        if pod is None:
            continue
        if pod.id in seen:
            problems.append(f"pod {pod.id} listed twice; kept the first")
            continue
        seen.add(pod.id)
        pods.append(pod)
    return Snapshot(account=account, pods=tuple(pods), fetched_at=fetched_at, problems=tuple(problems))


_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASS|AUTH|CREDENTIAL|PRIVATE|SESSION|COOKIE", re.I)
_SECRET_VALUE = re.compile(r"^(hf_|rpa_|sk-|ghp_|gho_|xox)|^[A-Za-z0-9+/_=-]{32,}$|://[^:/\s]+:[^@\s]+@")


def _secret_env(env: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Values that look like credentials are registered as secrets, so any log line, error or crash report that
    happens to quote one shows it masked."""
    for (_, value), (_, shown) in zip(env, redact_env(env), strict=True):
        if shown != value:
            secret.register(value)
    return env


def redact_env(env: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Env values are plaintext in the API (docs/runpod-facts.md#graphql); hide anything that may be a credential."""
    out = []
    for k, v in env:
        if _SECRET_NAME.search(k) or _SECRET_VALUE.search(v):
            out.append((k, "•••••• (hidden)"))
        else:
            out.append((k, v))
    return tuple(out)
