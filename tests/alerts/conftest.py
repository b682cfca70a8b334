"""A webhook receiver on loopback (a real http.server in a thread) that can be told to fail: answer 500s, drop the
connection, refuse with a 4xx, ask to wait (429 with Retry-After), hang until let go."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    url: str = ""
    plan: list[str | int] = field(default_factory=list)  # per request, in turn: a status, "drop" or "hang"; then 200
    retry_after: str | None = None
    got: list[Received] = field(default_factory=list)  # every request that reached it, failed ones too
    arrived: threading.Condition = field(default_factory=threading.Condition)
    let_go: threading.Event = field(default_factory=threading.Event)  # ends every "hang"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        with self.arrived:
            if not self.arrived.wait_for(lambda: len(self.got) >= count, timeout):
                raise AssertionError(f"the receiver got {len(self.got)} of {count} requests")
        return list(self.got)

    @property
    def taken(self) -> list[Received]:
        """The requests it answered 2xx."""
        return [r for r in self.got if r.headers.get("x-answered") == "200"]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            step = r.plan.pop(0) if r.plan else 200
            headers = {k.lower(): v for k, v in self.headers.items()}
            headers["x-answered"] = str(step)
            with r.arrived:
                r.got.append(Received(self.path, headers, body))
                r.arrived.notify_all()
            if step == "hang":  # the receiver sits on it until the test lets go, then takes it
                r.let_go.wait(30)
                step = 200
            if step == "drop":  # the request arrived, the answer never comes back
                self.connection.shutdown(2)
                self.close_connection = True
                return
            self.send_response(int(step))
            if step in (429, 503) and r.retry_after is not None:
                self.send_header("Retry-After", r.retry_after)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    r.url = f"http://127.0.0.1:{server.server_address[1]}/hook/tok-{id(r):x}-sekrit-topic"
    yield r
    r.let_go.set()
    server.shutdown()
    server.server_close()
