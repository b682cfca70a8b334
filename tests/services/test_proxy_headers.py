"""The simulated proxy's headers, over real sockets (docs/services.md#the-simulators-services-and-proxy): what a
client sends reaches the pod's service as a list (a repeated header stays repeated), without the hop-by-hop ones or
those its Connection header names, with the proxy's own X-Forwarded-* only, and nothing the client did not ask for."""

from __future__ import annotations

import http.client
from email.message import Message

import pytest

from podtui.sim.pod_services import PodService
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS
from tests.services.conftest import EXTRA_PORT

IDLE = DEMO_IDS["idle"]


def send(
    sim: Simulator, method: str, path: str, headers: list[tuple[str, str]], body: bytes = b""
) -> tuple[int, bytes]:
    """One request with exactly these headers, in this order (http.client adds none): the status and body."""
    conn = http.client.HTTPConnection(*sim.proxy.address, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers:
            conn.putheader(name, value)
        conn.endheaders(body or None)
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[str, str]]]:
    """The headers of each request the pods' services are given, in order."""
    heard: list[list[tuple[str, str]]] = []
    answer = PodService.answer

    def spy(self: PodService, h: object) -> None:
        headers: Message = h.headers  # type: ignore[attr-defined]
        heard.append(list(headers.items()))
        answer(self, h)  # type: ignore[arg-type]

    monkeypatch.setattr(PodService, "answer", spy)
    return heard


def test_headers_reach_the_service_as_a_list_without_hop_by_hop_ones(
    web_sim: Simulator, seen: list[list[tuple[str, str]]]
) -> None:
    status, _ = send(
        web_sim,
        "GET",
        f"/{IDLE}-{EXTRA_PORT}/x",
        [
            ("Host", "example.test"),
            ("Cookie", "a=1"),
            ("Cookie", "b=2"),
            ("Connection", "keep-alive, X-Hop"),
            ("X-Hop", "only for the next hop"),
            ("Keep-Alive", "timeout=5"),
            ("x-forwarded-for", "203.0.113.66"),
            ("X-Forwarded-Proto", "https"),
            ("X-Other", "kept"),
        ],
    )
    assert status == 200
    (headers,) = seen
    names = [k.lower() for k, _ in headers]
    assert [v for k, v in headers if k.lower() == "cookie"] == ["a=1", "b=2"]
    assert "x-hop" not in names and "keep-alive" not in names and "connection" not in names
    assert [v for k, v in headers if k.lower() == "x-forwarded-for"] == ["127.0.0.1"]
    assert [v for k, v in headers if k.lower() == "x-forwarded-proto"] == ["http"]
    assert [v for k, v in headers if k.lower() == "x-forwarded-host"] == ["example.test"]
    assert ("X-Other", "kept") in headers
    assert "accept-encoding" not in names  # the client asked for none
    host = web_sim.service_address(IDLE, EXTRA_PORT)
    assert host is not None and [v for k, v in headers if k.lower() == "host"] == ["{}:{}".format(*host)]


def test_a_chunked_body_is_relayed_chunked(web_sim: Simulator, seen: list[list[tuple[str, str]]]) -> None:
    status, body = send(
        web_sim,
        "POST",
        f"/{IDLE}-{EXTRA_PORT}/up",
        [("Host", "a"), ("Transfer-Encoding", "chunked")],
        b"5\r\nhello\r\n0\r\n\r\n",
    )
    assert status == 200 and b"Received 5 bytes" in body
    (headers,) = seen
    assert [v for k, v in headers if k.lower() == "transfer-encoding"] == ["chunked"]
    assert not [k for k, _ in headers if k.lower() == "content-length"]
