"""Forwarding a pod's port over real direct SSH (the simulator's OpenSSH sshd): HTTP through it and its counters,
127.0.0.1 only, a taken local port, a refused pod port, a dropped connection made again, stop() leaving nothing
behind; and the refusal of a gateway-only pod with its proxy URL (docs/forwarding.md)."""

from __future__ import annotations

import errno
import hashlib
import socket
import threading
import time
from collections.abc import Callable

import paramiko
import pytest

from podtui.core.api import V2Api
from podtui.core.forward import (
    DirectSshNeeded,
    Forward,
    Forwarder,
    LocalPortTaken,
    PodNotRunning,
    check_forwardable,
)
from podtui.core.pod import Pod
from podtui.sim.simulator import Simulator
from podtui.sim.sshd import free_port
from tests.forward.conftest import BIG, BODY, Fetch, MakeForwarder
from tests.helpers.sim import DEMO_IDS, GATEWAY_POD, find_pod, needs_sshd


def wait_for(check: Callable[[], bool], timeout_s: float = 15.0) -> None:
    end = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def forward_threads() -> list[threading.Thread]:
    return [
        t for t in threading.enumerate() if t.name.startswith("podtui-forward") or isinstance(t, paramiko.Transport)
    ]


@needs_sshd
def test_http_goes_through_and_is_counted(
    direct_pod: Pod, make_forwarder: MakeForwarder, service: int, fetch: Fetch, pod_host: str
) -> None:
    fw = make_forwarder(direct_pod)
    f = fw.add(service, 0)
    fw.start()
    assert f.local_address.startswith("127.0.0.1:") and f.local_port > 0
    assert fetch(f.local_port) == (200, BODY)
    status, big = fetch(f.local_port, "/big")
    assert status == 200 and big == BIG
    upload = bytes(range(256)) * 1000
    assert fetch(f.local_port, "/", upload) == (200, hashlib.sha256(upload).hexdigest().encode())
    wait_for(lambda: fw.forwards()[0].connections == 0)
    now = fw.forwards()[0]
    assert now.state == "listening" and now.connections_total == 3
    assert len(BODY) + len(BIG) + 64 < now.bytes_in < len(BODY) + len(BIG) + 1000  # bodies and three heads
    assert len(upload) < now.bytes_out < len(upload) + 1000
    via = f"{pod_host}:{service} via llama-lora-3090"
    assert now.target == (f"llama-lora-3090:{service}" if pod_host == "localhost" else via)


@needs_sshd
def test_the_pods_own_service_at_its_localhost(
    full_sim: Simulator, direct_pod: Pod, make_forwarder: MakeForwarder, fetch: Fetch
) -> None:
    """`localhost` as the pod's sshd resolves it is the pod itself: its port 8888 is its own Jupyter."""
    if not hasattr(full_sim, "service_address"):
        pytest.skip("this simulator serves no HTTP ports of its pods")
    fw = make_forwarder(direct_pod, remote_host="localhost")
    f = fw.add(8888, 0)
    fw.start()
    status, body = fetch(f.local_port)
    assert status == 200 and b"Jupyter" in body and direct_pod.id.encode() in body
    assert fw.forwards()[0].target == "llama-lora-3090:8888"


@needs_sshd
def test_it_listens_on_127_0_0_1_only(direct_pod: Pod, make_forwarder: MakeForwarder, service: int) -> None:
    fw = make_forwarder(direct_pod)
    f = fw.add(service, 0)
    with pytest.raises(OSError) as e, socket.create_connection(("127.0.0.2", f.local_port), timeout=2):
        pass  # another address of this machine: refused, as any other interface's would be
    assert e.value.errno == errno.ECONNREFUSED


@needs_sshd
def test_a_taken_local_port_is_named(direct_pod: Pod, make_forwarder: MakeForwarder, service: int) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        fw = make_forwarder(direct_pod)
        with pytest.raises(LocalPortTaken, match=rf"cannot listen on 127\.0\.0\.1:{port}: the port is already in use"):
            fw.add(service, port)
    assert fw.forwards() == []


@needs_sshd
def test_a_refused_pod_port_closes_that_client_and_the_forward_goes_on(
    direct_pod: Pod, make_forwarder: MakeForwarder, service: int, fetch: Fetch
) -> None:
    fw = make_forwarder(direct_pod)
    heard: list[Forward] = []
    fw.listeners.append(heard.append)
    closed = free_port()  # nothing listens there on the pod
    bad = fw.add(closed, 0)
    good = fw.add(service, 0)
    fw.start()
    with socket.create_connection(("127.0.0.1", bad.local_port), timeout=10) as client:
        client.sendall(b"GET / HTTP/1.0\r\n\r\n")
        assert client.recv(100) == b""  # closed without an answer
    refused = f"connection refused by the pod's port {closed}"
    wait_for(lambda: any(h.note and refused in h.note for h in heard))
    after = {f.remote_port: f for f in fw.forwards()}
    assert after[closed].state == "listening" and refused in (after[closed].note or "")
    assert after[closed].connections_total == 0
    assert fetch(good.local_port) == (200, BODY)  # the other forward, and the SSH connection, unharmed
    with socket.create_connection(("127.0.0.1", bad.local_port), timeout=10) as client:  # and it still listens
        assert client.recv(100) == b""


@needs_sshd
def test_a_dropped_connection_is_made_again(
    full_sim: Simulator, direct_pod: Pod, make_forwarder: MakeForwarder, service: int, fetch: Fetch
) -> None:
    fw = make_forwarder(direct_pod)
    heard: list[Forward] = []
    fw.listeners.append(heard.append)
    f = fw.add(service, 0)
    fw.start()
    assert fetch(f.local_port) == (200, BODY)
    wait_for(lambda: fw.forwards()[0].connections == 0)  # that one is done: the one counted next is the idle one
    with socket.create_connection(("127.0.0.1", f.local_port), timeout=10) as idle:  # open across the drop
        wait_for(lambda: fw.forwards()[0].connections == 1)
        assert full_sim.sshds[DEMO_IDS["train"]].drop_connections() >= 1
        assert idle.recv(100) == b""  # its channel went with the connection: it is closed, not left hanging
    wait_for(lambda: any(h.state == "reconnecting" for h in heard))
    down = next(h for h in heard if h.state == "reconnecting")
    assert down.reason == "the SSH connection to llama-lora-3090 dropped"
    assert "reconnecting since" in down.describe()
    assert fetch(f.local_port) == (200, BODY)  # the same listener, over a new connection
    assert fw.forwards()[0].state == "listening" and heard[-1].state == "listening"


@needs_sshd
def test_a_client_arriving_while_the_pod_is_unreachable_waits_for_the_reconnect(
    full_sim: Simulator, direct_pod: Pod, make_forwarder: MakeForwarder, service: int, fetch: Fetch
) -> None:
    sshd = full_sim.sshds[DEMO_IDS["train"]]
    fw = make_forwarder(direct_pod)
    f = fw.add(service, 0)
    fw.start()
    sshd.stop()  # nothing answers on the pod's SSH port now: each attempt fails, and the next waits longer
    wait_for(lambda: fw.forwards()[0].retry_at is not None)
    down = fw.forwards()[0]
    assert down.state == "reconnecting" and "cannot reach llama-lora-3090" in (down.reason or "")
    answer: list[tuple[int, bytes]] = []
    client = threading.Thread(target=lambda: answer.append(fetch(f.local_port)))
    client.start()  # the listener is still there: the request waits
    time.sleep(0.5)
    assert not answer
    sshd.start()
    client.join(20)
    assert answer == [(200, BODY)]
    assert fw.forwards()[0].state == "listening"


@needs_sshd
def test_a_changed_host_key_is_not_retried(
    full_sim: Simulator, direct_pod: Pod, make_forwarder: MakeForwarder, service: int
) -> None:
    """The pod answers with another host key after the drop: refused (docs/runpod-facts.md#ssh-direct), and the
    forward fails for good, its port closed, rather than trying an impostor every 30 s."""
    sshd = full_sim.sshds[DEMO_IDS["train"]]
    fw = make_forwarder(direct_pod)
    heard: list[Forward] = []
    fw.listeners.append(heard.append)
    f = fw.add(service, 0)
    fw.start()
    sshd.stop()
    (sshd.dir / "ssh_host_ed25519_key").unlink()  # a new one is made as it starts again
    sshd.start()
    wait_for(lambda: fw.forwards()[0].state == "failed")
    failed = fw.forwards()[0]
    assert "REFUSED" in (failed.reason or "") and heard[-1].state == "failed"
    wait_for(lambda: not [t for t in threading.enumerate() if t.name == f"podtui-forward-accept {f.local_port}"])
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", f.local_port), timeout=2).close()


@needs_sshd
def test_stop_ends_everything_at_once(
    direct_pod: Pod, make_forwarder: MakeForwarder, service: int, fetch: Fetch
) -> None:
    before = forward_threads()
    fw = make_forwarder(direct_pod)
    f = fw.add(service, 0)
    fw.start()
    assert fetch(f.local_port) == (200, BODY)
    wait_for(lambda: fw.forwards()[0].connections == 0)  # that one is done: the one counted next is the idle one
    with socket.create_connection(("127.0.0.1", f.local_port), timeout=10) as idle:
        wait_for(lambda: fw.forwards()[0].connections == 1)
        started = time.monotonic()
        fw.stop()
        assert time.monotonic() - started < 1.0
        assert idle.recv(100) == b""
    assert [t for t in forward_threads() if t not in before] == []
    assert [x.state for x in fw.forwards()] == ["stopped"]
    with socket.socket() as again:  # the port is free again (as a new forward takes it: past TIME_WAIT)
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", f.local_port))
        again.listen()


@needs_sshd
def test_remove_ends_one_forward(direct_pod: Pod, make_forwarder: MakeForwarder, service: int, fetch: Fetch) -> None:
    fw = make_forwarder(direct_pod)
    one, two = fw.add(service, 0), fw.add(service, 0)
    fw.start()
    fw.remove(one.local_port)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", one.local_port), timeout=2).close()
    assert fetch(two.local_port) == (200, BODY)
    assert [x.local_port for x in fw.forwards()] == [two.local_port]


def test_a_gateway_only_pod_is_refused_with_the_proxy_url(api: V2Api) -> None:
    pod = find_pod(api, GATEWAY_POD)
    settings = object()
    with pytest.raises(DirectSshNeeded) as e:
        Forwarder(pod, settings)  # type: ignore[arg-type]  # refused before any setting is looked at
    assert e.value.proxy_url is None
    with pytest.raises(DirectSshNeeded) as e:
        check_forwardable(pod, 8888)
    text = str(e.value)
    assert "eval-a100 has no direct SSH" in text and "public IP and 22/tcp" in text
    assert "interactive shell only" in text
    assert e.value.proxy_url == f"https://{pod.id}-8888.proxy.runpod.net" and e.value.proxy_url in text
    with pytest.raises(DirectSshNeeded) as e:
        check_forwardable(pod, 8888, "https://proxy.example/{pod_id}/{port}")
    assert e.value.proxy_url == f"https://proxy.example/{pod.id}/8888"
    with pytest.raises(DirectSshNeeded) as e:
        check_forwardable(pod, 6006)  # not an HTTP port of the pod: no URL to offer
    assert e.value.proxy_url is None and "6006/http" in str(e.value)


def test_a_pod_that_is_not_running_is_refused(api: V2Api) -> None:
    with pytest.raises(PodNotRunning, match="notebook-4090 is EXITED: a port can be forwarded once the pod is RUNNING"):
        check_forwardable(find_pod(api, "notebook-4090"), 8888)
