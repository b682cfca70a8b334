"""`GET /v2/pods/{id}/logs`: a pod's log as Server-Sent Events (docs/runpod-facts.md#rest-v2).

Each event is `id: {ts}` and `data: {"ts", "source", "line"}`, its time to the microsecond being its id. The
backfill is the last `tail` lines (100 unless asked; 0 for none; at most 5000), or every line from `since`, or
every line after `Last-Event-ID`, which takes precedence over both; then the stream follows the pod live and
never ends by itself. A pod that is still provisioning has its system log already.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime

from podtui.sim.clock import SimClock
from podtui.sim.pod_logs import LogEntry, PodLogs, micros
from podtui.sim.problem import Answer
from podtui.sim.sim_pod import SimPod
from podtui.sim.v2_request import Call, refuse

SOURCES = ("container", "system")
TAIL_DEFAULT = 100
TAIL_MAX = 5000
WAKE_S = 0.5  # a stream looks for new lines (and for the server stopping) at least this often
HEADERS = {"Cache-Control": "no-cache", "Connection": "keep-alive", "X-Accel-Buffering": "no"}


def pod_logs(call: Call) -> Answer:
    world = call.world
    with world.lock:
        pod = world.get(call.params["id"])
    source = call.one("source")
    if source is not None and source not in SOURCES:
        raise refuse(400, f"source must be container or system, not {source!r}", ["source: not a log source"])
    tail = _tail(call.one("tail"))
    since = _moment(call.one("since"), "since")
    # this endpoint's ids are times; an id of the spec's example's form, `{ts}/{sequence}`, is read by its time
    cursor = call.headers.get("Last-Event-ID") or None
    after = _moment(cursor.partition("/")[0] if cursor else None, "Last-Event-ID")
    stream = _events(world.logs, pod, world.clock, source, tail, since, after, call.stopping)
    return Answer(200, content_type="text/event-stream", headers=dict(HEADERS), stream=stream)


def _tail(raw: str | None) -> int:
    if raw is None:
        return TAIL_DEFAULT
    try:
        tail = int(raw)
    except ValueError:
        raise refuse(400, f"tail must be a whole number, not {raw!r}", ["tail: not an integer"]) from None
    if not 0 <= tail <= TAIL_MAX:
        raise refuse(400, f"tail must be from 0 to {TAIL_MAX}", ["tail: out of range"])
    return tail


def _moment(raw: str | None, name: str) -> int | None:
    """An RFC 3339 date-time as whole microseconds since the epoch; a 400 refusal when it is not one."""
    if raw is None:
        return None
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise refuse(400, f"{name} must be an RFC 3339 date-time", [f"{name}: not a date-time"]) from None
    if moment.tzinfo is None:
        raise refuse(400, f"{name} must give its time zone", [f"{name}: no time zone"])
    return micros(moment)


def _events(
    logs: PodLogs,
    pod: SimPod,
    clock: SimClock,
    source: str | None,
    tail: int,
    since: int | None,
    after: int | None,
    stopping: threading.Event,
) -> Iterator[bytes]:
    def shown(entry: LogEntry) -> bool:
        return source is None or entry.source == source

    with logs.lock:
        lines = logs.entries(pod, clock.now())  # always a prefix of the pod's log, by time
        if after is not None:
            backfill = [e for e in lines if shown(e) and e.us > after]
        elif since is not None:
            backfill = [e for e in lines if shown(e) and e.us >= since]
        else:
            backfill = [e for e in lines if shown(e)][-tail:] if tail else []
        last = lines[-1].seq if lines else 0
    for entry in backfill:
        yield _event(entry)
    while not stopping.is_set():
        with logs.changed:
            logs.changed.wait(WAKE_S)
            lines = logs.entries(pod, clock.now())
            new = [e for e in lines if e.seq > last and shown(e)]
            last = max(last, lines[-1].seq if lines else 0)
        for entry in new:
            yield _event(entry)


def _event(entry: LogEntry) -> bytes:
    data = json.dumps({"ts": entry.ts, "source": entry.source, "line": entry.line})
    return f"id: {entry.ts}\ndata: {data}\n\n".encode()
