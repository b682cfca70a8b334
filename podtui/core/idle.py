"""Which pods sit idle: GPU utilisation under a threshold for a whole window, and nobody typing into a console.

Fed one sample per pod per poll, with times from an injected clock (tests move simulated time; nothing sleeps).
A pod turns idle once; it is announced once, and again only after it has been busy in between.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_THRESHOLD_PCT = 5.0
DEFAULT_WINDOW_S = 15 * 60.0


@dataclass
class _Track:
    low_since: float | None = None  # start of the current stretch under the threshold
    last_sample: float | None = None
    announced: bool = False
    last_input: float | None = None  # last keystroke sent to this pod from one of our consoles


@dataclass(frozen=True)
class IdleState:
    idle: bool
    since: float | None  # when the idle stretch began (the first low sample)
    seconds: float  # how long it has lasted so far

    def cost(self, per_hr: float) -> float:
        return per_hr * self.seconds / 3600.0


@dataclass
class IdleTracker:
    threshold_pct: float = DEFAULT_THRESHOLD_PCT
    window_s: float = DEFAULT_WINDOW_S
    max_gap_s: float = 600.0  # samples further apart than this (a sleeping laptop, failed polls) restart it
    _tracks: dict[str, _Track] = field(default_factory=dict)

    def observe(self, pod_id: str, gpu_util: float | None, at: float) -> None:
        """One poll's figure for a running pod. No figure is no evidence of idleness: the stretch ends, as it does
        when the samples are too far apart to say what happened in between."""
        t = self._tracks.setdefault(pod_id, _Track())
        gap = t.last_sample is not None and at - t.last_sample > self.max_gap_s
        t.last_sample = at
        if gpu_util is None or gpu_util >= self.threshold_pct:
            t.low_since, t.announced = None, False
        elif t.low_since is None or gap:
            t.low_since, t.announced = at, False

    def typed(self, pod_id: str, at: float) -> None:
        """A console of ours sent input to the pod: someone is using it."""
        t = self._tracks.setdefault(pod_id, _Track())
        t.last_input, t.announced = at, False

    def forget(self, pod_id: str) -> None:
        """The pod stopped or went away: its idle stretch ends."""
        self._tracks.pop(pod_id, None)

    def keep_only(self, pod_ids: set[str]) -> None:
        for gone in set(self._tracks) - pod_ids:
            del self._tracks[gone]

    def state(self, pod_id: str, now: float) -> IdleState:
        t = self._tracks.get(pod_id)
        if t is None or t.low_since is None:
            return IdleState(False, None, 0.0)
        start = t.low_since
        if t.last_input is not None and t.last_input > start:
            start = t.last_input  # typing resets the clock: the window counts from the last keystroke
        seconds = max(0.0, now - start)
        return IdleState(seconds >= self.window_s, start, seconds)

    def newly_idle(self, now: float) -> list[str]:
        """Pods that turned idle since the last call: each is returned once per idle stretch."""
        out = []
        for pod_id, t in self._tracks.items():
            if not t.announced and self.state(pod_id, now).idle:
                t.announced = True
                out.append(pod_id)
        return out
