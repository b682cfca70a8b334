"""Pods and the account as podtui sees them, parsed defensively from RunPod's REST v2 answers.

Every field RunPod can leave null (or get wrong) is Optional here; parsing never raises on one bad field,
it records a problem and carries on, so one odd pod cannot blank the whole list. Unknown fields are ignored and
an unknown status is kept as UNKNOWN with its name (docs/runpod-facts.md#rest-v2).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

from podtui.core import secret


class PayloadError(Exception):
    """The API answered, but not with anything podtui can read."""


class PodStatus(str, Enum):
    # RunPod's v2 pod statuses (docs/runpod-facts.md#rest-v2), plus UNKNOWN for anything new.
    PROVISIONING = "PROVISIONING"
    STARTING = "STARTING"
    RUNNING = "RUNNING"
    EXITED = "EXITED"
    ERROR = "ERROR"
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


# What a pod may be asked to do now: its `actions` field (docs/runpod-facts.md#rest-v2).
POD_ACTIONS = ("start", "stop", "restart", "terminate")


@dataclass(frozen=True)
class SshEndpoint:
    """Where RunPod says a pod takes SSH: its gateway (`ssh.proxy`, PTY only) or its own sshd (`ssh.direct`)."""

    host: str
    port: int
    username: str

    @property
    def command(self) -> str:
        port = "" if self.port == 22 else f" -p {self.port}"
        return f"ssh {self.username}@{self.host}{port}"


@dataclass(frozen=True)
class PortMapping:
    ip: str | None
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
    actions: frozenset[str] = frozenset()  # what RunPod accepts for this pod now: start, stop, restart, terminate
    locked: bool = False  # RunPod will not stop or reset it
    image: str | None = None
    gpu_count: int | None = None  # 0 for a CPU pod
    gpu_name: str | None = None  # the GPU type id, e.g. "NVIDIA GeForce RTX 4090"
    cost_per_hr: float | None = None
    vcpu_count: float | None = None
    memory_gb: float | None = None
    container_disk_gb: float | None = None
    volume_gb: float | None = None
    volume_mount_path: str | None = None
    ports_spec: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    ssh_proxy: SshEndpoint | None = None
    ssh_direct: SshEndpoint | None = None
    location: str | None = None  # the data centre
    cuda_version: str | None = None
    cloud: str | None = None
    created_at: float | None = None  # epoch seconds
    started_at: float | None = None
    network_volume: str | None = None
    template: str | None = None  # the template RunPod made it from (its id), when it says
    runtime: Runtime | None = None
    # when the current run began (epoch s): the time the answer was fetched less its uptime, fixed when parsed, so
    # an old Pod keeps the start it was seen with (a host key's run, docs/ssh-out.md#host-keys). Not startedAt:
    # RunPod keeps that through a resume. None: not running, or not known when it was fetched.
    run_started: float | None = None

    @property
    def live_runtime(self) -> Runtime | None:
        """Runtime data only while it means something: RunPod gives it for RUNNING pods only."""
        return self.runtime if self.status is PodStatus.RUNNING else None

    @property
    def is_starting(self) -> bool:
        return self.status in (PodStatus.PROVISIONING, PodStatus.STARTING) or (
            self.status is PodStatus.RUNNING and self.runtime is None
        )

    @property
    def state(self) -> str:
        """The status a person needs: RunPod's, with STARTING for a RUNNING pod whose container is not up yet."""
        if self.status is PodStatus.RUNNING and self.runtime is None:
            return "STARTING"
        if self.status is PodStatus.UNKNOWN:
            return f"? {self.status_raw or 'none'}"[:14]
        return str(self.status.value)

    def can(self, action: str) -> bool:
        """RunPod lists `action` as valid for this pod now."""
        return action in self.actions

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
    def pod_host_id(self) -> str | None:
        """The gateway's user name for this pod (`<podId>-<hex>`; it may change when the pod resumes)."""
        return self.ssh_proxy.username if self.ssh_proxy else None

    @property
    def direct_ssh(self) -> tuple[str, int] | None:
        """(host, port) of the pod's own sshd, as RunPod publishes it (docs/runpod-facts.md#ssh-direct)."""
        return (self.ssh_direct.host, self.ssh_direct.port) if self.ssh_direct else None

    @property
    def proxy_ssh_command(self) -> str | None:
        return self.ssh_proxy.command if self.ssh_proxy else None

    @property
    def direct_ssh_command(self) -> str | None:
        return self.ssh_direct.command if self.ssh_direct else None

    @property
    def reach_label(self) -> str:
        return "+".join(self.reach) if self.reach else "—"

    @property
    def reach(self) -> tuple[str, ...]:
        ways: list[str] = []
        if self.ssh_proxy is not None and self.live_runtime is not None:
            ways.append("proxy")
        if self.ssh_direct is not None:
            ways.append("direct")
        return tuple(ways)


@dataclass(frozen=True)
class Account:
    """The balance: GraphQL only (v2 has none, docs/runpod-facts.md#pricing-and-the-balance). When it cannot be
    had, every figure is None and `unknown_why` says why in words."""

    balance: float | None = None
    spend_per_hr: float | None = None
    spend_limit: float | None = None
    unknown_why: str | None = None
    id: str | None = None  # RunPod's id for the account (myself.id): two profiles' keys may reach one account


@dataclass(frozen=True)
class Snapshot:
    account: Account
    pods: tuple[Pod, ...]
    fetched_at: float
    problems: tuple[str, ...] = field(default=())

    @property
    def skipped_records(self) -> int:
        """Pod records the answer held but could not be read: a pod missing from `pods` may still exist."""
        return sum(1 for p in self.problems if p.endswith("; skipped"))

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


class JsonFields:
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
        t = type(v)
        if t is int:  # the common case first: a thousand pods are parsed on every poll
            return float(v)
        if t is float or (isinstance(v, (int, float)) and not isinstance(v, bool)):
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
        if v is None or type(v) is dict or isinstance(v, Mapping):
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


def _parse_env(raw: object, where: str, problems: list[str]) -> tuple[tuple[str, str], ...]:
    # v2 gives env as an object of strings; anything else is noted and skipped, never shown raw
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: env is not an object ({type(raw).__name__})")
        return ()
    return tuple((str(k), v if isinstance(v, str) else str(v)) for k, v in raw.items())


def _instant(f: JsonFields, key: str) -> float | None:
    """An RFC 3339 time as epoch seconds (None when absent or unreadable, with a note)."""
    text = f.text(key)
    if not text:
        return None
    try:
        # fromisoformat reads "Z" only from Python 3.11
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        f.problems.append(f"{f.where}: {key} is not a time")
        return None
    if when.tzinfo is None:
        return None
    return when.timestamp()


def _endpoint(raw: object, where: str, problems: list[str]) -> SshEndpoint | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        problems.append(f"{where} is not an object ({type(raw).__name__})")
        return None
    f = JsonFields(raw, where, problems)
    host, port, user = f.text("host"), f.whole("port"), f.text("username")
    if not host or port is None or not 0 < port < 65536 or not user:
        problems.append(f"{where} lacks a host, port or user name; not used")
        return None
    return SshEndpoint(host, port, user)


def _utilisation(f: JsonFields, key: str) -> float | None:
    inner = f.mapping(key)
    return JsonFields(inner, f"{f.where}.{key}", f.problems).num("util") if inner is not None else None


def _parse_runtime(raw: Mapping[str, Any], where: str, problems: list[str]) -> Runtime:
    f = JsonFields(raw, where + ".runtime", problems)
    ports = []
    for p in f.items("ports"):
        if isinstance(p, Mapping):
            pf = JsonFields(p, where + ".runtime.ports", problems)
            ports.append(PortMapping(pf.text("ip"), pf.whole("private"), pf.whole("public"), pf.text("type")))
    gpus = []
    for i, g in enumerate(f.items("gpus")):
        if isinstance(g, Mapping):
            gf = JsonFields(g, where + ".runtime.gpus", problems)
            gpus.append(GpuSample(str(i), gf.num("util"), gf.num("memoryUtil")))
    return Runtime(
        uptime_s=f.whole("uptime"),
        ports=tuple(ports),
        gpus=tuple(gpus),
        cpu_percent=_utilisation(f, "cpu"),
        memory_percent=_utilisation(f, "memory"),
    )


def _actions(f: JsonFields) -> frozenset[str]:
    # an action RunPod adds later is kept (and offered by nothing); anything not a word is dropped
    return frozenset(a for a in f.items("actions") if isinstance(a, str) and a.isidentifier())


def _gpu_count(gpu: JsonFields) -> int | None:
    """`gpu.count`: 1 when absent (the spec's default); unknown, with a note, when it is not a whole number >= 1."""
    if gpu.obj.get("count") is None:
        return 1
    count = gpu.num("count")
    if count is None or count < 1 or count != int(count):
        if count is not None:
            gpu.problems.append(f"{gpu.where}: count {count:g} is not a number of GPUs; shown as unknown")
        return None
    return int(count)


def parse_pod(raw: object, problems: list[str], fetched_at: float | None = None) -> Pod | None:
    """One pod; `fetched_at` (epoch s): when the answer came, which dates its uptime (`Pod.run_started`)."""
    if not isinstance(raw, Mapping):
        problems.append(f"a pod record is not an object ({type(raw).__name__}); skipped")
        return None
    pod_id = raw.get("id")
    if not isinstance(pod_id, str) or not pod_id:
        problems.append("a pod record has no id; skipped")
        return None
    where = f"pod {pod_id}"
    f = JsonFields(raw, where, problems)
    status_raw = f.text("status")
    status = PodStatus.parse(status_raw)
    if status is PodStatus.UNKNOWN:
        problems.append(f"{where}: unknown status {status_raw!r}")
    gpu = JsonFields(f.mapping("gpu") or {}, where + ".gpu", problems)
    cpu = JsonFields(f.mapping("cpu") or {}, where + ".cpu", problems)
    mounts = JsonFields(f.mapping("mounts") or {}, where + ".mounts", problems)
    persistent = JsonFields(mounts.mapping("persistent") or {}, where + ".mounts.persistent", problems)
    network = next((n for n in mounts.items("network") if isinstance(n, Mapping)), None)
    network_f = JsonFields(network or {}, where + ".mounts.network", problems)
    ssh = JsonFields(f.mapping("ssh") or {}, where + ".ssh", problems)
    runtime_raw = f.mapping("runtime")
    gpu_id = gpu.text("id")
    gpu_count = _gpu_count(gpu) if gpu_id else (0 if f.mapping("cpu") is not None else None)
    ports = [p for p in f.items("ports") if isinstance(p, str)]
    runtime = _parse_runtime(runtime_raw, where, problems) if runtime_raw is not None else None
    uptime = runtime.uptime_s if runtime is not None and status is PodStatus.RUNNING else None
    return Pod(
        id=pod_id,
        name=f.text("name") or pod_id,
        status=status,
        status_raw=status_raw,
        actions=_actions(f),
        locked=f.flag("locked"),
        image=f.text("image"),
        gpu_count=gpu_count,
        gpu_name=gpu_id or cpu.text("id"),
        cost_per_hr=f.amount("cost", MOST_PER_HR),
        vcpu_count=cpu.num("vcpuCount"),
        memory_gb=cpu.num("memory"),
        container_disk_gb=f.num("disk"),
        volume_gb=persistent.num("size"),
        volume_mount_path=persistent.text("path") or network_f.text("path"),
        ports_spec=",".join(ports) if ports else None,
        env=_secret_env(_parse_env(raw.get("env"), where, problems)),
        ssh_proxy=_endpoint(ssh.obj.get("proxy"), where + ".ssh.proxy", problems),
        ssh_direct=_endpoint(ssh.obj.get("direct"), where + ".ssh.direct", problems),
        location=f.text("dataCenterId"),
        cuda_version=f.text("cudaVersion"),
        cloud=f.text("cloud"),
        created_at=_instant(f, "createdAt"),
        started_at=_instant(f, "startedAt"),
        network_volume=network_f.text("volumeId"),
        template=f.text("template"),
        runtime=runtime,
        run_started=fetched_at - uptime if fetched_at is not None and uptime is not None else None,
    )


def parse_pods(payload: object, fetched_at: float | None = None) -> tuple[tuple[Pod, ...], tuple[str, ...]]:
    """The pods of GET /v2/pods (`{"pods": [...]}`), fetched at `fetched_at`. Raises PayloadError only when there is
    nothing to show."""
    if not isinstance(payload, Mapping):
        raise PayloadError(f"the API answered with {type(payload).__name__}, not a JSON object")
    if "pods" not in payload:
        raise PayloadError("the API answer has no pod list ('pods') in it")
    if not isinstance(payload["pods"], (list, type(None))):
        raise PayloadError("the API answer's pod list is not a list")
    problems: list[str] = []
    pods = []
    seen: set[str] = set()
    for raw in payload["pods"] or []:
        pod = parse_pod(raw, problems, fetched_at)
        if pod is None:
            continue
        if pod.id in seen:
            problems.append(f"pod {pod.id} listed twice; kept the first")
            continue
        seen.add(pod.id)
        pods.append(pod)
    return tuple(pods), tuple(problems)


def parse_account(payload: object) -> tuple[Account, tuple[str, ...]]:
    """The answer to the balance query (GraphQL `myself { clientBalance currentSpendPerHr spendLimit }`)."""
    if not isinstance(payload, Mapping):
        raise PayloadError(f"the balance answer is {type(payload).__name__}, not a JSON object")
    data = payload.get("data")
    myself = data.get("myself") if isinstance(data, Mapping) else None
    if not isinstance(myself, Mapping):
        raise PayloadError("the balance answer has no account ('myself') in it")
    problems: list[str] = []
    f = JsonFields(myself, "account", problems)
    raw_id = myself.get("id")  # only a plain short id is kept (it is compared, never shown)
    account = Account(
        balance=f.amount("clientBalance", MOST_BALANCE),
        spend_per_hr=f.amount("currentSpendPerHr", MOST_PER_HR * 1000),
        spend_limit=f.amount("spendLimit", MOST_BALANCE),
        id=raw_id if isinstance(raw_id, str) and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", raw_id) else None,
    )
    if account.balance is None:
        account = Account(
            None, account.spend_per_hr, account.spend_limit, "RunPod's answer had no usable balance", id=account.id
        )
    return account, tuple(problems)


# A credential's name, word by word: the key cut at `_`, `-`, `.` and camelCase humps, each word matched whole (KEY,
# not KEYBOARD; TOKEN or TOKENS, not TOKENIZERS; AUTH, not AUTHOR) or as the end of a run-together one (HFTOKEN,
# OPENAIKEY, APIKEYS, DBPASSWORD), English words ending in KEY aside (MONKEY, HOTKEY).
_SECRET_WORDS = frozenset(
    {
        "KEY", "KEYS", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASS", "PASSWD", "PASSWORD", "PASSWORDS",
        "PASSPHRASE", "PWD", "AUTH", "OAUTH", "AUTHORIZATION", "CREDENTIAL", "CREDENTIALS", "CREDS", "PRIVATE",
        "SESSION", "COOKIE", "COOKIES", "BEARER",
    }
)  # fmt: skip
_SECRET_WORD_ENDS = ("TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "KEYS")
_NOT_KEY_WORDS = frozenset(
    {"MONKEY", "DONKEY", "TURKEY", "HOCKEY", "JOCKEY", "WHISKEY", "LACKEY", "HOTKEY", "HOTKEYS", "TURNKEY"}
)
# Words naming a password: a password may be anything, a boolean or a 0 too, so no value under one is let off.
_PASSWORD_WORDS = ("PASS", "PASSWD", "PASSWORD", "PASSWORDS", "PASSPHRASE", "PWD")
# Words saying the key counts or limits something (MAX_NEW_TOKENS=512, API_KEY_COUNT=4): a number under one is that.
_COUNT_WORDS = frozenset(
    {
        "MAX", "MIN", "NUM", "NUMBER", "N", "COUNT", "LEN", "LENGTH", "SIZE", "LIMIT", "TOTAL", "BATCH", "TTL",
        "TIMEOUT", "EXPIRY", "EXPIRES", "LIFETIME", "PER",
    }
)  # fmt: skip
_KEY_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# A switch is no credential (USE_AUTH=false, HF_HUB_DISABLE_TOKEN=1); any other value under such a name may be one
# (JUPYTER_TOKEN=12345 is a PIN).
_SWITCH = re.compile(r"(?i:true|false|yes|no|on|off)|[01]")
_NUMBER = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?")

# Values that are credentials by their form alone, whatever the key: a token's known prefix, a JWT, a cloud key id,
# a connection string's key, a URL that carries a password or a key, a webhook URL (which is its own secret).
_KNOWN_TOKEN = re.compile(
    r"^(hf_|rpa_|sk-|sk_live_|sk_test_|rk_live_|rk_test_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox)"
    r"|\b(AKIA|ASIA)[A-Z0-9]{16}\b"
    r"|\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*"
    r"|\b(AccountKey|SharedAccessKey|SharedAccessSignature)="
    r"|://[^:/\s@]*:[^@\s/]+@"  # user:password@ (redis://:password@ too)
    r"|://[A-Za-z0-9_-]{20,}@"  # a key as the user (a Sentry DSN, https://TOKEN@github.com)
    r"|://[^/\s@]+@[^/\s]*sentry\.io\b"
    r"|hooks\.slack\.com/(services|workflows|triggers)/|discord(app)?\.com/api/webhooks/"
)
# A long run without spaces: a token, unless it is made of words (a model name, a path, a run name), which are cut
# at - _ . / into pieces that are each a number, a word of letters cased as words are (lower, UPPER,
# Capitalised or CamelCase), or a short mix of both (8B, R1, v0, bf16, Qwen2).
_LONG_RUN = re.compile(r"[A-Za-z0-9+/_=.-]{32,}")
_PIECES = re.compile(r"[-_./]+")
_WORD = re.compile(
    r"[0-9]{1,14}|(?=[A-Za-z]*[0-9])[A-Za-z0-9]{1,6}|[A-Z]+|[A-Z]?[a-z]+(?:[A-Z][a-z]{2,}){0,3}[A-Z]{0,4}"
)
_LONGEST_WORD = 24


def _made_of_words(value: str) -> bool:
    pieces = [p for p in _PIECES.split(value) if p]  # base64's + and = are in no name: a piece holding one is no word
    return len(pieces) > 1 and all(len(p) <= _LONGEST_WORD and _WORD.fullmatch(p) for p in pieces)


def known_token(value: str) -> bool:
    """The value is a credential by its form: a known token prefix (hf_, sk-, ghp_, glpat-, AKIA...), a JWT, a URL
    with a password or a key in it, a webhook URL, a connection string's key."""
    return _KNOWN_TOKEN.search(value) is not None


def token_like(value: str) -> bool:
    """The value is a long run of token characters not made of words: a token of a kind podtui does not know, or
    something else of that shape (a hash), which the user may say is no secret."""
    return _LONG_RUN.fullmatch(value) is not None and not _made_of_words(value)


def credential_by_value(value: str) -> bool:
    """The value is shaped like a credential, whatever its key is called (docs/storage.md#templates-from-a-pod)."""
    return known_token(value) or token_like(value)


def credential_by_name(key: str, value: str) -> bool:
    """The key names a credential (see _SECRET_WORDS) and the value could be one: an empty value or a switch (a
    boolean, 0 or 1) is not, nor a number under a key that counts (MAX_NEW_TOKENS); under a password's key,
    anything is."""
    if key.upper() == "PWD":  # the shell's working folder
        return False
    words = [w.upper() for w in _KEY_WORDS.findall(key)]
    named = [w for w in words if w in _SECRET_WORDS or (w.endswith(_SECRET_WORD_ENDS) and w not in _NOT_KEY_WORDS)]
    value = value.strip()
    if not named or not value:
        return False
    if any(w.endswith(_PASSWORD_WORDS) for w in named):
        return True
    if _SWITCH.fullmatch(value):
        return False
    counts = any(w in _COUNT_WORDS or w.startswith(("MAX", "MIN", "NUM")) for w in words)
    return not (counts and _NUMBER.fullmatch(value))


def looks_like_credential(key: str, value: str) -> bool:
    """The rule podtui hides env values by, everywhere (docs/storage.md#templates-from-a-pod)."""
    return credential_by_value(value) or credential_by_name(key, value)


def _secret_env(env: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Values that look like credentials are registered as secrets, so any log line, error or crash report that
    happens to quote one shows it masked."""
    for (_, value), (_, shown) in zip(env, redact_env(env), strict=True):
        if shown != value:
            secret.register(value)
    return env


def redact_env(env: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Env values are plaintext in the API (docs/runpod-facts.md#rest-v2); hide anything that may be a credential."""
    out = []
    for k, v in env:
        if looks_like_credential(k, v):
            out.append((k, "•••••• (hidden)"))
        else:
            out.append((k, v))
    return tuple(out)
