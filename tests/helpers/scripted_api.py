"""A scripted REST v2 server: real HTTP for a real RestV2, with RunPod's answers given by the test (a status,
headers and a body per request), so each status code a client handles can be had exactly, in order. What the
simulator does not stage (a 403 for one GPU pool, a 5xx on one create, a 429 with a given Retry-After) is staged
here. Requests are recorded and checked against the REST v2 contract (tests/helpers/contract.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from podtui.core.api.rest import RestV2
from tests.helpers.contract import check_request


@dataclass
class Sent:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any


@dataclass
class Reply:
    status: int = 200
    body: object = None  # JSON, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # answer late (a create that outlives podtui's timeout)
    cut: bool = False  # close the connection before answering


Script = Callable[[Sent], Reply]


class ScriptedApi:
    """Answers each request with `script(request)`; `sent` is every request, in order."""

    def __init__(self) -> None:
        self.script: Script = lambda _sent: Reply(404, {"title": "Not Found", "status": 404, "detail": "no route"})
        self.sent: list[Sent] = []
        self.violations: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def rest(self, timeout_s: float = 5.0) -> RestV2:
        return RestV2("rpa_ScriptedTestKey0123456789", self.url, timeout_s)

    def answer(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order; the last one repeats."""
        queue = list(replies)

        def next_reply(_sent: Sent) -> Reply:
            return queue.pop(0) if len(queue) > 1 else queue[0]

        self.script = next_reply

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                split = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                sent = Sent(self.command, split.path, parse_qs(split.query), json.loads(raw) if raw else None)
                api.sent.append(sent)
                route = split.path
                api.violations += check_request(self.command, route, sent.query, raw, dict(self.headers.items()))
                reply = api.script(sent)
                if reply.delay_s:
                    threading.Event().wait(reply.delay_s)
                if reply.cut:
                    self.close_connection = True
                    self.connection.close()
                    return
                body = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                if reply.status == 204:
                    body = b""
                self.send_response(reply.status)
                kind = "application/problem+json" if reply.status >= 400 else "application/json"
                self.send_header("Content-Type", reply.headers.pop("Content-Type", kind))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

        return Handler

    def start(self) -> ScriptedApi:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def problem(status: int, detail: str, *errors: str) -> dict[str, object]:
    """An RFC 9457 problem answer as RunPod gives it."""
    titles = {400: "Bad Request", 402: "Payment Required", 403: "Forbidden", 422: "Unprocessable Content"}
    body: dict[str, object] = {"title": titles.get(status, "Error"), "status": status, "detail": detail}
    if errors:
        body["errors"] = list(errors)
    return body
