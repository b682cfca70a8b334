"""RunPod's REST API v2 over HTTP: one keep-alive client, answers turned into JSON or an ApiError in words.

v2 lives on the same host as GraphQL (`{base}/v2/...`, docs/runpod-facts.md#rest-v2): one RUNPOD_API_BASE_URL
serves both. Errors are RFC 9457 problem answers; 429 carries Retry-After, and every answer carries RateLimit
headers. httpx is imported on the first request, off the path to the first frame.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import math
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from podtui.core import secret, units
from podtui.core.api.errors import (
    ApiAuthError,
    ApiConflict,
    ApiError,
    ApiForbidden,
    ApiNotFound,
    ApiPaymentRequired,
    ApiQueryError,
    ApiRateLimited,
    ApiResponseError,
    ApiUnavailable,
    InvalidInput,
)
from podtui.core.visible import visible
from podtui.version import __version__

if TYPE_CHECKING:
    import httpx
    from httpx_sse import EventSource

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.runpod.io"
USER_AGENT = f"podtui/{__version__}"
RATE_LIMIT_DEFAULT_S = 10.0  # a 429 that does not say how long to wait
RATE_LIMIT_MAX_S = 3600.0  # a Retry-After beyond this is taken as a mistake, not a day-long silence
MAX_ANSWER_BYTES = 64 * 1024 * 1024  # far beyond any answer RunPod sends; past it the answer is refused, not kept

_REASONS = {400: "Bad Request", 402: "Payment Required", 403: "Forbidden", 404: "Not Found", 409: "Conflict"}
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def base_url_from_env() -> str:
    return (os.environ.get("RUNPOD_API_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")


def path_id(value: object) -> str:
    """An id safe to put in a URL path: letters, digits, '-' and '_' only (never '/', '..' or '?')."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        shown = repr(value)[:60]
        raise InvalidInput(f"refused to send id {shown}: ids are letters, digits, '-' and '_' only")
    return quote(value, safe="")


@dataclass(frozen=True)
class RateLimit:
    """What the last answer's RateLimit headers said: requests left in the window and seconds until it resets."""

    remaining: int | None
    reset_s: float | None
    policy: str | None


def parse_rate_limit(value: str | None, policy: str | None) -> RateLimit | None:
    # Both spellings of the IETF draft are in use: `limit=100, remaining=50, reset=5` and `"default";r=50;t=5`.
    if not value:
        return None
    remaining = re.search(r"(?:\bremaining|(?<![a-z])r)\s*=\s*(\d+)", value)
    reset = re.search(r"(?:\breset|(?<![a-z])t)\s*=\s*(\d+)", value)
    return RateLimit(
        int(remaining.group(1)) if remaining else None,
        float(reset.group(1)) if reset else None,
        visible(policy)[:80] if policy else None,
    )


def retry_after_seconds(header: str | None, now: Callable[[], float] = time.time) -> float:
    """Retry-After as seconds to wait: delta-seconds or an HTTP date (RFC 9110 10.2.3)."""
    if header is None or not header.strip():
        return RATE_LIMIT_DEFAULT_S
    text = header.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(text).timestamp() - now()
        except (TypeError, ValueError, IndexError, OverflowError):
            return RATE_LIMIT_DEFAULT_S
    if not math.isfinite(seconds):
        return RATE_LIMIT_DEFAULT_S
    return min(max(seconds, 1.0), RATE_LIMIT_MAX_S)


class RestV2:
    """Thread-safe: the poller, actions and the GPU advisor share one connection pool."""

    def __init__(self, api_key: str, base_url: str | None = None, timeout_s: float = 15.0) -> None:
        secret.register(api_key)
        self._api_key = api_key
        self.base_url = (base_url or base_url_from_env()).rstrip("/")
        self.timeout_s = timeout_s
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self.rate_limit: RateLimit | None = None
        self._spent_until = 0.0  # monotonic time: RunPod said this window's requests are used up until then

    def __repr__(self) -> str:
        return f"RestV2({self.base_url}, key={secret.mask(self._api_key)})"

    @property
    def key_digest(self) -> str:
        """Which key this is, as a short digest: two profiles with one key reach one account
        (docs/profiles.md#the-accounts-view); nothing of the key can be had from it."""
        return hashlib.sha256(self._api_key.encode()).hexdigest()[:16]

    # how to give another key when RunPod refuses this one: where it came from (the session sets it)
    key_hint = "then `podtui config set-key`"

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                import httpx

                self._client = httpx.Client(
                    base_url=self.base_url,
                    headers={
                        "Authorization": f"Bearer {self._api_key}",
                        "User-Agent": USER_AGENT,
                        "Accept": "application/json, application/problem+json",
                    },
                    follow_redirects=False,
                )
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        body: object = None,
        timeout_s: float | None = None,
    ) -> Any:
        """The answer's JSON (None for 204 or an empty body); raises ApiError subclasses with a message in words."""
        import httpx

        wait = self.timeout_s if timeout_s is None else timeout_s
        where = f"{method} {path}"
        self._refuse_if_spent()
        content = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if content is not None else None
        deadline = time.monotonic() + wait  # for the whole answer: httpx's timeout is per read
        try:
            with self._http().stream(
                method, path, params=params, content=content, headers=headers, timeout=wait
            ) as response:
                raw = _read_capped(response, deadline)
        except (httpx.ConnectTimeout, httpx.ConnectError) as e:
            raise self._no_connection(e, wait) from None
        except (httpx.TimeoutException, _TooSlow):
            raise ApiUnavailable(f"RunPod's API did not answer {where} within {wait:g} s") from None
        except (httpx.RemoteProtocolError, httpx.ReadError) as e:
            # the connection closed mid-answer: for a POST the request may have been carried out
            raise ApiResponseError(f"RunPod's answer to {where} was cut off ({reason_of(e)})") from None
        except httpx.HTTPError as e:
            raise ApiUnavailable(f"request to RunPod's API failed: {reason_of(e)}") from None
        self._note_rate_limit(response.headers)
        return _answer(where, response.status_code, response.headers, raw, self.key_hint)

    @contextlib.contextmanager
    def events(
        self,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
        quiet_s: float = 60.0,
    ) -> Iterator[EventStream]:
        """A Server-Sent Events answer (docs/architecture.md#logs): the server's time and the events as (id, data),
        which end when the stream is quiet for quiet_s (a live stream may say nothing for long: the caller resumes
        it). A drop mid-stream raises ApiUnavailable; an error answer the ApiError it says, as `call` does."""
        import httpx
        from httpx_sse import EventSource, SSEError

        where = f"GET {path}"
        self._refuse_if_spent()
        timeout = httpx.Timeout(self.timeout_s, read=quiet_s)
        try:
            with self._http().stream(
                "GET", path, params=params, headers={"Accept": "text/event-stream", **(headers or {})}, timeout=timeout
            ) as response:
                self._note_rate_limit(response.headers)
                if response.status_code != 200:
                    raw = _read_capped(response, _deadline(self))
                    _answer(where, response.status_code, response.headers, raw, self.key_hint)
                    raise ApiResponseError(f"RunPod answered {where} with HTTP {response.status_code}, not events")
                kind = response.headers.get("Content-Type", "")
                if not kind.lower().startswith("text/event-stream"):
                    raise ApiResponseError(f"RunPod's answer to {where} is not an event stream ({visible(kind)[:60]})")
                events = _sse_pairs(EventSource(response), where)
                yield EventStream(_server_time(response.headers.get("Date")), events, functools.partial(_cut, response))
        except (httpx.ConnectTimeout, httpx.ConnectError) as e:
            raise self._no_connection(e, self.timeout_s) from None
        except (httpx.RemoteProtocolError, httpx.ReadError, SSEError) as e:
            raise ApiUnavailable(f"RunPod's event stream for {where} broke off ({reason_of(e)})") from None
        except httpx.HTTPError as e:
            raise ApiUnavailable(f"request to RunPod's API failed: {reason_of(e)}") from None

    def _no_connection(self, error: Exception, wait: float) -> ApiUnavailable:
        """No connection was made (the request was never sent): said the same for a request and a stream."""
        import httpx

        why = f"no connection within {wait:g} s" if isinstance(error, httpx.ConnectTimeout) else reason_of(error)
        return ApiUnavailable(f"cannot reach RunPod's API at {self.base_url}: {why}", not_sent=True)

    def _refuse_if_spent(self) -> None:
        """The last answer's RateLimit said none are left in this window: a request now would only earn a 429."""
        left = self._spent_until - time.monotonic()
        if left > 0:
            raise ApiRateLimited(
                f"RunPod's rate limit for this window is used up; the next request goes in {units.duration(left)}",
                max(1.0, left),
            )

    def _note_rate_limit(self, headers: httpx.Headers) -> None:
        limit = parse_rate_limit(headers.get("RateLimit"), headers.get("RateLimit-Policy"))
        if limit is None:
            return
        before, self.rate_limit = self.rate_limit, limit
        if limit.remaining is not None and limit.remaining <= 5 and (before is None or before.remaining != 0):
            log.warning("RunPod's rate limit: %s requests left in this window (%s)", limit.remaining, limit.policy)
        if limit.remaining == 0 and limit.reset_s:
            self._spent_until = time.monotonic() + min(limit.reset_s, RATE_LIMIT_MAX_S)


@dataclass(frozen=True)
class EventStream:
    server_now: float | None  # the answer's Date header, epoch seconds
    events: Iterator[tuple[str, str]]  # (id, data), the id as the server last set it
    close: Callable[[], None] | None = None  # from another thread: ends a read that waits for the next event


def _deadline(rest: RestV2) -> float:
    return time.monotonic() + rest.timeout_s


def _cut(response: httpx.Response) -> None:
    """From another thread: end a read that waits on the stream. Closing a socket does not wake a thread blocked
    in recv() on it; shutting it down does (httpcore lends the socket through the `network_stream` extension), and
    the reading thread then closes the answer itself, as it leaves. Without a socket to reach, the answer is
    closed from here."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is None:
        response.close()
        return
    with contextlib.suppress(OSError):  # already closed: nothing is waiting on it
        sock.shutdown(socket.SHUT_RDWR)


def _server_time(date: str | None) -> float | None:
    if not date:
        return None
    try:
        return parsedate_to_datetime(date).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _sse_pairs(source: EventSource, where: str) -> Iterator[tuple[str, str]]:
    """The stream's message events as (id, data); the end of a quiet stream (a read timeout) ends them quietly,
    and a server that closes the stream (which RunPod's never does by itself) is a drop."""
    import httpx

    try:
        for sse in source.iter_sse():
            if sse.event in ("", "message") and sse.data:
                yield sse.id, sse.data
    except httpx.ReadTimeout:
        return
    raise ApiUnavailable(f"RunPod closed the event stream for {where}")


class _TooSlow(Exception):
    """The answer is still trickling in at its deadline."""


def _read_capped(response: httpx.Response, deadline: float) -> bytes:
    chunks: list[bytes] = []
    total = 0
    for chunk in response.iter_bytes():
        if time.monotonic() > deadline:
            raise _TooSlow
        total += len(chunk)
        if total > MAX_ANSWER_BYTES:
            raise ApiResponseError(f"RunPod's answer was larger than {units.size(MAX_ANSWER_BYTES)}; refused")
        chunks.append(chunk)
    return b"".join(chunks)


def refused_key(hint: str) -> str:
    """A 401's words: the key was refused, and how to give another where it came from (`hint`)."""
    return f"RunPod refused the API key (401): check it in RunPod's settings, {hint}"


def _answer(where: str, status: int, headers: httpx.Headers, raw: bytes, key_hint: str = RestV2.key_hint) -> Any:
    if 200 <= status < 300:
        if status == 204 or not raw.strip():
            return None
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than Python parses
            raise ApiResponseError(
                f"RunPod's answer to {where} is not JSON (a server error page or a cut-off answer)"
            ) from None
    problem = _problem(raw)
    said = _problem_words(problem, status)
    if status == 401:
        raise ApiAuthError(refused_key(key_hint))
    if status == 429:
        wait = retry_after_seconds(headers.get("Retry-After"))
        raise ApiRateLimited(
            f"RunPod's API is limiting requests (429 Too Many Requests) and asks to wait {units.duration(wait)}", wait
        )
    if status >= 500:
        what = f"RunPod's API had a server error ({status})" + (f": {said}" if problem else "")
        retry = headers.get("Retry-After")
        asked = retry_after_seconds(retry) if retry else None
        raise ApiUnavailable(what, asked, status=status, by_runpod=bool(problem))
    errors = tuple(problem.get("errors", ())) if problem else ()
    kind: type[ApiQueryError] = {
        402: ApiPaymentRequired,
        403: ApiForbidden,
        404: ApiNotFound,
        409: ApiConflict,
    }.get(status, ApiQueryError)
    if not problem and status not in _REASONS and not 400 <= status < 500:
        raise ApiResponseError(f"RunPod's API answered {where} with HTTP {status}")
    raise kind(f"RunPod refused {where} ({status}): {said}", status, errors)


def _problem(raw: bytes) -> dict[str, Any]:
    """The RFC 9457 fields that are there and of the right type; {} for an HTML page or anything else."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(value, dict):
        return {}
    out: dict[str, Any] = {}
    for key in ("title", "detail"):
        if isinstance(value.get(key), str):
            out[key] = value[key]
    errors = value.get("errors")
    if isinstance(errors, list):
        out["errors"] = [e for e in errors if isinstance(e, str)][:5]
    return out


def _problem_words(problem: Mapping[str, Any], status: int) -> str:
    detail = problem.get("detail") or problem.get("title") or _REASONS.get(status) or f"HTTP {status}"
    errors = problem.get("errors") or []
    text = str(detail).rstrip(".") + ("; " + "; ".join(errors) if errors else "")
    return secret.redact(visible(text))[:400]


def reason_of(e: BaseException) -> str:
    """A transport error in a few words, safe to show: the usual causes named, else its first line, redacted."""
    text = str(e)
    if "header" in text.lower():  # httpx quotes a header it refused, as bytes: that may be the key itself
        return f"a request header could not be sent ({type(e).__name__}; its value is not shown)"
    for hint in ("Connection refused", "Name or service not known", "timed out", "Connection reset"):
        if hint.lower() in text.lower():
            return hint.lower()
    if not text:
        return type(e).__name__
    return secret.redact(visible(text.splitlines()[0]))[:120]


__all__ = ["ApiError", "EventStream", "RateLimit", "RestV2", "path_id", "reason_of", "retry_after_seconds"]
