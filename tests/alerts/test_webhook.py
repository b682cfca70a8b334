"""The webhook against a real receiver on loopback: one POST per alert, retried after 500s and a dropped connection
with the same idempotency id, never after a 4xx, a 429's Retry-After honoured, the backoff growing; no secret and
not the URL in any body, header or log line."""

from __future__ import annotations

import dataclasses
import json
import logging

import pytest

from podtui.core import secret
from podtui.core.alert_rules import parse_alert_rules
from podtui.core.alerts import Alert
from podtui.core.notify.webhook import WebhookSink, body_and_headers, retry_after_s
from podtui.version import __version__
from tests.alerts.conftest import Receiver

T0 = 1_800_000_000.0


def alert(n: int = 0, text: str = "trainer is idle", name: str = "trainer") -> Alert:
    return Alert("idle", text, "warning", T0 + n, f"idle:p1:{n}", "idle:p1", "p1", name)


def sink(receiver: Receiver, **kw: object) -> WebhookSink:
    rules = parse_alert_rules({"webhook": receiver.url})  # registered as a secret, as config.toml's is
    assert rules.webhook is not None
    kw.setdefault("backoff_s", 0.01)
    kw.setdefault("jitter", lambda: 1.0)
    return WebhookSink(rules.webhook, rules.webhook_format, **kw)  # type: ignore[arg-type]


def test_each_alert_is_posted_exactly_once(receiver: Receiver) -> None:
    s = sink(receiver)
    alerts = [alert(n) for n in range(3)]
    for a in alerts:
        s.send(a)
    assert s.drain(10)
    s.close()
    got = receiver.wait_for(3)
    assert len(got) == 3
    bodies = [r.json() for r in got]
    assert [b["id"] for b in bodies] == [a.id for a in alerts] == [r.headers["idempotency-key"] for r in got]
    first = bodies[0]
    assert first["kind"] == "idle" and first["severity"] == "warning" and first["text"] == "trainer is idle"
    assert first["pod"] == {"id": "p1", "name": "trainer"} and first["time"].endswith("Z")
    assert first["version"] == __version__ and got[0].headers["content-type"] == "application/json"
    assert s.delivered == [a.id for a in alerts] and s.given_up == []


def test_retries_after_500s_and_a_dropped_connection_then_delivers_once(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.plan = [500, 502, "drop", 200]
    s = sink(receiver, timeout_s=5.0)
    a = alert()
    s.send(a)
    assert s.drain(20)
    s.close()
    got = receiver.wait_for(4)
    assert len(got) == 4 and {r.json()["id"] for r in got} == {a.id}  # the same id each time: one event
    assert {r.headers["idempotency-key"] for r in got} == {a.id}
    assert s.delivered == [a.id] and s.given_up == []
    assert s.waits == [0.01, 0.02, 0.04]  # exponential (jitter pinned to its top)


def test_no_retry_after_a_4xx_and_one_log_line(receiver: Receiver, caplog: pytest.LogCaptureFixture) -> None:
    receiver.plan = [404]
    s = sink(receiver)
    with caplog.at_level(logging.INFO):
        s.send(alert())
        assert s.drain(10)
    s.close()
    assert len(receiver.got) == 1 and len(s.given_up) == 1 and s.waits == []
    said = [r.getMessage() for r in caplog.records if "not delivered" in r.getMessage()]
    assert len(said) == 1 and "HTTP 404" in said[0]


def test_gives_up_after_its_tries(receiver: Receiver, caplog: pytest.LogCaptureFixture) -> None:
    receiver.plan = [500] * 10
    s = sink(receiver, tries=3)
    s.send(alert())
    assert s.drain(10)
    s.close()
    assert len(receiver.got) == 3 and len(s.given_up) == 1
    assert sum("not delivered" in r.getMessage() for r in caplog.records) == 1


def test_429_retry_after_is_honoured_over_the_backoff(receiver: Receiver) -> None:
    receiver.plan, receiver.retry_after = [429, 503], "0"
    s = sink(receiver, backoff_s=30.0)  # its own backoff would wait 15 s and more: the receiver said 0
    s.send(alert())
    assert s.drain(10)
    s.close()
    assert s.waits == [0.0, 0.0] and len(s.delivered) == 1


def test_retry_after_forms() -> None:
    assert retry_after_s("7", T0) == 7.0
    assert retry_after_s(" 99999 ", T0) == 99999.0  # the cap on an alert's trying decides what is waited
    assert retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480.0) == 0.0
    assert retry_after_s("Wed, 21 Oct 2015 07:28:00 GMT", 1445412470.0) == 10.0
    assert retry_after_s("Wed, 21 Oct 2015 07:28:00 -0000", 1445412470.0) == 10.0  # no zone said: GMT
    for bad in ("soon", None, "", "²", "٣", "1²", "1.5", "-3", "9" * 5000, "Wed, 21 Oct 2015 07:28:00 GMT" * 9):
        assert retry_after_s(bad, T0) is None, bad


def test_a_retry_after_that_is_not_a_number_falls_back_to_the_backoff(receiver: Receiver) -> None:
    receiver.plan, receiver.retry_after = [503], "²"  # str.isdigit() says yes; float() says no
    s = sink(receiver)
    s.send(alert())
    assert s.drain(10)
    s.close()
    assert len(s.delivered) == 1 and s.given_up == [] and s.waits == [0.01]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_receiver_asking_to_wait_long_holds_up_no_other_alert(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.plan, receiver.retry_after = [503, 503], "600"
    s = sink(receiver, max_trying_s=300.0)
    first, second = alert(0), alert(1)
    s.send(first)
    s.send(second)
    assert s.drain(10)  # no 600 s wait: the first is given up at once
    s.close()
    assert s.given_up == [first.id, second.id] and s.waits == []
    said = [r.getMessage() for r in caplog.records if "not delivered" in r.getMessage()]
    assert len(said) == 2 and "asked to wait 600 s, past 300 s of trying" in said[0]


def test_an_alert_is_given_up_after_its_time_of_trying(receiver: Receiver) -> None:
    clock = Clock()
    receiver.plan = [500] * 10

    def jitter() -> float:
        clock.now += 200.0  # each try takes 200 s as far as the sink can tell
        return 1.0

    s = sink(receiver, max_trying_s=300.0, monotonic=clock, jitter=jitter)
    s.send(alert())
    assert s.drain(10)
    s.close()
    assert len(receiver.got) == 2 and len(s.given_up) == 1  # the third try would start past 300 s
    assert s.patience_s <= 300.0 + s.timeout_s


def test_refused_connection_is_retried_then_given_up(caplog: pytest.LogCaptureFixture) -> None:
    rules = parse_alert_rules({"webhook": "http://127.0.0.1:9/podtui-refused-hook-token"})
    assert rules.webhook is not None
    s = WebhookSink(rules.webhook, tries=2, backoff_s=0.01, jitter=lambda: 0.0)
    s.send(alert())
    assert s.drain(10)
    s.close()
    assert s.given_up and s.waits == [0.005]
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "not delivered" in text and "podtui-refused-hook-token" not in text


def test_no_secret_and_not_the_url_in_bodies_headers_or_logs(
    receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    token = receiver.url.rsplit("/", 1)[1]
    receiver.plan = [500]
    s = sink(receiver)
    with caplog.at_level(logging.DEBUG):
        s.send(alert(text=f"trainer posted to {receiver.url} (token {token})"))
        assert s.drain(10)
    s.close()
    for r in receiver.wait_for(2):
        assert token not in r.body.decode() and token not in json.dumps(r.headers)
        assert "127.0.0.1" not in r.body.decode()
    assert all(token not in r.getMessage() for r in caplog.records if r.name.startswith("podtui"))
    # httpx names the URL in its own DEBUG/INFO lines: the log file's filter masks it (it is a registered secret)
    assert all(token not in secret.redact(r.getMessage()) for r in caplog.records)


@pytest.mark.parametrize("hostile", ["<!channel> & <https://evil|click>", "\x1b]52;c;cm0K\x07ping"])
def test_formats(hostile: str) -> None:
    a = alert(text=f"{hostile} is idle", name=hostile)
    body, headers = body_and_headers(a, "slack")
    text = json.loads(body)["text"]
    assert set(json.loads(body)) == {"text"} and "<!channel>" not in text and "\x1b" not in text
    assert headers["Idempotency-Key"] == a.id
    body, headers = body_and_headers(a, "ntfy")
    assert headers["Title"] == "podtui: idle" and headers["Priority"] == "default" and headers["Tags"] == "idle"
    assert "\x1b" not in body.decode() and all(v.isascii() for v in headers.values())
    body, _ = body_and_headers(a, "json")
    data = json.loads(body)
    assert "\x1b" not in data["text"] and "\x1b" not in data["pod"]["name"] and body.isascii()


def test_every_format_names_the_profile() -> None:
    a = dataclasses.replace(alert(), profile="work")
    assert json.loads(body_and_headers(a, "json")[0])["profile"] == "work"
    assert json.loads(body_and_headers(a, "slack")[0])["text"].startswith("podtui (work) (warning): ")
    assert body_and_headers(a, "ntfy")[1]["Title"] == "podtui (work): idle"
    assert json.loads(body_and_headers(alert(), "json")[0])["profile"] is None
