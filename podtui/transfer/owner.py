"""Which podtui a transfer belongs to: the process running it (and, inside that process, which queue).

Two podtuis (two TUIs, or a TUI and a `podtui push`) share one history file. Each job records its owner: the
machine (its host name and boot) and pid namespace, the process id, that process's start time (a pid alone may be
reused), a token naming one queue in that process, and whether that queue takes over other podtuis' jobs (a TUI)
or runs only its own (`podtui push|pull`). Another podtui shows such a job as its owner last wrote it and never
runs, fails, cancels, cleans up or kills anything of it while the owner lives; once the owner is gone, the next
podtui to look adopts the job (leftovers.py's liveness check decides, the same one that guards runpodctl
processes). An owner on another machine or in another pid namespace (a home shared between machines or
containers) cannot be looked up from here: its jobs are shown and never adopted (but a container of this machine
that ran before its last boot is gone). The user may forget such a job (TransferQueue.forget): it leaves the list,
and that podtui, if it still runs, goes on with it.

Which machine: the boot id, where both records have one (a random id per boot, shared by the containers of one
machine); the host name only without it, since it changes under a running process (DHCP, macOS network changes).
"""

from __future__ import annotations

import functools
import os
import secrets
import socket
import threading
from pathlib import Path
from typing import Any, Literal

from podtui.transfer import leftovers

Owner = dict[str, Any]  # {"host", "pidns", "boot", "pid", "started", "token", "adopts"}, as stored in the job
Liveness = Literal["alive", "gone", "unknown"]

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
_PID_NS = Path("/proc/self/ns/pid")
_open: set[str] = set()  # tokens of the queues open in this process
_open_lock = threading.Lock()


@functools.cache
def boot_id() -> str | None:
    """This boot of the machine (Linux): a process of an earlier boot is gone, whatever its pid."""
    try:
        return _BOOT_ID.read_text().strip() or None
    except OSError:
        return None


@functools.cache
def host() -> str | None:
    return socket.gethostname() or None


@functools.cache
def pid_namespace() -> str | None:
    """This process's pid namespace ("pid:[4026531836]"): pids name processes only inside one."""
    try:
        return os.readlink(_PID_NS) or None
    except OSError:
        return None


@functools.cache
def _own_start(pid: int) -> str | None:
    """This process's start time (per pid: a forked child is another process)."""
    return leftovers.start_time(pid)


def claim(adopts: bool = True) -> Owner:
    """A new owner: this process, for one queue, until release(). adopts: the queue takes over the jobs of
    podtuis that are gone, and another podtui may likewise run its queued jobs once it is gone; without it (a
    `podtui push|pull` someone waits on) its unfinished jobs come back failed instead, never run later."""
    me = os.getpid()
    token = secrets.token_hex(6)
    with _open_lock:
        _open.add(token)
    return {
        "host": host(),
        "pidns": pid_namespace(),
        "boot": boot_id(),
        "pid": me,
        "started": _own_start(me),
        "token": token,
        "adopts": adopts,
    }


def release(owner: Owner) -> None:
    """The queue is closed: its jobs are left for the next podtui (or queue) to adopt."""
    with _open_lock:
        _open.discard(str(owner.get("token")))


def same(a: object, b: object) -> bool:
    return (
        isinstance(a, dict)
        and isinstance(b, dict)
        and a.get("token") is not None
        and a.get("token") == b.get("token")
        and a.get("pid") == b.get("pid")
    )


def adopts(owner: object) -> bool:
    """Whether the owner's queued jobs may run later in another podtui (an owner from an older history: yes)."""
    return not isinstance(owner, dict) or owner.get("adopts") is not False


def _differs(owner: Owner, key: str, mine: str | None) -> bool:
    """Unrecorded (an older history) or unreadable here: taken as the same."""
    return owner.get(key) is not None and mine is not None and owner.get(key) != mine


Machine = Literal["this", "other", "restarted"]


def _machine(owner: Owner) -> Machine:
    """Where the owner ran: this machine in this boot, another machine, or this machine before it restarted."""
    theirs, mine = owner.get("boot"), boot_id()
    if theirs is not None and mine is not None and theirs == mine:
        return "this"  # one boot of one machine, whatever its host name says now
    if _differs(owner, "host", host()):
        return "other"  # two boots and two names, or no boot id to go by: another machine, as far as we know
    if theirs is not None and mine is not None:
        return "restarted"  # the same name, another boot
    return "this"


def _elsewhere(owner: Owner) -> bool:
    """On another machine or in another pid namespace: its pid means nothing here."""
    return _machine(owner) == "other" or _differs(owner, "pidns", pid_namespace())


def liveness(owner: object) -> Liveness:
    """Whether the podtui that owns a job still runs: "unknown" when it runs where this process cannot look. A job
    with no owner (an older history) has none alive."""
    if not isinstance(owner, dict):
        return "gone"
    machine = _machine(owner)
    if machine == "other":
        return "unknown"
    if machine == "restarted":
        return "gone"  # every process of the earlier boot is gone, whatever its pid namespace
    if _differs(owner, "pidns", pid_namespace()):
        return "unknown"
    pid = owner.get("pid")
    if pid == os.getpid() and owner.get("started") in (None, _own_start(pid)):
        with _open_lock:
            return "alive" if owner.get("token") in _open else "gone"  # this process: while that queue is open
    return "alive" if leftovers.alive(pid, owner.get("started")) else "gone"


def alive(owner: object) -> bool:
    """Whether the owner still runs as far as this process can tell; "unknown" counts as alive (never adopted)."""
    return liveness(owner) != "gone"


def describe(owner: object) -> str:
    """Who it is, for the pane and the CLI: "another podtui (pid 123)", or, on another machine or in another pid
    namespace, "a podtui on host X (pid 123), ..." saying that it is never taken over from here."""
    pid = owner.get("pid") if isinstance(owner, dict) else None
    which = f" (pid {pid})" if isinstance(pid, int) else ""
    if isinstance(owner, dict) and _elsewhere(owner):
        return f"a podtui {_place(owner)}{which}, which this one cannot look up, so it never takes its transfers over"
    return f"another podtui{which}"


def short(owner: object) -> str:
    """Who it is in a few words: "podtui pid 123 on host X" ("in another container", or nothing when here)."""
    pid = owner.get("pid") if isinstance(owner, dict) else None
    which = f"podtui pid {pid}" if isinstance(pid, int) else "another podtui"
    if isinstance(owner, dict) and _elsewhere(owner):
        return f"{which} {_place(owner)}"
    return which


def _place(owner: Owner) -> str:
    where = owner.get("host")
    if _machine(owner) == "other" and isinstance(where, str):
        return f"on host {where}"
    return "in another container (pid namespace)"
