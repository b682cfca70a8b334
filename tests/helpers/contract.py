"""RunPod's REST v2 contract (tests/contract/runpod-v2.contract.json, derived by scripts/derive_contract.py from
RunPod's OpenAPI document) and the checks every request podtui sends and every answer the simulator gives are held
to. Each check returns what is wrong, in words; an empty list means the exchange keeps the contract.

`ExchangeWatch` is the listener the autouse fixture in tests/conftest.py puts on podtui.sim.exchange for each
test: podtui's own requests (User-Agent podtui/...) are checked, and every REST answer the simulator gives
unless a fault made it misbehave on purpose. GraphQL is not checked here.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from jsonschema import Draft202012Validator, FormatChecker, ValidationError

from podtui.core import secret

CONTRACT_PATH = Path(__file__).resolve().parent.parent / "contract" / "runpod-v2.contract.json"
PODTUI_AGENT = "podtui/"

# RFC 3339 date-time, the "date-time" format; jsonschema checks it only with an optional package, so it is here.
_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))", re.ASCII
)
# One log event's data, as docs/runpod-facts.md#rest-v2 says; the spec types the stream only as a string.
_LOG_EVENT = {
    "type": "object",
    "required": ["ts", "source", "line"],
    "properties": {
        "ts": {"type": "string", "format": "date-time"},
        "source": {"$ref": "#/$defs/LogSource"},
        "line": {"type": "string"},
    },
}
_SHOWN = 160  # longest excerpt of a value a violation quotes


def is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True  # formats apply to strings only
    m = _DATE_TIME.fullmatch(value)
    if m is None:
        return False
    try:
        year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
        datetime(year, month, day, hour, minute, second)  # a real day and time: no Feb 30, no hour 24
    except ValueError:
        return False
    return m.group(9) is None or (int(m.group(9)) <= 23 and int(m.group(10)) <= 59)


FORMATS = FormatChecker()
FORMATS.checks("date-time")(is_date_time)


class Exchange(Protocol):
    """What podtui.sim.exchange records of one request the simulator answered."""

    method: str
    path: str
    query: dict[str, list[str]]
    route: str | None
    request_headers: dict[str, str]
    request_body: bytes
    status: int
    response_headers: dict[str, str]
    response_body: bytes
    fault: bool


class Contract:
    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self.routes: Mapping[str, Mapping[str, Any]] = document["routes"]
        self._validators: dict[str, Draft202012Validator] = {}
        self._lock = threading.Lock()

    # -- requests ------------------------------------------------------------------------------------------------

    def check_request(
        self,
        method: str,
        route: str,
        query: Mapping[str, Sequence[str]] | None = None,
        body: bytes | str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> list[str]:
        """What is wrong with a request: its route, query parameters, body and (when given) headers."""
        method = method.upper()
        where = f"{method} {route}"
        op, problems = self._operation(method, route)
        if op is None:
            return problems
        params = op["parameters"]
        problems += self._check_query(where, params["query"], query or {})
        raw = _bytes(body)
        spec_body = op["requestBody"]
        if spec_body is None:
            if raw.strip():
                problems.append(f"{where}: sends a body, but the spec has none for this operation")
        elif not raw.strip():
            if spec_body["required"]:
                problems.append(f"{where}: sends no body, but the spec requires one")
        else:
            # without the headers, the body is taken as sent in the (first) media type the spec has for it
            sent_as = _header(headers, "content-type") if headers is not None else min(spec_body["content"], default="")
            problems += self._check_body(where, "request body", spec_body["content"], sent_as, raw)
        if headers is not None:
            problems += self._check_request_headers(where, op, headers)
        return problems

    def _check_query(self, where: str, spec: Mapping[str, Any], query: Mapping[str, Sequence[str]]) -> list[str]:
        problems = [
            f"{where}: query parameter {_shown(name)} is not in the spec (it has: {', '.join(sorted(spec)) or 'none'})"
            for name in sorted(query)
            if name not in spec
        ]
        for name in sorted(spec):
            p = spec[name]
            values = list(query.get(name, ()))
            if not values:
                if p["required"]:
                    problems.append(f"{where}: query parameter {name!r} is required")
                continue
            schema = p["schema"]
            if self._type_of(schema) == "array":
                parts = values if p["explode"] else [part for v in values for part in v.split(",")]
                items = self._deref(schema).get("items", {})
                value: object = [self._coerce(items, part) for part in parts]
            elif len(values) > 1:
                problems.append(f"{where}: query parameter {name!r} is given {len(values)} times; the spec has one")
                continue
            else:
                value = self._coerce(schema, values[0])
            problems += self._validate(f"{where}: query parameter {name!r}", schema, value)
        return problems

    def _check_request_headers(self, where: str, op: Mapping[str, Any], headers: Mapping[str, str]) -> list[str]:
        problems = []
        if op["auth"] and not _header(headers, "authorization").startswith("Bearer "):
            problems.append(f"{where}: no 'Authorization: Bearer <key>' header")  # the key itself is never quoted
        for name, p in sorted(op["parameters"]["header"].items()):
            value = _header(headers, name)
            if not value:
                if p["required"]:
                    problems.append(f"{where}: header {name} is required")
                continue
            problems += self._validate(f"{where}: header {name}", p["schema"], self._coerce(p["schema"], value))
        return problems

    # -- answers -------------------------------------------------------------------------------------------------

    def check_response(
        self,
        method: str,
        route: str,
        status: int,
        headers: Mapping[str, str],
        body: bytes | str | None,
        *,
        all_headers: bool = True,
    ) -> list[str]:
        """What is wrong with an answer: its status, headers, content type and body.

        With `all_headers`, every header the spec lists for the answer must be there: the spec marks RateLimit
        optional only for callers exempt from rate limits, which the simulator's callers never are."""
        method = method.upper()
        where = f"{method} {route} -> {status}"
        op, problems = self._operation(method, route)
        if op is None:
            return problems
        spec = op["responses"].get(str(status)) or op["responses"].get("default")
        if spec is None:
            listed = ", ".join(sorted(op["responses"]))
            return [f"{where}: status {status} is not in the spec for this operation (it has: {listed})"]
        for name, h in sorted(spec["headers"].items()):
            value = _header(headers, name)
            if not value:
                if h["required"] or all_headers:
                    problems.append(f"{where}: header {name} is missing")
                continue
            problems += self._validate(f"{where}: header {name}", h["schema"], self._coerce(h["schema"], value))
        raw = _bytes(body)
        if not spec["content"]:
            if raw:
                problems.append(f"{where}: carries a body of {len(raw)} bytes, but the spec has none for it")
            return problems
        streamed = _header(headers, "content-type").lower().startswith("text/event-stream")
        if not raw and not (streamed and "text/event-stream" in spec["content"]):  # a stream yet to send an event
            return [*problems, f"{where}: has no body; the spec has {', '.join(sorted(spec['content']))}"]
        return problems + self._check_body(
            where, "body", spec["content"], _header(headers, "content-type"), raw, status=status
        )

    # -- bodies --------------------------------------------------------------------------------------------------

    def _check_body(
        self,
        where: str,
        what: str,
        content: Mapping[str, Any],
        content_type: str,
        raw: bytes,
        status: int | None = None,
    ) -> list[str]:
        media = content_type.split(";")[0].strip().lower()
        if media not in content:
            listed = ", ".join(sorted(content))
            return [f"{where}: {what} is {_shown(media or 'without a Content-Type')}; the spec has {listed}"]
        schema = content[media].get("schema")
        if media == "text/event-stream":
            return self._check_events(where, raw)
        if not (media == "application/json" or media.endswith("+json")):
            return []
        try:
            value = json.loads(raw)
        except ValueError as e:
            return [f"{where}: {what} is not JSON ({e})"]
        problems = [] if schema is None else self._validate(f"{where}: {what}", schema, value)
        if media == "application/problem+json" and isinstance(value, dict) and value.get("status", status) != status:
            # RFC 9457 3.1.2: a problem's status member, when present, is the answer's status
            problems.append(f"{where}: {what} says status {_shown(value.get('status'))}")
        return problems

    def _check_events(self, where: str, raw: bytes) -> list[str]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return [f"{where}: the event stream is not UTF-8"]
        problems: list[str] = []
        blocks = re.split(r"\r\n\r\n|\n\n|\r\r", text)
        for n, block in enumerate(blocks[:-1], 1):  # the last block may be an event still arriving
            data = [line[5:].removeprefix(" ") for line in block.splitlines() if line.startswith("data:")]
            if not data:
                continue  # a comment or a keep-alive
            try:
                value = json.loads("\n".join(data))
            except ValueError:
                problems.append(f"{where}: event {n}'s data is not JSON")
                continue
            problems += self._validate(f"{where}: event {n}'s data", _LOG_EVENT, value)
        return problems

    # -- schemas -------------------------------------------------------------------------------------------------

    def _operation(self, method: str, route: str) -> tuple[Mapping[str, Any] | None, list[str]]:
        methods = self.routes.get(route)
        if methods is None:
            return None, [f"{method} {_shown(route)}: route is not in the contract"]
        op = methods.get(method)
        if op is None:
            return None, [f"{method} {route}: method is not in the contract (it has: {', '.join(sorted(methods))})"]
        return op, []

    def _deref(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        while "$ref" in schema:
            schema = self.document["$defs"][schema["$ref"].removeprefix("#/$defs/")]
        return schema

    def _type_of(self, schema: Mapping[str, Any]) -> str | None:
        t = self._deref(schema).get("type")
        if isinstance(t, list):
            t = next((x for x in t if x != "null"), None)
        return t if isinstance(t, str) else None

    def _coerce(self, schema: Mapping[str, Any], text: str) -> object:
        """A query or header value as the type its schema says; left as text when it is not one (then reported)."""
        kind = self._type_of(schema)
        if kind == "integer" and re.fullmatch(r"[+-]?\d+", text.strip()):
            return int(text)
        if kind == "number":
            try:
                return float(text)
            except ValueError:
                return text
        if kind == "boolean" and text in ("true", "false"):
            return text == "true"
        return text

    def _validator(self, schema: Mapping[str, Any]) -> Draft202012Validator:
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            v = self._validators.get(key)
            if v is None:
                v = Draft202012Validator({**schema, "$defs": self.document["$defs"]}, format_checker=FORMATS)
                self._validators[key] = v
            return v

    def _validate(self, what: str, schema: Mapping[str, Any], value: object) -> list[str]:
        errors = sorted(self._validator(schema).iter_errors(value), key=lambda e: (e.json_path, e.message))
        return [f"{what}: {_said(e)}" for e in errors]


def _said(error: ValidationError) -> str:
    """One schema error in words; for anyOf/oneOf, the branch that came closest says what is wrong."""
    text = f"at {error.json_path}: {_clip(error.message)}"
    closest = error
    while closest.context:  # the branch that got furthest into the value before failing
        closest = max(closest.context, key=lambda e: len(e.absolute_path))
    if closest is not error:
        text += f" (closest: at {closest.json_path}: {_clip(closest.message)})"
    return secret.redact(text)


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _shown(value: object) -> str:
    return secret.redact(_clip(repr(value)))


def _bytes(body: bytes | str | None) -> bytes:
    if body is None:
        return b""
    return body.encode() if isinstance(body, str) else body


def _header(headers: Mapping[str, str] | None, name: str) -> str:
    if not headers:
        return ""
    lowered = name.lower()
    return next((v for k, v in headers.items() if k.lower() == lowered), "")


@cache
def contract() -> Contract:
    return Contract(json.loads(CONTRACT_PATH.read_text(encoding="utf-8")))


def check_request(
    method: str,
    route: str,
    query: Mapping[str, Sequence[str]] | None = None,
    body: bytes | str | None = None,
    headers: Mapping[str, str] | None = None,
) -> list[str]:
    return contract().check_request(method, route, query, body, headers)


def check_response(
    method: str,
    route: str,
    status: int,
    headers: Mapping[str, str],
    body: bytes | str | None,
    *,
    all_headers: bool = True,
) -> list[str]:
    return contract().check_response(method, route, status, headers, body, all_headers=all_headers)


def check_exchange(ex: Exchange) -> list[str]:
    """What is wrong with one exchange the simulator recorded: podtui's request, and the simulator's REST answer
    unless a fault was at work. GraphQL is not this contract's business."""
    if ex.route == "/graphql" or ex.path.split("?")[0].rstrip("/") == "/graphql":
        return []
    route = ex.route or ex.path.split("?")[0]
    rest = route.startswith("/v2/")
    problems = []
    if _header(ex.request_headers, "user-agent").startswith(PODTUI_AGENT):
        if rest:
            problems += check_request(ex.method, route, ex.query, ex.request_body, ex.request_headers)
        else:
            problems.append(f"podtui sent {ex.method} {_shown(route)}: neither GraphQL nor a REST v2 route")
    if rest and ex.route is not None and not ex.fault:
        problems += check_response(ex.method, ex.route, ex.status, ex.response_headers, ex.response_body)
    return problems


class ExchangeWatch:
    """A listener for podtui.sim.exchange: keeps every violation it sees (from the simulator's threads)."""

    def __init__(self, check: Callable[[Exchange], list[str]] = check_exchange) -> None:
        self.check = check
        self.violations: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, ex: Exchange) -> None:
        try:
            found = self.check(ex)
        except Exception as e:  # never break the simulator's answer; say it instead
            found = [f"{ex.method} {_shown(ex.path)}: checking it failed: {type(e).__name__}: {_clip(str(e))}"]
        if found:
            with self._lock:
                self.violations.extend(found)

    def report(self) -> str:
        with self._lock:
            seen = list(dict.fromkeys(self.violations))
        return f"{len(seen)} REST v2 contract violation(s) (tests/contract/runpod-v2.contract.json):\n" + "\n".join(
            f"- {v}" for v in seen
        )


@contextmanager
def watching_exchanges() -> Iterator[ExchangeWatch]:
    """An ExchangeWatch on the simulator's exchanges for the duration of the block."""
    from podtui.sim import exchange

    watch = ExchangeWatch()
    exchange.listeners.append(watch)
    try:
        yield watch
    finally:
        exchange.listeners.remove(watch)
