"""RunPod's HTTP proxy, simulated on 127.0.0.1 (docs/services.md#the-simulators-services-and-proxy).

RunPod serves a pod's `NNNN/http` port at `https://{podId}-{port}.proxy.runpod.net` (docs/runpod-facts.md#rest-v2);
that name cannot resolve here, so the simulator's proxy takes the same `{podId}-{port}` as the first part of the
path: `http://127.0.0.1:PORT/{podId}-{port}/...` (`url_template`, what podtui's `proxy_url` is set to). A request
whose Host is `{podId}-{port}.proxy.runpod.net` is routed by it as well.

It answers as RunPod's does: 404 for a pod it does not know or a port the pod does not expose as HTTP, 502 while
the pod is not running or nothing answers on the port, 524 when the service takes longer than `timeout_s` (100 s,
Cloudflare's) to answer. Otherwise it relays the request and the answer, bodies streamed both ways, headers as the
list they are (a repeated one stays repeated), with the Host header rewritten to the service's address, the
hop-by-hop ones dropped and X-Forwarded-* its own.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import re
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import cast

from podtui.sim.pod_services import IDLE_S, BadBody, LoopbackServer, PodServices, body_chunks
from podtui.sim.sim_pod import SimNotFound
from podtui.sim.world import World

log = logging.getLogger(__name__)

PROXY_TIMEOUT_S = 100.0  # Cloudflare's, in front of RunPod's proxy (docs/runpod-facts.md#rest-v2)
CHUNK = 65536
_IN_PATH = re.compile(r"^/([a-z0-9]+)-(\d{1,5})(/.*)?$")
_IN_HOST = re.compile(r"^([a-z0-9]+)-(\d{1,5})\.proxy\.runpod\.net(?::\d+)?$")
# not passed on: they describe one hop, not the request (RFC 9110 7.6.1); Host is the service's
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
    }
)


class SimProxy(LoopbackServer):
    def __init__(self, world: World, services: PodServices, host: str = "127.0.0.1", port: int = 0) -> None:
        self.world, self.services = world, services
        self.timeout_s = PROXY_TIMEOUT_S  # tests set a second
        super().__init__((host, port), _ProxyHandler, "sim-proxy")

    @property
    def url_template(self) -> str:
        """Where a pod's HTTP port is reached, as podtui's `proxy_url` takes it."""
        host, port = self.address
        return f"http://{host}:{port}/{{pod_id}}-{{port}}/"

    def relay(self, h: BaseHTTPRequestHandler) -> None:
        target = _target(h.path, h.headers.get("Host") or "")
        if target is None:
            return _own(h, 404, "404 Not Found: no pod service at this address (the path starts /{podId}-{port}/)")
        pod_id, port, path = target
        if path is None:  # /{podId}-{port} alone: on under the prefix, so that relative links work
            _, query_mark, query = h.path.partition("?")
            location = f"/{pod_id}-{port}/{query_mark}{query}"
            return _own(h, 308, f"308 Permanent Redirect: {location}", [("Location", location)])
        with self.world.lock:
            try:
                pod = self.world.get(pod_id)
            except SimNotFound:
                pod = None
            exposed = pod is not None and port in pod.http_ports()
            running = pod is not None and pod.status == "RUNNING"
        if pod is None:
            return _own(h, 404, f"404 Not Found: no pod {pod_id}")
        if not exposed:
            return _own(h, 404, f"404 Not Found: pod {pod_id} does not expose port {port} as HTTP")
        if not running:
            return _own(h, 502, f"502 Bad Gateway: pod {pod_id} is not running")
        address = self.services.address(pod_id, port)
        if address is None:
            return _own(h, 502, f"502 Bad Gateway: nothing answers on port {port} of pod {pod_id}")
        self._pass_on(h, pod_id, port, path, address)

    def _pass_on(self, h: BaseHTTPRequestHandler, pod_id: str, port: int, path: str, address: tuple[str, int]) -> None:
        # the client's X-Forwarded-* (any case) are dropped: a proxy's own are the only ones the service sees
        headers = [(k, v) for k, v in _end_to_end(h.headers.items()) if not k.lower().startswith("x-forwarded-")]
        headers += [
            ("Host", "{}:{}".format(*address)),
            ("X-Forwarded-For", str(h.client_address[0]) if isinstance(h.client_address, tuple) else ""),
            ("X-Forwarded-Host", h.headers.get("Host") or ""),
            ("X-Forwarded-Proto", "http"),
        ]
        chunked = "chunked" in (h.headers.get("Transfer-Encoding") or "").lower()
        has_body = chunked or "Content-Length" in h.headers
        if chunked:
            headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
            headers.append(("Transfer-Encoding", "chunked"))
        upstream = http.client.HTTPConnection(*address, timeout=self.timeout_s)
        try:
            try:
                # by hand, not request(): it would take the headers as a dict and add Accept-Encoding
                upstream.putrequest(h.command, path, skip_host=True, skip_accept_encoding=True)
                for name, value in headers:
                    upstream.putheader(name, value)
                upstream.endheaders(body_chunks(h.rfile, h.headers) if has_body else None, encode_chunked=chunked)
                answer = upstream.getresponse()
            except TimeoutError:
                log.debug("proxy: pod %s port %d did not answer in %g s", pod_id, port, self.timeout_s)
                return _own(
                    h,
                    524,
                    f"524 A Timeout Occurred: pod {pod_id} port {port} did not answer within {self.timeout_s:g} s",
                )
            except BadBody as e:
                return _own(h, 400, f"400 Bad Request: {e}")
            except (OSError, http.client.HTTPException) as e:
                log.debug("proxy: pod %s port %d: %s", pod_id, port, e)
                return _own(h, 502, f"502 Bad Gateway: nothing answers on port {port} of pod {pod_id}")
            self._answer(h, answer)
        finally:
            upstream.close()

    def _answer(self, h: BaseHTTPRequestHandler, answer: http.client.HTTPResponse) -> None:
        """The service's answer, streamed: with its length when it gave one, chunked otherwise."""
        no_body = h.command == "HEAD" or answer.status in (204, 304) or 100 <= answer.status < 200
        length = answer.getheader("Content-Length")
        chunked_out = not no_body and (answer.chunked or length is None)
        h.send_response_only(answer.status, answer.reason)
        for name, value in _end_to_end(answer.getheaders()):
            if name.lower() != "content-length":
                h.send_header(name, value)
        if chunked_out:
            h.send_header("Transfer-Encoding", "chunked")
        elif length is not None:
            h.send_header("Content-Length", length)
        h.end_headers()
        if no_body:
            return
        try:
            for data in _read(answer):
                h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked_out else data)
                h.wfile.flush()
            if chunked_out:
                h.wfile.write(b"0\r\n\r\n")
        except (OSError, http.client.HTTPException) as e:  # cut mid-way: the client sees a body cut short
            log.debug("proxy: an answer was cut: %s", e)
            h.close_connection = True


def _end_to_end(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """`headers` in order, repeated ones kept, without the hop-by-hop ones: the standard few and those the
    Connection header names (RFC 9110 7.6.1)."""
    headers = list(headers)
    named = {
        token.strip().lower() for name, value in headers if name.lower() == "connection" for token in value.split(",")
    }
    return [(k, v) for k, v in headers if k.lower() not in HOP_BY_HOP and k.lower() not in named]


def _read(answer: http.client.HTTPResponse) -> Iterator[bytes]:
    while data := answer.read1(CHUNK):
        yield data


def _target(path: str, host: str) -> tuple[str, int, str | None] | None:
    """(pod id, port, the path the service gets; None: the bare prefix) from the path or the Host header."""
    rest: str | None
    by_host = _IN_HOST.match(host.lower())
    if by_host is not None:
        pod_id, port, rest = by_host.group(1), by_host.group(2), path
    else:
        by_path = _IN_PATH.match(path.split("?", 1)[0])
        if by_path is None:
            return None
        pod_id, port = by_path.group(1), by_path.group(2)
        query = path.split("?", 1)[1] if "?" in path else None
        rest = None if by_path.group(3) is None else by_path.group(3) + ("" if query is None else "?" + query)
    number = int(port)
    return (pod_id, number, rest) if 0 < number < 65536 else None


def _own(h: BaseHTTPRequestHandler, status: int, text: str, headers: list[tuple[str, str]] | None = None) -> None:
    """The proxy's own answer (a refusal, a redirect): short text, and the connection closed (a request body may be
    left unread)."""
    body = (text + "\n").encode()
    h.close_connection = True
    with contextlib.suppress(OSError):
        h.send_response(status)
        h.send_header("Content-Type", "text/plain; charset=utf-8")
        for name, value in headers or []:
            h.send_header(name, value)
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Connection", "close")
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "podtui-sim-proxy"
    timeout = IDLE_S

    def log_message(self, format: str, *args: object) -> None:
        pass  # a request line may carry a Jupyter token in its query: never logged

    def _relay(self) -> None:
        cast(SimProxy, self.server).relay(self)

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _relay
