"""Forwarding's own fixtures: an HTTP service for a pod's port to forward to, a way to ask it through a forward,
and forwarders on the simulator's direct pod, stopped after the test.

The service listens on the direct pod's own loopback address, as a program in the pod would, and the forwarders
reach it at `localhost`, as on RunPod (docs/services.md#loopback-addresses-and-localhost): a forward aimed anywhere
else on this machine is refused by the pod's sshd. Where sshd cannot have the pod's /etc/hosts, they name the pod's
address instead."""

from __future__ import annotations

import hashlib
import http.client
import http.server
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from podtui.core.api import V2Api
from podtui.core.forward import Forwarder
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS, DIRECT_POD, find_pod

BODY = b"hello from the pod\n"
BIG = bytes(range(256)) * 4096  # 1 MiB, every byte value


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self._answer(BIG if self.path == "/big" else BODY)

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers["Content-Length"]))
        self._answer(hashlib.sha256(data).hexdigest().encode())

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def pod_host(full_sim: Simulator) -> str:
    """Where the direct pod's sshd finds the pod itself: `localhost` (its own /etc/hosts), else the pod's address."""
    return "localhost" if full_sim.isolated else full_sim.world.pod_address(DEMO_IDS["train"])


@pytest.fixture
def service(full_sim: Simulator) -> Iterator[int]:
    """The port of an HTTP service of the direct pod's, on the pod's own address: `/` says BODY, `/big` is BIG,
    POST answers the sha256 of what it was sent."""
    address = full_sim.world.pod_address(DEMO_IDS["train"])
    server = http.server.ThreadingHTTPServer((address, 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="test-pod-service", daemon=True)
    thread.start()
    yield int(server.server_address[1])
    server.shutdown()
    server.server_close()
    thread.join(5)


Fetch = Callable[..., tuple[int, bytes]]


@pytest.fixture
def fetch() -> Fetch:
    """`fetch(port, path="/", body=None)`: (status, body) of a request to 127.0.0.1:port; no proxy settings apply."""

    def get(port: int, path: str = "/", body: bytes | None = None, timeout_s: float = 20.0) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
        try:
            conn.request("POST" if body is not None else "GET", path, body=body)
            answer = conn.getresponse()
            return answer.status, answer.read()
        finally:
            conn.close()

    return get


@pytest.fixture
def direct_pod(sim_api: V2Api) -> Pod:
    return find_pod(sim_api, DIRECT_POD)


MakeForwarder = Callable[..., Forwarder]


@pytest.fixture
def make_forwarder(ssh_settings: SshSettings, pod_host: str) -> Iterator[MakeForwarder]:
    """Forwarders reaching the pod's own services (`pod_host`), retrying quickly; stopped after the test."""
    made: list[Forwarder] = []

    def make(pod: Pod, **kw: Any) -> Forwarder:
        kw.setdefault("remote_host", pod_host)
        kw.setdefault("backoff_s", (0.2, 1.0))
        kw.setdefault("hold_s", 15.0)
        f = Forwarder(pod, ssh_settings, **kw)
        made.append(f)
        return f

    yield make
    for f in made:
        f.stop()
