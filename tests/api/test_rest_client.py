"""podtui's REST v2 client against a real HTTP server that answers the way RunPod (or something in front of it)
can: problem bodies, every status podtui treats on its own, HTML pages, cut-off and dropped answers, hangs,
garbage in the words. Every class ends in an ApiError with a message fit to show, never a traceback."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from podtui.core import secret
from podtui.core.api import errors
from podtui.core.api.rest import RestV2, parse_rate_limit, path_id, retry_after_seconds
from tests.helpers.hostile import HOSTILE, unsafe_chars


@dataclass
class Answer:
    status: int = 200
    body: bytes = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    ctype: str = "application/json"
    length: int | None = None  # a Content-Length that lies (a cut-off answer)
    drop_after: int | None = None  # bytes sent before the connection is closed
    sleep_s: float = 0.0


class Scripted:
    """A real HTTP/1.1 server on loopback that answers each request with the next scripted Answer."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                server.seen.append((self.command, self.path, dict(self.headers), body))
                a = server.answers.pop(0) if server.answers else Answer()
                time.sleep(a.sleep_s)
                try:
                    self.send_response(a.status)
                    self.send_header("Content-Type", a.ctype)
                    self.send_header("Content-Length", str(a.length if a.length is not None else len(a.body)))
                    for k, v in a.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(a.body if a.drop_after is None else a.body[: a.drop_after])
                    self.wfile.flush()
                    if a.drop_after is not None or a.length is not None:
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Scripted]:
    s = Scripted()
    yield s
    s.close()


@pytest.fixture
def rest(server: Scripted) -> Iterator[RestV2]:
    r = RestV2("rpa_testkey_0123456789abcdef0123456789", server.url, timeout_s=2.0)
    yield r
    r.close()


def problem(status: int, detail: str, *errs: str, title: str = "Problem") -> Answer:
    body = {"title": title, "status": status, "detail": detail, **({"errors": list(errs)} if errs else {})}
    return Answer(status, json.dumps(body).encode(), ctype="application/problem+json")


def test_sends_the_key_as_bearer_and_says_who_it_is(server: Scripted, rest: RestV2) -> None:
    server.answers.append(Answer(body=b'{"pods": []}'))
    assert rest.call("GET", "/v2/pods") == {"pods": []}
    method, path, headers, _ = server.seen[0]
    assert (method, path) == ("GET", "/v2/pods")
    assert headers["Authorization"] == "Bearer rpa_testkey_0123456789abcdef0123456789"
    assert headers["User-Agent"].startswith("podtui/")


def test_body_is_json_and_204_is_none(server: Scripted, rest: RestV2) -> None:
    server.answers += [Answer(204, b""), Answer(200, b"")]
    assert rest.call("POST", "/v2/pods/abc/action", body={"action": "stop"}) is None
    assert json.loads(server.seen[0][3]) == {"action": "stop"}
    assert server.seen[0][2]["Content-Type"] == "application/json"
    assert rest.call("DELETE", "/v2/pods/abc") is None


STATUS_CLASSES: list[tuple[Answer, type[errors.ApiError], str]] = [
    (problem(400, "Invalid request", "$: additional properties 'bogus' not allowed"), errors.ApiQueryError, "bogus"),
    (problem(402, "Insufficient balance to deploy this pod."), errors.ApiPaymentRequired, "Insufficient balance"),
    (problem(403, "This key may not do that."), errors.ApiForbidden, "may not"),
    (problem(404, "Pod not found."), errors.ApiNotFound, "not found"),
    (problem(409, "Pod is not running; stop is not valid."), errors.ApiConflict, "not valid"),
    (problem(422, "cloud must be SECURE or COMMUNITY"), errors.ApiQueryError, "SECURE"),
    (problem(401, "Unauthorized"), errors.ApiAuthError, "config set-key"),
    (Answer(401, b"", ctype="text/plain"), errors.ApiAuthError, "401"),
    (Answer(500, b"<html><h1>500</h1></html>", ctype="text/html"), errors.ApiUnavailable, "server error (500)"),
    (Answer(502, b"<html>Bad Gateway</html>", ctype="text/html"), errors.ApiUnavailable, "(502)"),
    (problem(503, "Down for maintenance"), errors.ApiUnavailable, "maintenance"),
    (Answer(200, b"<html>a login page</html>", ctype="text/html"), errors.ApiResponseError, "not JSON"),
    (Answer(200, b'{"pods": [{"id": "ab'), errors.ApiResponseError, "not JSON"),
    (Answer(409, b"not json at all", ctype="text/plain"), errors.ApiConflict, "Conflict"),
    (Answer(418, b"", ctype="text/plain"), errors.ApiQueryError, "418"),
    (Answer(302, b"", headers={"Location": "http://elsewhere.invalid/"}), errors.ApiResponseError, "302"),
]


@pytest.mark.parametrize(("answer", "kind", "words"), STATUS_CLASSES, ids=lambda v: getattr(v, "status", None))
def test_each_status_class_becomes_its_error_in_words(
    server: Scripted, rest: RestV2, answer: Answer, kind: type[errors.ApiError], words: str
) -> None:
    server.answers.append(answer)
    with pytest.raises(kind) as caught:
        rest.call("GET", "/v2/pods")
    assert words in str(caught.value)
    assert "Traceback" not in str(caught.value) and "<html>" not in str(caught.value)


def test_problem_errors_are_kept_for_callers(server: Scripted, rest: RestV2) -> None:
    server.answers.append(problem(400, "Invalid request", "$.gpu.count: must be >= 1", "$: bogus"))
    with pytest.raises(errors.ApiQueryError) as caught:
        rest.call("POST", "/v2/pods", body={})
    assert caught.value.status == 400 and caught.value.errors == ("$.gpu.count: must be >= 1", "$: bogus")


@pytest.mark.parametrize("header", ["7", "Wed, 21 Oct 2026 07:28:45 GMT", None, "soon"])
def test_429_says_how_long_to_wait(server: Scripted, rest: RestV2, header: str | None) -> None:
    server.answers.append(
        Answer(
            429,
            b'{"title":"Too Many Requests","status":429,"detail":"slow down"}',
            headers={"Retry-After": header} if header else {},
        )
    )
    with pytest.raises(errors.ApiRateLimited) as caught:
        rest.call("GET", "/v2/pods")
    assert 1.0 <= caught.value.retry_after_s <= 3600.0
    assert "429" in str(caught.value)


def test_retry_after_forms() -> None:
    assert retry_after_seconds("30") == 30
    assert retry_after_seconds("Wed, 21 Oct 2026 07:28:45 GMT", now=lambda: 1792567680.0) == 45
    assert retry_after_seconds(None) == 10 == retry_after_seconds("soon") == retry_after_seconds("nan")
    assert retry_after_seconds("0") == 1 and retry_after_seconds("99999999") == 3600


def test_rate_limit_headers_are_read_in_both_spellings(server: Scripted, rest: RestV2) -> None:
    server.answers.append(
        Answer(headers={"RateLimit": "limit=600, remaining=598, reset=42", "RateLimit-Policy": "600;w=60"})
    )
    rest.call("GET", "/v2/pods")
    assert rest.rate_limit is not None and (rest.rate_limit.remaining, rest.rate_limit.reset_s) == (598, 42.0)
    assert parse_rate_limit('"default";r=3;t=9', None) == parse_rate_limit("remaining=3, reset=9", None)
    assert parse_rate_limit("", None) is None and parse_rate_limit("garbage", "x") is not None


def test_a_cut_off_answer_and_a_dropped_connection(server: Scripted, rest: RestV2) -> None:
    body = json.dumps({"pods": [{"id": "x" * 50}] * 20}).encode()
    server.answers += [Answer(body=body, length=len(body) + 500), Answer(body=body, drop_after=40, length=len(body))]
    for _ in range(2):
        with pytest.raises((errors.ApiResponseError, errors.ApiUnavailable)) as caught:
            rest.call("GET", "/v2/pods")
        assert "cut off" in str(caught.value) or "failed" in str(caught.value)


def test_a_hang_past_the_timeout(server: Scripted) -> None:
    rest = RestV2("k" * 40, server.url, timeout_s=0.3)
    server.answers.append(Answer(sleep_s=1.0))
    with pytest.raises(errors.ApiUnavailable, match="did not answer"):
        rest.call("GET", "/v2/pods")


def test_nobody_listening() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rest = RestV2("k" * 40, f"http://127.0.0.1:{port}", timeout_s=1.0)
    with pytest.raises(errors.ApiUnavailable, match=r"cannot reach RunPod.s API at http://127\.0\.0\.1.*refused"):
        rest.call("GET", "/v2/pods")


def test_an_answer_too_large_is_refused(server: Scripted, rest: RestV2, monkeypatch: pytest.MonkeyPatch) -> None:
    import podtui.core.api.rest as rest_module

    monkeypatch.setattr(rest_module, "MAX_ANSWER_BYTES", 1000)
    server.answers.append(Answer(body=b'{"pods": "' + b"x" * 5000 + b'"}'))
    with pytest.raises(errors.ApiResponseError, match="larger than"):
        rest.call("GET", "/v2/pods")


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_words_in_a_problem_reach_no_terminal(server: Scripted, rest: RestV2, text: str) -> None:
    server.answers.append(problem(400, text, text, title=text))
    with pytest.raises(errors.ApiQueryError) as caught:
        rest.call("GET", "/v2/pods")
    assert unsafe_chars(str(caught.value)) == []


def test_the_key_never_reaches_an_error(server: Scripted, rest: RestV2) -> None:
    key = "rpa_testkey_0123456789abcdef0123456789"
    secret.register(key)
    server.answers.append(problem(403, f"key {key} may not do this", f"key {key}"))
    with pytest.raises(errors.ApiForbidden) as caught:
        rest.call("GET", "/v2/pods")
    assert key not in str(caught.value) and key not in repr(rest)


@pytest.mark.parametrize("bad", ["", "../pods", "a/b", "a?b=1", "a b", "x" * 65, "a\x1b", 7, None])
def test_ids_that_would_change_the_path_are_refused(bad: object) -> None:
    with pytest.raises(errors.InvalidInput):
        path_id(bad)
    assert path_id("q7x2m9fk4r8t1a") == "q7x2m9fk4r8t1a"


def test_the_base_url_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNPOD_API_BASE_URL", "http://127.0.0.1:9/")
    assert RestV2("k" * 40).base_url == "http://127.0.0.1:9"
    monkeypatch.delenv("RUNPOD_API_BASE_URL")
    assert RestV2("k" * 40).base_url == "https://api.runpod.io"


def test_threads_share_one_client(server: Scripted, rest: RestV2) -> None:
    results: list[object] = []
    server.answers += [Answer(body=b'{"n": 1}') for _ in range(8)]
    call: Callable[[], None] = lambda: results.append(rest.call("GET", "/v2/pods"))  # noqa: E731
    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [{"n": 1}] * 8


def test_json_nested_past_pythons_limit_is_an_error_in_words(server: Scripted, rest: RestV2) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    server.answers += [Answer(body=deep), Answer(400, deep, ctype="application/problem+json")]
    with pytest.raises(errors.ApiResponseError, match="not JSON"):
        rest.call("GET", "/v2/pods")
    with pytest.raises(errors.ApiQueryError, match="Bad Request"):
        rest.call("GET", "/v2/pods")


def test_an_answer_that_trickles_past_the_timeout_is_given_up(server: Scripted) -> None:
    """httpx's timeout is per read: a server sending a little at a time would hold a poll for ever."""

    rest = RestV2("k" * 40, server.url, timeout_s=2.0)
    body = json.dumps({"pods": []}).encode() + b" " * 60
    server.answers.append(Answer(body=body, length=len(body), drop_after=None))
    rest.call("GET", "/v2/pods")  # a whole answer in time is read

    import http.server

    class Slow(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for byte in body:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass

    slow = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    slow.daemon_threads = True
    threading.Thread(target=slow.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        trickled = RestV2("k" * 40, f"http://127.0.0.1:{slow.server_address[1]}", timeout_s=2.0)
        # the whole body would arrive in 7.4 s, every byte well within a read's timeout
        with pytest.raises(errors.ApiUnavailable, match=r"did not answer GET /v2/pods within 2 s"):
            trickled.call("GET", "/v2/pods")
    finally:
        slow.shutdown()
        slow.server_close()


def test_a_window_said_to_be_used_up_is_waited_out_without_asking(server: Scripted, rest: RestV2) -> None:
    """RateLimit says none are left: the next request would only earn a 429, so it is not sent."""
    server.answers.append(Answer(headers={"RateLimit": '"minute";r=0;t=30', "RateLimit-Policy": '"minute";q=600;w=60'}))
    rest.call("GET", "/v2/pods")
    with pytest.raises(errors.ApiRateLimited, match="used up") as caught:
        rest.call("GET", "/v2/pods")
    assert 1 <= caught.value.retry_after_s <= 30 and len(server.seen) == 1


def test_the_simulators_rate_limit_is_read_and_kept_to() -> None:
    from podtui.sim.server import SimApiServer
    from podtui.sim.world import World

    sim = SimApiServer(World(), rate_limit=2).start()
    try:
        rest = RestV2(sim.api_key, sim.url, timeout_s=5.0)
        rest.call("GET", "/v2/pods")
        rest.call("GET", "/v2/pods")
        assert rest.rate_limit is not None and rest.rate_limit.remaining == 0
        with pytest.raises(errors.ApiRateLimited):
            rest.call("GET", "/v2/pods")
        assert sim.rest_requests == ["GET /v2/pods", "GET /v2/pods"]  # the third was never sent
    finally:
        sim.stop()
