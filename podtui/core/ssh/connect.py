"""Connecting to a pod: direct SSH when the pod offers it and it answers, RunPod's gateway otherwise.

Where to connect comes from the API: the pod's `ssh.proxy` (the gateway, `<podHostId>@ssh.runpod.io`: only an
interactive PTY shell, docs/runpod-facts.md#ssh-gateway) and `ssh.direct` (the pod's own sshd when 22/tcp is
published: exec channels and SFTP too, docs/runpod-facts.md#ssh-direct). Nothing here knows RunPod's host names.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import paramiko

from podtui.core.pod import Pod
from podtui.core.ssh.errors import AuthFailed, SshError, Unreachable
from podtui.core.ssh.hostkeys import HostKeyStore, gateway_name, pod_name
from podtui.core.ssh.keys import KeyFile, available_keys

Mode = Literal["gateway", "direct"]
Via = Literal["auto", "gateway", "direct"]


@dataclass(frozen=True)
class Endpoint:
    mode: Mode
    host: str
    port: int
    username: str
    pin: str  # name in podtui's known-hosts file
    label: str  # for messages
    run_started: float | None = None  # direct SSH: when the pod's current run began (host keys change per run)


@dataclass
class SshSettings:
    known_hosts: Path
    # HOST:PORT to use instead of the gateway the API names (config ssh_gateway): a relay of the user's own
    gateway: tuple[str, int] | None = None
    key_path: Path | None = None
    connect_timeout_s: float = 10.0
    keepalive_s: int = 15
    use_agent: bool = True
    search_home: bool = True  # also try ~/.ssh's keys (the demo does not: it never reads your keys)
    extra_keys: list[KeyFile] = field(default_factory=list)


def parse_gateway(text: str) -> tuple[str, int]:
    text = text.strip()
    if text.startswith("["):  # [IPv6]:port or [IPv6]
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":") or "22"
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:  # a name, an IPv4 address, or a bare IPv6 address
        host, port = text, "22"
    try:
        p = int(port)
    except ValueError:
        raise SshError(f"gateway address {text!r} is not HOST or HOST:PORT") from None
    if not host or not 0 < p < 65536:
        raise SshError(f"gateway address {text!r} is not HOST or HOST:PORT")
    return host, p


def endpoints_for(pod: Pod, settings: SshSettings, via: Via = "auto") -> list[Endpoint]:
    if pod.state != "RUNNING":
        raise SshError(f"{pod.name} is {pod.state}: SSH works once it is RUNNING")
    out = []
    direct = pod.ssh_direct
    if via in ("auto", "direct") and direct is not None:
        out.append(
            Endpoint(
                "direct",
                direct.host,
                direct.port,
                direct.username,
                pod_name(pod.id),
                f"{pod.name} (direct {direct.host}:{direct.port})",
                # from when the pod was fetched, never from now: an old Pod's start must stay put, or a long-lived
                # connection's retry would take it for a restart and trust any key (docs/ssh-out.md#host-keys)
                pod.run_started,
            )
        )
    proxy = pod.ssh_proxy
    if via in ("auto", "gateway") and proxy is not None:
        host, port = settings.gateway or (proxy.host, proxy.port)
        out.append(
            Endpoint(
                "gateway",
                host,
                port,
                proxy.username,
                gateway_name(host, port),
                f"{pod.name} (gateway {proxy.username}@{host})",
            )
        )
    if not out:
        if via == "direct":
            raise SshError(
                f"{pod.name} has no direct SSH (RunPod gives none: 22/tcp is not published); use the gateway"
            )
        raise SshError(f"{pod.name} cannot be reached over SSH yet ({pod.state}): RunPod gives no SSH endpoint for it")
    return out


class Connection:
    """An authenticated SSH transport to one pod endpoint."""

    def __init__(self, transport: paramiko.Transport, endpoint: Endpoint, key_path: str, setup_s: float) -> None:
        self.transport = transport
        self.endpoint = endpoint
        self.key_path = key_path
        self.setup_s = setup_s

    @property
    def active(self) -> bool:
        return self.transport.is_active()

    def close(self) -> None:
        self.transport.close()


def _keys(settings: SshSettings) -> tuple[list[tuple[str, paramiko.PKey]], list[str], paramiko.Agent | None]:
    files, notes = available_keys(settings.key_path, settings.search_home)
    keys: list[tuple[str, paramiko.PKey]] = [(str(k.path), k.key) for k in [*settings.extra_keys, *files]]
    agent = None
    if settings.use_agent and os.environ.get("SSH_AUTH_SOCK"):
        try:
            agent = paramiko.Agent()
            for i, k in enumerate(agent.get_keys()):
                keys.append((f"ssh-agent key {i + 1} ({k.get_name()})", k))
        except paramiko.SSHException:
            notes.append("ssh-agent did not answer")
    # One try per distinct key: servers hang up after a few failures (OpenSSH's MaxAuthTries is 6).
    unique: dict[str, tuple[str, paramiko.PKey]] = {}
    for name, key in keys:
        unique.setdefault(key.fingerprint, (name, key))
    return list(unique.values()), notes, agent


def connect(endpoint: Endpoint, settings: SshSettings) -> Connection:
    started = time.monotonic()
    try:
        sock = socket.create_connection((endpoint.host, endpoint.port), timeout=settings.connect_timeout_s)
    except OSError as e:
        raise Unreachable(f"cannot reach {endpoint.label}: {e.strerror or e}") from None
    # Interactive traffic is many small writes: without this, Nagle and delayed ACKs add ~40 ms a round trip.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    transport = paramiko.Transport(sock)
    # AES-GCM first: an AEAD cipher needs no separate MAC pass, which makes bulk SFTP about 5-10% faster
    # here (bench/transfer_sftp.py); servers without it negotiate the next one as before.
    opts = transport.get_security_options()
    opts.ciphers = tuple(sorted(opts.ciphers, key=lambda c: not c.startswith("aes128-gcm")))
    try:
        transport.banner_timeout = settings.connect_timeout_s
        transport.start_client(timeout=settings.connect_timeout_s)
        if not transport.is_active() or not getattr(transport, "initial_kex_done", True):
            # paramiko's start_client gives up silently at its timeout: say what happened, not "No existing session"
            transport.close()
            raise Unreachable(
                f"{endpoint.label} accepted the connection but did not answer within "
                f"{settings.connect_timeout_s:g} s (an overloaded or stuck SSH server); try again later"
            )
        HostKeyStore(settings.known_hosts).check(
            endpoint.pin, transport.get_remote_server_key(), endpoint.label, endpoint.run_started
        )
        keys, notes, agent = _keys(settings)
        tried = []
        try:
            for name, key in keys:
                tried.append(name)
                try:
                    transport.auth_publickey(endpoint.username, key)
                except paramiko.AuthenticationException:
                    continue
                except (paramiko.SSHException, EOFError, OSError):
                    break  # the server hung up on too many attempts: still an authentication failure
                if transport.is_authenticated():
                    # keep-alives go out from paramiko's reader loop, so leave its socket timeout alone
                    transport.set_keepalive(settings.keepalive_s)
                    return Connection(transport, endpoint, name, time.monotonic() - started)
        finally:
            if agent is not None:
                agent.close()
        extra = f" ({'; '.join(notes)})" if notes else ""
        raise AuthFailed(
            f"{endpoint.label} refused every key podtui tried: {', '.join(tried) or 'none found'}{extra}. "
            "Register your public key at the account level with `podtui keys setup` (or RunPod → Settings → "
            "SSH Public Keys); a key added to one pod is lost when that pod is terminated. A pod receives the "
            "account's keys when it starts: if this pod was already running when the key was registered, "
            "restart it (R, or `podtui restart`) before it accepts the key."
        )
    except (paramiko.SSHException, EOFError, OSError) as e:
        transport.close()
        raise Unreachable(f"SSH to {endpoint.label} failed: {str(e) or type(e).__name__}") from None
    except BaseException:
        transport.close()
        raise


def connect_pod(pod: Pod, settings: SshSettings, via: Via = "auto") -> Connection:
    """Direct first when the pod has it and it answers; the gateway otherwise. Key or host-key problems are
    reported as they are, never hidden by a fallback."""
    last: Unreachable | None = None
    for endpoint in endpoints_for(pod, settings, via):
        try:
            return connect(endpoint, settings)
        except Unreachable as e:
            last = e
    assert last is not None
    raise last
