"""The RunPod API as podtui uses it: one snapshot query, and the pod actions."""

from __future__ import annotations

import json
import logging
import math
import os
import queue
import threading
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Protocol

from podtui.core import secret, units
from podtui.core.api import queries, sdk
from podtui.core.api.errors import (
    ApiAuthError,
    ApiError,
    ApiQueryError,
    ApiRateLimited,
    ApiResponseError,
    ApiUnavailable,
    InvalidInput,
)
from podtui.core.pod import PayloadError, Pod, Snapshot, parse_snapshot, redact_env

if TYPE_CHECKING:
    from podtui.core.gpu.catalogue import GpuCatalogue
    from podtui.core.pod_spec import CreatedPod, PodSpec

log = logging.getLogger(__name__)


class RunPodApi(Protocol):
    """What the app and the CLI need from RunPod. Tests and the demo use the real SDK against the simulator."""

    def fetch_snapshot(self) -> Snapshot: ...

    def stop_pod(self, pod_id: str) -> None: ...

    def resume_pod(self, pod_id: str, gpu_count: int) -> None: ...

    def terminate_pod(self, pod_id: str) -> None: ...

    def account_keys(self) -> str: ...

    def set_account_keys(self, pub_key: str) -> None: ...

    def gpu_types(self) -> GpuCatalogue: ...

    def create_pod(self, spec: PodSpec) -> CreatedPod: ...


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


class SdkApi:
    create_timeout_s = 60.0  # podFindAndDeployOnDemand: see create_pod

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 15.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        secret.register(api_key)
        self.clock = clock
        self._api_key = api_key
        self.timeout_s = timeout_s
        self._last_problems: tuple[str, ...] = ()
        if base_url is not None:
            # The SDK reads this variable on every call (docs/runpod-facts.md#api-lifecycle); it is how the
            # simulator is reached.
            os.environ["RUNPOD_API_BASE_URL"] = base_url.rstrip("/")

    def __repr__(self) -> str:
        return f"SdkApi(key={secret.mask(self._api_key)})"

    @property
    def base_url(self) -> str:
        return os.environ.get("RUNPOD_API_BASE_URL", "https://api.runpod.io")

    def _run(self, query: str) -> dict[str, Any]:
        return _in_daemon_thread(lambda: self._call(query), self.timeout_s)

    def _call(self, query: str) -> dict[str, Any]:
        s = sdk.load()
        try:
            result = s.run(query, self._api_key)
        except s.error.AuthenticationError:
            raise ApiAuthError(
                "RunPod refused the API key (401): check it in RunPod's settings, then `podtui config set-key`"
            ) from None
        except s.error.QueryError as e:
            _refuse_if_rate_limited(s.last_reply())  # a 429 can carry a GraphQL errors body too
            raise ApiQueryError(f"RunPod refused the request: {secret.redact(str(e.message))}") from None
        except ValueError:
            _refuse_if_rate_limited(s.last_reply())
            # The SDK calls response.json() blindly: a 5xx HTML page or cut-off body lands here
            # (requests' JSONDecodeError is a ValueError, so this must come before RequestException).
            raise ApiResponseError(
                "RunPod's API answered with something that is not JSON (a server error page or a cut-off answer)"
            ) from None
        except s.requests.exceptions.Timeout:
            raise ApiUnavailable("RunPod's API timed out") from None
        except s.requests.exceptions.ConnectionError as e:
            raise ApiUnavailable(f"cannot reach RunPod's API at {self.base_url}: {_reason(e)}") from None
        except s.requests.exceptions.RequestException as e:
            raise ApiUnavailable(f"request to RunPod's API failed: {secret.redact(str(e))}") from None
        except (KeyError, IndexError, TypeError, AttributeError):
            _refuse_if_rate_limited(s.last_reply())
            # the SDK reads errors[0]["message"] blindly: {"errors": []}, a bare number, ... land here
            raise ApiResponseError("RunPod's API answered with a malformed error") from None
        _refuse_if_rate_limited(s.last_reply())
        if not isinstance(result, dict):
            raise ApiResponseError(f"RunPod's API answered with {type(result).__name__}, not a JSON object")
        return result

    def fetch_snapshot(self) -> Snapshot:
        payload = self._run(queries.PODS_QUERY)
        try:
            snap = parse_snapshot(payload, fetched_at=self.clock())
        except PayloadError as e:
            raise ApiResponseError(f"RunPod's answer was incomplete: {e}") from None
        if snap.problems and snap.problems != self._last_problems:  # once, not on every poll
            for problem in snap.problems:
                log.warning("payload: %s", problem)
        self._last_problems = snap.problems
        return snap

    def stop_pod(self, pod_id: str) -> None:
        pid = queries.pod_id(pod_id)
        self._mutate(sdk.load().mutations.generate_pod_stop_mutation(pid), "podStop")

    def resume_pod(self, pod_id: str, gpu_count: int) -> None:
        pid, n = queries.pod_id(pod_id), queries.gpu_count(gpu_count)
        self._mutate(sdk.load().mutations.generate_pod_resume_mutation(pid, n), "podResume")

    def terminate_pod(self, pod_id: str) -> None:
        pid = queries.pod_id(pod_id)
        self._mutate(sdk.load().mutations.generate_pod_terminate_mutation(pid), "podTerminate")

    def account_keys(self) -> str:
        """The account's SSH public keys, one newline-separated string ("" when there are none).

        Asked on its own right before a change, and refused when the answer lacks the field: treating a
        missing field as "no keys" would make key setup overwrite every key on the account.
        """
        result = self._run(queries.ACCOUNT_KEYS_QUERY)
        data = result.get("data")
        myself = data.get("myself") if isinstance(data, dict) else None
        if not isinstance(myself, dict) or "pubKey" not in myself:
            raise ApiResponseError("RunPod's answer did not include the account's SSH keys")
        keys = myself["pubKey"]
        if keys is None:
            return ""
        if not isinstance(keys, str):
            raise ApiResponseError("RunPod's answer has the account's SSH keys in an unknown form")
        return keys

    def set_account_keys(self, pub_key: str) -> None:
        """Replace the account's SSH keys (one newline-separated string). Callers merge first
        (keys.merge_account_keys) so no key is dropped."""
        from podtui.core.ssh.keys import valid_public_line

        if not all(valid_public_line(line) for line in pub_key.split("\n") if line.strip()):
            raise InvalidInput("refused to send an account key list with a line that is not an SSH public key")
        # The SDK's own document escapes only newlines; a JSON string literal is a valid GraphQL string with
        # every quote and backslash escaped, so key comments can hold anything.
        document = f"mutation {{ updateUserSettings(input: {{ pubKey: {json.dumps(pub_key)} }}) {{ id pubKey }} }}"
        self._mutate(document, "updateUserSettings")

    def gpu_types(self) -> GpuCatalogue:
        """RunPod's GPU types, prices and stock. Malformed entries are skipped and listed in .problems."""
        from podtui.core.gpu.catalogue import parse_gpu_types

        try:
            catalogue = parse_gpu_types(self._run(queries.gpu_types_query()))
        except ValueError as e:
            raise ApiResponseError(f"RunPod's list of GPU types was unreadable: {e}") from None
        for problem in catalogue.problems:
            log.warning("gpuTypes: %s", problem)
        return catalogue

    def create_pod(self, spec: PodSpec) -> CreatedPod:
        """podFindAndDeployOnDemand. The spec is validated again here, whoever built it."""
        from podtui.core.pod_spec import create_error_hint, parse_created, uncertain

        # env values may be credentials: scrub them from any error text that echoes the request
        hidden = dict(redact_env(spec.env))
        for key, value in spec.env:
            if hidden.get(key) != value:
                secret.register(value)
        document = queries.create_pod_mutation(spec)
        try:
            # Longer than the SDK's own 30 s: RunPod can take that long to find a machine, and giving up
            # earlier leaves a pod that may exist anyway (and a retry would make a second one).
            result = _in_daemon_thread(lambda: self._call(document), self.create_timeout_s)
        except ApiQueryError as e:
            hint = create_error_hint(str(e))
            raise ApiQueryError(f"{e}" + (f" ({hint})" if hint else "")) from None
        except ApiRateLimited:
            raise  # a 429 was not carried out: no pod can exist from it, so it is not "uncertain"
        except (ApiUnavailable, ApiResponseError) as e:
            # timed out, connection dropped, a gateway's error page: the request may have been carried out
            raise uncertain(e) from None
        try:
            return parse_created(result)
        except ValueError as e:
            raise uncertain(ApiResponseError(f"RunPod's answer to podFindAndDeployOnDemand: {e}")) from None

    def _mutate(self, document: str, name: str) -> None:
        result = self._run(document)
        data = result.get("data")
        if not isinstance(data, dict) or name not in data:
            raise ApiResponseError(f"RunPod's answer to {name} is missing its result")


RATE_LIMIT_DEFAULT_S = 10.0  # a 429 that does not say how long to wait
RATE_LIMIT_MAX_S = 3600.0  # a Retry-After beyond this is taken as a mistake, not a day-long silence


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


def _refuse_if_rate_limited(reply: sdk.HttpReply | None) -> None:
    # RunPod answers 429 with Retry-After (docs/runpod-facts.md#rest-v2); whatever the body, the request was not
    # carried out
    if reply is not None and reply.status == 429:
        wait = retry_after_seconds(reply.retry_after)
        raise ApiRateLimited(
            f"RunPod's API is limiting requests (429 Too Many Requests) and asks to wait {units.duration(wait)}",
            wait,
        ) from None


def _reason(e: BaseException) -> str:
    text = str(e)
    for hint in ("Connection refused", "Name or service not known", "timed out", "Connection reset"):
        if hint in text:
            return hint.lower()
    return secret.redact(text.splitlines()[0][:120]) if text else type(e).__name__


def find_pod(api: RunPodApi, ref: str) -> Pod:
    try:
        return api.fetch_snapshot().find(ref)
    except LookupError as e:
        raise ApiError(str(e)) from None
