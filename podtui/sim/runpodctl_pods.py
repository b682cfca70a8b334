"""The simulated runpodctl's pod commands, as runpodctl 2.7 behaves now that REST v1 is gone
(docs/runpod-facts.md#runpodctl-commands):

- v2's `runpodctl pod stop|start ID` and `pod list` ask REST v1 (the simulated API's /v1 paths, which RunPod no
  longer serves) and fail: cobra's `Error: ...` on stderr, exit status 1.
- the legacy `runpodctl stop pod ID` (v1's own command, kept in v2) asks GraphQL's podStop and prints
  'pod "ID" stopped', or 'pod "ID" stop failed; status is S' with exit status 0 when the pod did not reach
  EXITED; an error from the API is `Error: ...`, exit status 1.

Both use RUNPOD_API_KEY from the environment when it is set (inside a pod, the pod's own key), as runpodctl does;
they reach the simulated API at $PODTUI_SIM_API, never at RUNPOD_API_BASE_URL, which runpodctl does not read.
Stdlib only.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable

Write = Callable[[str], None]


class CommandError(Exception):
    """What runpodctl reports through cobra: `Error: <message>`, exit status 1."""


def _key() -> str:
    return os.environ.get("RUNPOD_API_KEY") or os.environ.get("PODTUI_SIM_KEY", "")


def _request(method: str, path: str, body: dict[str, object] | None = None) -> tuple[int, bytes]:
    """(HTTP status, body) of a request to the simulated API; CommandError when nothing answers."""
    base = os.environ.get("PODTUI_SIM_API", "")
    req = urllib.request.Request(
        base + path,
        None if body is None else json.dumps(body).encode(),
        {"Authorization": "Bearer " + _key(), "Content-Type": "application/json"},
        method=method,
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise CommandError(f'{method.title()} "{base + path}": {reason}') from None


def _check_id(pod_id: str) -> None:
    if not pod_id.replace("-", "").isalnum():
        raise CommandError(f"invalid pod id {pod_id!r}")


def _rest_v1(verb: str, pod_id: str | None) -> dict[str, object]:
    """`pod stop|start ID` and `pod list` against REST v1: since its retirement, an error."""
    if pod_id is not None:
        _check_id(pod_id)
    method, path = ("GET", "/v1/pods") if pod_id is None else ("POST", f"/v1/pods/{pod_id}/{verb}")
    status, raw = _request(method, path)
    if not 200 <= status < 300:
        raise CommandError(f"{status} {_reason(status)}")
    return dict(json.loads(raw))  # never, while the simulated API serves no v1


def _reason(status: int) -> str:
    return {401: "Unauthorized", 404: "Not Found", 410: "Gone", 501: "Not Implemented"}.get(status, "Error")


def _legacy_stop(pod_id: str) -> dict[str, object]:
    """GraphQL's podStop, as the legacy `stop pod` asks it: the pod's id and desiredStatus."""
    _check_id(pod_id)
    query = f'mutation {{ podStop(input: {{podId: "{pod_id}"}}) {{ id desiredStatus }} }}'
    status, raw = _request("POST", "/graphql", {"query": query})
    try:
        answer = json.loads(raw)
    except ValueError:
        raise CommandError(f"{status} {_reason(status)}") from None
    if not isinstance(answer, dict):
        raise CommandError(f"{status} {_reason(status)}")
    if answer.get("errors"):
        raise CommandError(str(answer["errors"][0].get("message", "error")))
    if status != 200 or not isinstance((answer.get("data") or {}).get("podStop"), dict):
        raise CommandError(f"{status} {_reason(status)}")
    return dict(answer["data"]["podStop"])


def pod_command(argv: list[str], v1: bool, out: Write, err: Write) -> int:
    """argv from the command word on; returns the exit status, or -1 when the command is not a pod command."""
    legacy = argv[:2] == ["stop", "pod"]
    verb = argv[1] if not v1 and argv[:1] == ["pod"] and len(argv) > 1 else None
    if not legacy and verb not in ("stop", "start", "list"):
        return -1
    wanted = 0 if verb == "list" else 1
    if len(argv) - 2 != wanted:
        err(f"Error: accepts {wanted} arg(s), received {len(argv) - 2}\n")
        return 1
    try:
        if legacy:
            pod = _legacy_stop(argv[2])
            if pod.get("desiredStatus") == "EXITED":
                out(f'pod "{argv[2]}" stopped\n')
            else:  # what runpodctl prints when podStop answered another status, and still exits 0
                out(f'pod "{argv[2]}" stop failed; status is {pod.get("desiredStatus")}\n')
            return 0
        assert verb is not None
        answer = _rest_v1(verb, argv[2] if wanted else None)
    except CommandError as e:
        err(f"Error: {e}\n")
        return 1
    out(json.dumps(answer, sort_keys=True, indent=2) + "\n")
    return 0
