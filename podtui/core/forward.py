"""Forwarding a pod's ports to 127.0.0.1 here over its direct SSH: paramiko's `direct-tcpip` channels, as
`ssh -L` does (docs/forwarding.md).

A `Forwarder` owns one SSH connection to one pod and any number of forwards on it. Each forward listens on
127.0.0.1 only (nothing else on the network reaches the pod through it) and opens one channel to the pod's port for
each connection it accepts, copying both ways in two threads. RunPod's gateway carries an interactive shell only
(docs/runpod-facts.md#ssh-gateway), so forwarding needs the pod's own sshd (docs/runpod-facts.md#ssh-direct):
a gateway-only pod is refused with `DirectSshNeeded`, which names the proxy URL of an HTTP port.

When the connection drops, the listeners stay open and the forwards say "reconnecting" while a supervisor thread
connects again (1 s, doubling to 30 s); a client arriving meanwhile waits for it (`hold_s`). A pod port with nothing
listening refuses one client, which is noted on the forward; the forward goes on.

What a UI needs: `forwards()` (snapshots, counters included) and `listeners`, plain callables given a snapshot at
each change of a forward's state or note, called from the forwarder's threads (the UI hands them to its own loop),
one at a time and in order: a snapshot older than one already given is not given (`Forward.seq`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import logging
import selectors
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import paramiko
from paramiko.common import OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

from podtui.core.pod import Pod, PodStatus
from podtui.core.pod_links import PROXY_URL, services
from podtui.core.ssh.connect import Connection, SshSettings, connect_pod
from podtui.core.ssh.errors import AuthFailed, HostKeyChanged, SshError

log = logging.getLogger(__name__)

ForwardState = Literal["starting", "listening", "reconnecting", "failed", "stopped"]
Listener = Callable[["Forward"], None]

LOCAL_HOST = "127.0.0.1"  # never 0.0.0.0: a forward would hand the pod to anyone on the network
CHUNK = 1 << 16
POLL_S = 0.25  # how often the supervisor looks at the transport (paramiko marks it inactive on EOF)
STOP_JOIN_S = 2.0  # stop() waits this long for its threads in all; a connect under way ends by its own timeout
# A link that died silently leaves paramiko's keep-alives unacknowledged: the kernel gives up after this long,
# which ends the transport, so a dead link is noticed within a minute instead of TCP's quarter of an hour.
USER_TIMEOUT_MS = 45_000


class ForwardError(Exception):
    """A forward that cannot be made; the message is a sentence a person can act on."""


class DirectSshNeeded(ForwardError):
    """The pod has no direct SSH (docs/runpod-facts.md#ssh-direct). `proxy_url`: where RunPod's HTTP proxy serves
    the port asked for, when the pod exposes it as HTTP."""

    def __init__(self, message: str, pod_name: str, remote_port: int | None, proxy_url: str | None) -> None:
        super().__init__(message)
        self.pod_name = pod_name
        self.remote_port = remote_port
        self.proxy_url = proxy_url


class PodNotRunning(ForwardError):
    """Not RUNNING (yet, or any more): while reconnecting, a reason to try again later rather than to give up."""


class PodGone(ForwardError):
    """The pod was terminated, or is no longer on the account: no retry brings it back, so its forwards fail.
    A `refresh` raises it for a pod the API no longer lists."""


class LocalPortTaken(ForwardError):
    def __init__(self, port: int, why: str) -> None:
        super().__init__(f"cannot listen on {LOCAL_HOST}:{port}: {why}; pick another local port (REMOTE:LOCAL)")
        self.port = port


@dataclass(frozen=True)
class Forward:
    """One forward as it is at one moment (`Forwarder.forwards()`, and what listeners are given)."""

    pod_id: str
    pod_name: str
    remote_port: int
    local_port: int  # bound on 127.0.0.1; the one picked when 0 was asked for
    requested_local: int  # as asked: 0 is any free port
    state: ForwardState
    since: float  # epoch seconds: when this state began
    reason: str | None = None  # why it is reconnecting, failed or stopped
    retry_at: float | None = None  # reconnecting: when the next attempt goes (None: one is under way)
    bytes_in: int = 0  # from the pod to here
    bytes_out: int = 0  # from here to the pod
    connections: int = 0  # open now
    connections_total: int = 0
    note: str | None = None  # the last client connection that failed (a refused port); the forward goes on
    note_at: float | None = None
    remote_host: str = "localhost"
    seq: int = 0  # the forwarder's count of snapshots: a larger one is newer (listeners get them in this order)

    @property
    def local_address(self) -> str:
        return f"{LOCAL_HOST}:{self.local_port}"

    @property
    def target(self) -> str:
        """The far end as a person reads it: `llama-lora-3090:8888`, or `10.0.0.5:80 via llama-lora-3090`."""
        if self.remote_host == "localhost":
            return f"{self.pod_name}:{self.remote_port}"
        return f"{self.remote_host}:{self.remote_port} via {self.pod_name}"

    def describe(self) -> str:
        """The state in words: `listening`, `reconnecting since 12:03:04 (the SSH connection dropped)`."""
        if self.state == "listening":
            return "listening"
        text = f"{self.state} since {time.strftime('%H:%M:%S', time.localtime(self.since))}"
        return f"{text} ({self.reason})" if self.reason else text

    def as_json(self) -> dict[str, Any]:
        return {
            "pod_id": self.pod_id,
            "pod_name": self.pod_name,
            "remote_host": self.remote_host,
            "remote_port": self.remote_port,
            "local_address": self.local_address,
            "local_port": self.local_port,
            "state": self.state,
            "since": self.since,
            "reason": self.reason,
            "retry_at": self.retry_at,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
            "connections": self.connections,
            "connections_total": self.connections_total,
            "note": self.note,
        }


def check_forwardable(pod: Pod, remote_port: int | None = None, url_template: str | None = None) -> None:
    """Raise ForwardError unless the pod runs and has direct SSH; DirectSshNeeded names the proxy URL of
    `remote_port` when the pod exposes it over HTTP (docs/runpod-facts.md#rest-v2)."""
    if pod.state != "RUNNING":
        raise PodNotRunning(f"{pod.name} is {pod.state}: a port can be forwarded once the pod is RUNNING")
    if pod.ssh_direct is not None:
        return
    url = None
    if remote_port is not None:
        url = next((s.url for s in services(pod, url_template or PROXY_URL) if s.port == remote_port and s.url), None)
    if url is not None:
        offer = f"Port {remote_port} is served over HTTP by RunPod's proxy instead: {url}"
    elif remote_port is not None:
        offer = (
            f"Port {remote_port} is not exposed over HTTP; exposed as {remote_port}/http it would be served by "
            "RunPod's proxy (the Services tab (S) or `podtui pods --json` shows the URL)"
        )
    else:
        offer = "An HTTP port is served by RunPod's proxy instead"
    raise DirectSshNeeded(
        f"{pod.name} has no direct SSH, and forwarding a port needs it: a public IP and 22/tcp exposed when the "
        "pod is created. RunPod's SSH gateway carries an interactive shell only, no port forwarding. " + offer,
        pod.name,
        remote_port,
        url,
    )


class _Entry:
    """A forward's mutable side, guarded by the forwarder's lock."""

    def __init__(self, sock: socket.socket, remote_port: int, requested: int, since: float) -> None:
        self.sock = sock
        self.remote_port = remote_port
        self.requested = requested
        self.local_port = int(sock.getsockname()[1])
        self.since = since
        self.own_state: ForwardState | None = None  # failed or stopped on its own; None: the connection's
        self.own_reason: str | None = None
        self.bytes_in = self.bytes_out = self.connections = self.total = 0
        self.note: str | None = None
        self.note_at: float | None = None
        self.wake_r, self.wake_w = socket.socketpair()
        self.thread: threading.Thread | None = None

    def wake(self) -> None:
        with contextlib.suppress(OSError):
            self.wake_w.send(b"x")


class _Pipe:
    """One client's connection and its channel. Whichever side ends first ends both (abort); the last of its two
    threads to finish closes them."""

    def __init__(self, sock: socket.socket, entry: _Entry) -> None:
        self.sock = sock
        self.entry = entry
        self.chan: paramiko.Channel | None = None
        self.running = 0  # its threads still at work (under the forwarder's lock)

    def abort(self) -> None:
        # shutdown, not close, wakes a thread blocked in recv or sendall on the socket; a closed channel wakes its own
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        if self.chan is not None:
            self.chan.close()

    def close(self) -> None:
        self.abort()
        with contextlib.suppress(OSError):
            self.sock.close()


class Forwarder:
    """One pod's forwards over one direct SSH connection. `start()` connects (raising SshError as connect_pod
    does); `add()` listens (before or after `start`); `stop()` ends everything and leaves no thread behind.

    `refresh` gives the pod as it is now before each reconnect (a restarted pod can have a new address); it raises
    PodGone for a pod no longer on the account, which ends the forwards, as a TERMINATED pod does. `remote_host` is
    where the pod's sshd connects (localhost: the pod itself)."""

    def __init__(
        self,
        pod: Pod,
        settings: SshSettings,
        *,
        refresh: Callable[[], Pod] | None = None,
        remote_host: str = "localhost",
        url_template: str | None = None,
        backoff_s: tuple[float, float] = (1.0, 30.0),
        hold_s: float = 15.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_forwardable(pod, url_template=url_template)
        self.pod = pod
        self.settings = settings
        self.refresh = refresh
        self.remote_host = remote_host
        self.url_template = url_template
        self.backoff_s = backoff_s
        self.hold_s = hold_s
        self.clock = clock
        self.listeners: list[Listener] = []
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # the connection came up, went down, or everything stops
        self._conn: Connection | None = None
        self._conn_state: ForwardState = "starting"
        self._conn_reason: str | None = None
        self._retry_at: float | None = None
        self._entries: list[_Entry] = []
        self._pipes: set[_Pipe] = set()
        self._threads: set[threading.Thread] = set()
        self._threads_lock = threading.Lock()  # apart from _lock: a thread ending must never wait for the state
        self._supervisor: threading.Thread | None = None
        self._wake = threading.Event()  # look at the transport now
        self._stopping = threading.Event()
        self._seq = 0  # snapshots taken (under _lock): each one's Forward.seq
        # listeners are called under this, one snapshot at a time, in seq order (re-entrant: one may call stop())
        self._notify_lock = threading.RLock()
        self._told: dict[int, int] = {}  # local port -> the seq last given to the listeners

    # -- public --------------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Connect now (SshError when it fails: the caller says why), then keep the connection up until stop()."""
        if self._supervisor is not None:
            return
        conn = self._connect(first=True)
        with self._lock:
            if self._stopping.is_set():
                conn.close()
                return
            self._set_conn(conn)
            self._supervisor = self._spawn(self._supervise, f"podtui-forward-ssh {self.pod.id}")
            changed = self._snapshots_locked()
        self._notify(changed)

    @property
    def failed(self) -> bool:
        """Given up for good (a changed host key, a refused key, the pod gone): a new Forwarder is needed."""
        with self._lock:
            return self._conn_state == "failed"

    def add(self, remote_port: int, local_port: int = 0) -> Forward:
        """Listen on 127.0.0.1:local_port (0: a free port) and forward to the pod's `remote_port`. LocalPortTaken when
        the port is in use or not ours to take; ForwardError once the forwarder has failed."""
        check_forwardable(self.pod, remote_port, self.url_template)
        with self._lock:
            if self._conn_state == "failed":
                raise ForwardError(f"forwarding to {self.pod.name} has stopped: {self._conn_reason}")
        if not 0 < remote_port < 65536 or not 0 <= local_port < 65536:
            raise ForwardError(
                f"ports are 1 to 65535 (the local one may be 0, any free port): {remote_port}:{local_port}"
            )
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            # a port left in TIME_WAIT by the last run is taken again at once. Linux only: on BSD and macOS it also
            # lets 127.0.0.1:P be bound while another program listens on *:P, which would then get some clients
            if sys.platform.startswith("linux"):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((LOCAL_HOST, local_port))
            sock.listen(64)
            sock.setblocking(False)
        except OSError as e:
            sock.close()
            raise LocalPortTaken(local_port, _bind_words(e)) from None
        with self._lock:
            if self._stopping.is_set():
                sock.close()
                raise ForwardError("the forwarder has stopped")
            entry = _Entry(sock, remote_port, local_port, self.clock())
            self._entries.append(entry)
            entry.thread = self._spawn(lambda: self._accept(entry), f"podtui-forward-accept {entry.local_port}")
            snap = self._snapshot_locked(entry)
        self._notify([snap])
        return snap

    def remove(self, local_port: int) -> None:
        """Stop the forward listening on `local_port`: its listener closes and its connections end."""
        with self._lock:
            entry = next((e for e in self._entries if e.local_port == local_port), None)
            if entry is None:
                return
            self._entries.remove(entry)
            pipes = self._end_entry_locked(entry, "stopped", "stopped by the user")
            snap = self._snapshot_locked(entry)
        for pipe in pipes:
            pipe.abort()
        self._join([entry.thread] if entry.thread else [])
        self._notify([snap])

    def forwards(self) -> list[Forward]:
        with self._lock:
            return self._snapshots_locked()

    @property
    def connected(self) -> bool:
        with self._lock:
            return self._conn is not None and self._conn.active

    def stop(self) -> None:
        """End everything: listeners, client connections, the SSH connection and every thread (a connect under way
        is left to its own timeout, at most STOP_JOIN_S waited for)."""
        with self._lock:
            if self._stopping.is_set():
                return
            self._stopping.set()
            self._wake.set()
            for entry in self._entries:
                self._end_entry_locked(entry, "stopped", "stopped")
            pipes = list(self._pipes)
            conn, self._conn = self._conn, None
            self._conn_state, self._conn_reason, self._retry_at = "stopped", "stopped", None
            self._changed.notify_all()
            snaps = self._snapshots_locked()
        for pipe in pipes:
            pipe.abort()
        if conn is not None:
            conn.close()  # paramiko's reader thread notices at its next socket timeout: waited for below
        self._join_all([conn.transport] if conn is not None else [])
        self._notify(snaps)

    def __enter__(self) -> Forwarder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the connection ------------------------------------------------------------------------------------------

    def _connect(self, first: bool = False) -> Connection:
        """Connect to the pod as `refresh` says it is now. PodGone when it was terminated or is gone."""
        pod = self.pod
        fresh = first  # start()'s pod was just looked up by the caller
        if self.refresh is not None:
            try:
                pod = self.pod = self.refresh()
                fresh = True
            except PodGone:
                raise
            except Exception as e:  # keep the last known address; the attempt says what is wrong
                log.info("could not refresh %s before connecting: %s", pod.id, e)
            if pod.status is PodStatus.TERMINATED:
                raise PodGone(f"{pod.name} was terminated: its forwards end")
            check_forwardable(pod, url_template=self.url_template)
        if not fresh:
            # an old look at the pod is no ground to trust a new host key as a restart's: the key must be the one
            # pinned (docs/forwarding.md#reconnects)
            pod = dataclasses.replace(pod, run_started=None)
        conn = connect_pod(pod, self.settings, via="direct")
        user_timeout = getattr(socket, "TCP_USER_TIMEOUT", None)
        sock = conn.transport.sock
        if user_timeout is not None and isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, user_timeout, USER_TIMEOUT_MS)
        return conn

    def _set_conn(self, conn: Connection) -> None:
        self._conn = conn
        self._conn_state, self._conn_reason, self._retry_at = "listening", None, None
        self._touch_locked()
        self._changed.notify_all()

    def _supervise(self) -> None:
        try:
            self._keep_up()
        except Exception as e:  # a bug: said on the forwards, which would otherwise wait for a reconnect forever
            log.exception("the connection to %s is no longer kept up", self.pod.id)
            self._fail(f"podtui stopped reconnecting after an error: {type(e).__name__}: {e}")

    def _keep_up(self) -> None:
        """Watch the transport; when it ends, reconnect with backoff until stop() or a refusal no retry mends."""
        first, most = self.backoff_s
        delay = first
        while not self._stopping.is_set():
            with self._lock:
                conn = self._conn
            if conn is not None and conn.active:
                self._wake.wait(POLL_S)
                self._wake.clear()
                continue
            if conn is not None:  # it was up: dropped
                conn.close()
                self._go_down(f"the SSH connection to {self.pod.name} dropped", None, conn)
                delay = first
            with self._lock:
                self._retry_at = None  # an attempt is under way (said at its end, not now: no news yet)
            try:
                new = self._connect()
            except (AuthFailed, HostKeyChanged, DirectSshNeeded, PodGone) as e:  # a retry would meet the same
                self._fail(str(e))
                return
            except Exception as e:  # anything else is retried: the supervisor must never end with forwards waiting
                if isinstance(e, (SshError, PodNotRunning, OSError)):
                    reason = str(e)
                else:
                    log.exception("reconnecting to %s failed", self.pod.id)
                    reason = f"reconnecting failed: {type(e).__name__}: {e}"
                self._go_down(reason, self.clock() + delay, None)
                self._stopping.wait(delay)
                delay = min(delay * 2, most)
                continue
            with self._lock:
                if self._stopping.is_set():
                    new.close()
                    return
                self._set_conn(new)
                changed = self._snapshots_locked()
            delay = first
            self._notify(changed)

    def _go_down(self, reason: str, retry_at: float | None, dropped: Connection | None) -> None:
        with self._lock:
            if self._stopping.is_set() or (dropped is not None and self._conn is not dropped):
                return
            self._conn = None
            was_down = self._conn_state == "reconnecting"
            self._conn_state, self._conn_reason, self._retry_at = "reconnecting", reason, retry_at
            if not was_down:
                self._touch_locked()
            changed = self._snapshots_locked()
        self._notify(changed)

    def _fail(self, reason: str) -> None:
        with self._lock:
            if self._stopping.is_set():
                return
            self._conn_state, self._conn_reason, self._retry_at = "failed", reason, None
            pipes = [p for entry in self._entries for p in self._end_entry_locked(entry, "failed", reason)]
            self._changed.notify_all()
            changed = self._snapshots_locked()
        for pipe in pipes:
            pipe.abort()
        self._notify(changed)

    def _transport(self, deadline: float) -> paramiko.Transport | None:
        """The live transport, waiting for a reconnect until `deadline` (monotonic); None when there is none by then
        or the forward ended."""
        with self._lock:
            while not self._stopping.is_set() and self._conn_state not in ("failed", "stopped"):
                conn = self._conn
                if conn is not None and conn.active:
                    return conn.transport
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._changed.wait(min(left, POLL_S))
            return None

    # -- listening and copying -----------------------------------------------------------------------------------

    def _accept(self, entry: _Entry) -> None:
        sel = selectors.DefaultSelector()
        try:
            sel.register(entry.sock, selectors.EVENT_READ)
            sel.register(entry.wake_r, selectors.EVENT_READ)
            while True:
                ready = {key.fileobj for key, _ in sel.select()}
                if entry.wake_r in ready or entry.own_state is not None:
                    return
                try:
                    client, peer = entry.sock.accept()
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as e:  # out of descriptors: say so, and do not spin
                    self._note(entry, f"could not accept a connection: {e.strerror or e}")
                    self._stopping.wait(0.5)
                    continue
                client.setblocking(True)
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                pipe = _Pipe(client, entry)
                with self._lock:
                    if entry.own_state is not None:
                        client.close()
                        return
                    self._pipes.add(pipe)
                    pipe.running = 1
                self._spawn(functools.partial(self._serve, pipe, peer), f"podtui-forward-conn {entry.local_port}")
        finally:
            sel.close()
            for s in (entry.sock, entry.wake_r, entry.wake_w):
                s.close()

    def _serve(self, pipe: _Pipe, peer: tuple[str, int]) -> None:
        """One client: a channel to the pod's port (after a reconnect, if one is under way), then both ways."""
        entry = pipe.entry
        deadline = time.monotonic() + self.hold_s
        try:
            while True:
                transport = self._transport(deadline)
                if transport is None:
                    with self._lock:
                        why = self._conn_reason or "no SSH connection to the pod"
                    if not self._stopping.is_set() and entry.own_state is None:
                        self._note(entry, f"a connection was closed unserved: {why}")
                    return
                try:
                    chan = transport.open_channel(
                        "direct-tcpip",
                        (self.remote_host, entry.remote_port),
                        (peer[0], peer[1]),
                        timeout=self.settings.connect_timeout_s,
                    )
                except paramiko.ChannelException as e:
                    self._note(entry, _refusal(e, self.remote_host, entry.remote_port))
                    return
                except (paramiko.SSHException, EOFError, OSError) as e:
                    if transport.is_active():
                        self._note(entry, f"could not open a channel to the pod's port {entry.remote_port}: {e}")
                        return
                    self._wake.set()  # the connection is gone: the supervisor reconnects, this client waits for it
                    continue
                break
            with self._lock:
                if entry.own_state is not None or self._stopping.is_set():
                    chan.close()
                    return
                pipe.chan = chan
                pipe.running = 2
                entry.connections += 1
                entry.total += 1
            self._spawn(functools.partial(self._pump_in, pipe, chan), f"podtui-forward-in {entry.local_port}")
            self._pump_out(pipe, chan)
        finally:
            self._done(pipe)

    def _pump_out(self, pipe: _Pipe, chan: paramiko.Channel) -> None:
        """Client to pod."""
        try:
            while True:
                data = pipe.sock.recv(CHUNK)
                if not data:
                    chan.shutdown_write()  # the client is done sending; the answer may still come
                    return
                chan.sendall(data)
                with self._lock:
                    pipe.entry.bytes_out += len(data)
        except (OSError, EOFError, paramiko.SSHException):
            pipe.abort()

    def _pump_in(self, pipe: _Pipe, chan: paramiko.Channel) -> None:
        """Pod to client."""
        try:
            while True:
                data = chan.recv(CHUNK)
                if not data:
                    transport = chan.get_transport()
                    if transport is None or not transport.is_active():
                        pipe.abort()  # the connection dropped, not the pod's end: the client must not wait
                    else:
                        with contextlib.suppress(OSError):
                            pipe.sock.shutdown(socket.SHUT_WR)
                    return
                pipe.sock.sendall(data)
                with self._lock:
                    pipe.entry.bytes_in += len(data)
        except (OSError, EOFError, paramiko.SSHException):
            pipe.abort()
        finally:
            self._done(pipe)

    def _done(self, pipe: _Pipe) -> None:
        with self._lock:
            pipe.running -= 1
            if pipe.running > 0:
                return
            self._pipes.discard(pipe)
            if pipe.chan is not None:
                pipe.entry.connections -= 1
        pipe.close()

    # -- state ---------------------------------------------------------------------------------------------------

    def _note(self, entry: _Entry, text: str) -> None:
        log.info("forward %s -> %s:%d: %s", entry.local_port, self.pod.id, entry.remote_port, text)
        with self._lock:
            entry.note, entry.note_at = text, self.clock()
            snap = self._snapshot_locked(entry)
        self._notify([snap])

    def _end_entry_locked(self, entry: _Entry, state: ForwardState, reason: str) -> list[_Pipe]:
        """The forward's listener closes (its accept thread ends); its clients' connections are returned, for the
        caller to end once the lock is let go (closing a channel sends a message)."""
        if entry.own_state is None:
            entry.own_state, entry.own_reason, entry.since = state, reason, self.clock()
        entry.wake()
        return [pipe for pipe in self._pipes if pipe.entry is entry]

    def _touch_locked(self) -> None:
        now = self.clock()
        for entry in self._entries:
            if entry.own_state is None:
                entry.since = now

    def _snapshot_locked(self, entry: _Entry) -> Forward:
        self._seq += 1
        state = entry.own_state or self._conn_state
        reason = entry.own_reason if entry.own_state is not None else self._conn_reason
        return Forward(
            pod_id=self.pod.id,
            pod_name=self.pod.name,
            remote_port=entry.remote_port,
            local_port=entry.local_port,
            requested_local=entry.requested,
            state=state,
            since=entry.since,
            reason=reason,
            retry_at=self._retry_at if state == "reconnecting" else None,
            bytes_in=entry.bytes_in,
            bytes_out=entry.bytes_out,
            connections=entry.connections,
            connections_total=entry.total,
            note=entry.note,
            note_at=entry.note_at,
            remote_host=self.remote_host,
            seq=self._seq,
        )

    def _snapshots_locked(self) -> list[Forward]:
        return [self._snapshot_locked(e) for e in self._entries]

    def _notify(self, changed: list[Forward]) -> None:
        # Snapshots are taken under _lock but told outside it (a listener may call back in): two threads can reach
        # here in either order, so one at a time, and a snapshot older than one already told is dropped
        with self._notify_lock:
            for snap in changed:
                if snap.seq <= self._told.get(snap.local_port, 0):
                    continue
                self._told[snap.local_port] = snap.seq
                for listener in list(self.listeners):
                    try:
                        listener(snap)
                    except Exception:  # a listener's bug must not end the forward
                        log.exception("a forward listener failed")

    # -- threads -------------------------------------------------------------------------------------------------

    def _spawn(self, target: Callable[[], None], name: str) -> threading.Thread:
        def run() -> None:
            try:
                target()
            finally:
                with self._threads_lock:
                    self._threads.discard(thread)

        thread = threading.Thread(target=run, name=name, daemon=True)
        with self._threads_lock:
            self._threads.add(thread)
        thread.start()
        return thread

    def _join(self, threads: list[threading.Thread]) -> None:
        deadline = time.monotonic() + STOP_JOIN_S
        me = threading.current_thread()
        for thread in threads:
            if thread is not me:
                thread.join(max(0.0, deadline - time.monotonic()))

    def _join_all(self, others: list[threading.Thread]) -> None:
        """Every thread of ours, those started while others ended too (a client's second thread), and `others`, up to
        STOP_JOIN_S."""
        deadline = time.monotonic() + STOP_JOIN_S
        me = threading.current_thread()
        while time.monotonic() < deadline:
            with self._threads_lock:
                left = [t for t in [*self._threads, *others] if t is not me and t.is_alive()]
            if not left:
                return
            left[0].join(max(0.0, deadline - time.monotonic()))


def _refusal(e: paramiko.ChannelException, host: str, port: int) -> str:
    if e.code == OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED:
        return (
            f"the pod's sshd refused to forward to {host}:{port} (administratively prohibited: its "
            "AllowTcpForwarding or PermitOpen does not allow it)"
        )
    return f"connection refused by the pod's port {port} (is anything listening on it?)"


def _bind_words(e: OSError) -> str:
    if e.errno == errno.EADDRINUSE:
        return "the port is already in use"
    if e.errno == errno.EACCES:
        return "the port is reserved (below 1024 needs root)"
    return e.strerror or str(e)
