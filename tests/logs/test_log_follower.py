"""The log follower on its own (docs/architecture.md#logs): streams scripted as a server would send them, drops
and errors included. No line lost, none shown twice, every state said."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from datetime import datetime, timezone

import pytest

from podtui.core.api.errors import (
    ApiAuthError,
    ApiNotFound,
    ApiQueryError,
    ApiRateLimited,
    ApiUnavailable,
    InvalidInput,
)
from podtui.core.api.rest import EventStream
from podtui.core.logs import (
    LogFollower,
    LogLine,
    LogRequest,
    StreamState,
    check_request,
    event_time,
    parse_event,
    shown,
    since_time,
)

NOW = 1_780_000_000.0  # 2026-05-28T20:26:40Z


def _event(n: int, line: str | None = None, source: str = "container", ts: float = NOW - 100) -> tuple[str, str]:
    stamp = datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"{stamp}/{n:012d}", json.dumps({"ts": stamp, "source": source, "line": line or f"line {n}"})


class Script:
    """Each connection's events, then how it ends: None (quiet: the events just stop), or an exception raised."""

    def __init__(self, *connections: tuple[list[tuple[str, str]], BaseException | None]) -> None:
        self.connections = list(connections)
        self.asked: list[str | None] = []  # the Last-Event-ID each connection was opened with

    @contextlib.contextmanager
    def open(self, request: LogRequest, last_id: str | None) -> Iterator[EventStream]:
        self.asked.append(last_id)
        if not self.connections:
            raise ApiNotFound("no more connections in this script", 404, ())
        events, end = self.connections.pop(0)
        if isinstance(end, ApiRateLimited | ApiAuthError) and not events:
            raise end

        def pairs() -> Iterator[tuple[str, str]]:
            yield from events
            if end is not None:
                raise end

        yield EventStream(NOW, pairs())


def _follow(script: Script, **kw: object) -> tuple[list[LogLine], list[StreamState], LogFollower]:
    states: list[StreamState] = []
    follower = LogFollower(script.open, LogRequest("pod1"), on_state=states.append, backoff_s=(0.0,), **kw)  # type: ignore[arg-type]
    lines: list[LogLine] = []
    with contextlib.suppress(ApiNotFound):  # the script has run out
        for line in follower.lines():
            lines.append(line)
    return lines, states, follower


def test_a_drop_resumes_from_the_last_line_without_a_gap_or_a_repeat() -> None:
    script = Script(
        ([_event(1), _event(2), _event(3)], ApiUnavailable("broke off")),
        ([_event(3), _event(4)], ApiUnavailable("broke off again")),  # the server repeats what it is asked after
        ([_event(4), _event(5)], None),
    )
    lines, states, _ = _follow(script)
    assert [line.text for line in lines] == [f"line {n}" for n in range(1, 6)]
    assert script.asked[0] is None
    assert script.asked[1] is not None and script.asked[1].endswith("/000000000003")
    assert script.asked[2] is not None and script.asked[2].endswith("/000000000004")
    downs = [s for s in states if not s.up]
    assert [s.reason for s in downs] == ["broke off", "broke off again"]
    assert downs[0].since == downs[1].since or downs[1].since >= downs[0].since


def test_down_since_is_the_first_failure_until_it_is_up_again() -> None:
    clock = iter([10.0, 20.0, 30.0, 40.0, 50.0])
    states: list[StreamState] = []

    @contextlib.contextmanager
    def failing(request: LogRequest, last_id: str | None) -> Iterator[EventStream]:
        raise ApiUnavailable("cannot reach RunPod's API")
        yield  # pragma: no cover

    follower = LogFollower(
        failing, LogRequest("pod1"), on_state=states.append, clock=lambda: next(clock), backoff_s=(0.0,)
    )
    lines = follower.lines()

    def stop_after_three(state: StreamState) -> None:
        states.append(state)
        if len(states) == 3:
            follower.stop()

    follower._on_state = stop_after_three
    assert list(lines) == []
    assert [s.since for s in states] == [10.0, 10.0, 10.0] and not any(s.up for s in states)


def test_rate_limited_waits_as_long_as_asked() -> None:
    waits: list[float | None] = []
    script = Script(([], ApiRateLimited("slow down", 7.0)), ([_event(1)], None))
    follower = LogFollower(script.open, LogRequest("pod1"), on_state=lambda s: waits.append(s.retry_in))
    follower._stop.wait = lambda timeout=None: False  # type: ignore[method-assign]  # no real waiting
    with contextlib.suppress(ApiNotFound):
        assert [line.text for line in follower.lines()] == ["line 1"]
    assert 7.0 in waits


@pytest.mark.parametrize("error", [ApiAuthError("refused"), ApiNotFound("gone", 404, ())])
def test_errors_that_make_following_pointless_end_it(error: Exception) -> None:
    script = Script(([], error))
    follower = LogFollower(script.open, LogRequest("pod1"), backoff_s=(0.0,))
    with pytest.raises(type(error)):
        list(follower.lines())
    assert len(script.asked) == 1


def test_events_that_are_not_log_lines_are_said_and_skipped() -> None:
    problems: list[str] = []
    bad = [
        ("a", "not json {"),
        ("b", json.dumps(["a", "list"])),
        ("c", json.dumps({"ts": "x", "source": "container"})),  # no line
        ("d", json.dumps({"ts": 5, "source": None, "line": "kept, with what it has"})),
        ("e", "[" * 100_000),  # deeper than Python parses
    ]
    follower = LogFollower(Script((bad, None)).open, LogRequest("pod1"), on_problem=problems.append)
    with contextlib.suppress(ApiNotFound):
        lines = [line.text for line in follower.lines(until_live=True)]
    assert lines == ["kept, with what it has"]
    assert len(problems) == 4 and all("\n" not in p for p in problems)


def test_until_live_ends_at_the_first_line_newer_than_the_servers_answer() -> None:
    script = Script(
        ([_event(1, ts=NOW - 5), _event(2, ts=NOW - 1), _event(3, ts=NOW + 2), _event(4, ts=NOW + 3)], None)
    )
    follower = LogFollower(script.open, LogRequest("pod1"))
    assert [line.text for line in follower.lines(until_live=True)] == ["line 1", "line 2"]


def test_until_live_resumes_a_drop_and_gives_up_only_after_every_retry() -> None:
    script = Script(([_event(1)], ApiUnavailable("broke off")), ([_event(1), _event(2)], None))
    follower = LogFollower(script.open, LogRequest("pod1"), backoff_s=(0.0,))
    assert [line.text for line in follower.lines(until_live=True)] == ["line 1", "line 2"]
    always = Script(*[([], ApiUnavailable(f"down {i}")) for i in range(5)])
    follower = LogFollower(always.open, LogRequest("pod1"), backoff_s=(0.0, 0.0))
    with pytest.raises(ApiUnavailable, match="down 2"):
        list(follower.lines(until_live=True))


def test_stop_from_another_thread_ends_a_wait_at_once() -> None:
    script = Script(*[([], ApiUnavailable("down")) for _ in range(3)])
    follower = LogFollower(script.open, LogRequest("pod1"), backoff_s=(3600.0,), on_state=lambda s: follower.stop())
    assert list(follower.lines()) == []


# --- what a line shows ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "seen"),
    [
        ("plain", "plain"),
        ("\x1b[32mgreen\x1b[0m text", "green text"),  # colours dropped
        ("10%\r50%\r100% done", "100% done"),  # a progress bar: its last state
        ("line\r\n", "line"),
        ("title \x1b]0;pwned\x07 here", "title \\x1b]0;pwned\\x07 here"),  # anything else: shown, inert
        ("clear \x1b[2J\x1b[H", "clear \\x1b[2J\\x1b[H"),
        ("bidi \u202e olleh", "bidi <U+202E> olleh"),
        ("c1 \x9b31m", "c1 \\x9b31m"),
        ("tab\tkept?", "tab\\tkept?"),
    ],
)
def test_a_line_shows_nothing_a_terminal_acts_on(raw: str, seen: str) -> None:
    assert shown(raw) == seen


def test_an_id_or_source_with_control_characters_is_made_visible() -> None:
    line = parse_event("id\x1b[2J", json.dumps({"ts": "t\x07", "source": "sys\x1btem", "line": "x"}))
    assert "\x1b" not in line.event_id + line.source and "\x07" not in line.ts


# --- what the user asks for -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ts", "when"),
    [
        ("2026-05-28T20:26:40Z", NOW),
        ("2026-05-28T20:26:40.250000Z", NOW + 0.25),
        ("2026-05-28T20:26:40.250000123Z", NOW + 0.25),  # nanoseconds, as container runtimes write them
        ("2026-05-28T22:26:40+02:00", NOW),
        ("2026-05-28T20:26:40", None),  # no zone: not a moment
        ("yesterday", None),
        ("", None),
    ],
)
def test_a_lines_time(ts: str, when: float | None) -> None:
    assert event_time(ts) == when


def test_since_reads_ago_dates_and_zones() -> None:
    assert since_time("10m", NOW) == "2026-05-28T20:16:40Z"
    assert since_time("2h", NOW) == "2026-05-28T18:26:40Z"
    assert since_time("1.5d", NOW) == "2026-05-27T08:26:40Z"
    assert since_time("2026-12-01T09:30", NOW) == "2026-12-01T09:30:00Z"
    assert since_time("2026-12-01T09:30:00+02:00", NOW) == "2026-12-01T07:30:00Z"
    assert since_time("2026-12-01T09:30:00Z", NOW) == "2026-12-01T09:30:00Z"


@pytest.mark.parametrize(
    ("source", "tail", "since", "said"),
    [
        ("stdout", 10, None, "source must be one of"),
        ("all", -1, None, "tail must be from 0 to 5000"),
        ("all", 5001, None, "tail must be from 0 to 5000"),
        ("all", 10, "yesterday", "since must be like"),
        ("all", 10, "10 parsecs", "since must be like"),
        ("all", 10, "\x1b[2J", "since must be like"),
    ],
)
def test_bad_requests_say_why(source: str, tail: int, since: str | None, said: str) -> None:
    with pytest.raises(InvalidInput, match=said) as e:
        check_request(source, tail, since)
    assert "\x1b" not in str(e.value)


def test_until_live_ends_once_the_tail_asked_for_is_out() -> None:
    """A log that never goes quiet (a line every 100 ms) still ends: at the last backfill line asked for."""
    script = Script(([_event(n) for n in range(1, 50)], None))
    follower = LogFollower(script.open, LogRequest("pod1", "all", 10))
    assert len(list(follower.lines(until_live=True))) == 10
    nothing = Script(([_event(1)], None))
    assert list(LogFollower(nothing.open, LogRequest("pod1", "all", 0)).lines(until_live=True)) == []
    assert nothing.asked == []  # --tail 0 without following asks for nothing


def test_a_refused_resume_goes_by_the_last_lines_time_once() -> None:
    problems: list[str] = []
    refused = ApiQueryError("RunPod refused GET /v2/pods/pod1/logs (400): Last-Event-ID must be a date-time", 400, ())
    script = Script(
        ([_event(1), _event(2)], ApiUnavailable("broke off")), ([], refused), ([_event(2), _event(3)], None)
    )
    follower = LogFollower(script.open, LogRequest("pod1"), on_problem=problems.append, backoff_s=(0.0,))
    with contextlib.suppress(ApiNotFound):
        assert [line.text for line in follower.lines()] == ["line 1", "line 2", "line 3"]
    assert script.asked[2] is None and follower.request.since is not None  # by time, its repeat dropped by id
    assert any("resuming from the last line's time" in p for p in problems)


def test_a_bad_request_is_not_tried_again() -> None:
    refused = ApiQueryError("RunPod refused GET /v2/pods/pod1/logs (400): tail out of range", 400, ())
    script = Script(([], refused), ([_event(1)], None))
    with pytest.raises(ApiQueryError):
        list(LogFollower(script.open, LogRequest("pod1"), backoff_s=(0.0,)).lines())
    assert len(script.asked) == 1


@pytest.mark.parametrize("event_id", ["2026-05-28T20:26:40Z\u00e9", "id\r\nX-Evil: 1", "", "x" * 300])
def test_an_id_that_cannot_go_back_in_a_header_is_not_resumed_from(event_id: str) -> None:
    _, data = _event(1)
    script = Script(([(event_id, data)], ApiUnavailable("broke off")), ([_event(2)], None))
    follower = LogFollower(script.open, LogRequest("pod1"), backoff_s=(0.0,))
    with contextlib.suppress(ApiNotFound):
        assert [line.text for line in follower.lines()] == ["line 1", "line 2"]
    assert script.asked[1] is None


@pytest.mark.parametrize("since", ["0001-01-01T00:00:00+01:00", "99999999d", "9999999999999999999999h"])
def test_a_since_no_calendar_holds_is_said(since: str) -> None:
    with pytest.raises(InvalidInput, match="since must be like"):
        check_request("all", 10, since)


def test_stop_closes_the_connection_under_a_waiting_read() -> None:
    closed: list[bool] = []

    @contextlib.contextmanager
    def waiting(request: LogRequest, last_id: str | None) -> Iterator[EventStream]:
        def events() -> Iterator[tuple[str, str]]:
            yield _event(1)
            raise ApiUnavailable("the read ended: its connection was closed")

        yield EventStream(NOW, events(), lambda: closed.append(True))

    states: list[StreamState] = []
    follower = LogFollower(waiting, LogRequest("pod1"), on_state=states.append)
    for _ in follower.lines():
        follower.stop()
    assert closed == [True] and all(s.up for s in states)  # stopping is not a drop
