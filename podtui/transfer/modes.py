"""File modes of what the transfer code writes on this machine: the owner's only (0600 files, 0700 folders),
whatever the umask, until a download is verified and under its final name; then it gets the mode any new file
of the user's gets (0666 or 0777 less the umask), as `cp` would give it.

Staging archives, work folders, part files, unpack and receive folders and the history hold the user's data or
paths; a 0644 file in a 0755 folder would let every account on the machine read them.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from pathlib import Path

_umask_lock = threading.Lock()


def private_dir(path: Path, existing: bool = False) -> Path:
    """Make `path` (and each missing folder above it) mode 0700. existing: a `path` that is there already is
    podtui's own (its work folder), so it is set to 0700 too; otherwise it is left as it is."""
    missing = []
    here = path
    while not here.exists() and here != here.parent:
        missing.append(here)
        here = here.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another transfer made it a moment ago
            folder.mkdir(mode=0o700)
        os.chmod(folder, 0o700)
    if not missing:
        if not path.is_dir():
            raise NotADirectoryError(f"{path} is not a folder")
        if existing:
            os.chmod(path, 0o700)
    return path


def private_file(path: Path) -> Path:
    """An empty file at `path`, mode 0600, that a download then writes into (opening it to write keeps the mode).
    Never through a symlink planted at that name."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return path


def umask() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:  # no /proc: reading the umask means setting it, briefly
        old = os.umask(0o077)
        os.umask(old)
    return old


def publish(path: Path) -> None:
    """A verified file or folder now under its final name: the mode a new one of the user's would have."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISLNK(st.st_mode):
        return
    base = 0o777 if stat.S_ISDIR(st.st_mode) else 0o666
    with contextlib.suppress(OSError):
        os.chmod(path, base & ~umask())
