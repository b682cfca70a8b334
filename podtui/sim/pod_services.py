"""The services behind a simulated pod's HTTP ports (docs/services.md#the-simulators-services-and-proxy): what
RunPod's proxy reaches at `{podId}-{port}`, and what SSH forwarding through the pod's sshd reaches at the pod's
`localhost:PORT`.

Each `NNNN/http` port of a running pod is served on the pod's own loopback address (World.pod_address) by a small
HTTP server: port 8888 a Jupyter-like page, behind a login when the pod has JUPYTER_PASSWORD in its environment;
any other port a status page naming the pod and the port. It runs from the pod's start to its container's end.

A thread in the simulator's process, not a process in the pod: a pod's container starts only when something first
enters it, so a server inside would start every running pod's container (and a Python in each) just to serve a
page. What podtui relies on, the way there (the proxy, forwarding to the pod's own localhost), is the same either
way; a program the user starts in the pod's shell shares this machine's network and can listen there too.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import io
import logging
import secrets
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import cast
from urllib.parse import parse_qs, urlsplit

from podtui.sim.faults import Faults
from podtui.sim.world import SimPod, World

log = logging.getLogger(__name__)

JUPYTER_PORT = 8888
IDLE_S = 60.0  # a connection that sends nothing for this long is closed
MAX_BODY = 16 << 20  # what a service reads of a request's body; more is refused (413)
STREAM_LINES_MAX = 100


class BadBody(Exception):
    """A request body that cannot be read: a chunk size that is no number, a connection cut mid-way."""


class _TooLarge(Exception):
    """A request body over MAX_BODY."""


def body_chunks(rfile: io.BufferedIOBase, headers: Message) -> Iterator[bytes]:
    """A request's body as it arrives, by Content-Length or chunked transfer coding (none: empty)."""
    if "chunked" in (headers.get("Transfer-Encoding") or "").lower():
        while True:
            line = rfile.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip(), 16)
            except ValueError:
                raise BadBody("a chunk size is not a number") from None
            if size == 0:
                while rfile.readline(1024) not in (b"\r\n", b"\n", b""):  # trailers
                    pass
                return
            left = size
            while left:
                data = rfile.read(min(left, 65536))
                if not data:
                    raise BadBody("the connection ended mid-body")
                left -= len(data)
                yield data
            rfile.readline(1024)  # the CRLF after each chunk
    try:
        left = int(headers.get("Content-Length") or 0)
    except ValueError:
        raise BadBody("Content-Length is not a number") from None
    while left > 0:
        data = rfile.read(min(left, 65536))
        if not data:
            raise BadBody("the connection ended mid-body")
        left -= len(data)
        yield data


class LoopbackServer(ThreadingHTTPServer):
    """A threaded HTTP server that stops at once and leaves nothing: its accept loop wakes when its socket is shut
    down, its open connections are shut too, and every thread it started is joined."""

    daemon_threads = False
    block_on_close = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], name: str) -> None:
        self.name = name
        self.stopping = threading.Event()
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        super().__init__(address, handler)

    def server_bind(self) -> None:
        # HTTPServer's looks its address up in DNS (getfqdn): seconds, where DNS is slow, for 127.77.x.y
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.socket.getsockname()[:2]
        return str(host), int(port)

    def start(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self._accept, name=self.name, daemon=True)
        self._thread.start()
        return self

    def _accept(self) -> None:
        while True:
            try:
                request, client = self.socket.accept()
            except OSError:
                return  # shut down: stop()
            if self.stopping.is_set():
                request.close()
                return
            with self._open_lock:
                self._open.add(request)
            try:
                self.process_request(request, client)
            except Exception:
                self.handle_error(request, client)
                self.shutdown_request(request)

    def shutdown_request(self, request: socket.socket) -> None:  # type: ignore[override]
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: object, client_address: object) -> None:
        log.debug("%s: a connection ended with an error", self.name, exc_info=True)

    def stop(self) -> None:
        self.stopping.set()
        with contextlib.suppress(OSError):
            self.socket.shutdown(socket.SHUT_RDWR)  # wakes the accept loop
        if self._thread is not None:
            self._thread.join(5)
        with self._open_lock:
            still_open = list(self._open)
        for request in still_open:  # a keep-alive connection waiting for its next request, a relay under way
            with contextlib.suppress(OSError):
                request.shutdown(socket.SHUT_RDWR)
        self.server_close()  # and joins their threads


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=list)


def _page(title: str, *paragraphs: str, form: str = "") -> bytes:
    body = "".join(f"<p>{p}</p>\n" for p in paragraphs)
    return (
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n'
        f"<body><h1>{title}</h1>\n{body}{form}</body></html>\n"
    ).encode()


LOGIN_FORM = (
    '<form method="post"><label>Password or token: <input type="password" name="password"></label> '
    "<button>Log in</button></form>\n"
)


class PodService(LoopbackServer):
    """One HTTP port of one running pod, on the pod's own address."""

    def __init__(
        self, world: World, faults: Faults, pod: SimPod, address: str, port: int, password: str | None
    ) -> None:
        self.world, self.faults, self.pod, self.port = world, faults, pod, port
        self._password = password  # JUPYTER_PASSWORD as the pod's container got it; never logged
        self._session = secrets.token_hex(16)  # the cookie a good login sets
        super().__init__((address, port), _ServiceHandler, f"sim-service-{pod.id}-{port}")

    @property
    def jupyter(self) -> bool:
        return self.port == JUPYTER_PORT

    @property
    def cookie_name(self) -> str:
        return f"jupyter-{self.pod.id}-{self.port}"

    def answer(self, h: BaseHTTPRequestHandler) -> None:
        started = time.monotonic()
        url = urlsplit(h.path)
        for fault in self.faults.take(f"{self.pod.id}-{self.port} {h.command} {url.path}", "service"):
            if fault.kind == "slow_service" and self.stopping.wait(float(fault.value or 0)):
                h.close_connection = True  # the simulator stops: no answer
                return
        try:
            body = b"".join(_bounded(body_chunks(h.rfile, h.headers)))
        except BadBody as e:
            h.close_connection = True
            reply = Reply(400, _page("Bad Request", html.escape(str(e))))
        except _TooLarge:
            h.close_connection = True
            reply = Reply(413, _page("Payload Too Large", f"at most {MAX_BODY} bytes"))
        else:
            if self.jupyter:
                reply = self._jupyter(h, url.query, body)
            elif url.path.endswith("/stream"):
                self._stream(h, url.query)
                self._log(h, url.path, 200, started)
                return
            else:
                reply = self._status_page(body)
        self._send(h, reply)
        self._log(h, url.path, reply.status, started)

    def _jupyter(self, h: BaseHTTPRequestHandler, query: str, body: bytes) -> Reply:
        page = _page(
            "Jupyter Server",
            f"JupyterLab on pod {html.escape(self.pod.id)} ({html.escape(self.pod.name)}), port {self.port}.",
            "The podtui simulator's stand-in for the Jupyter server a RunPod image starts.",
        )
        if self._password is None:
            return Reply(200, page)
        if self._session in _cookies(h.headers.get("Cookie") or "").get(self.cookie_name, ()):
            return Reply(200, page)
        offered = parse_qs(query).get("token", [])
        scheme, _, value = (h.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() == "token":
            offered.append(value.strip())
        if h.command == "POST":
            offered += parse_qs(body.decode("utf-8", "replace")).get("password", [])
        wanted = self._password.encode()
        if any(secrets.compare_digest(o.encode(), wanted) for o in offered):
            cookie = f"{self.cookie_name}={self._session}; Path=/; HttpOnly; SameSite=Lax"
            return Reply(200, page, [("Set-Cookie", cookie)])
        return Reply(
            403,
            _page("Jupyter Server", "Log in: the password, or the URL with ?token=... .", form=LOGIN_FORM),
        )

    def _status_page(self, body: bytes) -> Reply:
        name = html.escape(self.pod.name)
        lines = [
            f"Pod {html.escape(self.pod.id)} ({name}) answers on port {self.port}.",
            "The podtui simulator's stand-in for the service the pod runs there.",
        ]
        if body:
            lines.append(f"Received {len(body)} bytes, sha256 {hashlib.sha256(body).hexdigest()}.")
        return Reply(200, _page(f"{name} · port {self.port}", *lines))

    def _stream(self, h: BaseHTTPRequestHandler, query: str) -> None:
        """GET .../stream?n=N: N lines, one every 50 ms, in chunks as they come (what a log tail or a progress page
        sends)."""
        try:
            count = max(0, min(int(parse_qs(query).get("n", ["3"])[0]), STREAM_LINES_MAX))
        except ValueError:
            count = 3
        h.send_response(200)
        h.send_header("Content-Type", "text/plain; charset=utf-8")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        if h.command == "HEAD":
            return
        for i in range(count):
            if i and self.stopping.wait(0.05):
                h.close_connection = True
                return
            line = f"line {i + 1} of {count}\n".encode()
            h.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            h.wfile.flush()
        h.wfile.write(b"0\r\n\r\n")

    def _send(self, h: BaseHTTPRequestHandler, reply: Reply) -> None:
        h.send_response(reply.status)
        h.send_header("Content-Type", "text/html; charset=utf-8")
        for name, value in reply.headers:
            h.send_header(name, value)
        h.send_header("Content-Length", str(len(reply.body)))
        if h.close_connection:
            h.send_header("Connection", "close")
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(reply.body)

    def _log(self, h: BaseHTTPRequestHandler, path: str, status: int, started: float) -> None:
        """The request on the pod's container log, as its server prints it: the path only, never the query (a
        Jupyter token rides there)."""
        # read without the world's lock: a handler never waits for it, so stopping a service (which waits for its
        # handlers) never waits on whoever holds it
        if self.pod.status != "RUNNING":
            return
        now = self.world.clock.now()
        client = h.client_address[0] if isinstance(h.client_address, tuple) else "?"
        path = path[:200]
        if self.jupyter:
            ms = (time.monotonic() - started) * 1000
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now))
            line = f"[I {stamp} ServerApp] {status} {h.command} {path} ({client}) {ms:.2f}ms"
        else:
            line = f'{client} - - "{h.command} {path} HTTP/1.1" {status} -'
        self.world.logs.served(self.pod, now, line)


def _bounded(chunks: Iterator[bytes]) -> Iterator[bytes]:
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > MAX_BODY:
            raise _TooLarge
        yield chunk


def _cookies(header: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in header.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep:
            out.setdefault(name, []).append(value)
    return out


class _ServiceHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "podtui-sim-service"
    timeout = IDLE_S

    def log_message(self, format: str, *args: object) -> None:
        pass  # each request goes to the pod's container log instead, without its query (PodService._log)

    def _answer(self) -> None:
        cast(PodService, self.server).answer(self)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _answer


class PodServices:
    """Every running pod's services: started with the pod, ended with its container, at the pod's own address."""

    def __init__(self, world: World, faults: Faults | None = None) -> None:
        self.world = world
        self.faults = faults or Faults()
        self._lock = threading.Lock()  # starts and stops, one at a time
        self._running: dict[str, dict[int, PodService]] = {}
        self._closed = False

    def start_pod(self, pod: SimPod) -> None:
        """Serve the pod's HTTP ports (again: what served them before ends, as its container restarts). A port
        that cannot be listened on stays down, and says why in the log: the proxy answers 502 for it."""
        address = self.world.pod_address(pod.id)
        with self.world.lock:
            ports = pod.http_ports()
            password = pod.env.get("JUPYTER_PASSWORD") or None
        with self._lock:
            if self._closed:
                return
            self._stop(pod.id)
            started: dict[int, PodService] = {}
            for port in ports:
                try:
                    started[port] = PodService(self.world, self.faults, pod, address, port, password)
                except OSError as e:
                    log.warning(
                        "pod %s: its service on port %d is down: cannot listen on %s:%d (%s)",
                        pod.id,
                        port,
                        address,
                        port,
                        e.strerror or e,
                    )
                    continue
                started[port].start()
            self._running[pod.id] = started

    def stop_pod(self, pod_id: str) -> None:
        with self._lock:
            self._stop(pod_id)

    def _stop(self, pod_id: str) -> None:
        for service in self._running.pop(pod_id, {}).values():
            service.stop()

    def address(self, pod_id: str, port: int) -> tuple[str, int] | None:
        """Where the pod's service for `port` listens now; None while it is down."""
        with self._lock:
            service = self._running.get(pod_id, {}).get(port)
            return service.address if service is not None else None

    def running(self, pod_id: str) -> list[int]:
        with self._lock:
            return sorted(self._running.get(pod_id, {}))

    def stop(self) -> None:
        """Every service ends, and none starts from now on (the simulator stops)."""
        with self._lock:
            self._closed = True
            for pod_id in list(self._running):
                self._stop(pod_id)
