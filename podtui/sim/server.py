"""The simulated RunPod API on 127.0.0.1: REST v2 under /v2 (rest_v2.py) and GraphQL at /graphql
(graphql_api.py), Bearer-key auth, RunPod's rate limit headers, fault switches, and every exchange published
(exchange.py).

podtui and the runpod SDK reach it through RUNPOD_API_BASE_URL, exactly as they reach api.runpod.io: both APIs
live on one host (docs/runpod-facts.md#api-lifecycle). Two kinds of key open it: the account's (`api_key`) and
each pod's own (World.pod_for_key), which may act on its own pod only.

One address can serve several accounts, as RunPod's one host does (`serve_account`): the key a request carries
decides whose world answers it (docs/profiles.md#key-isolation).
"""

from __future__ import annotations

import functools
import ipaddress
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from podtui.sim import exchange, graphql_api, rest_v2
from podtui.sim.faults import FAULT_KINDS, TIMING, Fault, Faults, mangle_v2, no_capacity, set_status
from podtui.sim.problem import Answer, graphql_gone, html_page, json_answer, problem
from podtui.sim.rate_limit import DEFAULT_QUOTA, DEFAULT_WINDOW_S, RateWindow
from podtui.sim.schema import make_schema, root_for
from podtui.sim.v2_request import Call
from podtui.sim.world import World

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Caller:
    key: str
    pod_id: str | None  # a pod's own key: the pod it is good for


class SimApiServer:
    def __init__(
        self,
        world: World,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        graphql_mode: str | None = None,
        rate_limit: int = DEFAULT_QUOTA,
        rate_window_s: int = DEFAULT_WINDOW_S,
        front: SimApiServer | None = None,
    ) -> None:
        """front: the server whose address serves this account too (`serve_account`); it has no socket of its own."""
        self.world = world
        self.api_key = api_key or f"sim_{secrets.token_hex(16)}"
        self.faults = Faults()
        self.schema = make_schema()
        self.root = root_for(world)
        mode = graphql_mode or graphql_api.mode_from_env()
        if mode not in graphql_api.MODES:
            raise ValueError(f"graphql_mode {mode!r}: use one of {', '.join(graphql_api.MODES)}")
        self.graphql_mode = mode
        self.rate = RateWindow(rate_limit, rate_window_s)
        self.requests: list[str] = []  # every GraphQL document received, for tests
        self.rest_requests: list[str] = []  # "METHOD /path" of every REST request, for tests
        self._requests_lock = threading.Lock()
        self.front = front
        self.accounts: list[SimApiServer] = []  # the other accounts this address serves, by their keys
        self.stopping: threading.Event = (
            front.stopping if front is not None else threading.Event()
        )  # set as it stops: streams end
        self._httpd: ThreadingHTTPServer | None = None
        if front is None:
            self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
            self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self.front is not None:
            return self.front.url
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def serve_account(self, world: World, api_key: str | None = None) -> SimApiServer:
        """Another account at this address, with its own key, world, faults and rate limit: a request carrying its
        key (or one of its pods' keys) is answered by it and by nothing else. Started and stopped with this one."""
        account = SimApiServer(world, api_key, graphql_mode=self.graphql_mode, front=self)
        self.accounts.append(account)
        return account

    def account_for(self, authorization: str) -> SimApiServer:
        """The account whose key the request carries; this one for a key no account knows (it refuses it)."""
        for account in self.accounts:
            if account.caller(authorization) is not None:
                return account
        return self

    def start(self) -> SimApiServer:
        if self._httpd is None:  # an account behind a front: served when the front is
            return self
        # shutdown() waits for the loop's next poll: socketserver's default half second, paid by every stop
        serve = functools.partial(self._httpd.serve_forever, poll_interval=0.05)
        self._thread = threading.Thread(target=serve, name="sim-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._httpd is None:
            return
        if self._thread is not None:  # shutdown() waits for a serve_forever() that never started
            self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> SimApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def execute(self, body: dict[str, Any]) -> dict[str, Any]:
        """A GraphQL request run with the account's key."""
        return graphql_api.execute(self, body)[0]

    def record_document(self, query: str) -> None:
        with self._requests_lock:
            self.requests.append(query)

    def caller(self, authorization: str) -> Caller | None:
        """Whose key a request carries: the account's, a pod's own, or none the simulator knows."""
        scheme, _, key = authorization.partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key:
            return None
        if secrets.compare_digest(key.encode(), self.api_key.encode()):
            return Caller(key, None)
        pod = self.world.pod_for_key(key)
        return Caller(key, pod.id) if pod is not None else None

    # --- the two APIs -------------------------------------------------------------------------------------------

    def graphql(self, raw: bytes, authorization: str) -> Answer:
        document = graphql_api.document_of(raw)
        self.record_document(document)  # every request, answered or refused: tests count what was sent
        by_kind = _take(self.faults.take(document, "graphql"))
        if self.graphql_mode == "retired" or "graphql_retired" in by_kind:
            return _shaped(graphql_gone(), by_kind)
        caller = self.caller(authorization)
        if "unauthorized" in by_kind or caller is None:
            return _shaped(json_answer(401, {"error": "Unauthorized"}), by_kind)
        if "retry_after" in by_kind:
            # as RunPod's REST v2 refuses (docs/runpod-facts.md#rest-v2): a problem body and Retry-After
            wait = by_kind["retry_after"].value
            return _shaped(problem(429, "Rate limit exceeded. Please slow down.", headers=_retry_after(wait)), by_kind)
        if "status" in by_kind:
            return _shaped(html_page(int(by_kind["status"].value or 500)), by_kind)
        out = graphql_api.answer(self, raw, caller.pod_id, by_kind)
        if "malformed" in by_kind:
            out = _cut(out)
        return _shaped(out, by_kind)

    def rest(
        self,
        method: str,
        path: str,
        query: dict[str, list[str]],
        raw: bytes,
        authorization: str,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        target = f"{method} {path}"
        with self._requests_lock:
            self.rest_requests.append(target)
        by_kind = _take(self.faults.take(target, "rest"))
        caller = self.caller(authorization)
        if "unauthorized" in by_kind or caller is None:
            said = "missing bearer token" if not authorization.strip() else "invalid API key"
            out = problem(401, said)
            out.route = rest_v2.template_for(method, path)
            return _shaped(out, by_kind)
        quota = self.rate.take(caller.key)
        limited = "rate limit exceeded for the minute window"
        if not quota.allowed:
            out = problem(429, limited, headers=_retry_after(quota.reset_s))
        elif "retry_after" in by_kind:
            out = problem(429, limited, headers=_retry_after(by_kind["retry_after"].value))
        elif "status" in by_kind:
            out = html_page(int(by_kind["status"].value or 500))
        elif "server_error" in by_kind:  # RunPod's own 5xx: a problem body, within its contract
            out = problem(int(by_kind["server_error"].value or 500), "the request failed on RunPod's side")
        elif "raw" in by_kind:
            out = Answer(200, raw=str(by_kind["raw"].value or "").encode())
        elif "conflict" in by_kind:
            out = problem(409, str(by_kind["conflict"].value or "the pod's state does not allow this now"))
        else:
            call = Call(
                self.world,
                method,
                path,
                query,
                raw,
                pod_scope=caller.pod_id,
                headers=headers or {},
                stopping=self.stopping,
                blocked=no_capacity(by_kind["no_capacity"].value) if "no_capacity" in by_kind else None,
            )
            out = rest_v2.answer(call)
            if out.stream is not None:
                out.stream = _stream_faults(out.stream, by_kind)
            if "partial" in by_kind:
                mangle_v2(out.value)
            if "unknown_status" in by_kind:
                set_status(out.value, str(by_kind["unknown_status"].value or "HIBERNATING"), graphql=False)
            if "malformed" in by_kind:
                out = _cut(out)
        out.headers = {**quota.headers(), **out.headers}
        out.route = out.route or rest_v2.template_for(method, path)
        return _shaped(out, by_kind)

    def control(self, raw: bytes, authorization: str) -> Answer:
        """Loopback-only test hook (used by tmux tests and the soak bench); needs the account's key."""
        caller = self.caller(authorization)
        if caller is None or caller.pod_id is not None:
            return json_answer(401, {"error": "Unauthorized"})
        try:
            body = json.loads(raw or b"{}")
            if body.get("clear"):
                self.faults.clear()
            if "balance" in body:
                self.world.set_balance(float(body["balance"]))
            for f in body.get("add", []):
                self.faults.add(f["kind"], f.get("value"), f.get("times"), f.get("only"))
            if "fail_pod" in body:  # its container dies: REST v2's ERROR
                self.world.fail(str(body["fail_pod"]), str(body.get("why") or "Container exited with an error"))
            if "graphql_mode" in body:
                if body["graphql_mode"] not in graphql_api.MODES:
                    raise ValueError(f"graphql_mode: use one of {', '.join(graphql_api.MODES)}")
                self.graphql_mode = body["graphql_mode"]
        except Exception as e:  # a test's mistake: said back to it
            return json_answer(400, {"error": f"bad control request: {e}; kinds: {list(FAULT_KINDS)}"})
        return json_answer(200, {"ok": True})

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep the TUI's terminal clean
                log.debug("sim-api: " + format, *args)

            def _read_body(self) -> bytes | None:
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                except ValueError:
                    return None
                return self.rfile.read(length) if length > 0 else b""

            def _handle(self) -> None:
                method = self.command
                url = urlsplit(self.path)
                path = url.path
                query = parse_qs(url.query, keep_blank_values=True)
                raw = self._read_body()
                auth = self.headers.get("Authorization", "")
                server = front.account_for(auth)  # the key decides the account, and nothing else does
                if raw is None:
                    self.close_connection = True
                    out, route = problem(400, "Content-Length is not a number"), None
                elif path.startswith("/v2/") or path == "/v2":
                    try:
                        out = server.rest(method, path, query, raw, auth, dict(self.headers.items()))
                    except Exception:  # a bug of the simulator's: seen as a 500 and a traceback, never a hang
                        log.exception("the simulator failed answering %r %r", method, path)
                        out = problem(500, f"the simulator failed answering {method} {path}: see its log")
                        out.route = rest_v2.template_for(method, path)
                    route = out.route
                elif path.rstrip("/") in ("/graphql", "/_sim/faults"):
                    route = path.rstrip("/")
                    if method != "POST":
                        out = problem(405, f"{method} is not allowed on {route}", headers={"Allow": "POST"})
                    elif route == "/graphql":
                        out = server.graphql(raw, auth)
                    elif not ipaddress.ip_address(self.client_address[0]).is_loopback:
                        # `podtui sim --host 0.0.0.0` serves the API to others; never its fault switches
                        out = problem(403, "the simulator's control endpoint answers this machine only")
                    else:
                        out = server.control(raw, auth)
                else:
                    out, route = problem(404, f"no route for {path}"), None
                headers = self._headers(out)

                def tell(body: bytes) -> None:
                    exchange.publish(
                        exchange.Exchange(
                            method=method,
                            path=path,
                            query=query,
                            route=route,
                            request_headers=dict(self.headers.items()),
                            request_body=raw or b"",
                            status=out.status,
                            response_headers=headers,
                            response_body=body,
                            fault=out.fault,
                        )
                    )

                if out.stream is not None:  # told with its first event, before that goes out (or at its end)
                    self._send_stream(out.status, out.stream, headers, tell)
                    return
                # told before the answer goes out: once a client has its answer, its test may end, and an exchange
                # told later could be checked against the next test, or not at all
                tell(out.body())
                self._send(out, headers)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _handle

            def date_time_string(self, timestamp: float | None = None) -> str:
                """The Date header in the simulated world's time, which a log stream's lines are stamped with."""
                return super().date_time_string(server.world.clock.now() if timestamp is None else timestamp)

            def _headers(self, out: Answer) -> dict[str, str]:
                headers = dict(out.headers)
                if out.stream is not None:
                    return {"Content-Type": out.content_type, "Transfer-Encoding": "chunked", **headers}
                if out.status != 204:
                    headers = {"Content-Type": out.content_type, "Content-Length": str(len(out.body())), **headers}
                return headers

            def _send(self, out: Answer, headers: dict[str, str]) -> None:
                body = out.body()
                try:
                    self.send_response(out.status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    if out.status != 204:
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (a "hang" fault past its timeout): nobody to answer

            def _send_stream(
                self, status: int, stream: Iterator[bytes], headers: dict[str, str], tell: Callable[[bytes], None]
            ) -> None:
                """Chunk by chunk, each flushed as it is made, until the stream ends (the server stopping), the
                client leaves, or a fault cuts the connection without the last chunk. The exchange is told with
                the first chunk, the one event the contract check reads (or with none, if none was sent)."""
                told = False
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    # after the headers: RunPod's `Connection: keep-alive` turns it off, and the connection is
                    # the stream's alone, closed when it ends or is cut
                    self.close_connection = True
                    for chunk in stream:
                        if not told:
                            told = True
                            tell(chunk)
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client left: nobody to write to
                except _Cut:
                    pass  # a drop_stream fault: the connection closes mid-stream
                finally:
                    if not told:
                        tell(b"")
                    close = getattr(stream, "close", None)
                    if close is not None:
                        close()

        return Handler


class _Cut(Exception):
    """A drop_stream fault: the connection is to be cut now."""


def _stream_faults(stream: Iterator[bytes], by_kind: dict[str, Fault]) -> Iterator[bytes]:
    """An event stream bent by the faults asked for: slowed, or cut after some events."""
    drop = by_kind.get("drop_stream")
    slow = by_kind.get("slow_stream")
    left = int(drop.value or 0) if drop is not None else None
    for chunk in stream:
        if left is not None:
            if left <= 0:
                raise _Cut
            left -= 1
        if slow is not None:
            time.sleep(float(slow.value or 0))
        yield chunk
    if left is not None:
        raise _Cut


def _take(faults: list[Fault]) -> dict[str, Fault]:
    """The faults by kind, after the time they add (latency, hang) has passed."""
    for f in faults:
        if f.kind in TIMING:
            time.sleep(float(f.value or 0))
    return {f.kind: f for f in faults}


# The faults whose answers break RunPod's contract on purpose (a page, a cut-off or mangled body, a status RunPod
# does not have yet); every other answer, faults like conflict or retry_after included, must keep to it.
OFF_CONTRACT = frozenset(
    {"status", "malformed", "partial", "unknown_status", "raw", "graphql_error", "graphql_retired"}
)


def _shaped(out: Answer, by_kind: dict[str, Fault]) -> Answer:
    """Marks an answer a fault bent out of RunPod's contract, so the contract check leaves it be."""
    # RunPod's Retry-After is whole seconds; an HTTP date (which HTTP allows, and podtui reads) is off its contract
    dated = "retry_after" in by_kind and not str(by_kind["retry_after"].value).isdigit()
    out.fault = out.fault or dated or any(kind in OFF_CONTRACT for kind in by_kind)
    return out


def _retry_after(wait: object) -> dict[str, str]:
    return {} if wait is None else {"Retry-After": str(wait)}


def _cut(out: Answer) -> Answer:
    """A JSON body cut off mid-way."""
    body = out.body()
    cut = body[: max(1, len(body) // 2)] if body else body
    return Answer(out.status, raw=cut, content_type=out.content_type, headers=out.headers, route=out.route)
