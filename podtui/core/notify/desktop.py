"""notify-send, where it exists (docs/alerts.md#notify-send): run with an argument list, never through a shell, in
a thread of its own with a timeout, so a desktop bus that hangs never holds up the app or `podtui watch`. A failure
(no desktop session on a server) is logged once; the alert still goes everywhere else."""

from __future__ import annotations

import html
import logging
import shutil
import subprocess
import threading
from collections.abc import Callable
from typing import Any

from podtui.core.alerts import Alert
from podtui.core.notify.terminal import safe_text

log = logging.getLogger(__name__)
TIMEOUT_S = 5.0
MAX_RUNNING = 2  # more at once (a burst of alerts, a hung bus) are dropped: the other places still have them
URGENCY = {"error": "critical", "warning": "normal", "information": "low"}


def find_program(name: str) -> str | None:
    return shutil.which(name)


class NotifySend:
    def __init__(
        self,
        which: Callable[[str], str | None] | None = None,
        run: Callable[..., Any] = subprocess.run,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        """which: how notify-send is found (None: on PATH, find_program)."""
        self.path = (which or find_program)("notify-send")
        self.run = run
        self.timeout_s = timeout_s
        self._slots = threading.BoundedSemaphore(MAX_RUNNING)
        self._told = False  # a failure is logged once
        self.threads: list[threading.Thread] = []  # the last few, for a test to join

    @property
    def available(self) -> bool:
        return self.path is not None

    def argv(self, alert: Alert) -> list[str]:
        # the body may be read as markup by the notification server: escaped; `--` ends the options whatever the
        # text starts with
        body = html.escape(safe_text(alert.text), quote=False)
        return [
            self.path or "notify-send",
            "--app-name=podtui",
            f"--urgency={URGENCY[alert.severity]}",
            "--",
            safe_text(alert.title, 80),
            body,
        ]

    def __call__(self, alert: Alert) -> None:
        if self.path is None or not self._slots.acquire(blocking=False):
            return
        t = threading.Thread(target=self._send, args=(self.argv(alert),), name="podtui-notify-send", daemon=True)
        self.threads = [*self.threads[-7:], t]
        t.start()

    def _send(self, argv: list[str]) -> None:
        try:
            done = self.run(argv, capture_output=True, timeout=self.timeout_s, check=False, stdin=subprocess.DEVNULL)
            code = getattr(done, "returncode", 0)
            if code:
                err = getattr(done, "stderr", b"") or b""
                self._failed(f"exit status {code}: {err.decode('utf-8', 'replace').strip()[:200]}")
        except (OSError, subprocess.SubprocessError) as e:
            self._failed(f"{type(e).__name__}: {e}")
        finally:
            self._slots.release()

    def _failed(self, why: str) -> None:
        if not self._told:
            self._told = True
            log.warning("notify-send failed (%s); alerts still go to the other places; said once", why)
