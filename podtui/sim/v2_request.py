"""A REST v2 request as the simulator's handlers see it, and its body checked the way RunPod checks it.

RunPod refuses a body that breaks its schema with 400 and names each fault in `errors`, an unknown field by
name (docs/runpod-facts.md#rest-v2). The schemas below are the request bodies of the routes the simulator
serves, written for it in a small subset of JSON Schema: type, enum, pattern, minimum, maximum, minLength,
maxItems, items, required, minProperties, properties and additional (False: unknown fields refused; a schema: what
each must be). A few faults are 422 rather than 400, where RunPod says so (a mount entry missing a field, a
network mount on a template): the handler names them (`unprocessable`).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from podtui.sim.problem import Answer, problem
from podtui.sim.world import World


class Refusal(Exception):
    """A handler's refusal: the answer to send instead."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(answer.status)
        self.answer = answer


def refuse(status: int, detail: str, errors: list[str] | None = None) -> Refusal:
    return Refusal(problem(status, detail, errors))


@dataclass
class Call:
    world: World
    method: str
    path: str
    query: dict[str, list[str]]
    body: bytes
    params: dict[str, str] = field(default_factory=dict)  # the route's path parameters
    pod_scope: str | None = None  # a pod's own key is good for this pod only; None: the account's key
    headers: dict[str, str] = field(default_factory=dict)  # the request's, for the few routes that read one
    stopping: threading.Event = field(default_factory=threading.Event)  # set as the server stops: streams end
    # a no_capacity fault: whether a GPU type can be had in a data centre now (True: it cannot); None: no fault
    blocked: Callable[[str, str], bool] | None = None

    def one(self, name: str) -> str | None:
        """A query parameter given at most once (None: not given)."""
        values = self.query.get(name)
        if not values:
            return None
        if len(values) > 1:
            raise refuse(400, f"query parameter {name!r} is given {len(values)} times", [f"{name}: given twice"])
        return values[0]


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def json_body(call: Call, schema: dict[str, Any], unprocessable: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """The body as a JSON object that keeps `schema`, or a refusal saying why not: 400, or 422 when a fault is
    one `unprocessable` picks out."""
    if not call.body.strip():
        raise refuse(400, "the request has no body", ["$: a JSON object is required"])
    try:
        value = json.loads(call.body, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as e:
        raise refuse(400, "the request body is not valid JSON", [f"$: {e}"]) from None
    errors = check(schema, value)
    if errors:
        status = 422 if unprocessable is not None and any(unprocessable(e) for e in errors) else 400
        raise refuse(status, "the request body does not match the schema", errors)
    assert isinstance(value, dict)
    whole: dict[str, Any] = _whole(schema, value)
    return whole


def _whole(schema: dict[str, Any], value: Any) -> Any:
    """`value` with every number the schema says is an integer made an int: JSON Schema counts 10.0 as an integer
    (so `check` lets it by), and what is stored and answered is then 10, as RunPod's integer fields are."""
    kinds = schema.get("type")
    if isinstance(value, float) and value.is_integer() and "integer" in (kinds if isinstance(kinds, list) else [kinds]):
        return int(value)
    if isinstance(value, list):
        return [_whole(schema.get("items", {}), item) for item in value]
    if isinstance(value, dict):
        properties, extra = schema.get("properties", {}), schema.get("additional", True)
        return {
            k: _whole(properties[k] if k in properties else extra if isinstance(extra, dict) else {}, v)
            for k, v in value.items()
        }
    return value


# --- the validator -----------------------------------------------------------------------------------------


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _fits(kind: str, wanted: str) -> bool:
    return kind == wanted or (wanted == "number" and kind == "integer")


@cache
def _pattern(text: str) -> re.Pattern[str]:
    # JSON Schema's `$` ends the text; Python's would also match before a final line feed
    return re.compile(text[:-1] + r"\Z" if text.endswith("$") else text)


def check(schema: dict[str, Any], value: object, at: str = "$") -> list[str]:
    wanted = schema.get("type")
    if wanted is not None:
        kinds = wanted if isinstance(wanted, list) else [wanted]
        if not any(_fits(_kind(value), k) for k in kinds):
            return [f"{at}: expected {' or '.join(kinds)}, but got {_kind(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{at}: value must be one of {', '.join(repr(e) for e in schema['enum'])}"]
    errors: list[str] = []
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{at}: length must be >= {schema['minLength']}, but got {len(value)}")
        if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            errors.append(f"{at}: does not match pattern {schema['pattern']!r}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{at}: must be >= {schema['minimum']}, but got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{at}: must be <= {schema['maximum']}, but got {value}")
    elif isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{at}: at most {schema['maxItems']} items allowed, but got {len(value)}")
        for i, item in enumerate(value):
            errors += check(schema.get("items", {}), item, f"{at}[{i}]")
    elif isinstance(value, dict):
        if len(value) < schema.get("minProperties", 0):
            errors.append(f"{at}: at least {schema['minProperties']} properties are required, but got {len(value)}")
        missing = [name for name in schema.get("required", ()) if name not in value]
        if missing:
            errors.append(f"{at}: missing properties {', '.join(repr(m) for m in missing)}")
        properties = schema.get("properties", {})
        extra = schema.get("additional", True)
        unknown = [k for k in value if k not in properties]
        if extra is False and unknown:
            errors.append(f"{at}: additional properties {', '.join(repr(k) for k in unknown)} not allowed")
        for name, item in value.items():
            if name in properties:
                errors += check(properties[name], item, f"{at}.{name}")
            elif isinstance(extra, dict):
                errors += check(extra, item, f"{at}.{name}")
    return errors


# --- the request bodies --------------------------------------------------------------------------------------

TEXT: dict[str, Any] = {"type": "string"}
CUDA = {"type": "string", "pattern": r"^\d+\.\d+$"}
CLOUDS = ["SECURE", "COMMUNITY"]
ACTIONS = ["start", "stop", "restart", "terminate"]
SSH_KEY_PATTERN = r"^(ssh|ecdsa|sk)-[^\s]+ [^\s]+([ \t][^\n\r]*)?$"

_CONTAINER: dict[str, Any] = {
    "args": TEXT,
    "disk": {"type": "integer", "minimum": 1},
    "env": {"type": "object", "additional": TEXT},
    "image": TEXT,
    "ports": {"type": "array", "items": TEXT},
    "registry": {"type": ["string", "null"]},
}
PERSISTENT = {
    "type": "object",
    "additional": False,
    "required": ["size", "path"],
    "properties": {"size": {"type": "integer", "minimum": 10}, "path": TEXT},
}
MOUNTS = {
    "type": "object",
    "additional": False,
    "properties": {
        "persistent": PERSISTENT,
        "network": {
            "type": "array",
            "maxItems": 1,
            "items": {
                "type": "object",
                "additional": False,
                "required": ["volumeId", "path"],
                "properties": {"volumeId": TEXT, "path": TEXT},
            },
        },
    },
}
CREATE_POD = {
    "type": "object",
    "additional": False,
    "required": ["name"],
    "properties": {
        **_CONTAINER,
        "name": {"type": "string", "minLength": 1},
        "cloud": {"type": "string", "enum": CLOUDS},
        "cpu": {
            "type": "object",
            "additional": False,
            "required": ["id", "vcpuCount"],
            "properties": {"id": {"type": "string", "minLength": 1}, "vcpuCount": {"type": "integer", "minimum": 2}},
        },
        "dataCenterIds": {"type": "array", "items": TEXT},
        "globalNetworking": {"type": "boolean"},
        "gpu": {
            "type": "object",
            "additional": False,
            "required": ["id"],
            "properties": {
                "id": TEXT,
                "count": {"type": "integer", "minimum": 1},
                "allowedCudaVersions": {"type": "array", "items": CUDA},
                "minCudaVersion": CUDA,
            },
        },
        "mounts": MOUNTS,
        "startJupyter": {"type": "boolean"},
        "startSsh": {"type": "boolean"},
        "templateId": {"type": "string", "minLength": 1},
    },
}
UPDATE_POD = {
    "type": "object",
    "additional": False,
    "properties": {
        **_CONTAINER,
        "globalNetworking": {"type": "boolean"},
        "locked": {"type": "boolean"},
        "mounts": MOUNTS,
        "name": {"type": "string", "minLength": 1},
        "templateId": TEXT,
    },
}
POD_ACTION = {
    "type": "object",
    "additional": False,
    "required": ["action"],
    "properties": {"action": {"type": "string", "enum": ACTIONS}},
}
SSH_KEYS = {
    "type": "object",
    "additional": False,
    "required": ["keys"],
    "properties": {"keys": {"type": "array", "items": {"type": "string", "pattern": SSH_KEY_PATTERN}}},
}


def partial_mount(error: str) -> bool:
    """A mount entry without all its fields: 422, as RunPod's Mounts says."""
    return error.startswith("$.mounts.") and ": missing properties" in error


VOLUME_NAME = {"type": "string", "minLength": 1}
VOLUME_SIZE = {"type": "integer", "minimum": 10, "maximum": 4096}
CREATE_VOLUME = {
    "type": "object",
    "additional": False,
    "required": ["name", "size", "dataCenter"],
    "properties": {
        "dataCenter": {"type": "string", "minLength": 1},
        "name": VOLUME_NAME,
        "size": VOLUME_SIZE,
        "type": {"type": "string", "enum": ["STANDARD", "HIGH_PERFORMANCE"]},
    },
}
UPDATE_VOLUME = {
    "type": "object",
    "additional": False,
    "minProperties": 1,
    "properties": {"name": VOLUME_NAME, "size": VOLUME_SIZE},
}
_TEMPLATE: dict[str, Any] = {
    **_CONTAINER,
    "allowedCudaVersions": {"type": "array", "items": CUDA},
    "category": {"type": "string", "enum": ["CPU", "NVIDIA", "AMD"]},
    "mounts": {"type": "object", "additional": False, "properties": {"persistent": PERSISTENT}},
    "name": {"type": "string", "minLength": 1},
    "public": {"type": "boolean"},
    "serverless": {"type": "boolean"},
    "startJupyter": {"type": "boolean"},
    "startSsh": {"type": "boolean"},
}
CREATE_TEMPLATE = {"type": "object", "additional": False, "required": ["name", "image"], "properties": _TEMPLATE}
UPDATE_TEMPLATE = {"type": "object", "additional": False, "properties": _TEMPLATE}


def template_fault(error: str) -> bool:
    """A template's mounts take a persistent mount only: a network one, or a partial entry, is 422."""
    return error.startswith("$.mounts") and ("'network'" in error or ": missing properties" in error)
