"""Reading a file that sits in the user's own folders (a config, a key, a token), which anything running as the
user can swap for something that is not a file: a FIFO (opening it waits for a writer forever), a directory, a
device (/dev/zero never ends). Such a path is refused with a line naming it and what it is; nothing blocks."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from podtui.core.visible import visible

MAX_BYTES = 4 << 20  # no config, key or token file comes near this

# a FIFO opened without O_NONBLOCK waits for a writer; O_NOCTTY: a terminal device never becomes ours
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotAFile(Exception):
    """The path is there but is not a regular file (or is far too big to be one podtui reads)."""


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _refuse(path: Path, what: str) -> NotAFile:
    return NotAFile(f"{visible(str(path))} is {what}, not a regular file; podtui did not read it")


def _too_big(path: Path, max_bytes: int) -> NotAFile:
    return NotAFile(
        f"{visible(str(path))} is larger than {max_bytes:,} bytes, far more than a config, key or "
        "token file holds; podtui did not read it"
    )


def _open_regular(path: Path) -> tuple[int, os.stat_result]:
    mode = os.stat(path).st_mode  # before opening: a device is never even opened
    if not stat.S_ISREG(mode):
        raise _refuse(path, _kind(mode))
    fd = os.open(path, _FLAGS)
    st = os.fstat(fd)  # what was opened, in case the path changed since the stat
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _refuse(path, _kind(st.st_mode))
    return fd, st


def read_user_file(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's bytes. Raises NotAFile for anything but a regular file, OSError when it cannot be read."""
    fd, st = _open_regular(path)
    try:
        if st.st_size > max_bytes:
            raise _too_big(path, max_bytes)
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # it grew while it was read
            raise _too_big(path, max_bytes)
        return b"".join(chunks)
    finally:
        os.close(fd)
