"""RunPod's HTTP proxy in the simulator, over real HTTP (docs/services.md): a request to `{podId}-{port}` reaches that
pod's own service, answers as RunPod's does when it cannot (404, 502, 524), Jupyter asks for its password, and a
pod's services end with it and come back when it starts."""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from podtui.sim.clock import SimClock
from podtui.sim.demo import demo_world
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS
from tests.services.conftest import EXTRA_PORT

TRAIN, IDLE, STOPPED, STARTING, BURSTY = (DEMO_IDS[k] for k in ("train", "idle", "stopped", "starting", "bursty"))


def url(sim: Simulator, pod_id: str, port: int = 8888) -> str:
    return sim.proxy_url.format(pod_id=pod_id, port=port)


def proxy_base(sim: Simulator) -> str:
    return "http://{}:{}".format(*sim.proxy.address)


def wait_for(check: Any, timeout_s: float = 5.0) -> None:
    end = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def test_a_request_reaches_the_pods_own_service(web_sim: Simulator, web: httpx.Client) -> None:
    assert web_sim.proxy_url == proxy_base(web_sim) + "/{pod_id}-{port}/"
    r = web.get(url(web_sim, TRAIN))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert "<title>Jupyter Server</title>" in r.text and TRAIN in r.text and "llama-lora-3090" in r.text
    other = web.get(url(web_sim, IDLE, EXTRA_PORT))
    assert other.status_code == 200
    assert f"port {EXTRA_PORT}" in other.text and IDLE in other.text and "eval-a100" in other.text
    assert "Jupyter" not in other.text


def test_two_pods_on_8888_are_two_services(web_sim: Simulator, web: httpx.Client) -> None:
    train, idle = web_sim.service_address(TRAIN, 8888), web_sim.service_address(IDLE, 8888)
    assert train is not None and idle is not None and train != idle
    assert train[1] == idle[1] == 8888 and train[0].startswith("127.77.") and idle[0].startswith("127.77.")
    assert IDLE in web.get(url(web_sim, IDLE)).text and TRAIN not in web.get(url(web_sim, IDLE)).text
    with httpx.Client() as direct:  # the service itself, at the pod's own address
        assert TRAIN in direct.get("http://{}:{}/".format(*train)).text


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("nosuchpod0000-8888/", "no pod nosuchpod0000"),
        (f"{TRAIN}-22/", "does not expose port 22 as HTTP"),  # TCP, not HTTP
        (f"{TRAIN}-9999/", "does not expose port 9999"),
        ("", "no pod service at this address"),
        ("favicon.ico", "no pod service at this address"),
    ],
)
def test_what_is_not_a_pods_http_port_is_404(web_sim: Simulator, web: httpx.Client, target: str, words: str) -> None:
    r = web.get(f"{proxy_base(web_sim)}/{target}")
    assert r.status_code == 404 and words in r.text


@pytest.mark.parametrize("pod_id", [STOPPED, STARTING])
def test_a_pod_that_is_not_running_is_502(web_sim: Simulator, web: httpx.Client, pod_id: str) -> None:
    r = web.get(url(web_sim, pod_id))
    assert r.status_code == 502 and f"pod {pod_id} is not running" in r.text


def test_a_service_that_does_not_answer_is_502(web_sim: Simulator, web: httpx.Client) -> None:
    web_sim.services.stop_pod(TRAIN)  # its server is gone, the pod runs on
    r = web.get(url(web_sim, TRAIN))
    assert r.status_code == 502 and "nothing answers on port 8888" in r.text


def test_a_port_taken_leaves_the_service_down_and_says_so(
    web_sim: Simulator, web: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    address = web_sim.world.pod_address(TRAIN)
    with socket.socket() as squatter:
        web_sim.services.stop_pod(TRAIN)
        squatter.bind((address, 8888))
        squatter.listen()
        with caplog.at_level(logging.WARNING, logger="podtui.sim.pod_services"):
            web_sim.services.start_pod(web_sim.world.pods[TRAIN])
        assert f"pod {TRAIN}: its service on port 8888 is down: cannot listen on {address}:8888" in caplog.text
        assert web_sim.service_address(TRAIN, 8888) is None
        assert web.get(url(web_sim, TRAIN)).status_code == 502


def test_a_slow_service_is_524_and_a_fault_switch_makes_one(web_sim: Simulator, web: httpx.Client) -> None:
    web_sim.proxy.timeout_s = 0.3
    web_sim.api.faults.add("slow_service", 5, times=1, only=f"{TRAIN}-8888")
    assert web.get(url(web_sim, IDLE)).status_code == 200  # another pod's: not slowed
    started = time.monotonic()
    r = web.get(url(web_sim, TRAIN))
    assert r.status_code == 524 and "did not answer within 0.3 s" in r.text
    assert time.monotonic() - started < 3
    assert web.get(url(web_sim, TRAIN)).status_code == 200  # the fault was for one request
    # the API's own faults stay the API's: the service takes its kind only
    web_sim.api.faults.add("status", 500, times=1)
    assert web.get(url(web_sim, TRAIN)).status_code == 200
    assert web_sim.api.faults.take("GET /v2/pods", "rest")[0].kind == "status"


def test_the_fault_through_the_control_endpoint(web_sim: Simulator, web: httpx.Client) -> None:
    """`podtui sim`'s users slow a service the way they set the API's faults."""
    web_sim.proxy.timeout_s = 0.3
    r = web.post(
        f"{web_sim.api.url}/_sim/faults",
        json={"add": [{"kind": "slow_service", "value": 5, "only": f"{IDLE}-{EXTRA_PORT}"}]},
        headers={"Authorization": f"Bearer {web_sim.api.api_key}"},
    )
    assert r.status_code == 200, r.text
    assert web.get(url(web_sim, IDLE, EXTRA_PORT)).status_code == 524
    assert web.get(url(web_sim, IDLE)).status_code == 200


def test_bodies_are_relayed_both_ways(web_sim: Simulator, web: httpx.Client) -> None:
    data = os.urandom(1_500_000)
    r = web.post(url(web_sim, IDLE, EXTRA_PORT) + "upload", content=data)
    assert r.status_code == 200 and f"Received {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}" in r.text

    def pieces() -> Iterator[bytes]:  # chunked transfer coding on the way in
        yield b"first "
        yield b"second"

    r = web.post(url(web_sim, IDLE, EXTRA_PORT), content=pieces())
    assert f"sha256 {hashlib.sha256(b'first second').hexdigest()}" in r.text
    with web.stream("GET", url(web_sim, IDLE, EXTRA_PORT) + "logs/stream?n=4") as streamed:
        assert streamed.status_code == 200 and streamed.headers["transfer-encoding"] == "chunked"
        assert "".join(streamed.iter_text()) == "".join(f"line {i} of 4\n" for i in range(1, 5))
    head = web.head(url(web_sim, TRAIN))
    assert head.status_code == 200 and head.content == b"" and int(head.headers["content-length"]) > 0


def test_the_host_is_the_services_and_the_bare_prefix_redirects(web_sim: Simulator, web: httpx.Client) -> None:
    r = web.get(f"{proxy_base(web_sim)}/{TRAIN}-8888?x=1")
    assert r.status_code == 308 and r.headers["location"] == f"/{TRAIN}-8888/?x=1"
    assert web.get(f"{proxy_base(web_sim)}/{TRAIN}-8888", follow_redirects=True).status_code == 200
    # RunPod's own address, given as the Host (the name cannot resolve here)
    r = web.get(proxy_base(web_sim) + "/", headers={"Host": f"{IDLE}-{EXTRA_PORT}.proxy.runpod.net"})
    assert r.status_code == 200 and IDLE in r.text


@pytest.fixture
def jupyter(web_sim: Simulator, web: httpx.Client) -> tuple[str, str]:
    """A pod created with startJupyter (JUPYTER_PASSWORD in its env), booted: (its id, its password)."""
    r = web.post(
        f"{web_sim.api.url}/v2/pods",
        headers={"Authorization": f"Bearer {web_sim.api.api_key}"},
        json={
            "name": "notebook",
            "image": "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
            "gpu": {"id": "NVIDIA GeForce RTX 3090", "count": 1},
            "cloud": "COMMUNITY",
            "ports": ["8888/http"],
            "startJupyter": True,
        },
    )
    assert r.status_code == 201, r.text
    pod_id = r.json()["id"]
    assert web.get(url(web_sim, pod_id)).status_code == 502  # still starting
    web_sim.world.clock.advance(31)
    return pod_id, web_sim.world.pods[pod_id].env["JUPYTER_PASSWORD"]


def test_jupyter_asks_for_its_password_or_token(
    web_sim: Simulator, web: httpx.Client, jupyter: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    pod_id, password = jupyter
    caplog.set_level(logging.DEBUG)
    home = url(web_sim, pod_id)
    refused = web.get(home)
    assert refused.status_code == 403 and "<title>Jupyter Server</title>" in refused.text
    assert 'name="password"' in refused.text and password not in refused.text
    assert web.get(home, params={"token": "not-it"}).status_code == 403
    assert web.post(home, data={"password": "not-it"}).status_code == 403
    assert web.get(home, headers={"Authorization": "token not-it"}).status_code == 403

    with httpx.Client(timeout=10.0) as browser:  # a good token logs in, and the cookie keeps it so
        r = browser.get(home + "lab", params={"token": password})
        assert r.status_code == 200 and "JupyterLab on pod" in r.text
        assert browser.get(home + "tree").status_code == 200
    with httpx.Client(timeout=10.0) as browser:
        assert browser.post(home + "login", data={"password": password}).status_code == 200
        assert browser.get(home).status_code == 200
    assert web.get(home, headers={"Authorization": f"token {password}"}).status_code == 200

    # the pod's container log has the requests, never the token; nor has podtui's log the password
    pod = web_sim.world.pods[pod_id]
    with web_sim.world.logs.lock:
        lines = [e.line for e in web_sim.world.logs.entries(pod, web_sim.world.clock.now())]
    assert any("ServerApp] 200 GET /lab (127.0.0.1)" in ln for ln in lines), lines
    assert any("ServerApp] 403 GET / (127.0.0.1)" in ln for ln in lines), lines
    assert not any(password in ln or "token" in ln for ln in lines)
    assert not [r for r in caplog.records if r.name.startswith("podtui") and password in r.getMessage()]


def test_a_pod_without_a_password_opens_and_its_requests_are_logged(web_sim: Simulator, web: httpx.Client) -> None:
    assert web.get(url(web_sim, TRAIN) + "lab?token=anything").status_code == 200
    assert web.get(url(web_sim, IDLE, EXTRA_PORT) + "status?secret=1").status_code == 200
    pod = web_sim.world.pods[IDLE]
    with web_sim.world.logs.lock:
        lines = [e.line for e in web_sim.world.logs.entries(pod, web_sim.world.clock.now())]
    assert '127.0.0.1 - - "GET /status HTTP/1.1" 200 -' in lines


def test_services_end_with_the_pod_and_come_back_when_it_starts(web_sim: Simulator, web: httpx.Client) -> None:
    web_sim.stop_grace_s = 0.0
    api = httpx.Client(
        base_url=web_sim.api.url, headers={"Authorization": f"Bearer {web_sim.api.api_key}"}, timeout=10.0
    )
    with api:
        before = web_sim.service_address(TRAIN, 8888)
        assert api.post(f"/v2/pods/{TRAIN}/action", json={"action": "stop"}).status_code == 200
        assert web.get(url(web_sim, TRAIN)).status_code == 502  # at once: the pod is not running
        wait_for(lambda: web_sim.service_address(TRAIN, 8888) is None)
        assert before is not None
        with pytest.raises(httpx.ConnectError):  # nothing listens at the pod's address any more
            httpx.get("http://{}:{}/".format(*before), timeout=2.0)

        assert api.post(f"/v2/pods/{TRAIN}/action", json={"action": "start"}).status_code == 200
        assert web_sim.service_address(TRAIN, 8888) == before  # up as its container starts, at the same address
        assert web.get(url(web_sim, TRAIN)).status_code == 502  # still starting
        web_sim.world.clock.advance(31)
        assert web.get(url(web_sim, TRAIN)).status_code == 200

        # terminated: the pod is gone, and so is its service
        assert api.delete(f"/v2/pods/{IDLE}").status_code == 204
        assert web.get(url(web_sim, IDLE)).status_code == 404
        wait_for(lambda: web_sim.service_address(IDLE, 8888) is None)


def test_a_stop_ends_every_connection_and_thread(clock: SimClock, tmp_path: Path) -> None:
    """Simulator.stop() with a keep-alive connection open through the proxy and a slow request under way."""
    before = set(threading.enumerate())
    sim = Simulator(demo_world(clock), root=tmp_path / "sim", direct_ssh=False).start()
    try:
        sim.api.faults.add("slow_service", 30, only=f"{IDLE}-8888")
        idle = httpx.Client(timeout=10.0)
        assert idle.get(url(sim, TRAIN)).status_code == 200  # and the connection stays open
        slow = threading.Thread(target=lambda: httpx.get(url(sim, IDLE), timeout=10.0), daemon=True)
        slow.start()
        # the slow request's service thread, and the proxy's threads for both connections
        wait_for(lambda: len([t for t in threading.enumerate() if "process_request" in t.name]) >= 3)
    finally:
        started = time.monotonic()
        sim.stop()
    assert time.monotonic() - started < 5
    slow.join(5)
    idle.close()
    left = [t.name for t in set(threading.enumerate()) - before if t.is_alive()]
    assert not [n for n in left if n.startswith(("sim-service", "sim-proxy")) or "process_request" in n], left
