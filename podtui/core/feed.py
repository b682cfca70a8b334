"""The latest known state of the account, and how fresh it is.

When a poll fails the last good snapshot stays in use, marked stale with its age, beside the reason.
It also remembers since when each pod has been starting: RunPod gives a starting pod no runtime (so no
uptime), and a pod that never leaves PROVISIONING or STARTING bills nothing but does nothing either.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from podtui.core.pod import Pod, Snapshot

# A pod still starting after this long is probably stuck (no machine with the GPUs free, an image that cannot
# be pulled): RunPod itself never gives up on it.
STUCK_STARTING_S = 600.0
# {logs}: the key (or command) that shows the pod's logs; its system log says why it does not come up
STUCK_ADVICE = (
    "{logs} shows its system log, which says why; stop and resume it (unless it is locked), or terminate it and "
    "create it again (a different GPU type or cloud finds a machine sooner)"
)


def starting_since(pod: Pod, seen_at: float, known: Mapping[str, float], was_up: bool = False) -> float | None:
    """Since when `pod` has been starting: what podtui noted before; else, for a pod that has never run (no
    startedAt), its createdAt (if not in the future); else `seen_at`, podtui's first sight. None if not starting.

    RunPod gives no time for the current start: a pod that ran before keeps its old createdAt and startedAt through
    a resume, so either would call a pod resumed a second ago stuck for days."""
    if not pod.is_starting:
        return None
    if pod.id in known:
        return known[pod.id]
    created = pod.created_at
    if not was_up and pod.started_at is None and created is not None and created <= seen_at:
        return created
    return seen_at


def starting_label(seconds: float, word: str = "STARTING") -> str:
    """How long a pod has been starting, as the list and `podtui pods` show it: "STARTING 12m" (or PROVISIONING),
    flagged once it may be stuck; the plain word for its first minute."""
    if seconds < 60:
        return word
    minutes = int(seconds // 60)
    short = f"{minutes // 60}h{minutes % 60:02d}" if minutes >= 60 else f"{minutes}m"
    return f"{word} {short}" + (" ⚠" if seconds >= STUCK_STARTING_S else "")


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
