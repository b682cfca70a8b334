"""What a new pod should be, checked field by field before anything is sent, and what it will cost.

The spec becomes the JSON body of REST v2's create (podtui.core.api.create), so a quote, brace or newline in a
name or an env value reaches RunPod intact; what RunPod would refuse (a volume under 10 GB, a port written
another way) is refused here with the field named. A spec may name several GPU type, cloud and data centre
choices in order (`fallbacks`): the create tries them one after another until one is placed
(docs/runpod-facts.md#rest-v2, docs/launch.md#candidates). A spec on a network volume mounts it instead of a
volume of its own, in the volume's data centre; a spec from a template names it and holds the values taken from
it, so the review shows what the pod gets (docs/launch.md#templates).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from podtui.core import secret
from podtui.core.api.errors import ApiError, ApiUnavailable, InvalidInput
from podtui.core.cost import CONTAINER_DISK_RUNNING, HOURS_PER_MONTH, VOLUME_RUNNING, VOLUME_STOPPED
from podtui.core.gpu.catalogue import Cloud, GpuCatalogue, GpuType, Stock
from podtui.core.lost_answer import look_for_created
from podtui.core.pod import Pod, Snapshot, redact_env
from podtui.core.template import Template
from podtui.core.volume import NetworkVolume

# PyTorch 2.1 with CUDA 11.8, good with transformers 4.x on an RTX 3090 (docs/runpod-facts.md#pytorch-images).
DEFAULT_IMAGE = "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04"
IMAGES = (
    DEFAULT_IMAGE,
    "runpod/pytorch:2.2.0-py3.10-cuda12.1.1-devel-ubuntu22.04",
    # torch >= 2.4 is what transformers 5 needs
    "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
    "runpod/pytorch:2.8.0-py3.11-cuda12.8.1-cudnn-devel-ubuntu22.04",
)
# 22/tcp published is what makes direct SSH (exec, SFTP) possible (docs/runpod-facts.md#ssh-direct); 8888 for
# Jupyter.
DEFAULT_PORTS = "8888/http,22/tcp"
DEFAULT_CONTAINER_GB = 20
DEFAULT_VOLUME_GB = 50
DEFAULT_MOUNT = "/workspace"
MAX_GPUS = 8
# podtui's sanity bounds; a machine may offer less, and RunPod then finds no machine for the pod.
CONTAINER_GB_RANGE = (5, 1000)
VOLUME_GB_RANGE = (0, 4000)
MIN_VOLUME_GB = 10  # RunPod refuses a smaller persistent volume; 0 means none (docs/runpod-facts.md#rest-v2)
MAX_CHOICES = 16  # GPU type, cloud and data centre choices one create may try
MAX_NAME = 100
MAX_ENV_VALUE = 32_768

_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PORT = re.compile(r"(\d{1,5})/(http|tcp)", re.ASCII)
_MOUNT = re.compile(r"/[A-Za-z0-9._/-]*")
_DATA_CENTRE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_RECORD_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # a network volume's or a template's id
_CUDA = re.compile(r"\d{1,3}\.\d{1,3}", re.ASCII)  # major.minor, as RunPod's allowedCudaVersions takes them
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


def check_volume_gb(value: object) -> int:
    """The pod's volume: 0 for none, else at least RunPod's floor."""
    gb = check_gb(value, VOLUME_GB_RANGE)
    if 0 < gb < MIN_VOLUME_GB:
        raise ValueError(f"0 for no volume, or {MIN_VOLUME_GB} to {VOLUME_GB_RANGE[1]} GB (RunPod's smallest volume)")
    return gb


def check_data_centre(value: str) -> str:
    dc = value.strip()
    if not _DATA_CENTRE.fullmatch(dc):
        raise ValueError(f"{dc[:30]!r} is not a data centre id like US-KS-2")
    return dc


def check_record_id(value: str, what: str) -> str:
    """A network volume's or a template's id: it goes into the body as it is, so nothing odd passes."""
    if not _RECORD_ID.fullmatch(value):
        raise ValueError(f"{value[:30]!r} is not a {what} id")
    return value


def check_cuda_versions(values: Iterable[str]) -> tuple[str, ...]:
    versions = tuple(values)
    bad = [v for v in versions if not _CUDA.fullmatch(v)]
    if bad:
        raise ValueError(f"{bad[0][:20]!r} is not a CUDA version like 12.4")
    return versions


def check_args(value: str) -> str:
    """A start command (the arguments to the image's entrypoint): sent as it is, so anything but a NUL byte."""
    if "\0" in value:
        raise ValueError("the start command holds a NUL byte")
    if len(value) > MAX_ENV_VALUE:
        raise ValueError(f"the start command is longer than {MAX_ENV_VALUE} characters")
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
class Choice:
    """One GPU type, count, cloud and (maybe) data centre a create may try. Without a data centre of its own the
    spec's `data_centre_ids` apply (any of them; none: RunPod picks)."""

    gpu_type_id: str
    gpu_count: int = 1
    cloud: Cloud = Cloud.COMMUNITY
    data_centre_id: str | None = None

    @property
    def label(self) -> str:
        where = f" in {self.data_centre_id}" if self.data_centre_id else ""
        return f"{self.gpu_count} x {self.gpu_type_id} ({self.cloud.label} cloud){where}"

    def as_json(self) -> dict[str, object]:
        return {
            "gpu_type_id": self.gpu_type_id,
            "gpu_count": self.gpu_count,
            "cloud": self.cloud.value,
            "data_centre_id": self.data_centre_id,
        }


@dataclass(frozen=True)
class PodSpec:
    name: str
    gpu_type_id: str
    gpu_count: int = 1
    cloud: Cloud = Cloud.COMMUNITY
    image: str = DEFAULT_IMAGE
    container_gb: int = DEFAULT_CONTAINER_GB
    volume_gb: int = DEFAULT_VOLUME_GB  # 0: no volume
    volume_mount_path: str = DEFAULT_MOUNT
    ports: str = DEFAULT_PORTS
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # may hold tokens: never in a traceback
    start_ssh: bool = True  # RunPod puts the account's SSH keys in the pod (PUBLIC_KEY)
    data_centre_ids: tuple[str, ...] = ()  # preferred data centres, any of them; () lets RunPod choose
    fallbacks: tuple[Choice, ...] = ()  # tried in order when RunPod cannot place the first choice
    data_centre_id: str | None = None  # the first choice's own data centre, when the choices each name one
    # Mounted at volume_mount_path instead of a volume of its own (volume_gb 0), in its data centre
    # (docs/runpod-facts.md#network-volumes).
    network_volume_id: str | None = None
    # RunPod takes what the spec does not say from the template (its start command, registry); everything the
    # spec says wins, but env merges per key, so the id is sent only when that changes nothing the review shows
    # (link_template, docs/launch.md#templates).
    template_id: str | None = None
    start_jupyter: bool = False  # RunPod then puts a JUPYTER_PASSWORD in the pod's env
    cuda_versions: tuple[str, ...] = ()  # the host CUDA versions allowed (a template's); () is any
    # A template's start command and registry credential, carried so a spec sent without its template
    # (link_template) still starts as the template would (docs/launch.md#templates).
    args: str = field(default="", repr=False)  # may hold a token on a command line: never in a traceback
    registry: str | None = None

    @property
    def choices(self) -> tuple[Choice, ...]:
        """What the create tries, in order: the spec's own GPU type, count, cloud and data centre first."""
        first = Choice(self.gpu_type_id, self.gpu_count, self.cloud, self.data_centre_id)
        return tuple(dict.fromkeys((first, *self.fallbacks)))

    def data_centres_for(self, choice: Choice) -> tuple[str, ...]:
        """The data centres a create of this choice names: its own, else the spec's (any of them)."""
        return (choice.data_centre_id,) if choice.data_centre_id else self.data_centre_ids

    def validate(self) -> PodSpec:
        """Re-check every field (a spec may be built by hand); raises SpecError naming each bad field."""
        problems: dict[str, str] = {}
        checks: dict[str, Callable[[], object]] = {
            "name": lambda: check_name(self.name) == self.name or _fail("surrounding spaces"),
            "image": lambda: check_image(self.image) == self.image or _fail("surrounding spaces"),
            "gpu": lambda: all(c.gpu_type_id.strip() for c in self.choices) or _fail("which GPU type?"),
            "count": lambda: [check_count(c.gpu_count) for c in self.choices],
            "cloud": lambda: all(isinstance(c.cloud, Cloud) for c in self.choices) or _fail("secure or community"),
            "choices": lambda: len(self.choices) <= MAX_CHOICES or _fail(f"at most {MAX_CHOICES} choices"),
            "container_gb": lambda: check_gb(self.container_gb, CONTAINER_GB_RANGE),
            "volume_gb": lambda: check_volume_gb(self.volume_gb),
            "network_volume_id": self._check_network_volume,
            "template_id": lambda: self.template_id is None or check_record_id(self.template_id, "template"),
            "cuda_versions": lambda: check_cuda_versions(self.cuda_versions),
            "args": lambda: check_args(self.args),
            "registry": lambda: self.registry is None or check_record_id(self.registry, "registry credential"),
            "volume_mount_path": lambda: check_mount(self.volume_mount_path),
            "ports": lambda: parse_ports(self.ports) == self.ports or _fail("not in RunPod's form 8888/http,22/tcp"),
            "env": lambda: check_env(self.env),
            "data_centre_ids": lambda: [
                check_data_centre(d) == d or _fail("surrounding spaces")
                for d in (*self.data_centre_ids, *(c.data_centre_id for c in self.choices if c.data_centre_id))
            ],
        }
        for name, check in checks.items():
            try:
                check()
            except ValueError as e:
                problems[name] = str(e)
        if problems:
            raise SpecError(problems)
        return self

    def _check_network_volume(self) -> object:
        if self.network_volume_id is None:
            return None
        check_record_id(self.network_volume_id, "network volume")
        if self.volume_gb:
            raise ValueError("a pod on a network volume has no volume of its own (volume_gb 0)")
        return None

    @property
    def port_list(self) -> list[str]:
        return [p for p in self.ports.split(",") if p]

    @property
    def direct_ssh(self) -> bool:
        """22/tcp published: `ssh root@IP -p PORT` with exec and SFTP (docs/runpod-facts.md#ssh-direct)."""
        return "22/tcp" in self.port_list

    def lines(self, volume: NetworkVolume | None = None, template: Template | None = None) -> list[str]:
        """The review, one line a field; `volume` and `template` (the records the ids name, when known) give names,
        sizes and prices."""
        env = ", ".join(f"{k}={v}" for k, v in redact_env(self.env)) or "none"
        first, *then = self.choices
        out = [f"name       {self.name}", f"gpu        {first.label}"]
        out += [f"  or then  {c.label}" for c in then]
        if self.template_id is not None:
            name = template.name if template is not None and template.id == self.template_id else None
            out.append(f"template   {name} ({self.template_id})" if name else f"template   {self.template_id}")
        out += [
            f"image      {self.image}",
            f"disk       container {self.container_gb} GB, {self._volume_words(volume)}",
            f"ports      {self.ports or 'none'}"
            + ("" if self.direct_ssh else " (no 22/tcp: no direct SSH, only RunPod's gateway console)"),
        ]
        if self.data_centre_ids:
            why = "the network volume's" if self.network_volume_id else "RunPod picks one"
            out.append(f"where      {', '.join(self.data_centre_ids)} ({why})")
        out.append(f"env        {env}")
        if self.start_jupyter:
            out.append("jupyter    started: RunPod puts a JUPYTER_PASSWORD in the pod's env")
        if self.cuda_versions:
            out.append(f"cuda       {cuda_words(self.cuda_versions)}")
        if self.args:
            out.append(f"command    {self.args}")
        if self.registry is not None:
            out.append(f"registry   {self.registry} (the login RunPod pulls the image with)")
        return out

    def _volume_words(self, volume: NetworkVolume | None) -> str:
        if self.network_volume_id is not None:
            if volume is None or volume.id != self.network_volume_id:
                return f"network volume {self.network_volume_id} at {self.volume_mount_path}"
            return (
                f"network volume {volume.name} ({volume.id}, {volume.size_gb} GB in {volume.data_centre}, "
                f"${volume.cost_per_month:.2f}/month) at {self.volume_mount_path}"
            )
        return f"volume {self.volume_gb} GB at {self.volume_mount_path}" if self.volume_gb else "no volume"


def _fail(message: str) -> bool:
    raise ValueError(message)


def cuda_words(versions: Sequence[str]) -> str:
    """What a CUDA constraint means for where the pod can go."""
    return (
        f"needs CUDA {' or '.join(versions)} (the template's): only machines whose driver reports "
        f"{'that version' if len(versions) == 1 else 'one of them'} can take the pod"
    )


# --- candidates and templates (docs/launch.md) ------------------------------------------------------------


@dataclass(frozen=True)
class Candidates:
    """What a create will try, in order, and each combination left out, with why (one line each)."""

    choices: tuple[Choice, ...]
    skipped: tuple[str, ...] = ()


def plan_candidates(
    gpus: Sequence[GpuType], clouds: Sequence[Cloud], count: int, data_centres: Sequence[str] = ()
) -> Candidates:
    """GPU types x clouds x data centres, in the order given (docs/launch.md#candidates). A cloud that does not
    carry the type, or has no machine with `count` of it, is left out; so is a data centre where RunPod's catalogue
    shows none free now (a stock it does not know is tried). Without data centres RunPod picks one, and a type
    without stock is still tried: the catalogue lags behind the market, and a refusal costs one request."""
    choices: list[Choice] = []
    skipped: list[str] = []
    for gpu in {g.id: g for g in gpus}.values():
        for cloud in dict.fromkeys(clouds):
            most = gpu.max_count_for(cloud)
            if gpu.price(cloud) is None:
                skipped.append(f"{gpu.display_name} is not offered on {cloud.label} cloud")
                continue
            if most is not None and count > most:
                skipped.append(f"RunPod offers at most {most} x {gpu.display_name} on one {cloud.label} cloud pod")
                continue
            if not data_centres:
                choices.append(Choice(gpu.id, count, cloud))
                continue
            for centre in dict.fromkeys(data_centres):
                if gpu.stock_in(cloud, count, centre) is Stock.NONE:
                    what = f"{count} x {gpu.display_name} ({cloud.label} cloud)"
                    skipped.append(f"{what} in {centre}: none free there now")
                else:
                    choices.append(Choice(gpu.id, count, cloud, centre))
    return Candidates(tuple(dict.fromkeys(choices)), tuple(skipped))


def stocked_words(catalogue: GpuCatalogue, centre: str, count: int = 1) -> str:
    """Which GPU types have `count` free in a data centre, per cloud: what to pick when none asked for has."""
    found = [
        f"on {cloud.label} cloud "
        + ", ".join(f"{g.display_name} ({g.stock_in(cloud, count, centre).label})" for g in stocked)
        for cloud in Cloud
        if (stocked := catalogue.stocked_in(centre, cloud, count))
    ]
    if not found:
        return f"RunPod's catalogue shows no GPU type free in {centre} now"
    return f"free in {centre} now: " + "; ".join(found)


def spec_from_candidates(base: PodSpec, candidates: Candidates) -> PodSpec:
    """`base` with its GPU choices replaced by the candidates (at least one), the first as its own."""
    if not candidates.choices:
        raise ValueError("no GPU choice is left to try")
    first, *rest = candidates.choices
    return dataclasses.replace(
        base,
        gpu_type_id=first.gpu_type_id,
        gpu_count=first.gpu_count,
        cloud=first.cloud,
        data_centre_id=first.data_centre_id,
        fallbacks=tuple(rest),
    )


@dataclass(frozen=True)
class TemplateFill:
    """The spec's fields as a template gives them: what the pod gets unless the user says otherwise. What the
    template leaves out is not podtui's default but nothing (no volume, no ports), as RunPod would do."""

    image: str
    container_gb: int
    volume_gb: int
    volume_mount_path: str
    ports: str
    env: tuple[tuple[str, str], ...] = field(repr=False)
    start_ssh: bool
    start_jupyter: bool = False
    cuda_versions: tuple[str, ...] = ()
    args: str = field(default="", repr=False)
    registry: str | None = None


def template_fill(template: Template) -> TemplateFill:
    """Raises ValueError naming the template when one of its values is one RunPod would refuse on a pod."""
    where = f"template {template.name} ({template.id})"
    try:
        if template.serverless:
            raise ValueError("it is a serverless template, not one for pods")
        image = check_image(template.image)
        disk = check_gb(template.disk_gb, CONTAINER_GB_RANGE) if template.disk_gb else DEFAULT_CONTAINER_GB
        volume = check_volume_gb(template.volume_gb or 0)
        path = check_mount(template.volume_path) if template.volume_path else DEFAULT_MOUNT
        ports = parse_ports(",".join(template.ports))
        env = check_env(template.env)
        cuda = check_cuda_versions(template.cuda_versions)
        args = check_args(template.args)
        registry = check_record_id(template.registry, "registry credential") if template.registry else None
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    return TemplateFill(
        image, disk, volume, path, ports, env, template.start_ssh, template.start_jupyter, cuda, args, registry
    )


def link_template(spec: PodSpec, template: Template | None) -> tuple[PodSpec, tuple[str, ...]]:
    """The spec as it is sent with respect to its template, and what of the template it removed
    (docs/launch.md#templates).

    RunPod merges the template's env under the body's per key and applies the template's mount when the body
    names none, so `templateId` goes only with a spec that keeps every env key of the template and its choice of
    mount (or mounts a network volume or a persistent volume of its own, which take its place); otherwise the
    spec is sent whole without it (`unlinked_words` says so). The template's Jupyter and CUDA settings, start
    command and registry credential become the spec's (when it has none of its own), so an unlinked spec keeps
    them. `template` None, or not the one named: the spec as it is (its values unknown)."""
    if spec.template_id is None or template is None or template.id != spec.template_id:
        return spec, ()
    spec = dataclasses.replace(
        spec,
        start_jupyter=spec.start_jupyter or template.start_jupyter,
        cuda_versions=spec.cuda_versions or template.cuda_versions,
        args=spec.args or template.args,
        registry=spec.registry or template.registry,
    )
    keys = {k for k, _ in spec.env}
    removed = [f"env {k}" for k, _ in template.env if k not in keys]
    if template.volume_gb and not spec.volume_gb and spec.network_volume_id is None:
        removed.append(f"its {template.volume_gb} GB volume")
    if not removed:
        return spec, ()
    return dataclasses.replace(spec, template_id=None), tuple(removed)


def unlinked_words(template: Template, removed: Sequence[str]) -> str:
    """The review line for a spec sent without its template (link_template)."""
    kept = [w for w, has in (("start command", template.args), ("registry login", template.registry)) if has]
    return (
        f"template   {template.name} ({template.id}): not linked to the template: you removed {', '.join(removed)}, "
        "which RunPod would put back; the pod gets exactly the values above"
        + (f", the template's {' and '.join(kept)} included" if kept else "")
    )


@dataclass(frozen=True)
class SpecCost:
    gpu_per_hr: float
    storage_per_hr: float
    stopped_per_hr: float  # what the volume costs while the pod is stopped
    # a network volume is billed by the month whether a pod uses it or not: said, not added to the pod's rate
    network_per_month: float = 0.0

    @property
    def per_hr(self) -> float:
        return self.gpu_per_hr + self.storage_per_hr

    @property
    def per_day(self) -> float:
        return self.per_hr * 24

    def line(self) -> str:
        return (
            f"${self.per_hr:.3f}/hr, ${self.per_day:.2f}/day while running "
            f"(GPU ${self.gpu_per_hr:.3f}/hr + disks ${self.storage_per_hr:.3f}/hr); " + self.kept_words()
        )

    def kept_words(self) -> str:
        """What stays billed while the pod is stopped."""
        if self.network_per_month:
            return f"network volume ${self.network_per_month:.2f}/month, with or without the pod"
        return f"stopped: ${self.stopped_per_hr * 24:.2f}/day for the volume"


def spec_cost(
    gpu: GpuType,
    cloud: Cloud,
    count: int,
    container_gb: int,
    volume_gb: int,
    network_volume: NetworkVolume | None = None,
) -> SpecCost | None:
    """Before creating: GPU price x count on that cloud, plus the disks, and the network volume's monthly price
    (docs/runpod-facts.md#pricing-and-the-balance). None when the cloud has no price for the type."""
    price = gpu.price(cloud)
    if price is None:
        return None
    storage = (container_gb * CONTAINER_DISK_RUNNING + volume_gb * VOLUME_RUNNING) / HOURS_PER_MONTH
    network = network_volume.cost_per_month if network_volume is not None else 0.0
    return SpecCost(price * count, storage, volume_gb * VOLUME_STOPPED / HOURS_PER_MONTH, network)


@dataclass(frozen=True)
class CreatedPod:
    """What RunPod answered about a new pod. `pod_host_id` is the gateway's user name (ssh.proxy.username);
    `refused` says, in words, each earlier choice RunPod could not place."""

    id: str
    name: str | None
    status: str | None
    cost_per_hr: float | None
    pod_host_id: str | None
    gpu_type_id: str | None = None
    gpu_count: int | None = None
    cloud: str | None = None
    data_centre_id: str | None = None
    refused: tuple[str, ...] = ()
    candidate: Choice | None = None  # the spec's choice RunPod placed (None: found after an unanswered create)


class CreateUncertain(ApiUnavailable):
    """The create request went out but no usable answer came back: RunPod may have created the pod anyway.
    Creating again could make a second pod, billed too; look it up by name first (find_created)."""


def uncertain(reason: ApiError) -> CreateUncertain:
    return CreateUncertain(f"RunPod's answer to the create was lost: the pod may have been created ({reason})")


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

    def made(p: Pod) -> bool:
        return p.name == name and (known_ids is None or p.id not in known_ids)

    return look_for_created(lambda: fetch().pods, made, delays, sleep)


def as_created(pod: Pod) -> CreatedPod:
    return CreatedPod(
        pod.id,
        pod.name,
        pod.status.value,
        pod.cost_per_hr,
        pod.pod_host_id,
        pod.gpu_name,
        pod.gpu_count,
        pod.cloud,
        pod.location,
    )


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
