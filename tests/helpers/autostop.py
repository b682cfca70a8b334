"""For the autostop watchdog's tests: a shell on a simulated pod, the watchdog's log there, spies that write down
the command line of every curl, python3 and runpodctl the watchdog runs (then run the real one), and a watch on the
command lines of every process of this machine."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.sim.simulator import Simulator

SPIED = ("curl", "python3", "runpodctl")


@contextmanager
def shell_on(api: V2Api, settings: SshSettings, name: str) -> Iterator[RemoteShell]:
    pod = api.fetch_snapshot().find(name)
    assert pod is not None
    with open_remote(pod, settings, "gateway") as sh:
        yield sh


def wait_for(condition: Callable[[], bool], timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return False


def closed_port() -> int:
    """A port on this machine where nothing listens (it was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pod_home(sim: Simulator, pod_id: str) -> Path:
    """The pod's home folder, kept on this machine: it outlives the pod's container."""
    return sim.gateway.machine(sim.world.pods[pod_id]).home


def watchdog_log(sim: Simulator, pod_id: str) -> str:
    try:
        return (pod_home(sim, pod_id) / ".podtui" / "autostop.log").read_text()
    except FileNotFoundError:
        return ""


def spy_on_commands(shell: RemoteShell) -> None:
    """In the shell (and so in the watchdog it starts): ~/spy ahead in PATH, with a wrapper for each of SPIED that
    the shell finds now, appending its command line to ~/spy/argv before running the real one."""
    script = (
        'mkdir -p "$HOME/spy" && : > "$HOME/spy/argv" && for c in ' + " ".join(SPIED) + "; do "
        'real=$(command -v "$c") || continue; '
        '{ echo \'#!/bin/sh\'; echo \'echo "$0 $*" >> "$HOME/spy/argv"\'; echo "exec $real \\"\\$@\\""; } '
        '> "$HOME/spy/$c" && chmod 755 "$HOME/spy/$c"; done; PATH="$HOME/spy:$PATH"; hash -r'
    )
    result = shell.run(script, timeout_s=30)
    assert result.exit_code == 0, result.output


def spied_command_lines(sim: Simulator, pod_id: str) -> str:
    try:
        return (pod_home(sim, pod_id) / "spy" / "argv").read_text()
    except FileNotFoundError:
        return ""


class CommandLineWatch:
    """Reads every process's command line (/proc/*/cmdline, the process list anyone may read) over and over in a
    thread, keeping the pid and command word of those that hold `needle`."""

    def __init__(self, needle: str) -> None:
        self.needle = needle.encode()
        self.hits: list[str] = []
        self.scans = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="cmdline-watch", daemon=True)

    def _watch(self) -> None:
        while not self._done.is_set():
            for entry in Path("/proc").glob("[0-9]*"):
                try:
                    words = (entry / "cmdline").read_bytes()
                except OSError:
                    continue  # gone meanwhile
                if self.needle in words:
                    command = words.split(b"\0")[0].decode(errors="replace")
                    self.hits.append(f"{entry.name} {command}")
            self.scans += 1

    def __enter__(self) -> CommandLineWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(10)
