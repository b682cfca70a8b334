"""A pod's logs as RunPod streams them (docs/runpod-facts.md#rest-v2, docs/architecture.md#logs): lines read from
Server-Sent Events, each with the id RunPod gave it, followed across dropped connections without losing a line or
showing one twice.

No HTTP here: `LogFollower` is given a function that opens one stream (core/api/v2.py's `open_pod_logs`), and it
does the reconnecting, the backing off and the de-duplication around it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal

from podtui.core import secret
from podtui.core.api.errors import (
    ApiAuthError,
    ApiError,
    ApiForbidden,
    ApiNotFound,
    ApiQueryError,
    ApiRateLimited,
    InvalidInput,
)
from podtui.core.api.rest import EventStream
from podtui.core.visible import visible

Source = Literal["container", "system", "all"]
SOURCES: tuple[Source, ...] = ("container", "system", "all")
TAIL_MAX = 5000  # RunPod backfills at most this many lines
TAIL_DEFAULT = 100
BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)  # after a drop; the last repeats
SEEN_KEPT = 4096  # ids remembered to drop a line a resumed stream sends again

_SGR = re.compile(r"\x1b\[[0-9;:]*m")  # colours: dropped, the rest of the line kept


@dataclass(frozen=True)
class LogLine:
    event_id: str  # RunPod's id, to resume from; "" when it has none that can be sent back (never shown)
    ts: str  # as RunPod sent it (RFC 3339), made visible
    source: str  # container or system (whatever RunPod says, made visible)
    text: str  # safe to show: colours dropped, what a terminal would leave after a carriage return, visible()

    def as_json(self) -> dict[str, str]:
        return {"ts": self.ts, "source": self.source, "line": self.text}


class LogEventError(ValueError):
    """An event that is not a log line: said in words, the stream goes on."""


def shown(raw: str) -> str:
    """A raw log line as it can be shown: a progress bar's last state (the text after its last carriage return),
    without colours, any secret podtui knows masked (a container that echoes its HF_TOKEN), and nothing left that a
    terminal would act on."""
    text = raw.rstrip("\r\n")
    if "\r" in text:
        text = text.rsplit("\r", 1)[1]
    return visible(secret.redact(_SGR.sub("", text)))


def parse_event(event_id: str, data: str) -> LogLine:
    """One SSE event's `id` and `data` (`{"ts", "source", "line"}`) as a LogLine; LogEventError when it is not."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        raise LogEventError(f"a log event that is not JSON: {visible(data[:80])}") from None
    if not isinstance(value, dict) or not isinstance(value.get("line"), str):
        raise LogEventError(f"a log event without a line: {visible(data[:80])}")
    ts = value.get("ts")
    source = value.get("source")
    return LogLine(
        event_id=event_id if _header_safe(event_id) else "",
        ts=visible(ts) if isinstance(ts, str) else "",
        source=visible(source) if isinstance(source, str) else "",
        text=shown(value["line"]),
    )


def _header_safe(event_id: str) -> bool:
    """Whether an id can go back to RunPod as Last-Event-ID as it came: printable ASCII, nothing a header could
    be split by. Any other is not used to resume (the line's time is), and never shown."""
    return 0 < len(event_id) <= 200 and event_id.isascii() and event_id.isprintable()


def check_request(source: str, tail: int, since: str | None) -> str | None:
    """`since` as RFC 3339 UTC (it may be given as `10m`, `2h`, `1d` ago, or a date), after checking the rest;
    InvalidInput with the reason when something is out of range."""
    if source not in SOURCES:
        raise InvalidInput(f"source must be one of {', '.join(SOURCES)}, not {visible(source)!r}")
    if not 0 <= tail <= TAIL_MAX:
        raise InvalidInput(f"tail must be from 0 to {TAIL_MAX} lines (RunPod's limit), not {tail}")
    if since is None:
        return None
    return since_time(since, time.time())


_AGO = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def since_time(text: str, now: float) -> str:
    """`10m` / `2h` / `1d` ago, or an ISO date or date-time (taken as UTC when it has no zone), as RFC 3339 UTC."""
    text = text.strip()
    m = _AGO.match(text)
    try:
        if m:
            when = now - float(m.group(1)) * _UNIT_S[m.group(2)]
            return datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError, OSError):  # not a date, or one no calendar here holds
        raise InvalidInput(f"since must be like 10m, 2h, 1d or 2026-12-01T09:30:00Z, not {visible(text)!r}") from None


_NANOS = re.compile(r"(\.\d{6})\d+")  # digits past the microsecond, which Python's dates do not hold


def event_time(ts: str) -> float | None:
    """A line's time as epoch seconds; None when RunPod's ts does not read as RFC 3339 with its zone."""
    try:
        moment = datetime.fromisoformat(_NANOS.sub(r"\1", ts.replace("Z", "+00:00")))
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


@dataclass(frozen=True)
class LogRequest:
    pod_id: str
    source: Source = "all"
    tail: int = TAIL_DEFAULT
    since: str | None = None  # RFC 3339


# Opens one stream; the last event id seen, if any, resumes it (the header takes precedence over tail and since).
OpenStream = Callable[[LogRequest, "str | None"], AbstractContextManager[EventStream]]


@dataclass(frozen=True)
class StreamState:
    """What the follower says about its connection, for the screen's status line."""

    up: bool
    since: float  # this machine's clock: when it came up, or went down
    reason: str = ""  # why it is down
    retry_in: float | None = None  # seconds until the next attempt


class LogFollower:
    """Follows a pod's log: the backfill, then live lines, reconnecting after a drop with backoff and resuming with
    Last-Event-ID from the last line it passed on, so no line is lost and none is passed on twice."""

    def __init__(
        self,
        open_stream: OpenStream,
        request: LogRequest,
        on_state: Callable[[StreamState], None] = lambda state: None,
        on_problem: Callable[[str], None] = lambda text: None,
        clock: Callable[[], float] = time.time,
        backoff_s: tuple[float, ...] = BACKOFF_S,
    ) -> None:
        self._open = open_stream
        self.request = request
        self._on_state = on_state
        self._on_problem = on_problem
        self._clock = clock
        self._backoff = backoff_s
        self.last_id: str | None = None
        self._last_ts: str | None = None  # the last line's time: a resume RunPod refuses by id goes by it
        self._current: EventStream | None = None
        self._seen: deque[str] = deque(maxlen=SEEN_KEPT)
        self._seen_set: set[str] = set()
        self._stop = threading.Event()

    def stop(self) -> None:
        """From any thread: the follower ends at once, its connection closed under a read that waits for a line."""
        self._stop.set()
        current = self._current
        if current is not None and current.close is not None:
            # closing from another thread: whatever the transport says of it, the follower is over
            with contextlib.suppress(Exception):
                current.close()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def lines(self, until_live: bool = False) -> Iterator[LogLine]:
        """Every line, in order, until stop(). until_live: end once the backfill is out, at the first line newer
        than the moment the server answered, or when the stream goes quiet (`podtui logs` without --follow); a drop
        meanwhile is resumed all the same. Raises the ApiError that makes following pointless (a wrong key, the pod
        gone), and in until_live mode the last error once every retry has failed."""
        failures = 0
        up = False
        down_since: float | None = None
        passed = 0  # lines passed on: until_live ends once the backfill asked for is out
        if until_live and self._backfill_out(passed):  # --tail 0 without following: nothing was asked for
            return
        while not self._stop.is_set():
            try:
                with self._open(self.request, self.last_id) as opened:
                    self._current = opened
                    if not up:
                        up, down_since = True, None
                        self._on_state(StreamState(True, self._clock()))
                    for event_id, data in opened.events:
                        if self._stop.is_set():
                            return
                        line = self._line(event_id, data)
                        if line is None:
                            continue
                        if until_live and _after(line, opened.server_now):
                            return
                        failures = 0  # a connection that carries lines is a good one, whatever ends it later
                        yield line
                        passed += 1
                        if until_live and self._backfill_out(passed):
                            return
                # the events end only when the stream stays quiet for the read timeout: resumed at once
                if until_live:
                    return
                continue
            except ApiError as e:
                if self._stop.is_set():  # stop() closed the connection under the read: nothing went wrong
                    return
                if self._resume_by_time(e):
                    continue
                if isinstance(e, ApiAuthError | ApiForbidden | ApiNotFound | ApiQueryError | InvalidInput):
                    raise  # another try would only be refused again
                if until_live and failures >= len(self._backoff):
                    raise
                why = str(e)
                wait = (
                    e.retry_after_s
                    if isinstance(e, ApiRateLimited)
                    else self._backoff[min(failures, len(self._backoff) - 1)]
                )
            failures += 1
            up = False
            down_since = self._clock() if down_since is None else down_since
            self._on_state(StreamState(False, down_since, why, wait))
            if self._stop.wait(wait):
                return

    def _resume_by_time(self, error: ApiError) -> bool:
        """RunPod refused to resume from an id (400): once, from the last line's time instead, the repeats that
        brings dropped by their ids. False when that does not apply, or was tried."""
        if not isinstance(error, ApiQueryError) or error.status != 400 or self.last_id is None:
            return False
        if self._last_ts is None or self.request.since == self._last_ts:
            return False
        self.request = dataclasses.replace(self.request, since=self._last_ts)
        self.last_id = None
        self._on_problem(f"{error}; resuming from the last line's time")
        return True

    def _backfill_out(self, passed: int) -> bool:
        """Whether every line the backfill was asked for has come: `tail` of them (a `since` has no count)."""
        return self.request.since is None and passed >= self.request.tail

    def _line(self, event_id: str, data: str) -> LogLine | None:
        try:
            line = parse_event(event_id, data)
        except LogEventError as e:
            self._on_problem(str(e))
            return None
        if line.event_id:
            if line.event_id in self._seen_set:  # a resumed stream sent it again
                return None
            if len(self._seen) == self._seen.maxlen:
                self._seen_set.discard(self._seen[0])
            self._seen.append(line.event_id)
            self._seen_set.add(line.event_id)
            self.last_id = line.event_id
        else:  # no id that can be sent back: a resume goes by the line's time
            self.last_id = None
        if line.ts:
            self._last_ts = line.ts
        return line


def _after(line: LogLine, server_now: float | None) -> bool:
    """Whether the line came after the server answered. Its Date header is in whole seconds: a line within that
    second may be either, and is shown."""
    if server_now is None:
        return False
    when = event_time(line.ts)
    return when is not None and when >= server_now + 1.0
