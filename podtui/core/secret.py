"""Keeping secrets (API keys, tokens) out of logs, screens and error messages."""

from __future__ import annotations

import contextlib
import io
import logging
import logging.handlers
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


class RedactingFilter(logging.Filter):
    """Scrubs every registered secret from a log record before any handler formats it out."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message or record.args:
            record.msg = cleaned
            record.args = None
        if record.exc_info and record.exc_info[1] is not None:
            # Tracebacks are formatted later from the exception itself, so scrub its text now.
            exc = record.exc_info[1]
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
            del exc
        return True


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose every file is the owner's only (0600) from its first byte: the first one and each
    one a rollover starts (RotatingFileHandler opens those with the umask's mode, 0644 as a rule)."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)  # a file an older podtui (or another program) made readable
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (0600), atomically, never leaving a readable moment."""
    import tempfile  # rare path; keeps it off start-up

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
