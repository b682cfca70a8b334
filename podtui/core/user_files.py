"""Reading a file that sits in the user's own folders (a config, a key, a token), which anything running as the
user can swap for something that is not a file: a FIFO (opening it waits for a writer forever), a directory, a
device (/dev/zero never ends). Such a path is refused with a line naming it and what it is; nothing blocks.
`read_json_member` reads the small JSON memories podtui keeps there (forwards, launches) the same way, and says in
one exception's text why one cannot be used."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TypeVar

from podtui.core.visible import visible

MAX_BYTES = 4 << 20  # no config, key or token file comes near this
T = TypeVar("T")

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


class Unusable(Exception):
    """A JSON file podtui keeps for itself that cannot be used; the text says why in words ("it is not JSON ..."),
    for a warning that names the file."""


_KIND_NAMES: dict[type, str] = {list: "list", dict: "object", str: "string"}


def read_json_member(path: Path, member: str, kind: type[T], max_bytes: int = MAX_BYTES) -> T | None:
    """`member` of the JSON object in `path` (a memory podtui keeps: forwards, launches), which must be a `kind`.
    None when there is no file; Unusable, saying why, when it cannot be read, is not UTF-8 JSON, or has no such
    member."""
    try:
        raw = read_user_file(path, max_bytes)
    except FileNotFoundError:
        return None
    except NotAFile as e:
        raise Unusable(str(e)) from None
    except OSError as e:
        raise Unusable(f"cannot read it: {e.strerror or e}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise Unusable(f"it is not JSON ({e})") from None
    value = data.get(member) if isinstance(data, dict) else None
    if not isinstance(value, kind):
        raise Unusable(f'it has no "{member}" {_KIND_NAMES.get(kind, kind.__name__)}')
    return value
