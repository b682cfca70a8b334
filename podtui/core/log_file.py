"""podtui's log file: private from its first byte, every secret masked, one line per record whatever it quotes.

A value from outside (a pod's name, RunPod's error text) may hold a line feed followed by something that looks
like a log line of its own, or escape sequences aimed at whoever runs `tail -f` on the log: both are made
visible, so one record stays one line (a traceback excepted, whose every line is built by podtui).
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
from pathlib import Path

from podtui.core.crash import format_exception
from podtui.core.secret import redact
from podtui.core.visible import visible


class SafeLogFilter(logging.Filter):
    """Masks every registered secret and makes control characters visible, before any handler formats the record:
    the message with its arguments, and the traceback (formatted here, without locals)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not lose the record
            message = f"{record.msg!r} % {record.args!r}"
        record.msg = visible(redact(message))
        record.args = None
        if record.exc_info and record.exc_info[1] is not None:
            # Tracebacks are formatted later from the exception itself, so write it down now, safely.
            record.exc_text = format_exception(record.exc_info[1])
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = visible(redact(record.exc_text), lines=True)
        if record.stack_info:
            record.stack_info = visible(redact(record.stack_info), lines=True)
        return True


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose every file is the owner's only (0600) from its first byte: the first one and each
    one a rollover starts (RotatingFileHandler opens those with the umask's mode, 0644 as a rule)."""

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)  # a file an older podtui (or another program) made readable
        return open(fd, "a", encoding=self.encoding, errors=self.errors)


def log_location() -> Path | None:
    """Where podtui's log goes, once the CLI has set it up (tests and library use may have none)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, PrivateRotatingFileHandler):
            return Path(handler.baseFilename)
    return None
