"""podtui's own config.toml, and where the RunPod API key comes from."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from podtui.core import secret
from podtui.core.alert_rules import AlertRules, parse_alert_rules
from podtui.core.paths import Paths, runpod_config_file
from podtui.core.user_files import NotAFile, read_user_file


class ConfigError(Exception):
    """A config file podtui cannot use. The file is left exactly as it was."""


# Where RunPod's HTTP proxy serves a pod's `NNNN/http` port (docs/runpod-facts.md#rest-v2); config.toml's
# `proxy_url` replaces it (the simulator's proxy, a relay of one's own: docs/services.md#the-proxy-and-its-limits).
PROXY_URL = "https://{pod_id}-{port}.proxy.runpod.net"


def proxy_url_problem(template: str) -> str | None:
    """Why `template` cannot be a proxy URL template, in words; None when it can: an http(s) URL naming
    {pod_id} and {port}, and no other field (braces for themselves are written {{ and }})."""
    if not template.startswith(("http://", "https://")):
        return "must start with http:// or https://"
    if "{pod_id}" not in template or "{port}" not in template:
        return "must contain {pod_id} and {port}, as in " + PROXY_URL
    try:
        template.format(pod_id="pod", port=8888)
    except (KeyError, IndexError, ValueError):
        return "may name no field but {pod_id} and {port} (a brace itself is written {{ or }})"
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in template):
        return "must not contain spaces or control characters"
    return None


@dataclass(frozen=True)
class Config:
    api_key: str | None = field(default=None, repr=False)  # never in a repr or a traceback
    poll_interval_s: float = 5.0
    api_timeout_s: float = 15.0
    ssh_gateway: str | None = None  # HOST[:PORT] instead of the ssh.proxy the API names; PODTUI_SSH_GATEWAY overrides
    ssh_key: Path | None = None  # tried first, before the dedicated key and ~/.ssh keys
    console_scrollback: int = 10_000  # lines each console keeps; bounds its memory
    run_remote_max_output_mb: float = 64.0  # MiB of a command's output run_remote and `podtui exec` keep (the tail)
    job_log_max_mb: float = 256.0  # MiB of a detached job's log kept on the pod: its head and its latest output
    idle_threshold_pct: float = 5.0  # a pod whose GPU stays under this ...
    idle_window_min: float = 15.0  # ... for this long, with no console input, is idle
    runway_warn_h: float = 24.0  # the ticker turns yellow when the balance lasts less than this
    runway_critical_h: float = 4.0  # and red under this
    daily_budget: float | None = None  # $; crossing 80% and 100% notifies once each
    # how often a pod's detached jobs are looked at over SSH, for pods with a running job that asked for pulls or a
    # stop, or whose Jobs tab is on show (docs/jobs.md#after-a-job)
    job_poll_s: float = 30.0
    confirm_terminate: Literal["name", "yn"] = "name"  # type the pod's name, or a plain yes/no
    read_only: bool = False  # no action that changes or costs anything, anywhere
    proxy_url: str = PROXY_URL  # a pod's HTTP port's address: {pod_id} and {port} filled in (pod_links.services)
    # [keys]: binding id -> key(s), remapping podtui's keys (the ids: `podtui config keys`)
    keys: dict[str, str] = field(default_factory=dict, hash=False)
    alerts: AlertRules = field(default_factory=AlertRules)  # [alerts]: which event goes where (docs/alerts.md)
    # Where the file came from, for messages; None when no file exists yet.
    path: Path | None = None


_FLOAT_FIELDS = {
    "poll_interval_s": (0.5, 3600.0),
    "api_timeout_s": (1.0, 300.0),
    "idle_threshold_pct": (0.0, 100.0),
    "idle_window_min": (1.0, 1440.0),
    "runway_warn_h": (0.0, 8760.0),
    "runway_critical_h": (0.0, 8760.0),
    "daily_budget": (0.01, 1e6),
    "run_remote_max_output_mb": (1.0, 65536.0),
    "job_log_max_mb": (1.0, 1048576.0),  # docs/jobs.md#the-log-and-its-cap
    "job_poll_s": (5.0, 3600.0),
}


def _read_bytes(path: Path) -> bytes:
    try:
        return read_user_file(path)  # a FIFO, a directory or /dev/zero is refused, and never hangs podtui
    except NotAFile as e:
        raise ConfigError(str(e)) from None
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from e


def _read_toml(path: Path) -> dict[str, Any]:
    return _parse_toml(path, _read_bytes(path))


def _parse_toml(path: Path, raw: bytes) -> dict[str, Any]:
    # imported here: with no config file (the demo, a first run) the first frame does without it
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML ({e}); fix or remove it, podtui has not changed it") from e
    except UnicodeDecodeError as e:  # TOML is UTF-8; tomllib lets this through as a bare ValueError
        raise ConfigError(
            f"{path} is not UTF-8 text (byte {e.start}); fix or remove it, podtui has not changed it"
        ) from e


def load_config(paths: Paths) -> Config:
    path = paths.config_file
    if not path.exists():
        return Config()
    return config_from(path, read_config_toml(path))


def read_config_toml(path: Path) -> dict[str, Any]:
    """config.toml's tables as TOML reads them; ConfigError when it cannot be read or parsed."""
    return _read_toml(path)


def parse_config_toml(path: Path, raw: bytes) -> dict[str, Any]:
    """config.toml's text (`raw`, as it would be written to `path`) as TOML reads it; ConfigError when it cannot be."""
    return _parse_toml(path, raw)


def config_from(path: Path, data: dict[str, Any]) -> Config:
    """The settings in config.toml's `data` (its [profiles] are read by podtui.core.profiles)."""
    values: dict[str, Any] = {}
    key = data.get("api_key")
    if key is not None:
        if not isinstance(key, str) or not key.strip():
            raise ConfigError(f"{path}: api_key must be a non-empty string")
        values["api_key"] = key.strip()
    for name in ("ssh_gateway", "ssh_key"):
        if name in data:
            raw = data[name]
            if not isinstance(raw, str) or not raw.strip():
                raise ConfigError(f"{path}: {name} must be a non-empty string")
            values[name] = raw.strip() if name == "ssh_gateway" else Path(raw.strip()).expanduser()
    for name, (low, high) in _FLOAT_FIELDS.items():
        if name in data:
            raw = data[name]
            if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not low <= raw <= high:
                raise ConfigError(f"{path}: {name} must be a number from {low:g} to {high:g}")
            values[name] = float(raw)
    if "console_scrollback" in data:
        raw = data["console_scrollback"]
        if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw <= 1_000_000:
            raise ConfigError(f"{path}: console_scrollback must be a whole number of lines from 0 to 1000000")
        values["console_scrollback"] = raw
    if "confirm_terminate" in data:
        if data["confirm_terminate"] not in ("name", "yn"):
            raise ConfigError(f'{path}: confirm_terminate must be "name" (type the pod\'s name) or "yn"')
        values["confirm_terminate"] = data["confirm_terminate"]
    if "proxy_url" in data:
        raw = data["proxy_url"]
        why = proxy_url_problem(raw.strip()) if isinstance(raw, str) else "must be a string"
        if why is not None:
            raise ConfigError(f"{path}: proxy_url {why}")
        values["proxy_url"] = raw.strip()
    if "read_only" in data:
        if not isinstance(data["read_only"], bool):
            raise ConfigError(f"{path}: read_only must be true or false")
        values["read_only"] = data["read_only"]
    if "alerts" in data:
        try:
            values["alerts"] = parse_alert_rules(data["alerts"])
        except ValueError as e:
            raise ConfigError(f"{path}: {e}") from None
    keys = _keys(path, data)
    if keys:
        values["keys"] = keys
    return Config(path=path, **values)


KEY_MODIFIERS = ("ctrl", "alt", "shift", "super", "meta", "hyper")
KEYS_HELP = 'a key or keys, comma-separated, as Textual names them: "x", "ctrl+s", "f2,delete"'


def key_string(value: str) -> str | None:
    """A [keys] value with its spaces taken out and its modifiers in lower case ("x, Ctrl+s" -> "x,ctrl+s"), or
    None when it cannot be a key. Its shape is checked here; whether a key's name is one the terminal can send is
    Textual's to know, so the UI checks that (an unknown name is said there, and the binding keeps its key)."""
    if value.strip() == ",":
        return "comma"  # the one key that cannot be written as itself in a comma-separated list
    keys: list[str] = []
    for key in (k.strip() for k in value.split(",")):
        if key == "+" or key.endswith("++"):
            key = key[:-1] + "plus"  # "+" and "ctrl++": the plus key, as Textual names it
        *modifiers, base = key.split("+")
        modifiers = [m.lower() for m in modifiers]
        if not base or any(c.isspace() for c in key) or any(m not in KEY_MODIFIERS for m in modifiers):
            return None
        keys.append("+".join([*modifiers, base]))  # the base keeps its case: "T" is not "t"
    return ",".join(keys)


def _keys(path: Path, data: dict[str, Any]) -> dict[str, str]:
    """The [keys] section: `pods.stop = "x"` (TOML reads the dotted name as a table, `[keys.pods]` alike) or
    `"pods.stop" = "x"`, both the binding id pods.stop."""
    section = data.get("keys", {})
    if not isinstance(section, dict):
        raise ConfigError(f'{path}: keys must be a table: [keys] then lines like pods.stop = "x"')
    out: dict[str, str] = {}

    def walk(prefix: str, table: dict[str, Any]) -> None:
        for name, value in table.items():
            key_id = f"{prefix}.{name}" if prefix else name
            if isinstance(value, dict):
                walk(key_id, value)
                continue
            keys = key_string(value) if isinstance(value, str) else None
            if keys is None:
                raise ConfigError(f"{path}: [keys] {key_id} must be {KEYS_HELP}")
            out[key_id] = keys

    walk("", section)
    return out


def is_one_word(value: str) -> bool:
    """Whether `value` can be an API key: one word of printable characters (no space, line break or control
    character, which would end up in an HTTP header, and be quoted back in an error there)."""
    return bool(value) and not any(c.isspace() or not c.isprintable() for c in value)


class UnusableKey(ConfigError):
    """A key that is not one word, where it came from: said, never quoted."""


def checked_key(value: str, where: str) -> str:
    """`value`, stripped, when it is one word; ConfigError naming `where` (never quoting the value) otherwise."""
    value = value.strip()
    if not is_one_word(value):
        raise UnusableKey(
            f"the API key in {where} is not one word (it holds a space, a line break or a control character): "
            "give the key alone"
        )
    return value


def save_api_key(paths: Paths, api_key: str) -> Path:
    """Store the key in podtui's config.toml (mode 0600), keeping everything else in the file."""
    import tomlkit  # only needed on this rare path

    api_key = api_key.strip()
    if not is_one_word(api_key):
        raise ConfigError("an API key is one word with no spaces")
    path = paths.config_file
    if path.exists():
        raw = _read_bytes(path)
        _parse_toml(path, raw)  # refuse to rewrite a file we cannot parse
        try:
            doc = tomlkit.parse(raw.decode("utf-8"))
        except Exception as e:  # tomlkit stricter than tomllib somewhere: refuse rather than rewrite
            raise ConfigError(f"{path} could not be edited ({type(e).__name__}); podtui has not changed it") from e
    else:
        doc = tomlkit.document()
    doc["api_key"] = api_key
    secret.write_private(path, tomlkit.dumps(doc))
    return path


KeySource = Literal["environment", "podtui config", "runpod config", "podtui key file"]


@dataclass(frozen=True)
class ApiKey:
    value: str
    source: KeySource
    origin: str  # the variable or file it came from, for `podtui config show`

    def __repr__(self) -> str:  # never let a repr leak the key into a log or traceback
        return f"ApiKey({secret.mask(self.value)}, from {self.origin})"

    __str__ = __repr__


def from_runpod_config(path: Path) -> str | None:
    """Both layouts of ~/.runpod/config.toml: runpodctl's `apikey = '...'` and the SDK's `[default] api_key`."""
    if not path.exists():
        return None
    try:
        raw = read_user_file(path)
    except NotAFile as e:  # not a broken file but something else in its place: refused, and said
        raise ConfigError(str(e)) from None
    except OSError:
        return None
    try:
        data = _parse_toml(path, raw)
    except ConfigError:
        return None  # that file belongs to runpodctl; a broken one is not ours to complain about
    key = data.get("apikey")
    if isinstance(key, str) and key.strip():
        return key.strip()
    default = data.get("default")
    if isinstance(default, dict):
        key = default.get("api_key")
        if isinstance(key, str) and key.strip():
            return key.strip()
    return None


def resolve_api_key(
    config: Config, environ: dict[str, str] | None = None, runpod_config: Path | None = None
) -> ApiKey | None:
    """RUNPOD_API_KEY first, then podtui's config, then the file runpodctl and the SDK share. A key that is not one
    word is a ConfigError (where it came from, never the key)."""
    env = os.environ if environ is None else environ
    found: ApiKey | None = None
    value = env.get("RUNPOD_API_KEY", "").strip()
    if value:
        found = ApiKey(checked_key(value, "the environment variable RUNPOD_API_KEY"), "environment", "RUNPOD_API_KEY")
    elif config.api_key:
        found = ApiKey(checked_key(config.api_key, f"{config.path}"), "podtui config", str(config.path))
    else:
        path = runpod_config or runpod_config_file()
        value = from_runpod_config(path) or ""
        if value:
            found = ApiKey(checked_key(value, str(path)), "runpod config", str(path))
    if found is not None:
        secret.register(found.value)
    return found


def replace_hint(key: ApiKey) -> str:
    """How to give podtui another key where this one came from, for a refused key's message (without profiles: a
    key `podtui config set-key` stores is used once RUNPOD_API_KEY is unset, and before runpodctl's)."""
    if key.source == "environment":
        return (
            f"then set {key.origin} to a working key (read -rs {key.origin} && export {key.origin}), or unset it "
            "and `podtui config set-key`"
        )
    if key.source == "runpod config":
        return f"then `runpodctl config --apiKey ...` (it writes {key.origin}), or `podtui config set-key`"
    return "then `podtui config set-key`"


NO_KEY_HELP = """\
podtui needs a RunPod API key (RunPod console → Settings → API Keys).
Give it one of these ways (none of them puts the key in your shell history):
  • podtui config set-key        asks for the key without echoing it, stores it with mode 0600
  • read -rs RUNPOD_API_KEY && export RUNPOD_API_KEY
  • a key that runpodctl or the runpod SDK already saved in ~/.runpod/config.toml is used as is
Or look around first, with no account:  podtui --demo"""
