"""RunPod's SSH gateway, simulated with paramiko's server side on 127.0.0.1.

Behaves as ssh.runpod.io does: the username is the pod's podHostId; keys are checked against the keys the
pod's container got when it started (the account's keys then: one registered later needs a restart); a
welcome banner; only an interactive PTY shell: an exec request gets "Error: Your SSH client doesn't support
PTY", no sftp subsystem (the client sees "Channel closed"). The shell is a real bash in the pod's container
(pod_view.py, pod_container.py), and window-size changes reach it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import socket
import subprocess
import threading
import time
from pathlib import Path

import paramiko

from podtui.sim.pod_view import NOT_ISOLATED
from podtui.sim.podshell import PodMachine, hang_up, kill_leftovers, set_winsize
from podtui.sim.world import SimPod, World

log = logging.getLogger(__name__)

BANNER = "-- RUNPOD.IO --\r\nEnjoy your Pod #{pod_id} ^_^\r\n\r\n"
NO_PTY = b"Error: Your SSH client doesn't support PTY\r\n"


def pod_keys(world: World, pod: SimPod) -> set[str]:
    """The base64 bodies of the public keys the pod accepts."""
    text = world.container_keys(pod)
    return {parts[1] for parts in (ln.split() for ln in text.splitlines()) if len(parts) >= 2}


class _Channel:
    """One shell channel: the bash process behind it, and the size of its terminal."""

    def __init__(self) -> None:
        self.term = "xterm"
        self.width, self.height = 80, 24
        self.pty = False
        self.banner = ""
        self.master: int | None = None
        self.proc: subprocess.Popen[bytes] | None = None


class _Server(paramiko.ServerInterface):
    def __init__(self, gateway: SimGateway) -> None:
        self.gateway = gateway
        self.pod: SimPod | None = None
        self.channels: dict[int, _Channel] = {}

    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:
        pod = self.gateway.pod_for(username)
        if pod is None or key.get_base64() not in pod_keys(self.gateway.world, pod):
            return paramiko.common.AUTH_FAILED
        self.pod = pod
        return paramiko.common.AUTH_SUCCESSFUL

    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind != "session":
            return paramiko.common.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED
        self.channels[chanid] = _Channel()
        return paramiko.common.OPEN_SUCCEEDED

    def check_channel_pty_request(
        self,
        channel: paramiko.Channel,
        term: bytes,
        width: int,
        height: int,
        pixelwidth: int,
        pixelheight: int,
        modes: bytes,
    ) -> bool:
        c = self.channels[channel.get_id()]
        c.term = term.decode(errors="replace") if isinstance(term, bytes) else str(term)
        c.width, c.height, c.pty = width, height, True
        return True

    def check_channel_shell_request(self, channel: paramiko.Channel) -> bool:
        c = self.channels[channel.get_id()]
        if not c.pty:
            threading.Thread(target=_refuse, args=(channel,), daemon=True).start()
            return True
        assert self.pod is not None
        if self.gateway.hang_after_welcome or self.gateway.shell_exits_with is not None:
            threading.Thread(
                target=_broken_shell,
                args=(channel, self.pod.id, self.gateway.shell_exits_with),
                name="sim-gw-broken",
                daemon=True,
            ).start()
            return True
        machine = self.gateway.machine(self.pod)
        c.banner = BANNER.format(pod_id=self.pod.id) + ("" if machine.isolated else NOT_ISOLATED + "\r\n\r\n")
        c.proc, c.master = machine.spawn_pty_shell(c.term, c.width, c.height)
        threading.Thread(target=_pump, args=(channel, c, self.pod.id), name="sim-gw-pump", daemon=True).start()
        return True

    def check_channel_exec_request(self, channel: paramiko.Channel, command: bytes) -> bool:
        threading.Thread(target=_refuse, args=(channel,), daemon=True).start()
        return True

    def check_channel_subsystem_request(self, channel: paramiko.Channel, name: str) -> bool:
        return False  # no sftp: RunPod's gateway does not advertise it

    def check_channel_window_change_request(
        self, channel: paramiko.Channel, width: int, height: int, pixelwidth: int, pixelheight: int
    ) -> bool:
        c = self.channels.get(channel.get_id())
        if c is None:
            return False
        c.width, c.height = width, height
        if c.master is not None:
            set_winsize(c.master, width, height)  # the kernel sends SIGWINCH to the shell
        return True


def _refuse(channel: paramiko.Channel) -> None:
    # paramiko answers the exec request only after check_channel_exec_request returns; closing before that
    # would reach the client as a bare "Channel closed" instead of the gateway's message.
    time.sleep(0.05)
    try:
        channel.sendall_stderr(NO_PTY)
        channel.send_exit_status(1)
    finally:
        channel.close()


def _broken_shell(channel: paramiko.Channel, pod_id: str, exit_status: int | None) -> None:
    """Fault switches: the welcome banner, then a shell that exits at once (`exit_status`) or never answers."""
    time.sleep(0.05)  # as in _refuse: let paramiko answer the shell request first
    try:
        channel.sendall(BANNER.format(pod_id=pod_id).encode())
        if exit_status is None:
            while not channel.closed:  # swallow what is typed, answer nothing
                if channel.recv_ready():
                    channel.recv(65536)
                time.sleep(0.05)
            return
        channel.send_exit_status(exit_status)
        channel.close()
    except (OSError, EOFError, paramiko.SSHException) as e:
        log.debug("broken shell ended: %s", e)


def _pump(channel: paramiko.Channel, c: _Channel, pod_id: str) -> None:
    """Carry bytes between the channel and the shell's terminal. What the client typed waits here while the
    terminal's input is full, and the channel is not read meanwhile (its SSH window holds the client back):
    never a blocking write to the terminal, which would stop its output too, and the shell with it, for good."""
    assert c.master is not None and c.proc is not None
    master = c.master
    os.set_blocking(master, False)
    typed = memoryview(b"")
    try:
        channel.sendall(c.banner.encode())
        while True:
            ready, writable, _ = select.select(
                [master] if typed else [master, channel],  # type: ignore[type-var]
                [master] if typed else [],
                [],
                0.5,
            )
            if master in ready:
                try:
                    data = os.read(master, 65536)
                except BlockingIOError:
                    data = None
                except OSError:  # EIO: the shell exited
                    break
                if data == b"":
                    break
                if data:
                    channel.sendall(data)  # waits on the client's window only: the client reads on its own
            if channel in ready:
                typed = memoryview(channel.recv(65536))
                if not typed:
                    break
            if typed and (master in writable or channel in ready):
                with contextlib.suppress(BlockingIOError):
                    typed = typed[os.write(master, typed) :]
            if channel.closed:
                break
    except (OSError, EOFError, paramiko.SSHException) as e:
        log.debug("gateway pump ended: %s", e)
    finally:
        hang_up(c.proc)
        try:
            code = c.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            c.proc.kill()
            code = c.proc.wait()
        os.close(master)
        try:
            channel.send_exit_status(code if code >= 0 else 128 - code)
            channel.close()
        except (OSError, EOFError, paramiko.SSHException):
            pass


class SimGateway:
    def __init__(
        self,
        world: World,
        sandbox: Path,
        api_url: str,
        api_key: str,
        host: str = "127.0.0.1",
        port: int = 0,
        host_key: paramiko.PKey | None = None,
        relay_address: str | None = None,
        isolated: bool | None = None,
    ) -> None:
        self.world = world
        self.isolated = isolated  # None: wherever this machine allows it
        self.relay_address = relay_address  # the SimRelay the pods' runpodctl talks to
        self.sandbox = sandbox
        self.api_url, self.api_key = api_url, api_key
        self.host_key = host_key or paramiko.Ed25519Key.from_private_key_file(str(_new_host_key(sandbox)))
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self._sock.listen(64)
        self._transports: list[paramiko.Transport] = []
        self._lock = threading.Lock()
        self._machines: dict[str, PodMachine] = {}
        self._stopped = False
        self._hung: list[socket.socket] = []
        # fault switches, read by each new connection or shell:
        self.hang_after_banner = False  # accept, send the SSH version banner, then never answer
        self.hang_after_welcome = False  # log in and open the shell, print the welcome banner, then nothing
        self.shell_exits_with: int | None = None  # the shell exits at once with this status

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._sock.getsockname()[:2]
        return str(host), int(port)

    def machine(self, pod: SimPod) -> PodMachine:
        address = self.world.pod_address(pod.id)  # before this lock: the world's is never taken inside it
        with self._lock:
            m = self._machines.get(pod.id)
            if m is None:
                m = self._machines[pod.id] = PodMachine(
                    self.sandbox, pod, self.api_url, self.api_key, self.relay_address, self.isolated, address
                )
            return m

    def restarted(self, pod: SimPod) -> None:
        """The pod's container started again: a new one (what ran in the old one ends), whose sessions start with
        its new environment (PUBLIC_KEY)."""
        with self._lock:
            m = self._machines.get(pod.id)
        if m is not None:
            m.start()

    def stopped(self, pod: SimPod) -> None:
        """The pod stopped or was terminated: its container ends, and every process in it."""
        with self._lock:
            m = self._machines.get(pod.id)
        if m is not None:
            m.stop()

    def pod_for(self, host_id: str) -> SimPod | None:
        for pod in self.world.visible_pods():
            if pod.pod_host_id == host_id and pod.status == "RUNNING":
                return pod
        return None

    def start(self) -> SimGateway:
        threading.Thread(target=self._accept, name="sim-gateway", daemon=True).start()
        return self

    def _accept(self) -> None:
        while not self._stopped:
            try:
                sock, _ = self._sock.accept()
            except OSError:
                return
            if self.hang_after_banner:
                sock.sendall(b"SSH-2.0-RunPod\r\n")
                with self._lock:
                    self._hung.append(sock)
                continue
            threading.Thread(target=self._serve, args=(sock,), name="sim-gateway-conn", daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        t = paramiko.Transport(sock)
        t.add_server_key(self.host_key)
        with self._lock:
            self._transports.append(t)
        try:
            t.start_server(server=_Server(self))
        except (paramiko.SSHException, EOFError, OSError) as e:
            log.debug("gateway handshake failed: %s", e)

    def drop_connections(self) -> None:
        """Fault switch: cut every open connection, as a network drop would."""
        with self._lock:
            transports, self._transports = self._transports, []
        for t in transports:
            t.close()

    def stop(self) -> None:
        self._stopped = True
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
        self._sock.close()
        self.drop_connections()
        for s in self._hung:
            s.close()
        with self._lock:
            machines = list(self._machines.values())
        for m in machines:
            m.stop()
        kill_leftovers(self.sandbox)


def _new_host_key(sandbox: Path) -> Path:
    path = sandbox / "gateway_host_key"
    if not path.exists():
        sandbox.mkdir(parents=True, exist_ok=True)
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
        )
        path.write_bytes(pem)
        path.chmod(0o600)
    return path
