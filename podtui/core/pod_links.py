"""What a person copies out of podtui to paste elsewhere: a pod's SSH commands, its id, its HTTP services' URLs
(docs/runpod-facts.md#rest-v2)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from podtui.core.pod import Pod

_HTTP_PORT = re.compile(r"^\s*(\d{1,5})/http\s*$")


def service_urls(pod: Pod) -> tuple[tuple[int, str], ...]:
    """(port, URL) for each `NNNN/http` port the pod exposes: RunPod's HTTP proxy serves it at
    https://{podId}-{port}.proxy.runpod.net (docs/runpod-facts.md#rest-v2)."""
    out: list[tuple[int, str]] = []
    for part in (pod.ports_spec or "").split(","):
        m = _HTTP_PORT.match(part)
        if m is None:
            continue
        port = int(m.group(1))
        if 0 < port < 65536 and all(p != port for p, _ in out):
            out.append((port, f"https://{pod.id}-{port}.proxy.runpod.net"))
    return tuple(out)


@dataclass(frozen=True)
class Copyable:
    what: str  # what the text is, in words: "SSH (direct)", "pod id", "port 8888"
    text: str


def copyables(pod: Pod) -> tuple[Copyable, ...]:
    """The pod's texts worth copying, the most useful first: direct SSH (exec, scp, sftp work through it) before the
    proxy's (an interactive shell only: docs/runpod-facts.md#ssh-gateway)."""
    out: list[Copyable] = []
    if pod.direct_ssh_command:
        out.append(Copyable("SSH command (direct: exec, scp, sftp)", pod.direct_ssh_command))
    if pod.proxy_ssh_command:
        out.append(Copyable("SSH command (proxy: interactive shell only)", pod.proxy_ssh_command))
    out.append(Copyable("pod id", pod.id))
    out.extend(Copyable(f"HTTP service on port {port}", url) for port, url in service_urls(pod))
    return tuple(out)
