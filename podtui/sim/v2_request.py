"""A REST v2 request as the simulator's handlers see it, and its body checked the way RunPod checks it.

RunPod refuses a body that breaks its schema with 400 and names each fault in `errors`, an unknown field by
name (docs/runpod-facts.md#rest-v2). The schemas below are the request bodies of the routes the simulator
serves, written for it in a small subset of JSON Schema: type, enum, pattern, minimum, minLength, maxItems,
items, required, properties and additional (False: unknown fields refused; a schema: what each must be).
"""

from __future__ import annotations

import json
import re
import threading
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


def json_body(call: Call, schema: dict[str, Any]) -> dict[str, Any]:
    """The body as a JSON object that keeps `schema`, or a 400 refusal saying why not."""
    if not call.body.strip():
        raise refuse(400, "the request has no body", ["$: a JSON object is required"])
    try:
        value = json.loads(call.body, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as e:
        raise refuse(400, "the request body is not valid JSON", [f"$: {e}"]) from None
    errors = check(schema, value)
    if errors:
        raise refuse(400, "the request body does not match the schema", errors)
    assert isinstance(value, dict)
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
    elif isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{at}: at most {schema['maxItems']} items allowed, but got {len(value)}")
        for i, item in enumerate(value):
            errors += check(schema.get("items", {}), item, f"{at}[{i}]")
    elif isinstance(value, dict):
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
MOUNTS = {
    "type": "object",
    "additional": False,
    "properties": {
        "persistent": {
            "type": "object",
            "additional": False,
            "required": ["size", "path"],
            "properties": {"size": {"type": "integer", "minimum": 10}, "path": TEXT},
        },
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
