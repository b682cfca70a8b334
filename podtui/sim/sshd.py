"""Direct SSH for simulated pods: a real OpenSSH sshd on 127.0.0.1, one per pod, when the machine has one.

Like a pod with 22/tcp exposed on a public IP, it allows exec channels and SFTP. sshd itself runs outside the
pod; every session, SFTP's too, starts through pod_enter.py (sshd's ForceCommand), which joins the pod's running
container, with the pod's environment, never in the host's own home. It accepts the keys the pod's container
started with, from the pod's own authorized_keys file.

It forwards TCP as a pod's sshd does (`ssh -L`, direct-tcpip; not the other way), and, as inside a pod, `localhost`
is the pod: where namespaces work, sshd runs with an /etc/hosts of its own that names the pod's own loopback address
(docs/services.md#loopback-addresses-and-localhost). It forwards to the pod only (PermitOpen): `localhost` where it is
the pod's, and the pod's own address; never to the rest of this machine (the simulator's API, other pods), which a
RunPod pod's sshd could not reach at 127.0.0.1 either.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from podtui.sim.loopback import hosts_file
from podtui.sim.pod_view import enter_command, replace_whole
from podtui.sim.podshell import PodMachine

log = logging.getLogger(__name__)

SSHD = "/usr/sbin/sshd"
# what pod_enter.py says when sshd cannot have the pod's /etc/hosts (pod_enter.py itself imports nothing of podtui)
HOSTS_NOT_OWN = "podtui simulator: localhost is this machine's"
SFTP_SERVERS = ("/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server", "/usr/libexec/sftp-server")


def sshd_available() -> bool:
    return os.path.exists(SSHD) and os.geteuid() == 0 and shutil.which("ssh-keygen") is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PodSshd:
    def __init__(self, machine: PodMachine, keys: str, port: int | None = None) -> None:
        self.machine = machine
        self.dir = machine.root / "sshd"
        self.authorized_keys = self.dir / "authorized_keys"
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.own_localhost = True  # False once sshd is found without the pod's /etc/hosts
        self._keys_lock = threading.Lock()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.write_keys(keys)

    def write_keys(self, keys: str) -> None:
        """What the pod's start script writes into authorized_keys: the keys its container started with. sshd
        reads it whole, old or new, at each login; the last keys written win, whichever thread wrote them."""
        with self._keys_lock:
            replace_whole(self.authorized_keys, (keys.strip() + "\n" if keys.strip() else "").encode())

    def _write_config(self) -> Path:
        host_key = self.dir / "ssh_host_ed25519_key"
        if not host_key.exists():
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)],
                check=True,
                stdin=subprocess.DEVNULL,
            )
        # sshd runs it with root's shell: `bash -c 'exec ...'`; SSH_ORIGINAL_COMMAND holds what the client asked
        session = shlex.join(self.machine.enter("--ssh")[:-1])  # no command after it: --ssh supplies one
        sftp = next((p for p in SFTP_SERVERS if os.path.exists(p)), None)
        config = self.dir / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {host_key}",
                    f"PidFile {self.dir / 'sshd.pid'}",
                    f"AuthorizedKeysFile {self.authorized_keys}",
                    "PermitRootLogin prohibit-password",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "UsePAM no",
                    "StrictModes no",
                    "PrintMotd no",
                    "PrintLastLog no",
                    "LogLevel ERROR",
                    # `ssh -L` and direct-tcpip, as a pod's sshd allows; no remote or Unix-socket forwarding: this
                    # sshd runs on this machine, whose sockets are not the pod's
                    "AllowTcpForwarding local",
                    f"PermitOpen {self._permit_open()}",
                    "AllowStreamLocalForwarding no",
                    "X11Forwarding no",
                    f"ForceCommand exec {session}",  # sftp too: sshd runs the forced command for a subsystem
                    *([f"Subsystem sftp {sftp}"] if sftp else []),
                    "",
                ]
            )
        )
        return config

    def _permit_open(self) -> str:
        """Where direct-tcpip may go: the pod's own address, and `localhost` when sshd's /etc/hosts makes it that
        address (sshd matches the name as the client sent it, then resolves it)."""
        address = self.machine.address
        if address is None:
            return "none"
        own = self.machine.isolated and self.own_localhost
        return f"localhost:* {address}:*" if own else f"{address}:*"

    def _hosts(self) -> list[str]:
        """pod_enter.py's options that give sshd the pod's /etc/hosts, where the pod has an address of its own and
        its container is one (the same namespaces make both)."""
        if self.machine.address is None or not self.machine.isolated:
            return []
        hosts = self.dir / "hosts"
        hosts.write_text(hosts_file(self.machine.address, self.machine.pod.id))
        hosts.chmod(0o644)
        return ["--hosts", str(hosts)]

    def start(self) -> PodSshd:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
        config = self._write_config()
        sshd_log = self.dir / "sshd.log"
        # Its own session (the terminal's ctrl+c and hang-up are podtui's, not sshd's), and it dies with the thread
        # that started it even if podtui is killed: no root sshd left behind. Both done without a preexec_fn.
        with sshd_log.open("wb") as stderr:
            self.proc = subprocess.Popen(
                [
                    *enter_command("--parent", str(os.getpid()), *self._hosts(), "--"),
                    SSHD,
                    "-D",
                    "-e",
                    "-f",
                    str(config),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                start_new_session=True,
            )
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = sshd_log.read_text(errors="replace")
                raise RuntimeError(f"sshd exited at once: {err.strip()[-300:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    pass
            except OSError:
                time.sleep(0.05)
                continue
            said = sshd_log.read_text(errors="replace").splitlines()
            not_own = [line for line in said if line.startswith(HOSTS_NOT_OWN)]
            if not_own and self.own_localhost:  # its `localhost` is this machine's: not to be forwarded to
                self.own_localhost = False
                self.stop()
                return self.start()
            for line in not_own:
                log.warning("direct SSH for %s: %s", self.machine.pod.id, line)
            return self
        self.stop()
        raise RuntimeError("sshd did not start listening within 5 s")

    def drop_connections(self) -> int:
        """Fault switch: cut every open connection, as a network drop would. OpenSSH serves each one in a child
        of the listening sshd (sshd-session from 9.8 on); killing those closes their sockets. Returns how many."""
        if self.proc is None:
            return 0
        killed = 0
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            if stat[stat.rfind(")") + 2 :].split()[1] == str(self.proc.pid):  # its parent is the listener
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(proc.name), signal.SIGKILL)
                    killed += 1
        return killed

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.drop_connections()  # a connection's process outlives the listener otherwise
            self.proc.terminate()
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
