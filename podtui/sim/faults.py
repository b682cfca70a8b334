"""Fault switches for the simulated API: each makes the server misbehave the way RunPod's can."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Literal

FaultKind = Literal[
    "latency",  # value: seconds added before every answer
    "status",  # value: HTTP status (500, 502, 429...) with an HTML error page, as a gateway sends
    "hang",  # value: seconds to sit on the request before answering (client timeouts)
    "unauthorized",  # 401 whatever the key
    "graphql_error",  # value: message; HTTP 200 with errors[0].message
    "malformed",  # a JSON body cut off mid-way
    "partial",  # valid JSON with fields missing or of the wrong type
    "unknown_status",  # value: a desiredStatus RunPod has not documented
    "raw",  # value: the exact body to answer with (HTTP 200), e.g. {"errors": []} or NaN in a number
    "retry_after",  # value: Retry-After header (seconds or an HTTP date; None: no header); 429 with a JSON body
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]


@dataclass
class Fault:
    kind: FaultKind
    value: float | int | str | None = None
    times: int | None = None  # None: until cleared
    only: str | None = None  # applies only to GraphQL documents containing this, e.g. "podStop"


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: list[Fault] = []

    def add(
        self, kind: FaultKind, value: float | int | str | None = None, times: int | None = None, only: str | None = None
    ) -> Fault:
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; known: {', '.join(FAULT_KINDS)}")
        fault = Fault(kind, value, times, only)
        with self._lock:
            self._active.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._active.clear()

    def take(self, document: str = "") -> list[Fault]:
        """The faults that apply to this request (its GraphQL document), using up one of each counted fault."""
        with self._lock:
            hits = [f for f in self._active if f.only is None or f.only in document]
            for f in hits:
                if f.times is not None:
                    f.times -= 1
            self._active = [f for f in self._active if f.times is None or f.times > 0]
            return hits
