"""What a new pod should be, checked field by field before anything is sent, and what it will cost.

Every field ends up inside a GraphQL document: the values are checked here and then written as JSON string
literals (queries.create_pod_mutation), so a quote, brace or newline in a name or an env value either reaches
RunPod intact or is refused here with the field named.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from podtui.core import secret
from podtui.core.api.errors import ApiError, ApiUnavailable, InvalidInput
from podtui.core.cost import CONTAINER_DISK_RUNNING, HOURS_PER_MONTH, VOLUME_RUNNING, VOLUME_STOPPED
from podtui.core.gpu.catalogue import Cloud, GpuType
from podtui.core.pod import Pod, Snapshot, redact_env

# PyTorch 2.1 with CUDA 11.8, good with transformers 4.x on an RTX 3090 (docs/runpod-facts.md#pytorch-images).
DEFAULT_IMAGE = "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04"
IMAGES = (
    DEFAULT_IMAGE,
    "runpod/pytorch:2.2.0-py3.10-cuda12.1.1-devel-ubuntu22.04",
    # torch >= 2.4 is what transformers 5 needs
    "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
    "runpod/pytorch:2.8.0-py3.11-cuda12.8.1-cudnn-devel-ubuntu22.04",
)
# 22/tcp on a public IP is what makes direct SSH (exec, SFTP) possible (docs/runpod-facts.md#ssh-direct); 8888
# for Jupyter.
DEFAULT_PORTS = "8888/http,22/tcp"
DEFAULT_CONTAINER_GB = 20
DEFAULT_VOLUME_GB = 50
DEFAULT_MOUNT = "/workspace"
MAX_GPUS = 8
# podtui's sanity bounds; a machine may offer less, and RunPod then finds no machine for the pod.
CONTAINER_GB_RANGE = (5, 1000)
VOLUME_GB_RANGE = (0, 4000)
MAX_NAME = 100
MAX_ENV_VALUE = 32_768

_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PORT = re.compile(r"(\d{1,5})/(http|tcp)", re.ASCII)
_MOUNT = re.compile(r"/[A-Za-z0-9._/-]*")
# Docker's image reference grammar (distribution/reference): [registry/]path[:tag][@digest]. Repository path
# components are lowercase; the first component is a registry only if it holds "." or ":" or is "localhost"
# (how docker tells "ghcr.io/org/img" from "org/img"), so "Runpod/pytorch" is refused, not read as a registry.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_REGISTRY = rf"(?:localhost|{_DOMAIN_PART}(?:\.{_DOMAIN_PART})+(?::[0-9]+)?|{_DOMAIN_PART}:[0-9]+)"
_TAG = r"\w[\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_IMAGE = re.compile(rf"(?:{_REGISTRY}/)?{_COMPONENT}(?:/{_COMPONENT})*(?::{_TAG})?(?:@{_DIGEST})?", re.ASCII)


class SpecError(InvalidInput):
    """One or more fields are wrong; `problems` maps each field to what is wrong with it."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.problems.items()))


def check_name(value: str) -> str:
    name = value.strip()
    if not name:
        raise ValueError("give the pod a name")
    if len(name) > MAX_NAME:
        raise ValueError(f"at most {MAX_NAME} characters")
    if not name.isprintable():
        raise ValueError("no newlines or control characters")
    return name


def check_image(value: str) -> str:
    image = value.strip()
    if not image:
        raise ValueError("which container image?")
    if len(image) > 255 or not _IMAGE.fullmatch(image):
        raise ValueError(f"{image[:60]!r} is not an image reference like {DEFAULT_IMAGE}")
    return image


def check_count(value: object, gpu: GpuType | None = None) -> int:
    if isinstance(value, str):
        value = value.strip()
        if not value.isdigit():
            raise ValueError(f"a whole number from 1 to {MAX_GPUS}")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_GPUS:
        raise ValueError(f"a whole number from 1 to {MAX_GPUS}")
    if gpu is not None and gpu.max_count is not None and value > gpu.max_count:
        raise ValueError(f"RunPod offers at most {gpu.max_count} x {gpu.display_name} on one pod")
    return value


def check_gb(value: object, bounds: tuple[int, int]) -> int:
    lo, hi = bounds
    if isinstance(value, str):
        value = value.strip().removesuffix("GB").removesuffix("gb").strip()
        if not value.isdigit():
            raise ValueError(f"a whole number of GB from {lo} to {hi}")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"a whole number of GB from {lo} to {hi}")
    return value


def check_mount(value: str) -> str:
    path = value.strip()
    if not _MOUNT.fullmatch(path) or "/../" in path + "/" or len(path) > 200:
        raise ValueError("an absolute path such as /workspace")
    return path


def parse_ports(value: str) -> str:
    """'8888/http, 22/tcp' -> '8888/http,22/tcp' (RunPod's ports string); empty means no ports."""
    seen: list[str] = []
    for item in (p.strip() for p in value.split(",")):
        if not item:
            continue
        m = _PORT.fullmatch(item.lower())
        if m is None:
            raise ValueError(f"{item[:30]!r}: write ports like 8888/http,22/tcp")
        port = int(m.group(1))
        if not 1 <= port <= 65535:
            raise ValueError(f"port {port} is not from 1 to 65535")
        norm = f"{port}/{m.group(2)}"
        if any(s.split("/")[0] == str(port) for s in seen):
            raise ValueError(f"port {port} is listed twice")
        seen.append(norm)
    return ",".join(seen)


def parse_env(items: Iterable[str] | str) -> tuple[tuple[str, str], ...]:
    """KEY=value items (or one per line). Values may hold anything but a NUL byte; keys are shell names."""
    if isinstance(items, str):
        items = [line for line in items.splitlines() if line.strip()]
    pairs: list[tuple[str, str]] = []
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            raise ValueError(f"{key[:30]!r}: write KEY=value")
        pairs.append((key, value))
    return check_env(pairs)


def env_from_host(items: Iterable[str], environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """docker's `-e`: KEY=value as given, or a bare KEY whose value is copied from this machine's environment,
    so a secret such as HF_TOKEN never has to be typed on the command line (shell history, `ps`)."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            if not _ENV_KEY.fullmatch(key):
                raise ValueError(
                    f"{key[:30]!r} is not a variable name: write KEY=value, or KEY to copy it from "
                    "this machine's environment"
                )
            if key not in environ:
                raise ValueError(f"{key} is not set in this machine's environment (export it, or write {key}=value)")
            value = environ[key]
        pairs.append((key, value))
    return check_env(pairs)


def parse_env_file(text: str, environ: Mapping[str, str], source: str = "the env file") -> tuple[tuple[str, str], ...]:
    """docker's --env-file: KEY=value lines, taken literally (no quotes removed, no $expansion); blank lines and
    lines starting with # are skipped; a bare KEY line copies the value from this machine's environment."""
    items: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key = line.partition("=")[0].strip()
        if not _ENV_KEY.fullmatch(key):
            raise ValueError(f"{source} line {n}: {key[:30]!r} is not a variable name (write KEY=value)")
        items.append(line.lstrip())
    return env_from_host(items, environ)


def merge_env(*sources: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """Later sources win (docker: -e over --env-file); a key twice within one source is refused by check_env."""
    merged: dict[str, str] = {}
    for pairs in sources:
        for key, value in check_env(pairs):
            merged[key] = value
    return check_env(merged.items())


def check_env(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for key, value in pairs:
        if not _ENV_KEY.fullmatch(key):
            raise ValueError(f"{key[:30]!r} is not a variable name (letters, digits, _; not starting with a digit)")
        if "\0" in value:
            raise ValueError(f"{key}: the value holds a NUL byte")
        if len(value) > MAX_ENV_VALUE:
            raise ValueError(f"{key}: the value is longer than {MAX_ENV_VALUE} characters")
        if any(k == key for k, _ in out):
            raise ValueError(f"{key} is set twice")
        out.append((key, value))
    return tuple(out)


@dataclass(frozen=True)
class PodSpec:
    name: str
    gpu_type_id: str
    gpu_count: int = 1
    cloud: Cloud = Cloud.COMMUNITY
    image: str = DEFAULT_IMAGE
    container_gb: int = DEFAULT_CONTAINER_GB
    volume_gb: int = DEFAULT_VOLUME_GB
    volume_mount_path: str = DEFAULT_MOUNT
    ports: str = DEFAULT_PORTS
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # may hold tokens: never in a traceback
    support_public_ip: bool = True
    start_ssh: bool = True

    def validate(self) -> PodSpec:
        """Re-check every field (a spec may be built by hand); raises SpecError naming each bad field."""
        problems: dict[str, str] = {}
        checks: dict[str, Callable[[], object]] = {
            "name": lambda: check_name(self.name) == self.name or _fail("surrounding spaces"),
            "image": lambda: check_image(self.image) == self.image or _fail("surrounding spaces"),
            "gpu": lambda: bool(self.gpu_type_id.strip()) or _fail("which GPU type?"),
            "count": lambda: check_count(self.gpu_count),
            "cloud": lambda: isinstance(self.cloud, Cloud) or _fail("secure or community"),
            "container_gb": lambda: check_gb(self.container_gb, CONTAINER_GB_RANGE),
            "volume_gb": lambda: check_gb(self.volume_gb, VOLUME_GB_RANGE),
            "volume_mount_path": lambda: check_mount(self.volume_mount_path),
            "ports": lambda: parse_ports(self.ports) == self.ports or _fail("not in RunPod's form 8888/http,22/tcp"),
            "env": lambda: check_env(self.env),
        }
        for name, check in checks.items():
            try:
                check()
            except ValueError as e:
                problems[name] = str(e)
        if problems:
            raise SpecError(problems)
        return self

    @property
    def direct_ssh(self) -> bool:
        """22/tcp exposed on a public IP: `ssh root@IP -p PORT` with exec and SFTP (docs/runpod-facts.md#ssh-direct)."""
        return self.support_public_ip and "22/tcp" in self.ports.split(",")

    def lines(self) -> list[str]:
        env = ", ".join(f"{k}={v}" for k, v in redact_env(self.env)) or "none"
        return [
            f"name       {self.name}",
            f"gpu        {self.gpu_count} x {self.gpu_type_id} ({self.cloud.label} cloud)",
            f"image      {self.image}",
            f"disk       container {self.container_gb} GB, volume {self.volume_gb} GB at {self.volume_mount_path}",
            f"ports      {self.ports or 'none'}; public IP {'yes' if self.support_public_ip else 'no'}"
            + ("" if self.direct_ssh else " (no direct SSH: only RunPod's gateway console)"),
            f"env        {env}",
        ]


def _fail(message: str) -> bool:
    raise ValueError(message)


@dataclass(frozen=True)
class SpecCost:
    gpu_per_hr: float
    storage_per_hr: float
    stopped_per_hr: float  # what the volume costs while the pod is stopped

    @property
    def per_hr(self) -> float:
        return self.gpu_per_hr + self.storage_per_hr

    @property
    def per_day(self) -> float:
        return self.per_hr * 24

    def line(self) -> str:
        return (
            f"${self.per_hr:.3f}/hr, ${self.per_day:.2f}/day while running "
            f"(GPU ${self.gpu_per_hr:.3f}/hr + disks ${self.storage_per_hr:.3f}/hr); "
            f"stopped: ${self.stopped_per_hr * 24:.2f}/day for the volume"
        )


def spec_cost(gpu: GpuType, cloud: Cloud, count: int, container_gb: int, volume_gb: int) -> SpecCost | None:
    """Before creating: GPU price x count on that cloud, plus the disks (docs/runpod-facts.md#pricing-and-the-balance).
    None when the cloud has no price for the type."""
    price = gpu.price(cloud)
    if price is None:
        return None
    storage = (container_gb * CONTAINER_DISK_RUNNING + volume_gb * VOLUME_RUNNING) / HOURS_PER_MONTH
    return SpecCost(price * count, storage, volume_gb * VOLUME_STOPPED / HOURS_PER_MONTH)


@dataclass(frozen=True)
class CreatedPod:
    id: str
    name: str | None
    status: str | None
    cost_per_hr: float | None
    pod_host_id: str | None


def parse_created(payload: object) -> CreatedPod:
    data = payload.get("data") if isinstance(payload, Mapping) else None
    pod = data.get("podFindAndDeployOnDemand") if isinstance(data, Mapping) else None
    if not isinstance(pod, Mapping) or not isinstance(pod.get("id"), str) or not pod["id"]:
        raise ValueError("the answer does not say which pod was created")
    machine = pod.get("machine")
    host = machine.get("podHostId") if isinstance(machine, Mapping) else None
    cost = pod.get("costPerHr")
    return CreatedPod(
        pod["id"],
        pod.get("name") if isinstance(pod.get("name"), str) else None,
        pod.get("desiredStatus") if isinstance(pod.get("desiredStatus"), str) else None,
        float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        host if isinstance(host, str) else None,
    )


class CreateUncertain(ApiUnavailable):
    """The create request went out but no usable answer came back: RunPod may have created the pod anyway.
    Creating again could make a second pod, billed too; look it up by name first (find_created)."""


def uncertain(reason: ApiError) -> CreateUncertain:
    return CreateUncertain(f"RunPod did not answer in time: the pod may have been created ({reason})")


# Seconds to wait before each look at the pod list after an unanswered create: RunPod may still be finding a
# machine for it when the first look happens.
LOOKUP_DELAYS: tuple[float, ...] = (0.0, 5.0, 10.0)


def find_created(
    fetch: Callable[[], Snapshot],
    name: str,
    known_ids: Collection[str] | None,
    delays: Sequence[float] = LOOKUP_DELAYS,
    sleep: Callable[[float], None] = time.sleep,
) -> Pod | None:
    """After CreateUncertain: the pod named `name` that was not on the account before (`known_ids`; None when
    unknown, and then any pod of that name counts). None only when the last look succeeded and found nothing;
    raises the last ApiError when that look failed, since the pod's absence is then not known."""
    error: ApiError | None = None
    for delay in delays:
        sleep(delay)
        try:
            snap = fetch()
        except ApiError as e:
            error = e
            continue
        error = None
        found = [p for p in snap.pods if p.name == name and (known_ids is None or p.id not in known_ids)]
        if found:
            return found[-1]
    if error is not None:
        raise error
    return None


def as_created(pod: Pod) -> CreatedPod:
    return CreatedPod(pod.id, pod.name, pod.status.value, pod.cost_per_hr, pod.pod_host_id)


def scrub(text: str, spec: PodSpec) -> str:
    """An error text with the spec's env values masked (an exception may quote the request it failed on)."""
    for _, value in sorted(spec.env, key=lambda kv: len(kv[1]), reverse=True):
        if len(value) >= 4:
            text = text.replace(value, "•••")
    return secret.redact(text)


def create_error_hint(message: str) -> str | None:
    """What to do about RunPod's usual refusals of a new pod."""
    text = message.lower()
    if "no longer any instances available" in text or "no instances" in text:
        return (
            "no machine has that GPU free right now: try the other cloud, fewer GPUs, another GPU type, "
            "or again in a few minutes (the price list is not a capacity signal)"
        )
    if "balance" in text or "insufficient" in text or "funds" in text:
        return "add credit to the RunPod account (Billing), then try again"
    if "image" in text:
        return "check the image name and tag (docker pull it locally to be sure)"
    return None
