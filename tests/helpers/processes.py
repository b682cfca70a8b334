"""Finding the processes a simulator run left: whatever names its folder in its environment or command line."""

from __future__ import annotations

import os
import time
from pathlib import Path


def processes_naming(text: str) -> list[str]:
    """Processes (other than this one) whose environment or command line contains `text`: "pid command"."""
    needle = text.encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        if int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue  # gone meanwhile
        if needle in cmdline or needle in environ:
            command = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
            found.append(f"{entry.name} {command}")
    return found


def settle(text: str, timeout_s: float = 10.0) -> list[str]:
    """processes_naming(text) once it is empty, or what is still there after timeout_s (a process being killed
    takes a moment to leave /proc)."""
    end = time.monotonic() + timeout_s
    while (left := processes_naming(text)) and time.monotonic() < end:
        time.sleep(0.1)
    return left
