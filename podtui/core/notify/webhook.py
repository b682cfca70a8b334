"""The webhook (docs/alerts.md#the-webhook): each alert one POST to the URL the config names, from a thread of its
own through a bounded queue, so a slow or dead receiver never holds up the app or `podtui watch`.

A POST that fails on the way (refused, dropped, timed out) or is answered 5xx or 429 is tried again after an
exponential backoff with jitter (a 429's or 503's Retry-After honoured), up to `tries` times and up to
MAX_TRYING_S after its first try, then given up and logged once. One alert at a time: the cap keeps a receiver that
asks to wait from holding the alerts behind it for long. Any other answer is final: a 4xx will not change by asking
again, and a redirect is not followed (the body would go where the config does not say). A POST whose answer was
lost may have arrived, so a retry can deliver it twice: the body and the Idempotency-Key header carry the alert's
id, the same on every try, for the receiver to drop the second.

The body holds the alert's kind, severity, text (secrets masked), pod, time and profile, and podtui's version:
never the API key, a pod's environment, or the URL itself (its token is as good as the URL).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import email.utils
import json
import logging
import queue
import random
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from podtui.core import secret
from podtui.core.alert_rules import Format, shown_url
from podtui.core.alerts import Alert
from podtui.core.notify.terminal import safe_text
from podtui.version import __version__

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)
TRIES = 5
BACKOFF_S = 2.0  # the first retry waits about this long, each next one twice as long
MAX_BACKOFF_S = 120.0
MAX_TRYING_S = 300.0  # an alert is given up this long after its first try (a longer Retry-After: at once)
TIMEOUT_S = 10.0
QUEUE_MAX = 200  # alerts waiting to be sent; past this the newest are dropped (and that is logged once)
MAX_TEXT = 2000
NTFY_PRIORITY = {"error": "high", "warning": "default", "information": "low"}
_STOP = object()


class Outcome:
    """What one POST came to: done, worth trying again (after `wait_s` if the receiver said), or final."""

    def __init__(self, done: bool, retry: bool, why: str, wait_s: float | None = None) -> None:
        self.done, self.retry, self.why, self.wait_s = done, retry, why, wait_s


def body_and_headers(alert: Alert, fmt: Format) -> tuple[bytes, dict[str, str]]:
    """The POST for `alert` in the receiver's format; the profile named, when there is one."""
    text = safe_text(alert.text, MAX_TEXT)
    source = safe_text(alert.source, 60)
    headers = {
        "User-Agent": f"podtui/{__version__}",
        "Idempotency-Key": alert.id,
        "X-Podtui-Event": alert.kind,
    }
    if fmt == "ntfy":  # ntfy takes the message as the body and the rest as headers (ASCII only)
        headers |= {
            "Content-Type": "text/plain; charset=utf-8",
            "Title": f"{source}: {alert.kind.replace('_', ' ')}",
            "Priority": NTFY_PRIORITY[alert.severity],
            "Tags": alert.kind,
        }
        return text.encode("utf-8"), headers
    headers["Content-Type"] = "application/json"
    if fmt == "slack":  # <!channel> in a pod's name must not ping anyone: Slack's three escapes
        escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        return json.dumps({"text": f"{source} ({alert.severity}): {escaped}"}).encode("utf-8"), headers
    data = alert.as_json()
    data["text"] = text
    if data["pod"] is not None:
        data["pod"] = {"id": safe_text(alert.pod_id or "", 100), "name": safe_text(alert.pod_name or "", 200)}
    return json.dumps(data, ensure_ascii=True).encode("utf-8"), headers


def retry_after_s(value: str | None, now: float) -> float | None:
    """A Retry-After header's wait (RFC 9110 10.2.3): ASCII digits (seconds), or an HTTP date; None when absent or
    anything else (the backoff then). str.isdigit would take "²" or "٣", which float() refuses."""
    if not value:
        return None
    value = value.strip()
    if re.fullmatch(r"[0-9]{1,12}", value):
        return float(value)
    if not value.isascii() or len(value) > 64:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed.tzinfo is None:  # "-0000" or none said: HTTP dates are GMT
        parsed = parsed.replace(tzinfo=dt.timezone.utc)
    try:
        when = parsed.timestamp()
    except (OverflowError, OSError, ValueError):
        return None
    return max(0.0, when - now)


class WebhookSink:
    def __init__(
        self,
        url: str,
        fmt: Format = "json",
        *,
        tries: int = TRIES,
        backoff_s: float = BACKOFF_S,
        max_backoff_s: float = MAX_BACKOFF_S,
        timeout_s: float = TIMEOUT_S,
        queue_max: int = QUEUE_MAX,
        jitter: Callable[[], float] = random.random,
        max_trying_s: float = MAX_TRYING_S,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url, self.fmt = url, fmt
        self.tries, self.backoff_s, self.max_backoff_s, self.timeout_s = tries, backoff_s, max_backoff_s, timeout_s
        self.jitter = jitter
        self.max_trying_s = max_trying_s
        self.monotonic = monotonic
        self._queue: queue.Queue[Any] = queue.Queue(queue_max)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._dropped_told = False
        self._in_flight = 0
        self._idle = threading.Condition(self._lock)
        self.delivered: list[str] = []  # alert ids the receiver took (for `podtui watch` and the tests)
        self.given_up: list[str] = []
        self.waits: list[float] = []  # the backoffs waited, in order

    @property
    def where(self) -> str:
        return f"the webhook {shown_url(self.url)}"

    @property
    def patience_s(self) -> float:
        """How long one alert can take at most when the receiver never asks to wait: every try timing out and every
        backoff at its longest; never past max_trying_s (and one last try's timeout)."""
        backoffs = sum(min(self.max_backoff_s, self.backoff_s * 2.0**i) for i in range(self.tries - 1))
        return min(self.max_trying_s + self.timeout_s, backoffs + self.tries * self.timeout_s)

    @property
    def waiting(self) -> int:
        """Alerts queued or being sent."""
        with self._lock:
            return self._in_flight

    def __call__(self, alert: Alert) -> None:
        self.send(alert)

    def send(self, alert: Alert) -> None:
        """Queue `alert` for its POST; never blocks."""
        with self._lock:
            if self._stop.is_set():
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="podtui-webhook", daemon=True)
                self._thread.start()
            try:
                self._queue.put_nowait(alert)
                self._in_flight += 1
            except queue.Full:
                if not self._dropped_told:
                    self._dropped_told = True
                    log.warning("%s is not keeping up: alerts dropped (said once)", self.where)

    def drain(self, timeout_s: float) -> bool:
        """Wait until every queued alert is delivered or given up; False if some are still on their way."""
        end = time.monotonic() + timeout_s
        with self._idle:
            while self._in_flight:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def close(self, flush_s: float = 0.0, join_s: float = 2.0) -> None:
        """Stop: what is queued gets up to `flush_s` to go, then the rest is dropped (logged); the POST under way gets
        `join_s` more to end."""
        if flush_s > 0:
            self.drain(flush_s)
        self._stop.set()
        with self._lock:
            left = self._in_flight
            thread = self._thread
        if thread is not None:
            with contextlib.suppress(queue.Full):  # full: the thread sees the stop after the alert it is on
                self._queue.put_nowait(_STOP)
            thread.join(timeout=join_s)
        if left:
            log.warning("%s: %d alert(s) not sent, podtui stopped first", self.where, left)

    # --- the thread ---------------------------------------------------------------------------------------------

    def _run(self) -> None:
        import httpx  # with the first alert, not at start-up

        with httpx.Client(timeout=self.timeout_s, follow_redirects=False) as client:
            while not self._stop.is_set():
                item = self._queue.get()
                if item is _STOP:
                    return
                try:
                    self._deliver(client, item)
                except Exception:  # the thread must outlive one alert's unexpected failure
                    log.exception("%s: sending alert %s failed", self.where, item.kind)
                finally:
                    with self._idle:
                        self._in_flight -= 1
                        self._idle.notify_all()

    def _deliver(self, client: httpx.Client, alert: Alert) -> None:
        body, headers = body_and_headers(alert, self.fmt)
        outcome = Outcome(False, False, "not tried")
        give_up_at = self.monotonic() + self.max_trying_s  # the alerts behind this one wait no longer
        for attempt in range(1, self.tries + 1):
            outcome = self._post(client, body, headers)
            if outcome.done:
                self.delivered.append(alert.id)
                if attempt > 1:
                    log.info("%s took alert %s on try %d", self.where, alert.kind, attempt)
                return
            if not outcome.retry or attempt == self.tries:
                break
            wait = outcome.wait_s if outcome.wait_s is not None else self._backoff(attempt)
            if self.monotonic() + wait > give_up_at:
                why = f"asked to wait {wait:.0f} s" if outcome.wait_s is not None else "still failing"
                outcome = Outcome(False, False, f"{outcome.why}; {why}, past {self.max_trying_s:.0f} s of trying")
                break
            self.waits.append(wait)
            if self._stop.wait(wait):
                outcome = Outcome(False, False, f"{outcome.why}; podtui stopped before the next try")
                break
        self.given_up.append(alert.id)
        log.warning("%s: alert %s not delivered (%s)", self.where, alert.kind, outcome.why)

    def _backoff(self, attempt: int) -> float:
        """Exponential, with jitter: between half and all of backoff_s * 2^(attempt-1), capped."""
        ceiling = min(self.max_backoff_s, self.backoff_s * 2.0 ** (attempt - 1))
        return ceiling * (0.5 + self.jitter() / 2)

    def _post(self, client: httpx.Client, body: bytes, headers: dict[str, str]) -> Outcome:
        import httpx

        try:
            answer = client.post(self.url, content=body, headers=headers)
        except httpx.TransportError as e:  # refused, dropped, timed out: it may or may not have arrived
            return Outcome(False, True, f"{type(e).__name__}: {secret.redact(str(e)) or 'no answer'}")
        status = answer.status_code
        if 200 <= status < 300:
            return Outcome(True, False, f"HTTP {status}")
        if status == 429 or status >= 500:
            wait = retry_after_s(answer.headers.get("retry-after"), time.time()) if status in (429, 503) else None
            return Outcome(False, True, f"HTTP {status}", wait)
        if 300 <= status < 400:
            return Outcome(False, False, f"HTTP {status}: a redirect, not followed (set the URL it names)")
        return Outcome(False, False, f"HTTP {status}: refused, not tried again")
