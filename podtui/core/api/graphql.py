"""RunPod's GraphQL API through the official runpod SDK: since REST v2, only for the balance, which v2 lacks.

GraphQL is to be retired in early 2027 (docs/runpod-facts.md#api-lifecycle); nothing but the balance may depend
on it, and its loss must leave everything else working (podtui.core.api.balance).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import Any

from podtui.core import secret, units
from podtui.core.api import sdk
from podtui.core.api.errors import (
    ApiAuthError,
    ApiQueryError,
    ApiRateLimited,
    ApiResponseError,
    ApiUnavailable,
)
from podtui.core.api.rest import RestV2, reason_of, refused_key, retry_after_seconds

log = logging.getLogger(__name__)


def _in_daemon_thread(fn: Callable[[], dict[str, Any]], timeout_s: float) -> dict[str, Any]:
    """Run `fn` on a daemon thread and wait at most `timeout_s`. The SDK's own timeout is a fixed 30 s; a
    call podtui gave up on must neither hold the UI nor keep the process alive at exit."""
    box: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

    def call() -> None:
        try:
            box.put((True, fn()))
        except BaseException as e:  # handed to the caller's thread
            box.put((False, e))

    threading.Thread(target=call, name="runpod-api", daemon=True).start()
    try:
        ok, value = box.get(timeout=timeout_s)
    except queue.Empty:
        raise ApiUnavailable(f"RunPod's API did not answer within {timeout_s:g} s") from None
    if not ok:
        raise value
    result: dict[str, Any] = value
    return result


class GraphqlSdk:
    """GraphQL through the runpod SDK. podtui sends one query here: the balance (docs/runpod-facts.md#graphql)."""

    def __init__(self, api_key: str, base_url: str | None = None, timeout_s: float = 15.0) -> None:
        secret.register(api_key)
        self._api_key = api_key
        self.timeout_s = timeout_s
        self._base_url = base_url.rstrip("/") if base_url else None

    def __repr__(self) -> str:
        return f"GraphqlSdk(key={secret.mask(self._api_key)})"

    key_hint = RestV2.key_hint  # how to give another key when this one is refused (the session sets it)

    @property
    def base_url(self) -> str:
        return self._base_url or os.environ.get("RUNPOD_API_BASE_URL", "https://api.runpod.io")

    def run(self, query: str) -> dict[str, Any]:
        return _in_daemon_thread(lambda: self._call(query), self.timeout_s)

    def _call(self, query: str) -> dict[str, Any]:
        s = sdk.load()
        if self._base_url and not s.tapped:
            # an SDK layout the tap does not know reads only this variable (docs/runpod-facts.md#graphql)
            os.environ["RUNPOD_API_BASE_URL"] = self._base_url
        try:
            result = s.run(query, self._api_key, self._base_url)
        except s.error.AuthenticationError:
            raise ApiAuthError(refused_key(self.key_hint)) from None
        except s.error.QueryError as e:
            _refuse_if_rate_limited(s.last_reply())  # a 429 can carry a GraphQL errors body too
            raise ApiQueryError(f"RunPod refused the request: {secret.redact(str(e.message))}") from None
        except ValueError:
            _refuse_if_rate_limited(s.last_reply())
            _refuse_if_gone(s.last_reply())
            # The SDK calls response.json() blindly: a 5xx HTML page or cut-off body lands here
            # (requests' JSONDecodeError is a ValueError, so this must come before RequestException).
            raise ApiResponseError(
                "RunPod's API answered with something that is not JSON (a server error page or a cut-off answer)"
            ) from None
        except s.requests.exceptions.Timeout:
            raise ApiUnavailable("RunPod's API timed out") from None
        except s.requests.exceptions.ConnectionError as e:
            raise ApiUnavailable(f"cannot reach RunPod's API at {self.base_url}: {reason_of(e)}") from None
        except s.requests.exceptions.RequestException as e:
            raise ApiUnavailable(f"request to RunPod's API failed: {reason_of(e)}") from None
        except (KeyError, IndexError, TypeError, AttributeError):
            _refuse_if_rate_limited(s.last_reply())
            # the SDK reads errors[0]["message"] blindly: {"errors": []}, a bare number, ... land here
            raise ApiResponseError("RunPod's API answered with a malformed error") from None
        _refuse_if_rate_limited(s.last_reply())
        _refuse_if_gone(s.last_reply())
        reply = s.last_reply()
        if reply is not None and reply.status >= 400:  # the SDK hands back any JSON body, whatever the status
            raise ApiUnavailable(f"RunPod's GraphQL API answered HTTP {reply.status}")
        if not isinstance(result, dict):
            raise ApiResponseError(f"RunPod's API answered with {type(result).__name__}, not a JSON object")
        return result


def _refuse_if_rate_limited(reply: sdk.HttpReply | None) -> None:
    # RunPod answers 429 with Retry-After (docs/runpod-facts.md#rest-v2); whatever the body, the request was not
    # carried out
    if reply is not None and reply.status == 429:
        wait = retry_after_seconds(reply.retry_after)
        raise ApiRateLimited(
            f"RunPod's API is limiting requests (429 Too Many Requests) and asks to wait {units.duration(wait)}",
            wait,
        ) from None


class GraphqlGone(ApiUnavailable):
    """404 or 410 from /graphql: RunPod no longer serves GraphQL here (docs/runpod-facts.md#api-lifecycle)."""


def _refuse_if_gone(reply: sdk.HttpReply | None) -> None:
    if reply is not None and reply.status in (404, 410):
        raise GraphqlGone(f"RunPod no longer serves its GraphQL API ({reply.status} {reply.reason or 'Gone'})")
