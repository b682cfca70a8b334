"""A simulated pod's container, from the simulator's side: its init started (pod_enter.py --init), known by pid and
start time (what sessions need to join it, and what the sweep of a killed run needs to end it), and ended.

The init reads a pipe the simulator holds open: when the simulator stops or dies, the pipe closes and the init
exits, and with it every process of the pod.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from podtui.sim.pod_view import enter_command

START_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Init:
    pid: int  # as this machine sees it
    start: int  # its start time, in clock ticks since boot (/proc/PID/stat)


def start_time(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return None
    return int(text[text.rfind(")") + 2 :].split()[19])


class PodContainer:
    """One run of a pod's container. start() once; stop() ends it and every process in it."""

    def __init__(self, spec: Path) -> None:
        self.spec = spec
        self.init: Init | None = None
        self._shim: subprocess.Popen[bytes] | None = None
        self._pidfd: int | None = None

    def start(self) -> Init:
        shim = subprocess.Popen(
            enter_command("--init", "--spec", str(self.spec)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self._shim = shim
        assert shim.stdout is not None and shim.stderr is not None
        line = b""
        if select.select([shim.stdout], [], [], START_TIMEOUT_S)[0]:
            line = shim.stdout.readline()
        shim.stdout.close()
        words = line.split()
        if len(words) != 3 or words[0] != b"ready" or not words[1].isdigit() or not words[2].isdigit():
            if shim.poll() is None:
                shim.kill()  # no answer in time: its init dies with it (parent-death signal)
            shim.wait()
            error = shim.stderr.read().decode(errors="replace").strip()
            self.stop()
            raise RuntimeError(f"the pod's container did not start: {error[-300:] or 'no answer'}")
        init = Init(int(words[1]), int(words[2]))
        with contextlib.suppress(OSError, AttributeError):  # pidfds: Linux 5.3; a signal by pid otherwise
            self._pidfd = os.pidfd_open(init.pid)
        if start_time(init.pid) != init.start:  # gone already: the pidfd, if any, is another process's
            self.stop()
            raise RuntimeError("the pod's container ended as it started")
        self.init = init
        return init

    @property
    def running(self) -> bool:
        return self.init is not None and self._shim is not None and self._shim.poll() is None

    def stop(self) -> None:
        """Kill the init (the kernel kills the rest of the pod) and wait until the pod's last process is gone:
        its shim ends once the init has been reaped, and the init only after everything in its namespace."""
        shim, self.init = self._shim, None
        if shim is None:
            return
        if shim.poll() is None:
            if self._pidfd is not None:
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            else:
                shim.kill()  # its init dies with it (parent-death signal)
        if shim.stdin is not None:
            with contextlib.suppress(OSError):
                shim.stdin.close()  # the init's pipe: what ends it if every signal missed
        try:
            shim.wait(10)
        except subprocess.TimeoutExpired:
            shim.kill()
            shim.wait()
        if shim.stderr is not None:
            shim.stderr.close()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
