"""What a running transfer reports: its state, bytes moved, rate and ETA, log lines; and whether to stop.

Every runner and route reports through one Reporter, which also carries the cancel switch: a cancelled
transfer stops at its next progress report, which every route makes at least once per chunk.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from podtui.transfer.job import State, TransferJob

RATE_WINDOW_S = 3.0  # the rate shown is over the last few seconds, so it follows a link that slows down


class TransferCancelled(Exception):
    """The user cancelled the transfer."""


class Reporter:
    def __init__(
        self,
        job: TransferJob,
        notify: Callable[[TransferJob], None],
        lock: threading.Lock | None = None,
        min_interval_s: float = 0.1,
    ) -> None:
        self.job = job
        self._notify = notify
        self.lock = lock or threading.Lock()
        self.cancel = threading.Event()
        # set with cancel when podtui closes rather than the user cancelling: work that runs on the pod by
        # itself (a Hugging Face download) is left running, to be re-attached to next time
        self.closing = False
        self._samples: deque[tuple[float, int]] = deque()
        self._last_sent = 0.0
        self.min_interval_s = min_interval_s

    def check(self) -> None:
        if self.cancel.is_set():
            raise TransferCancelled("cancelled")

    def stage(self, state: State, line: str | None = None) -> None:
        with self.lock:
            self.job.state = state
            if state == "transferring":
                self._samples.clear()
            if line:
                self.job.note(line)
        self._send(force=True)
        self.check()

    def note(self, line: str) -> None:
        with self.lock:
            self.job.note(line)
        self._send(force=True)

    def remember(self, entry: dict[str, Any]) -> None:
        """A process that must not outlive this transfer (see leftovers.py); saved with the job at once."""
        with self.lock:
            self.job.leftovers.append(entry)
        self._send(force=True)

    def forget(self, entry: dict[str, Any]) -> None:
        with self.lock:
            if entry in self.job.leftovers:
                self.job.leftovers.remove(entry)
        self._send(force=True)

    def progress(self, done: int, total: int | None, rate: float | None = None, eta: float | None = None) -> None:
        now = time.monotonic()
        with self.lock:
            job = self.job
            job.done_bytes, job.total_bytes = done, total if total is not None else job.total_bytes
            self._samples.append((now, done))
            while len(self._samples) > 2 and now - self._samples[0][0] > RATE_WINDOW_S:
                self._samples.popleft()
            if rate is None and len(self._samples) >= 2:
                (t0, d0), (t1, d1) = self._samples[0], self._samples[-1]
                rate = (d1 - d0) / (t1 - t0) if t1 > t0 and d1 >= d0 else None
            job.rate_bytes_per_s = rate
            if eta is None and rate and job.total_bytes:
                eta = max(0.0, (job.total_bytes - done) / rate)
            job.eta_s = eta
        self._send()
        self.check()

    def _send(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last_sent >= self.min_interval_s:
            self._last_sent = now
            self._notify(self.job)
