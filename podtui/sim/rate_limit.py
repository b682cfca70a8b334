"""REST v2's rate limit: a fixed window of requests per API key, told in RateLimit and RateLimit-Policy headers.

RunPod's headers name each window (`"minute";r=<left>;t=<seconds to reset>` and `"minute";q=<quota>;w=<length>`),
on every answer to an authenticated request; past the quota it answers 429 with Retry-After
(docs/runpod-facts.md#rest-v2). The window runs on this machine's monotonic clock, not the simulated one: a
frozen simulated clock would never reset it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_QUOTA = 600
DEFAULT_WINDOW_S = 60


@dataclass(frozen=True)
class Quota:
    allowed: bool  # this request is within the quota
    remaining: int
    reset_s: int  # seconds until the window starts again
    quota: int
    window_s: int

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit": f'"minute";r={self.remaining};t={self.reset_s}',
            "RateLimit-Policy": f'"minute";q={self.quota};w={self.window_s}',
        }


class RateWindow:
    def __init__(
        self,
        quota: int = DEFAULT_QUOTA,
        window_s: int = DEFAULT_WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.quota = quota
        self.window_s = window_s
        self._clock = clock
        self._lock = threading.Lock()
        self._windows: dict[str, tuple[float, int]] = {}  # key -> (window start, requests in it)

    def take(self, key: str) -> Quota:
        """Count one request of `key` (a refused one is not counted)."""
        now = self._clock()
        with self._lock:
            start, used = self._windows.get(key, (now, 0))
            if now - start >= self.window_s:
                start, used = now, 0
            allowed = used < self.quota
            if allowed:
                used += 1
            self._windows[key] = (start, used)
        reset = max(1, math.ceil(start + self.window_s - now))
        return Quota(allowed, self.quota - used, reset, self.quota, self.window_s)
