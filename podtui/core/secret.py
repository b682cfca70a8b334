"""Keeping secrets (API keys, tokens) out of logs, screens and error messages."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

_lock = threading.Lock()
_secrets: set[str] = set()


def mask(value: str | None) -> str:
    """A recognisable but useless form of a secret: enough to tell two keys apart, not to use one."""
    if not value:
        return "(none)"
    if len(value) < 16:
        return "*" * 8
    return f"{value[:4]}…{value[-4:]}"


def register(value: str | None) -> None:
    """Remember a secret so `redact` (and the log filter) can scrub it wherever it turns up."""
    if value and len(value) >= 6:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)
    for s in secrets:
        if s in text:
            text = text.replace(s, mask(s))
    return text


def private_dir(path: Path) -> Path:
    """Make a folder of podtui's, owner-only (0700) whatever the umask; any folder above it that is missing is
    made owner-only too (podtui made it), folders that exist are left as they are but for `path` itself."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for p in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            p.mkdir(mode=0o700)
        p.chmod(0o700)
    if not missing and path.stat().st_uid == os.getuid():
        path.chmod(0o700)
    return path


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (0600), atomically, never leaving a readable moment."""
    private_dir(path.parent)
    replace_file(path, text.encode("utf-8"), 0o600)


def replace_file(path: Path, data: bytes, mode: int, owner: os.stat_result | None = None) -> None:
    """Replace `path` with `data` atomically (a crash leaves the old file whole), the new file `mode` from its first
    byte, and owned as `owner` (a file stat()ed before) where that can be kept."""
    import tempfile  # rare path; keeps it off start-up

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        if owner is not None:
            with contextlib.suppress(OSError):  # root editing another user's file keeps it theirs
                os.fchown(fd, owner.st_uid, owner.st_gid)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
