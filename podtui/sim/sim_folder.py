"""The simulator's temporary folder, and the ones killed runs left behind.

A simulator removes its folder when it stops. A run that is killed outright (SIGKILL, a crash of the
interpreter) cannot, so each folder records who made it: the process id and that process's start time, this
machine's boot, machine id and host name, the PID namespace it counted in, and the user. Every new folder's making
first removes the folders whose maker is gone, and ends what their pods left running (each pod's container, known
by its init's pid and start time; the processes that name the folder). A folder is only ever removed when it is
ours to judge and its maker is gone: a directory of this user's, with a valid record of this machine and PID
namespace (or of this machine before it last started), and nothing in it that a simulator does not make. A folder
with no record (a user's own podtui-sim-notes, one being made this instant), another machine's or container's
(a TMPDIR they share), another user's, is left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import tempfile
from pathlib import Path
from typing import Any

from podtui.sim.pod_container import start_time
from podtui.sim.pod_view import SPEC, replace_whole

PREFIX = "podtui-sim-"
OWNER = "owner.json"
# what a simulator run makes in its folder (Simulator, and the demo's key and known hosts)
LAYOUT = frozenset({OWNER, "pods", "bin", "demo_key", "demo_key.pub", "known_hosts"})


def make_sim_folder() -> Path:
    sweep()
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))  # 0700
    replace_whole(folder / OWNER, json.dumps(_identity(os.getpid())).encode())
    return folder


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _pid_namespace() -> int | None:
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None


def _identity(pid: int) -> dict[str, object]:
    return {
        "pid": pid,
        "start": start_time(pid),
        "boot": _read("/proc/sys/kernel/random/boot_id"),
        "machine": _read("/etc/machine-id"),
        "host": socket.gethostname(),
        "pidns": _pid_namespace(),
        "uid": os.geteuid(),
    }


def _record(folder: Path) -> dict[str, Any] | None:
    """The folder's owner record, when it is a regular file of this user's holding a valid one."""
    path = folder / OWNER
    try:
        st = path.lstat()
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return None
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int) or record.get("uid") != os.geteuid():
        return None
    return record


def owner_alive(folder: Path) -> bool | None:
    """Whether the process that made `folder` still runs; None: not ours to judge (no valid record, or one made on
    another machine, in another container or PID namespace)."""
    record = _record(folder)
    if record is None:
        return None
    me = _identity(os.getpid())
    if record.get("boot") != me["boot"]:
        # this machine before it last started, or another machine (or a container of another's) sharing TMPDIR
        same_machine = (
            me["machine"] is not None and record.get("machine") == me["machine"] and record.get("host") == me["host"]
        )
        return False if same_machine else None
    if record.get("pidns") != me["pidns"] or record.get("host") != me["host"]:
        return None  # another container on this kernel: its pids are not ours
    pid = int(record["pid"])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return record.get("start") is None or record.get("start") == start_time(pid)


def _as_made(folder: Path) -> bool:
    """Only what a simulator makes, and no entry that is another user's."""
    try:
        entries = list(os.scandir(folder))
        return all(e.name in LAYOUT and e.stat(follow_symlinks=False).st_uid == os.geteuid() for e in entries)
    except OSError:
        return False


def containers_of(folder: Path) -> list[tuple[int, int]]:
    """(pid, start time) of the init of each pod container a run in `folder` recorded (pods/*/view.json)."""
    found = []
    for spec in sorted((folder / "pods").glob(f"*/{SPEC}")):
        try:
            init = json.loads(spec.read_text(encoding="utf-8")).get("init")
            found.append((int(init["pid"]), int(init["start"])))
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            continue
    return found


def processes_of(folder: Path) -> list[int]:
    """Processes of a simulator run in `folder` that name it: its pods' when they have no container (their
    environment names their folder) and its sshds (their command line names their config there). Linux /proc."""
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
            arg.startswith(named) for arg in cmdline.split(b"\0")
        ):
            found.append(int(entry.name))
    return found


def end_containers(folder: Path) -> None:
    """Kill the init of each pod container a run in `folder` recorded that still runs: the kernel ends the rest."""
    for pid, started in containers_of(folder):
        if start_time(pid) == started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def end_run(folder: Path, same_boot: bool = True) -> None:
    """End what a run in `folder` left running: its pods' containers (killing an init ends everything in it; not
    when the run was before this machine last started: its pids are others' now), then whatever names the
    folder."""
    if same_boot:
        end_containers(folder)
    for pid in processes_of(folder):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def sweep(temp: Path | None = None) -> list[Path]:
    """Remove the folders of simulator runs that were killed; returns them."""
    removed = []
    for folder in sorted(Path(temp or tempfile.gettempdir()).glob(PREFIX + "*")):
        try:
            st = folder.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            continue
        if owner_alive(folder) is not False or not _as_made(folder):
            continue
        record = _record(folder) or {}
        end_run(folder, same_boot=record.get("boot") == _read("/proc/sys/kernel/random/boot_id"))
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    return removed
