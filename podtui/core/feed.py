"""The latest known state of the account, and how fresh it is.

When a poll fails the last good snapshot stays in use, marked stale with its age, beside the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from podtui.core.pod import Snapshot


@dataclass
class PodFeed:
    snapshot: Snapshot | None = None
    error: str | None = None
    error_at: float | None = None
    failures: int = 0  # consecutive failed polls

    def succeeded(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.error = None
        self.error_at = None
        self.failures = 0

    def failed(self, message: str, at: float) -> None:
        self.error = message
        self.error_at = at
        self.failures += 1

    @property
    def stale(self) -> bool:
        return self.error is not None

    def age(self, now: float) -> float | None:
        """Seconds since the data on screen was fetched."""
        return None if self.snapshot is None else max(0.0, now - self.snapshot.fetched_at)
