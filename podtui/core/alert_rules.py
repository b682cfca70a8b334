"""Which alerts go where: config.toml's [alerts] table, parsed and checked (docs/alerts.md#config).

    [alerts]
    webhook = "https://ntfy.sh/my-topic"   # https, or http to this machine only
    webhook_format = "ntfy"                # "json" (podtui's body), "slack" ({"text": ...}) or "ntfy"
    quiet_min = 30                         # the same alert about the same pod is not said again within this
    desktop = true                         # the terminal's notification and notify-send, overall
    osc = 9                                # which terminal notification: 9, 777 or "both"
    [alerts.events]                        # per event, where it goes
    idle = ["app", "desktop", "webhook"]

Every mistake is a ValueError in words (config.py names the file). The webhook's URL may carry a token (an ntfy
topic, a Slack hook's path): it is registered as a secret when read and is only ever shown masked (`shown_url`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from podtui.core import secret

Kind = Literal[
    "idle", "exited", "runway", "budget", "transfer_verified", "transfer_failed", "stuck", "key_refused", "job_ended"
]
KINDS: tuple[Kind, ...] = (
    "idle",
    "exited",
    "runway",
    "budget",
    "transfer_verified",
    "transfer_failed",
    "stuck",
    "key_refused",
    "job_ended",
)
KIND_HELP: dict[Kind, str] = {
    "idle": "a running pod turned idle",
    "exited": "a pod stopped, failed or was terminated without your asking",
    "runway": "the balance lasts less than runway_warn_h, then runway_critical_h",
    "budget": "today's spend reached 80%, then 100% of daily_budget",
    "transfer_verified": "a transfer finished and was verified",
    "transfer_failed": "a transfer failed",
    "stuck": "a pod has been starting for more than 10 minutes",
    "key_refused": "RunPod refused the API key, and `podtui watch` stopped",
    "job_ended": "a detached job ended (done, failed, cancelled or lost), or its pulls failed and its pod was kept",
}
Sink = Literal["app", "desktop", "notify-send", "webhook"]
SINKS: tuple[Sink, ...] = ("app", "desktop", "notify-send", "webhook")
Format = Literal["json", "slack", "ntfy"]
FORMATS: tuple[Format, ...] = ("json", "slack", "ntfy")
Osc = Literal["9", "777", "both"]
QUIET_MIN = 30.0
# Unless [alerts.events] says otherwise: the app hears everything; the desktop every event but a transfer verified
# (the transfers' pane says it); the webhook everything, once a URL is set.
DEFAULT_SINKS: dict[Kind, tuple[Sink, ...]] = {
    k: ("app", "webhook") if k == "transfer_verified" else ("app", "desktop", "notify-send", "webhook") for k in KINDS
}
_KEYS = ("webhook", "webhook_format", "quiet_min", "desktop", "osc", "events")


@dataclass(frozen=True)
class AlertRules:
    webhook: str | None = field(default=None, repr=False)  # may hold a token: never in a repr
    webhook_format: Format = "json"
    quiet_s: float = QUIET_MIN * 60.0
    desktop: bool = True
    osc: Osc = "9"
    events: Mapping[Kind, tuple[Sink, ...]] = field(default_factory=lambda: dict(DEFAULT_SINKS), hash=False)

    def sinks_for(self, kind: Kind) -> tuple[Sink, ...]:
        """Where an alert of `kind` goes: its list, less what is switched off (no URL, desktop = false)."""
        out = self.events.get(kind, DEFAULT_SINKS[kind])
        if self.webhook is None:
            out = tuple(s for s in out if s != "webhook")
        if not self.desktop:
            out = tuple(s for s in out if s not in ("desktop", "notify-send"))
        return out

    @property
    def shown_url(self) -> str:
        return shown_url(self.webhook)


def shown_url(url: str | None) -> str:
    """The webhook as it may be shown or logged: scheme, host and port, the rest (the token) hidden."""
    if url is None:
        return "(none)"
    parts = urlsplit(url)
    host = parts.hostname or "?"
    if ":" in host:  # an IPv6 address, bracketed as in the URL
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # not a number: checked by webhook_problem; shown without it
        port = None
    return f"{parts.scheme}://{host}{f':{port}' if port is not None else ''}/…"


def webhook_problem(url: str) -> str | None:
    """Why `url` cannot be the webhook, in words; None when it can. https anywhere; plain http only to this
    machine, where nothing on the way can read the body or the token in the URL."""
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "must not contain spaces or control characters"
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018  # a port that is not a number raises here
    except ValueError:
        return "is not a URL"
    if parts.scheme not in ("https", "http") or not host:
        return "must be an https:// URL (or http:// to 127.0.0.1 or localhost)"
    if parts.username or parts.password:
        return "must not hold a user or password (ntfy takes a token in the URL's topic; see docs/alerts.md)"
    if parts.scheme == "http" and not _loopback(host):
        return "must be https:// (plain http only to this machine: 127.0.0.1, ::1 or localhost)"
    return None


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_alert_rules(table: object) -> AlertRules:
    """[alerts] as checked rules; ValueError in words when it cannot be used (config.py names the file)."""
    if not isinstance(table, Mapping):
        raise ValueError('alerts must be a table: [alerts] then lines like webhook = "https://ntfy.sh/my-topic"')
    unknown = [k for k in table if k not in _KEYS]
    if unknown:
        raise ValueError(f"[alerts] has no setting {unknown[0]!r}; the settings are {', '.join(_KEYS)}")
    values: dict[str, Any] = {}
    if "webhook" in table:
        url = table["webhook"]
        if not isinstance(url, str):
            raise ValueError("[alerts] webhook must be a URL in quotes")
        url = url.strip()
        if url:  # webhook = "" switches it off
            why = webhook_problem(url)
            if why is not None:
                raise ValueError(f"[alerts] webhook {why} (it was {shown_url(url)})")
            _register(url)
            values["webhook"] = url
    if "webhook_format" in table:
        fmt = table["webhook_format"]
        if fmt not in FORMATS:
            raise ValueError('[alerts] webhook_format must be "json", "slack" or "ntfy"')
        values["webhook_format"] = fmt
    if "quiet_min" in table:
        quiet = table["quiet_min"]
        if isinstance(quiet, bool) or not isinstance(quiet, (int, float)) or not 0 <= quiet <= 1440:
            raise ValueError("[alerts] quiet_min must be a number of minutes from 0 to 1440")
        values["quiet_s"] = float(quiet) * 60.0
    if "desktop" in table:
        if not isinstance(table["desktop"], bool):
            raise ValueError("[alerts] desktop must be true or false")
        values["desktop"] = table["desktop"]
    if "osc" in table:
        osc = str(table["osc"]) if not isinstance(table["osc"], bool) else ""
        if osc not in ("9", "777", "both"):
            raise ValueError('[alerts] osc must be 9, 777 or "both" (the terminal notification sent)')
        values["osc"] = osc
    if "events" in table:
        values["events"] = {**DEFAULT_SINKS, **_events(table["events"])}
    return AlertRules(**values)


def _events(table: object) -> dict[Kind, tuple[Sink, ...]]:
    if not isinstance(table, Mapping):
        raise ValueError('[alerts] events must be a table: [alerts.events] then lines like idle = ["app", "webhook"]')
    out: dict[Kind, tuple[Sink, ...]] = {}
    for name, sinks in table.items():
        kind = next((k for k in KINDS if k == name), None)
        if kind is None:
            raise ValueError(f"[alerts.events] has no event {name!r}; the events are {', '.join(KINDS)}")
        if not isinstance(sinks, list) or not all(isinstance(s, str) for s in sinks):
            raise ValueError(f'[alerts.events] {name} must be a list like ["app", "desktop", "webhook"] (or [])')
        chosen: list[Sink] = []
        for s in sinks:
            sink = next((k for k in SINKS if k == s), None)
            if sink is None:
                raise ValueError(f"[alerts.events] {name}: no place called {s!r}; the places are {', '.join(SINKS)}")
            if sink not in chosen:
                chosen.append(sink)
        out[kind] = tuple(chosen)
    return out


SECRET_PART_MIN = 6  # a path or query part this long or longer is masked (docs/alerts.md#config)
# the fixed words of the common receivers' paths: masking them everywhere would garble the log and say nothing
_NOT_SECRET = frozenset(
    {"services", "webhook", "webhooks", "hooks", "triggers", "workflows", "notify", "message", "messages", "topics"}
)


def _register(url: str) -> None:
    """The URL, its path and query and each of their parts of SECRET_PART_MIN characters or more (a topic, a Slack
    hook's tokens), masked wherever they turn up (a log line quoting part of it). A shorter part is a word
    ("api", "v1") that masking everywhere would garble, and too short to be a token worth hiding; so are the fixed
    words of the common receivers' paths."""
    secret.register(url)
    parts = urlsplit(url)
    path = parts.path.strip("/")
    for part in (path, *path.split("/"), parts.query, *parts.query.replace("&", "=").split("=")):
        if len(part) >= SECRET_PART_MIN and part.lower() not in _NOT_SECRET:
            secret.register(part)
