"""The simulated RunPod API: GraphQL over HTTP on 127.0.0.1, Bearer-key auth, fault switches.

The real runpod SDK reaches it through RUNPOD_API_BASE_URL, exactly as it reaches api.runpod.io.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from graphql import graphql_sync

from podtui.sim.faults import FAULT_KINDS, Faults
from podtui.sim.schema import make_schema, root_for
from podtui.sim.world import World

log = logging.getLogger(__name__)

_ERROR_PAGE = "<html><head><title>{code}</title></head><body><center><h1>{code} {reason}</h1></center></body></html>"


class SimApiServer:
    def __init__(self, world: World, api_key: str | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.world = world
        self.api_key = api_key or f"sim_{secrets.token_hex(16)}"
        self.faults = Faults()
        self.schema = make_schema()
        self.root = root_for(world)
        self.requests: list[str] = []  # every GraphQL document received, for tests
        self._requests_lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> SimApiServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="sim-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> SimApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def execute(self, body: dict[str, Any]) -> dict[str, Any]:
        query = body.get("query")
        if not isinstance(query, str):
            return {"errors": [{"message": "Must provide query string."}]}
        with self._requests_lock:
            self.requests.append(query)
        variables = body.get("variables")
        result = graphql_sync(
            self.schema,
            query,
            root_value=self.root,
            variable_values=variables if isinstance(variables, dict) else None,
        )
        out: dict[str, Any] = {"data": result.data}
        if result.errors:
            out["errors"] = [{"message": e.message, "path": e.path} for e in result.errors]
        return out

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep the TUI's terminal clean
                log.debug("sim-api: " + format, *args)

            def _send(
                self, code: int, body: bytes, ctype: str = "application/json", headers: dict[str, str] | None = None
            ) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (a "hang" fault past its timeout): nobody to answer

            def _json(self, code: int, obj: object) -> None:
                self._send(code, json.dumps(obj).encode())

            def _authorized(self) -> bool:
                header = self.headers.get("Authorization", "")
                return secrets.compare_digest(header, f"Bearer {server.api_key}")

            def _read_body(self) -> bytes:
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            def do_POST(self) -> None:
                raw = self._read_body()
                if self.path.rstrip("/") == "/_sim/faults":
                    return self._control(raw)
                if self.path.split("?")[0].rstrip("/") != "/graphql":
                    return self._json(404, {"error": "not found"})
                faults = server.faults.take(_document(raw))
                by_kind = {f.kind: f for f in faults}
                for f in faults:
                    if f.kind in ("latency", "hang"):
                        time.sleep(float(f.value or 0))
                if "unauthorized" in by_kind or not self._authorized():
                    return self._json(401, {"error": "Unauthorized"})
                if "retry_after" in by_kind:
                    # as RunPod's REST v2 refuses (docs/runpod-facts.md#rest-v2): an RFC 9457 problem body and
                    # Retry-After
                    wait = by_kind["retry_after"].value
                    problem = {
                        "type": "about:blank",
                        "title": "Too Many Requests",
                        "status": 429,
                        "detail": "Rate limit exceeded. Please slow down.",
                    }
                    return self._send(
                        429,
                        json.dumps(problem).encode(),
                        "application/problem+json",
                        None if wait is None else {"Retry-After": str(wait)},
                    )
                if "status" in by_kind:
                    code = int(by_kind["status"].value or 500)
                    reason = {
                        500: "Internal Server Error",
                        502: "Bad Gateway",
                        503: "Service Unavailable",
                        429: "Too Many Requests",
                    }.get(code, "Error")
                    headers = {"Retry-After": "2"} if code == 429 else None
                    page = _ERROR_PAGE.format(code=code, reason=reason).encode()
                    return self._send(code, page, "text/html", headers)
                try:
                    body = json.loads(raw)
                    if not isinstance(body, dict):
                        raise ValueError
                except ValueError:
                    return self._json(400, {"errors": [{"message": "Body is not a JSON object."}]})
                if "raw" in by_kind:
                    return self._send(200, str(by_kind["raw"].value or "").encode())
                if "graphql_error" in by_kind:
                    return self._json(
                        200, {"errors": [{"message": str(by_kind["graphql_error"].value or "Something went wrong.")}]}
                    )
                result = server.execute(body)
                if "partial" in by_kind:
                    _mangle(result)
                if "unknown_status" in by_kind:
                    _set_status(result, str(by_kind["unknown_status"].value or "HIBERNATING"))
                data = json.dumps(result).encode()
                if "malformed" in by_kind:
                    data = data[: max(1, len(data) // 2)]
                self._send(200, data)

            def _control(self, raw: bytes) -> None:
                # Loopback-only test hook (used by tmux tests and the soak bench); needs the sim's key too.
                if not self._authorized():
                    return self._json(401, {"error": "Unauthorized"})
                try:
                    body = json.loads(raw or b"{}")
                    if body.get("clear"):
                        server.faults.clear()
                    if "balance" in body:
                        server.world.set_balance(float(body["balance"]))
                    for f in body.get("add", []):
                        server.faults.add(f["kind"], f.get("value"), f.get("times"), f.get("only"))
                except (ValueError, KeyError, TypeError, AttributeError) as e:
                    return self._json(400, {"error": f"bad control request: {e}; kinds: {list(FAULT_KINDS)}"})
                self._json(200, {"ok": True})

        return Handler


def _document(raw: bytes) -> str:
    """The GraphQL document of a request body, "" when there is none (faults with `only` skip it)."""
    try:
        body = json.loads(raw)
    except ValueError:
        return ""
    query = body.get("query") if isinstance(body, dict) else None
    return query if isinstance(query, str) else ""


def _pods(result: dict[str, Any]) -> list[dict[str, Any]]:
    myself = (result.get("data") or {}).get("myself") or {}
    pods = myself.get("pods")
    return [p for p in pods if isinstance(p, dict)] if isinstance(pods, list) else []


def _mangle(result: dict[str, Any]) -> None:
    """A partial answer: a pod without its id, a machine gone, numbers turned into words."""
    pods = _pods(result)
    for i, pod in enumerate(pods):
        if i % 3 == 0:
            pod["costPerHr"] = "cheap"
            pod["machine"] = None
        elif i % 3 == 1:
            pod.pop("runtime", None)
            pod["gpuCount"] = [1]
        else:
            pod.pop("id", None)
    myself = (result.get("data") or {}).get("myself")
    if isinstance(myself, dict):
        myself["clientBalance"] = None


def _set_status(result: dict[str, Any], status: str) -> None:
    pods = _pods(result)
    if pods:
        pods[0]["desiredStatus"] = status
