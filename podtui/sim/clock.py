"""Time for the simulated world: real by default, frozen or stepped by hand in tests and screenshots."""

from __future__ import annotations

import threading
import time


class SimClock:
    def __init__(self, start: float | None = None, frozen: bool = False) -> None:
        self._lock = threading.Lock()
        self._offset = 0.0
        self._frozen_at: float | None = start if frozen else None
        if start is not None and not frozen:
            self._offset = start - time.time()

    def now(self) -> float:
        with self._lock:
            if self._frozen_at is not None:
                return self._frozen_at
            return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        with self._lock:
            if self._frozen_at is not None:
                self._frozen_at += seconds
            else:
                self._offset += seconds

    @property
    def frozen(self) -> bool:
        return self._frozen_at is not None
