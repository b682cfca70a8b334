"""A simulated pod's machine: a sandbox folder, its environment, a fake nvidia-smi, and real bash in a PTY."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

from podtui.sim import image
from podtui.sim.relay import install_runpodctl
from podtui.sim.workspace import FILES
from podtui.sim.world import SimPod

DEFAULT_BASHRC = """\
# simulated RunPod pod: the prompt shows paths as the pod sees them (/workspace, not the sandbox folder)
_podtui_pwd() { local p="${PWD#"$PODTUI_SIM_ROOT"}"; printf '%s' "${p:-/}"; }
export PS1='root@${HOSTNAME}:$(_podtui_pwd)# '
alias ll='ls -alF'
"""

class PodMachine:
    """The folder that stands in for one pod's container: /workspace, a home with .bashrc, bin/."""

    def __init__(self, root: Path, pod: SimPod, api_url: str, api_key: str,
                 relay_address: str | None = None) -> None:
        self.root = root / pod.id
        self.pod = pod
        self.api_url, self.api_key = api_url, api_key
        self.home = self.root / "root"
        self.workspace = self.root / "workspace"
        self.bin = self.root / "bin"
        for d in (self.home, self.workspace, self.bin):
            d.mkdir(parents=True, exist_ok=True)
        bashrc = self.home / ".bashrc"
        if not bashrc.exists():
            bashrc.write_text(DEFAULT_BASHRC)
        for name, text in FILES.items():  # first start only: what the user changes there stays
            target = self.workspace / name
            if not target.exists():
                target.write_text(text, encoding="utf-8")
        smi = self.bin / "nvidia-smi"
        smi.write_text(f'#!/bin/sh\nexec {sys.executable} {Path(__file__).with_name("nvidia_smi.py")} "$@"\n')
        smi.chmod(0o755)
        if relay_address is not None:  # runpodctl comes with every RunPod image
            install_runpodctl(self.bin, relay_address)
        install_hf(self.bin)
        image.install(self.root, self.bin, pod)  # its Pythons, packages, pip and volume

    def environment(self, term: str = "xterm-256color") -> dict[str, str]:
        p = self.pod
        env = {
            "HOME": str(self.home),
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "TERM": term,
            "LANG": "C.UTF-8",
            "SHELL": "/bin/bash",
            "HOSTNAME": p.id,
            "RUNPOD_POD_ID": p.id,
            "RUNPOD_POD_HOSTNAME": p.pod_host_id,
            "RUNPOD_GPU_COUNT": str(p.gpu_count),
            "RUNPOD_CPU_COUNT": str(p.vcpu_count),
            "RUNPOD_VOLUME_PATH": str(self.workspace),
            "PODTUI_SIM_API": self.api_url,
            "PODTUI_SIM_KEY": self.api_key,
            "PODTUI_SIM_ROOT": str(self.root),
        }
        if p.public_ip and p.direct_ssh_port:
            env["RUNPOD_PUBLIC_IP"] = p.public_ip
            env["RUNPOD_TCP_PORT_22"] = str(p.direct_ssh_port)
        env.update(internet_env(self.root.parent))  # e.g. HF_ENDPOINT: where the simulated pods reach the Hub
        env.update(p.env)
        return env

    def spawn_pty_shell(self, term: str, width: int, height: int) -> tuple[subprocess.Popen[bytes], int]:
        master, slave = os.openpty()
        set_winsize(master, width, height)

        def become_session_leader() -> None:
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        proc = subprocess.Popen(
            [*default_signals(), "bash", "-i"], stdin=slave, stdout=slave, stderr=slave, cwd=self.workspace,
            env=self.environment(term), preexec_fn=become_session_leader, close_fds=True,
        )
        os.close(slave)
        return proc, master

    def spawn_exec(self, command: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [*default_signals(), "bash", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=self.workspace, env=self.environment("dumb"), start_new_session=True,
        )


@functools.cache
def default_signals() -> list[str]:
    """A real pod's shell starts with ctrl+c and ctrl+\\ at their defaults. The simulator may run with them ignored
    (started in the background by a script: `cmd &` in a non-interactive shell ignores SIGINT and SIGQUIT), and
    bash hands what it was started with on to every command, so ctrl+c could stop nothing. GNU env resets them;
    signal.signal cannot, from the thread that starts the shell."""
    try:
        works = subprocess.run(["env", "--default-signal=INT,QUIT", "true"], capture_output=True,
                               timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        works = False
    return ["env", "--default-signal=INT,QUIT"] if works else []


INTERNET_ENV = "internet.env"  # in the folder holding every pod's: KEY=VALUE lines each pod's environment gets


def internet_env(sandbox: Path) -> dict[str, str]:
    """What the simulator's network offers every pod (the Hub stand-in's address), as environment variables."""
    try:
        lines = (sandbox / INTERNET_ENV).read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in lines if "=" in line)


def install_hf(bin_dir: Path) -> Path:
    """The pod's `hf`: huggingface_hub's real CLI, run by this Python (RunPod's images install it with pip)."""
    target = bin_dir / "hf"
    target.write_text(f'#!/bin/sh\nexec {sys.executable} -m huggingface_hub.cli.hf "$@"\n')
    target.chmod(0o755)
    return target


def set_winsize(fd: int, width: int, height: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))


def kill_leftovers(root: Path) -> int:
    """Kill what the simulated pods left running in the background (nohup, setsid: a watchdog, a runpodctl
    send): a real pod's processes end with its container, so the simulator's must end with it. Linux /proc."""
    marker = f"PODTUI_SIM_ROOT={root}/".encode()  # each pod's root is a folder under it
    killed = 0
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if any(var.startswith(marker) for var in environ.split(b"\0")) and int(entry.name) != os.getpid():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    return killed


def hang_up(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGHUP)
