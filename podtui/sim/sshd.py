"""Direct SSH for simulated pods: a real OpenSSH sshd on 127.0.0.1, one per pod, when the machine has one.

Like a pod with 22/tcp exposed on a public IP (facts: SSH modes), it allows exec channels and SFTP. Every
session lands in the pod's sandbox folder with the pod's environment (a ForceCommand wrapper), never in
the host's own home.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shlex
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from podtui.sim.podshell import PodMachine

SSHD = "/usr/sbin/sshd"
SFTP_SERVERS = ("/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server", "/usr/libexec/sftp-server")


def _die_with_parent() -> None:
    """Linux: SIGTERM this child when the process that started it goes away."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def sshd_available() -> bool:
    return os.path.exists(SSHD) and os.geteuid() == 0 and shutil.which("ssh-keygen") is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PodSshd:
    def __init__(self, machine: PodMachine, authorized_keys: Path, port: int | None = None) -> None:
        self.machine = machine
        self.dir = machine.root / "sshd"
        self.authorized_keys = authorized_keys
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def _write_config(self) -> Path:
        self.dir.mkdir(parents=True, exist_ok=True)
        host_key = self.dir / "ssh_host_ed25519_key"
        if not host_key.exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(host_key)], check=True)
        env = self.machine.environment("xterm-256color")
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        wrapper = self.dir / "session.sh"
        wrapper.write_text(
            "#!/bin/bash\n"
            "# every direct-SSH session of this simulated pod starts here, inside its sandbox\n"
            f"{exports}"
            f"cd {shlex.quote(str(self.machine.workspace))}\n"
            'if [ -n "$SSH_ORIGINAL_COMMAND" ]; then exec /bin/bash -c "$SSH_ORIGINAL_COMMAND"; fi\n'
            "exec /bin/bash -i\n"
        )
        wrapper.chmod(0o755)
        sftp = next((p for p in SFTP_SERVERS if os.path.exists(p)), None)
        config = self.dir / "sshd_config"
        config.write_text("\n".join([
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
            f"ForceCommand {wrapper}",
            *([f"Subsystem sftp {sftp}"] if sftp else []),
            "",
        ]))
        return config

    def start(self) -> PodSshd:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation directory
        config = self._write_config()
        log = (self.dir / "sshd.log").open("wb")
        # sshd dies with the simulator even if podtui is killed: no root sshd left behind
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                                     stderr=log, preexec_fn=_die_with_parent)
        log.close()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = (self.dir / "sshd.log").read_text(errors="replace")
                raise RuntimeError(f"sshd exited at once: {err.strip()[-300:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
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
            if stat[stat.rfind(")") + 2:].split()[1] == str(self.proc.pid):  # its parent is the listener
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(proc.name), signal.SIGKILL)
                    killed += 1
        return killed

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
