"""The simulator's temporary folder, and the ones killed runs left behind.

A simulator removes its folder when it stops. A run that is killed outright (SIGKILL, a crash of the
interpreter) cannot, so each folder records who made it, the process id and that process's start time, and every
new folder's making first removes the folders whose maker is gone, and stops what their pods left running. A
folder whose maker lives is never touched; neither is one without a record until it is an hour old and no
process refers to it (made by an older podtui, or being made this instant).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

PREFIX = "podtui-sim-"
OWNER = "owner.json"
UNRECORDED_AGE_S = 3600.0


def make_sim_folder() -> Path:
    sweep()
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))
    (folder / OWNER).write_text(json.dumps(_identity(os.getpid())), encoding="utf-8")
    return folder


def _start_time(pid: int) -> int | None:
    """When the process started, in clock ticks since boot (Linux); a reused pid has another one."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rfind(")") + 2:].split()[19])


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _identity(pid: int) -> dict[str, object]:
    return {"pid": pid, "start": _start_time(pid), "boot": _boot_id()}


def owner_alive(folder: Path) -> bool | None:
    """Whether the process that made `folder` still runs; None: the folder has no record of it."""
    try:
        record = json.loads((folder / OWNER).read_text(encoding="utf-8"))
        pid = int(record["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if record.get("boot") != _boot_id():
        return False  # made before this machine last started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return record.get("start") is None or record.get("start") == _start_time(pid)


def processes_of(folder: Path) -> list[int]:
    """Processes that belong to a simulator run in `folder`: its pods' (their environment names their folder) and
    its sshds (their command line names their config there). Linux /proc; none elsewhere."""
    marker = f"PODTUI_SIM_ROOT={folder}/".encode()
    named = f"{folder}/".encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(entry.name) == os.getpid():
            continue
        if any(var.startswith(marker) for var in environ.split(b"\0")) or any(
                arg.startswith(named) for arg in cmdline.split(b"\0")):
            found.append(int(entry.name))
    return found


def sweep(temp: Path | None = None) -> list[Path]:
    """Remove the folders of simulator runs that were killed; returns them."""
    removed = []
    for folder in sorted(Path(temp or tempfile.gettempdir()).glob(PREFIX + "*")):
        if folder.is_symlink() or not folder.is_dir():
            continue
        alive = owner_alive(folder)
        if alive:
            continue
        processes = processes_of(folder)
        if alive is None:
            try:
                age = time.time() - folder.stat().st_mtime
            except OSError:
                continue
            if age < UNRECORDED_AGE_S or processes:
                continue
        for pid in processes:  # what its pods left running (nohup, setsid), an sshd that missed its signal
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    return removed
