"""A simulated pod's machine: a sandbox folder, its environment, a fake nvidia-smi, and real bash in a PTY, every
process in the pod's own container (pod_view.py, pod_container.py) where this machine allows one."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import signal
import struct
import subprocess
import sys
import termios
import threading
import tty
from pathlib import Path

from podtui.sim import image, pod_secrets
from podtui.sim.loopback import hosts_file
from podtui.sim.pod_container import PodContainer
from podtui.sim.pod_view import PACKAGE_ROOT, PodView, enter_command, namespaces_work
from podtui.sim.relay import install_runpodctl
from podtui.sim.workspace import FILES
from podtui.sim.world import SimPod

DEFAULT_BASHRC = """\
# simulated RunPod pod: the prompt shows paths as the pod sees them (/workspace, not the sandbox folder)
_podtui_pwd() { local p="${PWD#"$PODTUI_SIM_ROOT"}"; printf '%s' "${p:-/}"; }
export PS1='root@${HOSTNAME}:$(_podtui_pwd)# '
alias ll='ls -alF'
"""


RUNNING = ("RUNNING", "CREATED", "RESTARTING")  # a pod whose container runs (or is starting)


class PodMachine:
    """The folders that stand in for one pod's container (/workspace, a home with .bashrc, its own /tmp, bin/),
    its container while it runs (isolated pods), and how its processes start: through pod_enter.py, which joins
    the container and gives a shell its controlling terminal and the default signals (never a preexec_fn in the
    simulator's threaded process)."""

    def __init__(
        self,
        root: Path,
        pod: SimPod,
        api_url: str,
        api_key: str,
        relay_address: str | None = None,
        isolated: bool | None = None,
        address: str | None = None,
    ) -> None:
        """address: the pod's own loopback address, which is `localhost` in its container and for its sshd
        (docs/services.md#loopback-addresses-and-localhost); None: this machine's localhost."""
        self.root = root / pod.id
        self.pod = pod
        self.address = address
        self.api_url, self.api_key = api_url, api_key
        self.home = self.root / "root"
        self.workspace = self.root / "workspace"
        self.tmp = self.root / "tmp"
        self.bin = self.root / "bin"
        for d in (self.home, self.workspace, self.tmp, self.bin, self.root / ".rootfs"):
            d.mkdir(parents=True, exist_ok=True)
        self.tmp.chmod(0o1777)
        self.view = PodView(
            self.root,
            namespaces_work() if isolated is None else isolated,
            hosts=None if address is None else hosts_file(address, pod.id),
        )
        self._life = threading.Lock()  # starts and stops of its container, one at a time
        self.container: PodContainer | None = None
        # first start only: what the user changes there stays; and never through a link the pod made there
        create_new(self.home / ".bashrc", DEFAULT_BASHRC)
        for name, text in FILES.items():
            create_new(self.workspace / name, text)
        python = self.view.python.command
        smi = self.bin / "nvidia-smi"
        smi.write_text(
            f"#!/bin/sh\nexec {python} "
            f'{shlex.quote(self.view.inside(Path(__file__).with_name("nvidia_smi.py")))} "$@"\n'
        )
        smi.chmod(0o755)
        if relay_address is not None:  # runpodctl comes with every RunPod image
            install_runpodctl(self.bin, relay_address, python=python, package_root=self.view.inside(PACKAGE_ROOT))
        install_hf(self.bin, python)
        image.install(self.root, self.bin, pod, self.view)  # its Pythons, packages, pip and volume
        self.spec = self.view.write_spec(self.environment())
        if pod.status in RUNNING:
            self.start()

    @property
    def isolated(self) -> bool:
        return self.view.isolated

    def _init(self) -> tuple[int, int] | None:
        init = self.container.init if self.container is not None else None
        return None if init is None else (init.pid, init.start)

    def refresh(self) -> None:
        """Write again what direct-SSH sessions start with (its environment: RUNPOD_TCP_PORT_22, PUBLIC_KEY)."""
        with self._life:
            self.spec = self.view.write_spec(self.environment(), self._init())

    def start(self) -> None:
        """Start the pod's container (again: whatever ran in the old one ends), with the pod's environment now
        (the account's keys as they are now). Without namespaces: what ran before ends all the same."""
        with self._life:
            self._start()

    def ensure_running(self) -> None:
        """Its container runs (started on first use, or again after it ended)."""
        with self._life:
            if self.isolated and (self.container is None or not self.container.running):
                self._start()

    def _start(self) -> None:
        self._stop()
        self.spec = self.view.write_spec(self.environment())
        if self.isolated:
            container = PodContainer(self.spec)
            container.start()
            self.container = container
            self.spec = self.view.write_spec(self.environment(), self._init())

    def stop(self) -> None:
        """The pod's container ends, and every process in it: the pod stopped or went, or the simulator stops."""
        with self._life:
            self._stop()
            self.spec = self.view.write_spec(self.environment())

    def _stop(self) -> None:
        if self.container is not None:
            self.container.stop()
            self.container = None
        if not self.isolated:
            kill_leftovers(self.root, pod=True)

    def environment(self, term: str = "xterm-256color") -> dict[str, str]:
        p = self.pod
        env = {
            "HOME": self.view.inside(self.home),
            "PATH": f"{self.view.inside(self.bin)}:/usr/local/bin:/usr/bin:/bin",
            "TERM": term,
            "LANG": "C.UTF-8",
            "SHELL": "/bin/bash",
            "HOSTNAME": p.id,
            "RUNPOD_POD_ID": p.id,
            "RUNPOD_POD_HOSTNAME": p.pod_host_id,
            "RUNPOD_GPU_COUNT": str(p.gpu_count),
            "RUNPOD_CPU_COUNT": str(p.vcpu_count),
            "RUNPOD_VOLUME_PATH": self.view.inside(self.workspace),
            # the pod's own key, good for this pod only, as RunPod gives every pod (docs/runpod-facts.md#ssh-direct);
            # runpodctl's and nvidia-smi's stand-ins use it too
            "RUNPOD_API_KEY": p.api_key,
            "RUNPOD_API_BASE_URL": self.api_url,
            "PODTUI_SIM_API": self.api_url,
            "PODTUI_SIM_KEY": p.api_key,
            "PODTUI_SIM_ROOT": str(self.root),  # this machine's path: how kill_leftovers finds the pod's processes
        }
        if p.public_key:  # the account's keys as the container got them when it started
            env["PUBLIC_KEY"] = p.public_key
        if p.public_ip and p.direct_ssh_port:
            env["RUNPOD_PUBLIC_IP"] = p.public_ip
            env["RUNPOD_TCP_PORT_22"] = str(p.direct_ssh_port)
        env.update(internet_env(self.root.parent))  # e.g. HF_ENDPOINT: where the simulated pods reach the Hub
        # its env with the account's secrets in place of their references, as its container got them when it
        # started (docs/runpod-facts.md#templates)
        env.update(pod_secrets.resolve(p.env, p.secrets or {}))
        return env

    def enter(self, *options: str) -> list[str]:
        """The command line that starts a process of this pod; the command follows it."""
        return enter_command("--spec", str(self.spec), *options, "--")

    def spawn_pty_shell(self, term: str, width: int, height: int) -> tuple[subprocess.Popen[bytes], int]:
        self.ensure_running()
        master, slave = os.openpty()
        set_winsize(master, width, height)
        if self.isolated:  # raw before anything is typed: the pod's own terminal does the line discipline
            tty.setraw(slave)
        # a session of its own (subprocess's setsid); pod_enter.py makes the tty the pod process's controlling one
        proc = subprocess.Popen(
            [*self.enter("--tty"), "bash", "-i"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=self.environment(term),
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        return proc, master

    def spawn_exec(self, command: str) -> subprocess.Popen[bytes]:
        self.ensure_running()
        return subprocess.Popen(
            [*self.enter(), "bash", "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.environment("dumb"),
            start_new_session=True,
        )


INTERNET_ENV = "internet.env"  # in the folder holding every pod's: KEY=VALUE lines each pod's environment gets


def internet_env(sandbox: Path) -> dict[str, str]:
    """What the simulator's network offers every pod (the Hub stand-in's address), as environment variables."""
    try:
        lines = (sandbox / INTERNET_ENV).read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in lines if "=" in line)


def install_hf(bin_dir: Path, python: str | None = None) -> Path:
    """The pod's `hf`: huggingface_hub's real CLI, run by this Python (RunPod's images install it with pip).
    python: how the pod runs that Python (shell words)."""
    target = bin_dir / "hf"
    target.write_text(f'#!/bin/sh\nexec {python or shlex.quote(sys.executable)} -m huggingface_hub.cli.hf "$@"\n')
    target.chmod(0o755)
    return target


def set_winsize(fd: int, width: int, height: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))


def create_new(path: Path, text: str) -> None:
    """Write `path` unless something is there already; never through a symbolic link (the folder is the pod's)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def kill_leftovers(root: Path, pod: bool = False) -> int:
    """Kill the processes of the pods under `root` (pod: of the pod whose folder is `root`) that their environment
    names: what pods without a container of their own left running (nohup, setsid), and a backstop for the
    others (a container's processes end with it, whatever their environment). Linux /proc."""
    marker = f"PODTUI_SIM_ROOT={root}".encode() if pod else f"PODTUI_SIM_ROOT={root}/".encode()
    killed = 0
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if (
            any(var == marker if pod else var.startswith(marker) for var in environ.split(b"\0"))
            and int(entry.name) != os.getpid()
        ):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    return killed


def hang_up(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGHUP)
