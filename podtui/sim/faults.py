"""Fault switches for the simulated API: each makes the server misbehave the way RunPod's can, over REST v2 and
GraphQL alike unless its kind belongs to one of them. A pod's HTTP services take the kinds that belong to them
(`service`), and only those."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

FaultKind = Literal[
    "latency",  # value: seconds added before every answer
    "status",  # value: HTTP status (500, 502, 429...) with an HTML error page, as a gateway sends
    "hang",  # value: seconds to sit on the request before answering (client timeouts)
    "unauthorized",  # 401 whatever the key
    "graphql_error",  # GraphQL only; value: message; HTTP 200 with errors[0].message
    "malformed",  # a JSON body cut off mid-way
    "partial",  # valid JSON with fields missing or of the wrong type
    "unknown_status",  # value: a status RunPod has not documented, on the first pod (default HIBERNATING)
    "raw",  # value: the exact body to answer with (HTTP 200), e.g. {"errors": []} or NaN in a number
    "retry_after",  # value: Retry-After header (seconds or an HTTP date; None: no header); 429 with a problem body
    "graphql_retired",  # GraphQL only: 410 with an HTML page, as a retired endpoint answers
    "conflict",  # REST only; value: detail; 409 problem, as for an action the pod's state does not allow
    "server_error",  # REST only; value: HTTP status (default 500); RunPod's own 5xx, a problem body
    "drop_stream",  # REST only; value: events sent (default 0) before an event stream's connection is cut
    "slow_stream",  # REST only; value: seconds between an event stream's events
    # a pod's HTTP service only; value: seconds it sits on each request before answering (the proxy's 524);
    # `only`: "{podId}-{port}" or "{podId}-{port} METHOD /path"
    "slow_service",
    # REST only: no machine has the GPUs, whatever the stock says: a create answers NO_STOCK (400) and a start
    # RESUME_NO_GPUS. value: None for every GPU type, or comma-separated "GPU TYPE ID", "GPU TYPE ID@DC" or "@DC"
    "no_capacity",
]
FAULT_KINDS: tuple[str, ...] = FaultKind.__args__  # type: ignore[attr-defined]
Protocol = Literal["rest", "graphql", "service"]
_ONLY_FOR: dict[str, Protocol] = {
    "graphql_error": "graphql",
    "graphql_retired": "graphql",
    "conflict": "rest",
    "server_error": "rest",
    "drop_stream": "rest",
    "slow_stream": "rest",
    "slow_service": "service",
    "no_capacity": "rest",
}
# kinds that leave the answer as it was (only later): an exchange with no other fault is not a fault's
TIMING = ("latency", "hang")


@dataclass
class Fault:
    kind: FaultKind
    value: float | int | str | None = None
    times: int | None = None  # None: until cleared
    # applies only to requests whose target contains this: the GraphQL document (e.g. "podStop") or, for REST,
    # "METHOD /path" (e.g. "POST /v2/pods/")
    only: str | None = None


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: list[Fault] = []

    def add(
        self, kind: FaultKind, value: float | int | str | None = None, times: int | None = None, only: str | None = None
    ) -> Fault:
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {kind!r}; known: {', '.join(FAULT_KINDS)}")
        fault = Fault(kind, value, times, only)
        with self._lock:
            self._active.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._active.clear()

    def take(self, target: str = "", protocol: Protocol = "graphql") -> list[Fault]:
        """The faults that apply to this request (its GraphQL document, or "METHOD /path"; for a service,
        "{podId}-{port} METHOD /path"), using up one of each counted fault. A fault of another protocol's kind is
        left for a request it applies to; the kinds of no one protocol are the API's."""
        with self._lock:
            hits = [f for f in self._active if (f.only is None or f.only in target) and _applies(f.kind, protocol)]
            for f in hits:
                if f.times is not None:
                    f.times -= 1
            self._active = [f for f in self._active if f.times is None or f.times > 0]
            return hits


def no_capacity(value: float | int | str | None) -> Callable[[str, str], bool]:
    """A no_capacity fault's value as the World asks it: whether a GPU type can be had in a data centre (True:
    it cannot). Each entry names a type, a type in a data centre, or (`@DC`) a data centre."""
    entries = [e.strip() for e in str(value or "").split(",") if e.strip()]
    wanted = [(gpu, centre) for gpu, _, centre in (e.partition("@") for e in entries)]

    def blocked(gpu_id: str, centre: str) -> bool:
        return not wanted or any(g in ("", gpu_id) and c in ("", centre) for g, c in wanted)

    return blocked


def _applies(kind: str, protocol: Protocol) -> bool:
    only = _ONLY_FOR.get(kind)
    return only == protocol if only is not None else protocol != "service"


# --- how a fault changes an answer --------------------------------------------------------------------------


def graphql_pods(result: dict[str, Any]) -> list[dict[str, Any]]:
    myself = (result.get("data") or {}).get("myself") or {}
    pods = myself.get("pods")
    return [p for p in pods if isinstance(p, dict)] if isinstance(pods, list) else []


def mangle_graphql(result: dict[str, Any]) -> None:
    """A partial answer: a pod without its id, a machine gone, numbers turned into words."""
    for i, pod in enumerate(graphql_pods(result)):
        if i % 3 == 0:
            pod["costPerHr"] = "cheap"
            pod["machine"] = None
        elif i % 3 == 1:
            pod.pop("runtime", None)
            pod["gpuCount"] = [1]
        else:
            pod.pop("id", None)
    myself = (result.get("data") or {}).get("myself")
    if isinstance(myself, dict):
        myself["clientBalance"] = None


def v2_pods(value: object) -> list[dict[str, Any]]:
    """The pod records of a REST v2 answer: a list's, or the one pod's."""
    if isinstance(value, dict) and isinstance(value.get("pods"), list):
        return [p for p in value["pods"] if isinstance(p, dict)]
    return [value] if isinstance(value, dict) and "status" in value else []


def mangle_v2(value: object) -> None:
    """A partial answer: a pod without its id, runtime or ssh, numbers turned into words, lists into text; a billing
    record without its bucket or with its amounts mistyped."""
    for i, pod in enumerate(v2_pods(value)):
        if i % 3 == 0:
            pod["cost"] = "cheap"
            pod["gpu"] = {"id": None, "count": [1]}
            pod["actions"] = "stop"
        elif i % 3 == 1:
            pod.pop("runtime", None)
            pod.pop("ssh", None)
            pod["createdAt"] = "yesterday"
        else:
            pod.pop("id", None)
    if isinstance(value, dict):
        if isinstance(value.get("keys"), list):
            value["keys"] = None
        for gpu in value.get("gpus") or []:
            if isinstance(gpu, dict):
                gpu["price"] = "ask"
                gpu.pop("memory", None)
        if isinstance(value.get("records"), list):  # a billing answer (billing_v2.py)
            for i, record in enumerate(value["records"]):
                if not isinstance(record, dict):
                    continue
                if i % 3 == 0:
                    record["totalAmount"] = "a lot"
                elif i % 3 == 1:
                    record.pop("startTime", None)
                else:
                    record["gpuAmount"] = [1]
            value["metadata"] = "n/a"


def set_status(value: object, status: str, graphql: bool) -> None:
    pods = graphql_pods(value) if graphql and isinstance(value, dict) else v2_pods(value)
    if pods:
        pods[0]["desiredStatus" if graphql else "status"] = status
