"""Which podtui a transfer belongs to: the process running it (and, inside that process, which queue).

Two podtuis (two TUIs, or a TUI and a `podtui push`) share one history file. Each job records its owner: the
process id, that process's start time (a pid alone may be reused), the machine's boot, and a token naming one
queue in that process. Another podtui shows such a job as its owner last wrote it and never runs, fails,
cancels, cleans up or kills anything of it while the owner lives; once the owner is gone, the next podtui to
look adopts the job (leftovers.py's liveness check decides, the same one that guards runpodctl processes).
"""

from __future__ import annotations

import functools
import os
import secrets
import threading
from pathlib import Path
from typing import Any

from podtui.transfer import leftovers

Owner = dict[str, Any]  # {"pid", "started", "boot", "token"}, as stored in the job

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
_open: set[str] = set()  # tokens of the queues open in this process
_open_lock = threading.Lock()


@functools.cache
def boot_id() -> str | None:
    """This boot of the machine (Linux): a process of an earlier boot is gone, whatever its pid."""
    try:
        return _BOOT_ID.read_text().strip() or None
    except OSError:
        return None


def claim() -> Owner:
    """A new owner: this process, for one queue, until release()."""
    me = os.getpid()
    token = secrets.token_hex(6)
    with _open_lock:
        _open.add(token)
    return {"pid": me, "started": leftovers.start_time(me), "boot": boot_id(), "token": token}


def release(owner: Owner) -> None:
    """The queue is closed: its jobs are left for the next podtui (or queue) to adopt."""
    with _open_lock:
        _open.discard(str(owner.get("token")))


def same(a: object, b: object) -> bool:
    return isinstance(a, dict) and isinstance(b, dict) and a.get("token") is not None \
        and a.get("token") == b.get("token") and a.get("pid") == b.get("pid")


def alive(owner: object) -> bool:
    """Whether the podtui that owns a job still runs. A job with no owner (an older history) has none alive."""
    if not isinstance(owner, dict):
        return False
    boot, now = owner.get("boot"), boot_id()
    if boot is not None and now is not None and boot != now:
        return False  # the machine restarted since
    pid = owner.get("pid")
    if pid == os.getpid() and owner.get("started") in (None, leftovers.start_time(os.getpid())):
        with _open_lock:
            return owner.get("token") in _open  # this process: alive while that queue is open
    return leftovers.alive(pid, owner.get("started"))


def describe(owner: object) -> str:
    pid = owner.get("pid") if isinstance(owner, dict) else None
    return f"another podtui (pid {pid})" if isinstance(pid, int) else "another podtui"
