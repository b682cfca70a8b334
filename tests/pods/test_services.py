"""A pod's exposed ports as services (docs/runpod-facts.md#rest-v2): HTTP ports at RunPod's proxy address, TCP
ports at their public ip:port while the pod runs; in `podtui pods --json` as `services`."""

from __future__ import annotations

import json

import pytest

from podtui.cli.main import main
from podtui.core.pod import Pod, PodStatus, PortMapping, Runtime
from podtui.core.pod_links import Service, service_urls, services
from podtui.sim.server import SimApiServer

RUNTIME = Runtime(
    uptime_s=60,
    ports=(
        PortMapping("100.65.0.2", 8888, 60888, "http"),
        PortMapping("203.0.113.7", 22, 40122, "tcp"),
        PortMapping("203.0.113.7", 6006, None, "tcp"),  # not published
    ),
)


def _pod(ports: str, status: PodStatus = PodStatus.RUNNING, runtime: Runtime | None = RUNTIME) -> Pod:
    return Pod(id="abc123", name="p", status=status, ports_spec=ports, runtime=runtime)


def test_http_at_the_proxy_tcp_at_its_public_address() -> None:
    assert services(_pod("8888/http,22/tcp,6006/tcp")) == (
        Service(8888, "http", url="https://abc123-8888.proxy.runpod.net"),
        Service(22, "tcp", public="203.0.113.7:40122"),
        Service(6006, "tcp"),  # no public port: reachable only through direct SSH's forwarding
    )


def test_a_stopped_pod_has_no_public_address() -> None:
    stopped = _pod("22/tcp,8888/http", PodStatus.EXITED)
    assert services(stopped) == (Service(22, "tcp"), Service(8888, "http", url="https://abc123-8888.proxy.runpod.net"))


@pytest.mark.parametrize(
    "ports",
    ["", " , ,", "8888", "http/8888", "99999/http", "0/tcp", "-1/tcp", "8888/http;rm -rf", "8888/HTTP", "\x1b[2J/http"],
)
def test_what_is_not_a_port_is_left_out(ports: str) -> None:
    assert services(_pod(ports)) == ()


def test_each_port_once_in_the_order_given() -> None:
    assert [s.port for s in services(_pod("22/tcp, 8888/http ,22/tcp,8888/http,7860/http"))] == [22, 8888, 7860]
    assert [p for p, _ in service_urls(_pod("22/tcp,8888/http,7860/http"))] == [8888, 7860]


def test_pods_json_lists_them(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pods", "--json"]) == 0
    pods = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    train = pods["llama-lora-3090"]["services"]
    assert {
        "port": 8888,
        "type": "http",
        "url": f"https://{pods['llama-lora-3090']['id']}-8888.proxy.runpod.net",
        "public": None,
    } in train
    assert all(set(s) == {"port", "type", "url", "public"} for p in pods.values() for s in p["services"])
