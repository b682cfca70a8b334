"""The croc relay runpodctl's send and receive meet through, simulated on 127.0.0.1.

A sender opens a room named by its code's first part (the 4-digit pin) with the rest of the code as the
password, and waits; a receiver joins with the whole code; the relay pairs them and then just pipes bytes
both ways. The runpodctl stand-in (runpodctl_standin.py, whose docstring has the wire protocol) asks the
relay first how to behave: the dialect, the progress-bar library, a rate limit and the faults to act out,
so one switch here changes what every simulated runpodctl prints.

Faults (`fail_next`), each used up by the next send or receive it applies to:
  stale_code         receive: "room not ready" although the sender is waiting
  relay_unreachable  send: code block, then "could not connect to relay..." on stdout, exit 0, nothing sent
  truncate           receive: keeps only the first half of the file, yet shows 100% and exits 0
  crash              send: a Go panic half-way (exit 2); the receiver then fails (exit 1)
  slow               send: the rate limit given (default 100 kB/s)
  relay_list         send or receive: the relay list cannot be fetched (exit 1)
  room_full          send: the relay answers "room full" to the new room (after the code: stdout, exit 0)
  password_mismatch  receive: the relay answers "password mismatch" (exit 1)
  secure_channel     receive: the relay hangs up before pairing ("could not secure channel", exit 1)
  peer_error         send: the sender cannot read its file and tells the receiver ("peer error: ...", exit 1)
  decoding           receive: the relay garbles the sender's first message ("problem with decoding: ...", exit 1)
stale_code, relay_unreachable, truncate, crash, slow and peer_error are acted out by the runpodctl stand-in, the
others by the relay itself.

`install_runpodctl` puts the stand-in on a PATH, wired to a relay.
"""

from __future__ import annotations

import contextlib
import json
import select
import shlex
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FAULT_KINDS = (
    "stale_code",
    "relay_unreachable",
    "truncate",
    "crash",
    "slow",
    "relay_list",
    "room_full",
    "password_mismatch",
    "secure_channel",
    "peer_error",
    "decoding",
)
_ROLE_FAULTS = {
    "send": frozenset({"relay_unreachable", "crash", "slow", "relay_list", "room_full", "peer_error"}),
    "receive": frozenset({"stale_code", "truncate", "relay_list", "password_mismatch", "secure_channel", "decoding"}),
}
DEFAULT_SLOW_RATE = 100_000.0  # bytes/s
ROOM_TTL_S = 3 * 3600.0  # the relay deletes rooms older than 3 h (docs/runpod-facts.md#runpodctl-codes)
_MAX_LINE = 64 * 1024
PACKAGE_ROOT = Path(__file__).resolve().parent.parent.parent  # the folder holding podtui/


def install_runpodctl(
    bin_dir: Path, relay_address: str, python: str | None = None, package_root: str | None = None
) -> Path:
    """Write an executable `bin_dir/runpodctl`: a sh wrapper running the stand-in against the relay. python and
    package_root: this Python (shell words) and podtui's folder as a simulated pod sees them."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    target = bin_dir / "runpodctl"
    target.write_text(
        f"#!/bin/sh\nPODTUI_SIM_RELAY={shlex.quote(relay_address)} "
        f"PYTHONPATH={shlex.quote(package_root or str(PACKAGE_ROOT))} "
        f'exec {python or shlex.quote(sys.executable)} -m podtui.sim.runpodctl_standin "$@"\n'
    )
    target.chmod(0o755)
    return target


@dataclass
class _Fault:
    kind: str
    times: int
    rate: float | None = None


@dataclass
class _Room:
    name: str
    password: str
    meta: dict[str, Any]
    sender: socket.socket
    sender_address: str
    created: float = field(default_factory=time.monotonic)
    paired: bool = False


def _address(addr: Any) -> str:
    return f"{addr[0]}:{addr[1]}"


def _send_json(sock: socket.socket, message: dict[str, Any]) -> bool:
    try:
        sock.sendall((json.dumps(message) + "\n").encode())
        return True
    except OSError:
        return False


def _read_json(sock: socket.socket) -> dict[str, Any] | None:
    """One JSON line, read a byte at a time so nothing after it is taken from the socket."""
    line = bytearray()
    try:
        while len(line) < _MAX_LINE:
            b = sock.recv(1)
            if not b:
                return None
            if b == b"\n":
                value = json.loads(line)
                return value if isinstance(value, dict) else None
            line += b
    except (OSError, ValueError):
        return None
    return None


class SimRelay:
    """A threaded TCP relay on 127.0.0.1 (port 0: a free one). Its settings are read by every runpodctl
    that starts after they change: `dialect`, `bar`, `rate_bytes_per_s` (None: as fast as loopback goes) and
    `room_ttl_s` (a room older than that is gone: "room not ready", and its sender hears an i/o timeout)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        dialect: str = "v2",
        bar: str = "v3.14.3",
        rate_bytes_per_s: float | None = None,
        room_ttl_s: float = ROOM_TTL_S,
    ) -> None:
        self.dialect = dialect  # "v2" | "v1" (docs/runpod-facts.md#runpodctl-versions)
        self.bar = bar  # "v3.14.3" | "v3.8.6" (docs/runpod-facts.md#runpodctl-progress)
        self.rate_bytes_per_s = rate_bytes_per_s
        self.room_ttl_s = room_ttl_s
        self._bind = (host, port)
        self._lock = threading.Condition()
        self._faults: list[_Fault] = []
        self._rooms: dict[str, _Room] = {}
        self._socks: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._listener: socket.socket | None = None
        self._address: str | None = None
        self._stopped = threading.Event()

    # --- lifecycle ---------------------------------------------------------------------------------------

    @property
    def address(self) -> str:
        """ "127.0.0.1:PORT", what install_runpodctl bakes into the wrapper."""
        if self._address is None:
            raise RuntimeError("the relay is not started")
        return self._address

    def start(self) -> SimRelay:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(self._bind)
        listener.listen(64)
        listener.settimeout(0.2)  # the accept loop wakes to notice stop()
        self._listener = listener
        self._address = _address(listener.getsockname())
        self._spawn(self._accept, name="sim-relay")
        return self

    def stop(self) -> None:
        """Close every connection and wait for every thread the relay started."""
        self._stopped.set()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept() at once on Linux
            self._listener.close()
        deadline = time.monotonic() + 10
        while True:
            with self._lock:
                self._rooms.clear()
                self._lock.notify_all()
                socks = list(self._socks)
                alive = [t for t in self._threads if t.is_alive() and t is not threading.current_thread()]
            for s in socks:
                self._close(s)
            if not alive or time.monotonic() > deadline:
                return
            for t in alive:
                t.join(timeout=max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> SimRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- switches ----------------------------------------------------------------------------------------

    def fail_next(self, kind: str, times: int = 1, *, rate_bytes_per_s: float | None = None) -> None:
        """Make the next `times` sends or receives that `kind` applies to fail that way."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown relay fault {kind!r}; known: {', '.join(FAULT_KINDS)}")
        if times < 1:
            raise ValueError("times must be at least 1")
        with self._lock:
            self._faults.append(_Fault(kind, times, rate_bytes_per_s))

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    def waiting_rooms(self) -> list[str]:
        with self._lock:
            return sorted(self._rooms)

    def wait_for_sender(self, code: str, timeout_s: float = 5.0) -> bool:
        """Until a sender holding `code` waits in its room (it opens the room just after printing the code)."""
        room = code.partition("-")[0]
        with self._lock:
            return (
                self._lock.wait_for(lambda: room in self._rooms or self._stopped.is_set(), timeout_s)
                and room in self._rooms
            )

    def _settings_for(self, role: str) -> dict[str, Any]:
        applies = _ROLE_FAULTS.get(role, frozenset())
        taken: list[str] = []
        rate = self.rate_bytes_per_s
        with self._lock:
            for f in self._faults:
                if f.kind in applies and f.kind not in taken:
                    taken.append(f.kind)
                    f.times -= 1
                    if f.kind == "slow":
                        slow = f.rate or DEFAULT_SLOW_RATE
                        rate = slow if rate is None else min(rate, slow)
            self._faults = [f for f in self._faults if f.times > 0]
        return {"dialect": self.dialect, "bar": self.bar, "rate": rate, "faults": taken}

    # --- connections -------------------------------------------------------------------------------------

    def _spawn(self, target: Callable[..., None], *args: Any, name: str = "sim-relay-conn") -> None:
        t = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            self._threads = [x for x in self._threads if x.is_alive()]
            self._threads.append(t)
        t.start()

    def _close(self, sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked reading it
        sock.close()
        with self._lock:
            self._socks.discard(sock)

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stopped.is_set():
            try:
                sock, addr = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            sock.settimeout(None)
            with self._lock:
                if self._stopped.is_set():
                    sock.close()
                    return
                self._socks.add(sock)
            self._spawn(self._serve, sock, _address(addr))

    def _serve(self, sock: socket.socket, peer: str) -> None:
        handed_off = False
        try:
            hello = _read_json(sock)
            if hello is None:
                return
            role = str(hello.get("hello"))
            settings = self._settings_for(role)
            if not _send_json(sock, settings):
                return
            faults = set(settings["faults"])
            if role == "send":
                handed_off = self._serve_sender(sock, peer, "room_full" in faults)
            elif role == "receive":
                self._serve_receiver(sock, peer, faults)
        finally:
            if not handed_off:
                self._close(sock)

    def _serve_sender(self, sock: socket.socket, peer: str, full: bool = False) -> bool:
        """Open the room and watch the waiting sender; True once a receiver has taken the connection over."""
        opened = _read_json(sock)
        if opened is None or "open" not in opened:
            return False
        if full:
            _send_json(sock, {"error": "room full"})
            return False
        room = _Room(str(opened["open"]), str(opened.get("password", "")), dict(opened.get("meta") or {}), sock, peer)
        with self._lock:
            if room.name in self._rooms:
                _send_json(sock, {"error": "room full"})
                return False
            self._rooms[room.name] = room
            self._lock.notify_all()
        while not self._stopped.is_set():
            with self._lock:
                if room.paired:
                    return True
                if time.monotonic() - room.created > self.room_ttl_s:
                    self._rooms.pop(room.name, None)
                    _send_json(sock, {"error": "expired"})
                    return False
            try:
                readable = select.select([sock], [], [], 0.05)[0]
                gone = bool(readable) and not sock.recv(1, socket.MSG_PEEK)
            except (OSError, ValueError):
                gone = True
            if gone:  # the sender was killed while waiting: the room goes with it
                with self._lock:
                    if room.paired:
                        return True
                    if self._rooms.get(room.name) is room:
                        del self._rooms[room.name]
                return False
            if readable:
                time.sleep(0.05)  # a sender says nothing before it is paired; ignore whatever it is
        return False

    def _serve_receiver(self, sock: socket.socket, peer: str, faults: set[str]) -> None:
        joined = _read_json(sock)
        if joined is None or "join" not in joined or "secure_channel" in faults:
            return  # hung up without an answer
        with self._lock:
            room = self._rooms.get(str(joined["join"]))
            if "stale_code" in faults or room is None or time.monotonic() - room.created > self.room_ttl_s:
                # a stale or wrong code, or the sender gone (docs/runpod-facts.md#runpodctl-errors)
                error: str | None = "room not ready"
            elif "password_mismatch" in faults or room.password != str(joined.get("password", "")):
                error = "password mismatch"
            else:
                error = None
                room.paired = True
                del self._rooms[room.name]
        if error is not None or room is None:
            _send_json(sock, {"error": error})
            return
        if not _send_json(room.sender, {"paired": peer}) or not _send_json(
            sock, {"paired": room.sender_address, "meta": room.meta}
        ):
            self._close(room.sender)
            return
        self._pipe(room.sender, sock, garble="decoding" in faults)

    def _pipe(self, sender: socket.socket, receiver: socket.socket, garble: bool = False) -> None:
        done = threading.Event()

        def forward() -> None:
            try:
                self._copy(sender, receiver, garble)
            finally:
                done.set()

        self._spawn(forward, name="sim-relay-pipe")
        self._copy(receiver, sender)
        while not done.wait(0.5):
            if self._stopped.is_set():
                break
        # closing (not just shutting down) a socket with unread data resets it, so a sender still
        # writing to a receiver that went away gets an error instead of writing into the void
        self._close(sender)

    def _copy(self, src: socket.socket, dst: socket.socket, garble: bool = False) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if garble:  # the first byte of the first message, as a damaged packet would
                    data, garble = b"\xa7" + data[1:], False
                dst.sendall(data)
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)  # pass the end of the stream on
        except OSError:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
