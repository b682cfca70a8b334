"""The latest known state of the account, and how fresh it is.

When a poll fails the last good snapshot stays in use, marked stale with its age, beside the reason.
It also remembers since when each pod has been starting: RunPod gives a starting pod no runtime (so no
uptime), and a pod that never leaves CREATED bills nothing but does nothing either.
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from podtui.core.pod import Pod, Snapshot

# A pod still starting after this long is probably stuck (no machine with the GPUs free, an image that cannot
# be pulled): RunPod itself never gives up on it.
STUCK_STARTING_S = 600.0
STUCK_ADVICE = (
    "check its logs on runpod.io; stop and resume it, or terminate it and create it again "
    "(a different GPU type or cloud finds a machine sooner)"
)

# lastStatusChange is free text ending in a JS date (docs/runpod-facts.md#graphql):
# "Rented by User: Sat Nov 28 2026 22:14:03 GMT+0000 (Coordinated Universal Time)"
_JS_DATE = re.compile(r"\b([A-Z][a-z]{2}) (\d{1,2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT([+-])(\d{2})(\d{2})")
_MONTHS = {
    m: i
    for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)
}


def status_changed_at(text: str | None) -> float | None:
    """The instant in RunPod's lastStatusChange text, None when it holds no date podtui can read."""
    m = _JS_DATE.search(text or "")
    if m is None or m.group(1) not in _MONTHS:
        return None
    mon, day, year, hh, mm, ss, sign, oh, om = m.groups()
    try:
        t = time.struct_time((int(year), _MONTHS[mon], int(day), int(hh), int(mm), int(ss), 0, 0, 0))
        utc = float(calendar.timegm(t))
    except (ValueError, OverflowError):
        return None
    offset = (int(oh) * 3600 + int(om) * 60) * (1 if sign == "+" else -1)
    return utc - offset


def starting_since(pod: Pod, seen_at: float, known: Mapping[str, float], was_up: bool = False) -> float | None:
    """Since when `pod` has been starting: what podtui noted before; else `seen_at` if podtui saw it up before
    (its lastStatusChange then dates the old run, not this start); else RunPod's lastStatusChange (if it is
    not in the future); else `seen_at`. None if it is not starting."""
    if not pod.is_starting:
        return None
    if pod.id in known:
        return known[pod.id]
    changed = None if was_up else status_changed_at(pod.last_status_change)
    return changed if changed is not None and changed <= seen_at else seen_at


def starting_label(seconds: float) -> str:
    """How long a pod has been starting, as the list and `podtui pods` show it: "STARTING 12m", flagged once it
    may be stuck; plain "STARTING" for its first minute."""
    if seconds < 60:
        return "STARTING"
    minutes = int(seconds // 60)
    short = f"{minutes // 60}h{minutes % 60:02d}" if minutes >= 60 else f"{minutes}m"
    return f"STARTING {short}" + (" ⚠" if seconds >= STUCK_STARTING_S else "")


@dataclass
class PodFeed:
    snapshot: Snapshot | None = None
    error: str | None = None
    error_at: float | None = None
    failures: int = 0  # consecutive failed polls
    retry_after_s: float | None = None  # RunPod asked podtui to wait this long (429) before the next poll
    key_refused: bool = False  # the last poll's 401: anything sent with this key now would be refused too
    starting: dict[str, float] = field(default_factory=dict)  # pod id -> starting since (epoch s)

    def starting_after(self, snapshot: Snapshot) -> dict[str, float]:
        """pod id -> starting since, for the starting pods of `snapshot` (the next one; nothing is changed)."""
        up = {p.id for p in self.snapshot.pods if not p.is_starting} if self.snapshot is not None else set()
        return {
            p.id: since
            for p in snapshot.pods
            if (since := starting_since(p, snapshot.fetched_at, self.starting, p.id in up)) is not None
        }

    def succeeded(self, snapshot: Snapshot) -> None:
        self.starting = self.starting_after(snapshot)
        self.snapshot = snapshot
        self.error = None
        self.error_at = None
        self.failures = 0
        self.retry_after_s = None
        self.key_refused = False

    def failed(self, message: str, at: float, retry_after_s: float | None = None, key_refused: bool = False) -> None:
        self.error = message
        self.error_at = at
        self.failures += 1
        self.retry_after_s = retry_after_s
        self.key_refused = key_refused

    @property
    def stale(self) -> bool:
        return self.error is not None

    def age(self, now: float) -> float | None:
        """Seconds since the data on screen was fetched."""
        return None if self.snapshot is None else max(0.0, now - self.snapshot.fetched_at)

    def starting_for(self, pod_id: str, now: float) -> float | None:
        """How long the pod has been starting, as of `now`; None if it is not starting."""
        since = self.starting.get(pod_id)
        return None if since is None else max(0.0, now - since)

    def stuck(self, now: float | None = None) -> list[tuple[Pod, float]]:
        """Pods starting for longer than STUCK_STARTING_S, with how long, longest first (as of `now`, or of the
        data on screen)."""
        if self.snapshot is None:
            return []
        if now is None:
            now = self.snapshot.fetched_at
        out = [
            (p, s)
            for p in self.snapshot.pods
            if (s := self.starting_for(p.id, now)) is not None and s >= STUCK_STARTING_S
        ]
        return sorted(out, key=lambda ps: -ps[1])
