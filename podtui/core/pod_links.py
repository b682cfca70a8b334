"""What a person copies out of podtui to paste elsewhere: a pod's SSH commands, its id, its HTTP services' URLs
(docs/runpod-facts.md#rest-v2)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from podtui.core.config import PROXY_URL as PROXY_URL  # where it was first: others import it here
from podtui.core.pod import Pod

_PORT = re.compile(r"^\s*(\d{1,5})/([a-z]+)\s*$")


@dataclass(frozen=True)
class Service:
    """One port a pod exposes (its `ports`, e.g. `8888/http`), and where it is reached from outside: an HTTP port
    through RunPod's proxy (a 524 after 100 s for a slow answer), a TCP port at its public ip:port while the pod
    runs and has one (docs/runpod-facts.md#rest-v2)."""

    port: int
    type: str  # http or tcp (or whatever RunPod says)
    url: str | None = None  # HTTP: the proxy's address
    public: str | None = None  # TCP: ip:port, while running, when the port is published

    def as_json(self) -> dict[str, object]:
        return {"port": self.port, "type": self.type, "url": self.url, "public": self.public}


def services(pod: Pod, url_template: str = PROXY_URL) -> tuple[Service, ...]:
    """Every port the pod exposes, in the order its `ports` gives them (each once). url_template: where the HTTP
    proxy serves a port, {pod_id} and {port} filled in (`Services.proxy_url`: the config's, or the demo's)."""
    out: list[Service] = []
    runtime = pod.live_runtime
    for part in (pod.ports_spec or "").split(","):
        m = _PORT.match(part)
        if m is None:
            continue
        port, kind = int(m.group(1)), m.group(2)
        if not 0 < port < 65536 or any(s.port == port and s.type == kind for s in out):
            continue
        url = public = None
        if kind == "http":
            url = url_template.format(pod_id=pod.id, port=port)
        elif runtime is not None:
            for mapping in runtime.ports:
                if mapping.private_port == port and mapping.public_port and mapping.ip:
                    public = f"{mapping.ip}:{mapping.public_port}"
                    break
        out.append(Service(port, kind, url, public))
    return tuple(out)


def service_urls(pod: Pod, url_template: str = PROXY_URL) -> tuple[tuple[int, str], ...]:
    """(port, URL) for each `NNNN/http` port the pod exposes: RunPod's HTTP proxy serves it at
    https://{podId}-{port}.proxy.runpod.net (docs/runpod-facts.md#rest-v2), or where `url_template` says."""
    return tuple((s.port, s.url) for s in services(pod, url_template) if s.url is not None)


@dataclass(frozen=True)
class Copyable:
    what: str  # what the text is, in words: "SSH (direct)", "pod id", "port 8888"
    text: str


def copyables(pod: Pod, url_template: str = PROXY_URL) -> tuple[Copyable, ...]:
    """The pod's texts worth copying, the most useful first: direct SSH (exec, scp, sftp work through it) before the
    proxy's (an interactive shell only: docs/runpod-facts.md#ssh-gateway)."""
    out: list[Copyable] = []
    if pod.direct_ssh_command:
        out.append(Copyable("SSH command (direct: exec, scp, sftp)", pod.direct_ssh_command))
    if pod.proxy_ssh_command:
        out.append(Copyable("SSH command (proxy: interactive shell only)", pod.proxy_ssh_command))
    out.append(Copyable("pod id", pod.id))
    out.extend(Copyable(f"HTTP service on port {port}", url) for port, url in service_urls(pod, url_template))
    return tuple(out)
