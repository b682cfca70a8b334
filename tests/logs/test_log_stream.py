"""A pod's log through the simulator's real HTTP server (docs/architecture.md#logs): Server-Sent Events as RunPod
sends them, the backfill's options, resuming with Last-Event-ID, and drops mid-stream."""

from __future__ import annotations

import functools
import json
import threading
import time

import httpx
import pytest

from podtui.core.api import V2Api
from podtui.core.api.errors import ApiNotFound, ApiRateLimited
from podtui.core.logs import LogFollower, LogLine, LogRequest, StreamState
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

POD = DEMO_IDS["train"]


def _lines(api: V2Api, request: LogRequest) -> list[LogLine]:
    opener = functools.partial(api.open_pod_logs, quiet_s=1.0)
    return list(LogFollower(opener, request).lines(until_live=True))


def test_the_backfill_is_the_last_lines_asked_for(api: V2Api, sim: SimApiServer) -> None:
    sim.world.clock.advance(60)  # the training loop prints every 5 s
    lines = _lines(api, LogRequest(POD, "all", 5))
    assert len(lines) == 5
    assert all(line.source == "container" and "loss" in line.text for line in lines)
    ids = [line.event_id for line in lines]
    assert ids == sorted(ids) and len(set(ids)) == 5
    assert [len(_lines(api, LogRequest(POD, "all", n))) for n in (0, 1, 40)] == [0, 1, 40]


def test_sources_and_since(api: V2Api, sim: SimApiServer) -> None:
    system = _lines(api, LogRequest(POD, "system", 5000))
    assert system and all(line.source == "system" for line in system)
    assert any("start container" in line.text for line in system)
    container = _lines(api, LogRequest(POD, "container", 5000))
    assert container and all(line.source == "container" for line in container)
    assert any("Starting SSH service" in line.text for line in container)
    every = _lines(api, LogRequest(POD, "all", 5000))
    assert len(every) == len(system) + len(container)
    last = every[-3]
    since = _lines(api, LogRequest(POD, "all", 5000, since=last.ts))
    assert since and since[0].ts >= last.ts and since[-1] == every[-1]


def test_a_pod_still_provisioning_has_its_system_log(api: V2Api, sim: SimApiServer) -> None:
    """The system log is how a user learns why a pod never comes up: it is there before the pod runs."""
    pod = DEMO_IDS["starting"]  # still provisioning in the demo
    lines = _lines(api, LogRequest(pod, "all", 100))
    assert any("pulling image" in line.text for line in lines)


def test_a_failed_start_says_why(api: V2Api, sim: SimApiServer) -> None:
    sim.world.fail(POD, "Container exited with an error")
    lines = _lines(api, LogRequest(POD, "all", 10))
    texts = [line.text for line in lines]
    assert any("CUDA out of memory" in t for t in texts)
    assert any("exited with code 1" in t for t in texts)


def test_a_stopped_pod_says_so_and_makes_no_more_lines(api: V2Api, sim: SimApiServer) -> None:
    sim.world.stop(POD)
    before = _lines(api, LogRequest(POD, "all", 5000))
    assert "stop container" in before[-1].text
    sim.world.clock.advance(600)
    assert _lines(api, LogRequest(POD, "all", 5000)) == before


def test_a_drop_mid_stream_loses_nothing_and_repeats_nothing(api: V2Api, sim: SimApiServer) -> None:
    sim.world.clock.advance(300)  # 60 lines of training
    whole = _lines(api, LogRequest(POD, "all", 200))
    sim.faults.add("drop_stream", 7, times=2, only="/logs")  # the first two connections are cut after 7 events each
    states: list[StreamState] = []
    opener = functools.partial(api.open_pod_logs, quiet_s=1.0)
    follower = LogFollower(opener, LogRequest(POD, "all", 200), on_state=states.append, backoff_s=(0.05,))
    got = list(follower.lines(until_live=True))
    assert [line.event_id for line in got] == [line.event_id for line in whole]
    downs = [s for s in states if not s.up]
    assert len(downs) == 2 and all("broke off" in s.reason for s in downs)
    assert sum(e == f"GET /v2/pods/{POD}/logs" for e in sim.rest_requests) == 4  # whole, then three


def test_following_live_lines_as_they_come(api: V2Api, sim: SimApiServer) -> None:
    opener = functools.partial(api.open_pod_logs, quiet_s=5.0)
    follower = LogFollower(opener, LogRequest(POD, "container", 0))  # no backfill: live only
    got: list[LogLine] = []

    def follow() -> None:
        for line in follower.lines():
            got.append(line)
            if len(got) == 3:
                follower.stop()

    reader = threading.Thread(target=follow)
    reader.start()
    for _ in range(40):
        if len(got) >= 3:
            break
        sim.world.clock.advance(5)
        reader.join(0.25)
    follower.stop()
    reader.join(10)
    assert not reader.is_alive()
    assert len(got) == 3 and all("loss" in line.text for line in got)


def test_the_event_stream_is_what_the_spec_says(sim: SimApiServer) -> None:
    """On the wire: text/event-stream, no-cache, an `id:` line and a JSON `data:` line per event, chunked."""
    headers = {"Authorization": f"Bearer {sim.api_key}"}
    with (
        httpx.Client(base_url=sim.url, headers=headers) as client,
        client.stream("GET", f"/v2/pods/{POD}/logs", params={"tail": 2}, timeout=5) as answer,
    ):
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("text/event-stream")
        assert answer.headers["cache-control"] == "no-cache"
        assert answer.headers["x-accel-buffering"] == "no"
        assert answer.headers["transfer-encoding"] == "chunked"
        text = ""
        for chunk in answer.iter_text():
            text += chunk
            if text.count("\n\n") >= 2:
                break
    first = text.split("\n\n")[0].split("\n")
    assert first[0].startswith("id: ") and first[1].startswith('data: {"ts": ')


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"tail": "-1"}, 400),
        ({"tail": "5001"}, 400),
        ({"tail": "ten"}, 400),
        ({"source": "stdout"}, 400),
        ({"since": "yesterday"}, 400),
        ({"since": "2026-12-01T10:00:00"}, 400),  # no time zone
    ],
)
def test_bad_requests_are_problems_in_words(sim: SimApiServer, params: dict[str, str], status: int) -> None:
    headers = {"Authorization": f"Bearer {sim.api_key}"}
    answer = httpx.get(f"{sim.url}/v2/pods/{POD}/logs", params=params, headers=headers, timeout=5)
    assert answer.status_code == status
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.json()["detail"]


def test_through_the_client_a_refusal_is_an_error_in_words(api: V2Api) -> None:
    with pytest.raises(ApiNotFound, match="nosuchpod"), api.open_pod_logs(LogRequest("nosuchpod"), None):
        pass


def test_a_pods_own_key_cannot_read_another_pods_log(sim: SimApiServer) -> None:
    own = sim.world.get(POD).api_key
    other = DEMO_IDS["idle"]
    answer = httpx.get(f"{sim.url}/v2/pods/{other}/logs", headers={"Authorization": f"Bearer {own}"}, timeout=5)
    assert answer.status_code == 403


def test_a_slow_backfill_is_waited_for(api: V2Api, sim: SimApiServer) -> None:
    sim.faults.add("slow_stream", 1.5, times=1, only="/logs")
    opener = functools.partial(api.open_pod_logs, quiet_s=5.0)
    assert len(list(LogFollower(opener, LogRequest(POD, "all", 3)).lines(until_live=True))) == 3


def test_the_specs_example_id_form_resumes_by_its_time(sim: SimApiServer, api: V2Api) -> None:
    """An id written `{ts}/{sequence}`, as an example in RunPod's spec is, is read by its time (sent here as
    another client would: podtui sends back the ids it was given, which are times)."""
    every = _lines(api, LogRequest(POD, "all", 20))
    seconds = every[-5].ts.split(".")[0] + "Z"
    headers = {"Authorization": f"Bearer {sim.api_key}", "Last-Event-ID": f"{seconds}/000000000001"}
    got: list[str] = []
    with (
        httpx.Client(base_url=sim.url, headers=headers) as client,
        client.stream("GET", f"/v2/pods/{POD}/logs", timeout=httpx.Timeout(5, read=1.0)) as answer,
    ):
        assert answer.status_code == 200
        try:
            for text in answer.iter_lines():
                if text.startswith("data: "):
                    got.append(json.loads(text[6:])["ts"])
        except httpx.ReadTimeout:
            pass
    assert got and all(ts > seconds for ts in got)


def test_a_used_up_rate_window_is_not_spent_on_a_stream(api: V2Api) -> None:
    api.rest._spent_until = time.monotonic() + 30
    with pytest.raises(ApiRateLimited), api.open_pod_logs(LogRequest(POD), None):
        pass


def test_stop_from_another_thread_ends_a_read_that_waits_for_a_line(api: V2Api, sim: SimApiServer) -> None:
    """A quiet stream (tail 0, the clock stopped): the reading thread waits in the socket; stop() wakes it at once,
    not when the read times out a minute later (a screen closing must not wait on it)."""
    opener = functools.partial(api.open_pod_logs, quiet_s=60.0)
    follower = LogFollower(opener, LogRequest(POD, "all", 0))
    got: list[LogLine] = []
    reader = threading.Thread(target=lambda: got.extend(follower.lines()))
    reader.start()
    deadline = time.monotonic() + 10
    while sum(e == f"GET /v2/pods/{POD}/logs" for e in sim.rest_requests) < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)  # in the read by now
    follower.stop()
    reader.join(5)
    assert not reader.is_alive() and got == []
