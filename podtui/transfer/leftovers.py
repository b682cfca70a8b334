"""runpodctl processes a transfer started, remembered in its job so that a podtui killed outright cleans up later.

A `runpodctl send` waiting for its receiver prints nothing, so it does not notice its reader is gone: left alone,
it holds its room on the relay and its file open for hours. While a runpodctl runs, its job records it: here, its
process id and start time; on the pod, its process id and log. A podtui that starts again kills the ones here
when it loads the history, and the ones on a pod before the job's next attempt runs there.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

PROC = Path("/proc")


def here(pid: int) -> dict[str, Any]:
    me = os.getpid()
    return {"where": "here", "pid": pid, "started": start_time(pid), "owner": me, "owner_started": start_time(me)}


def on_pod(pid: str, log_path: str) -> dict[str, Any]:
    return {"where": "pod", "pid": pid, "log": log_path}


def start_time(pid: int) -> str | None:
    """The process's start: in clock ticks since boot from /proc (Linux; /proc/PID/stat is readable for every
    user's process), else as `ps` says it (macOS). With the pid, it names one process for good."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except FileNotFoundError:
        return None if PROC.is_dir() else _ps_start(pid)
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # the name in parentheses may hold spaces
    return fields[19] if len(fields) > 19 else None


def _ps_start(pid: int) -> str | None:
    """No /proc: `ps -o lstart=` (the start to the second, e.g. "Tue Dec  1 13:37:07 2026")."""
    try:
        out = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return " ".join(out.stdout.split()) or None


def _command_line(pid: int) -> str | None:
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except FileNotFoundError:
        return None
    except OSError:
        pass
    try:  # no /proc (macOS)
        out = subprocess.run(["ps", "-o", "args=", "-p", str(pid)], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def alive(pid: object, started: object) -> bool:
    """Whether `pid` still runs and is the process that started at `started` (None: any process with that pid)."""
    if not isinstance(pid, int) or pid <= 1:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process now: its start time still tells whether it is the one recorded
    return started is None or start_time(pid) in (None, started)


def kill_here(entry: dict[str, Any]) -> bool:
    """Kill a runpodctl left running on this machine, if that process is still it. True if one was killed."""
    pid = entry.get("pid")
    if not isinstance(pid, int) or pid <= 1:
        return False
    command = _command_line(pid)
    if command is None or "runpodctl" not in command:
        return False  # gone, or the number belongs to another program now
    started = entry.get("started")
    if started is not None and start_time(pid) not in (None, started):
        return False
    if alive(entry.get("owner"), entry.get("owner_started")):
        return False  # the podtui that started it still runs (a second window): it is not a leftover
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # started in a session of its own: its group is its pid
        log.info("killed runpodctl %d, left running by a podtui that was stopped", pid)
        return True
    return False


def pod_cleanup_command(entries: list[dict[str, Any]]) -> str | None:
    """One shell line that kills the pod's runpodctl processes among `entries` (if still runpodctl) and
    removes their logs; None when there is nothing on the pod."""
    parts = []
    for e in entries:
        pid, log_path = str(e.get("pid", "")), e.get("log")
        if e.get("where") != "pod" or not pid.isdigit() or not isinstance(log_path, str) or not log_path:
            continue
        parts.append(
            f"if grep -q runpodctl /proc/{pid}/cmdline 2>/dev/null; then kill {pid}; fi; "
            f"rm -f -- {shlex.quote(log_path)}"
        )
    return "; ".join(parts) + "; true" if parts else None
