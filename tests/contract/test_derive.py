"""scripts/derive_contract.py: the committed contract is what RunPod's spec gives, the same every time, and keeps
only what a validator checks (no prose from the spec)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.helpers.contract import CONTRACT_PATH

REPO = Path(__file__).resolve().parent.parent.parent
# RunPod's OpenAPI document is not in the repository: the maintainers' copy, or where PODTUI_RUNPOD_SPEC points
SPEC = Path(os.environ.get("PODTUI_RUNPOD_SPEC", "/work/shared/reference/runpod-api-v2.openapi.json"))
needs_spec = pytest.mark.skipif(
    not SPEC.is_file(), reason=f"RunPod's OpenAPI document is not on this machine ({SPEC}; set PODTUI_RUNPOD_SPEC)"
)
PROSE = {"description", "summary", "title", "example", "examples"}


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("derive_contract", REPO / "scripts" / "derive_contract.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


derive_contract = _script()


def _committed() -> dict[str, Any]:
    return json.loads(CONTRACT_PATH.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _reversed(node: Any) -> Any:
    """The same document with every object's keys in the opposite order."""
    if isinstance(node, dict):
        return {k: _reversed(node[k]) for k in reversed(list(node))}
    if isinstance(node, list):
        return [_reversed(v) for v in node]
    return node


def _schemas(contract: dict[str, Any]) -> list[tuple[str, Any]]:
    """(where, schema) of every schema in the contract: the $defs and each route's."""
    found = [(f"$defs/{name}", s) for name, s in contract["$defs"].items()]
    for route, methods in contract["routes"].items():
        for method, op in methods.items():
            at = f"{method} {route}"
            for place, params in op["parameters"].items():
                found += [(f"{at} {place} {n}", p["schema"]) for n, p in params.items()]
            if op["requestBody"]:
                found += [(f"{at} body {m}", c["schema"]) for m, c in op["requestBody"]["content"].items()]
            for status, r in op["responses"].items():
                found += [(f"{at} {status} header {n}", h["schema"]) for n, h in r["headers"].items()]
                found += [(f"{at} {status} {m}", c["schema"]) for m, c in r["content"].items() if "schema" in c]
    return found


def _keywords(schema: Any) -> set[str]:
    """Every keyword used in a schema, recursively; names under properties are field names, not keywords."""
    if not isinstance(schema, dict):
        return set()
    used = set(schema)
    for key, value in schema.items():
        if key in ("properties", "patternProperties", "dependentSchemas", "$defs"):
            for sub in value.values():
                used |= _keywords(sub)
        elif key in ("allOf", "anyOf", "oneOf", "prefixItems"):
            for sub in value:
                used |= _keywords(sub)
        elif isinstance(value, dict):
            used |= _keywords(value)
    return used


# -- against RunPod's document (where it is on the machine) -------------------------------------------------------


@needs_spec
def test_committed_contract_is_a_fresh_derivation() -> None:
    fresh = derive_contract.derive_file(SPEC)
    assert fresh == CONTRACT_PATH.read_text(encoding="utf-8"), (
        "tests/contract/runpod-v2.contract.json is stale: run python scripts/derive_contract.py SPEC_PATH"
    )


@needs_spec
def test_derivation_does_not_depend_on_the_documents_key_order() -> None:
    spec = json.loads(SPEC.read_bytes())
    once = derive_contract.render(derive_contract.derive(spec, "x"))
    assert derive_contract.render(derive_contract.derive(spec, "x")) == once
    assert derive_contract.render(derive_contract.derive(_reversed(spec), "x")) == once


@needs_spec
def test_the_script_writes_the_file(tmp_path: Path) -> None:
    out = tmp_path / "contract.json"
    assert derive_contract.main([str(SPEC), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == CONTRACT_PATH.read_text(encoding="utf-8")


# -- the committed contract (everywhere, CI included) -------------------------------------------------------------


def test_committed_contract_is_rendered_canonically() -> None:
    text = CONTRACT_PATH.read_text(encoding="utf-8")
    assert derive_contract.render(json.loads(text)) == text


def test_committed_contract_has_the_routes_podtui_uses() -> None:
    routes = _committed()["routes"]
    assert {r: sorted(m) for r, m in routes.items()} == {
        r: sorted(m.upper() for m in methods) for r, methods in derive_contract.ROUTES.items()
    }


def test_every_schema_is_valid_2020_12_and_every_reference_resolves() -> None:
    contract = _committed()
    assert contract["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(contract)
    referenced = set()
    for where, schema in _schemas(contract):
        Draft202012Validator.check_schema(schema)
        for ref in json.dumps(schema).split('"$ref": "')[1:]:
            target = ref.split('"')[0]
            assert target.startswith("#/$defs/"), (where, target)
            assert target.removeprefix("#/$defs/") in contract["$defs"], (where, target)
            referenced.add(target.removeprefix("#/$defs/"))
    assert referenced == set(contract["$defs"]), "schemas nothing refers to were kept"


def test_committed_contract_carries_no_prose() -> None:
    for where, schema in _schemas(_committed()):
        prose = _keywords(schema) & PROSE
        assert not prose, f"{where} keeps {sorted(prose)}"
        assert not {k for k in _keywords(schema) if k.startswith("x-")}, where


def test_the_pod_keeps_what_a_validator_checks() -> None:
    defs = _committed()["$defs"]
    assert defs["PodStatus"]["enum"] == ["PROVISIONING", "STARTING", "RUNNING", "EXITED", "ERROR", "TERMINATED"]
    pod_fields = defs["Pod"]["allOf"][1]
    assert {"id", "status", "actions", "cost", "ssh", "runtime"} <= set(pod_fields["required"])
    assert pod_fields["properties"]["createdAt"] == {"type": "string", "format": "date-time"}
    assert defs["PodActionRequest"]["additionalProperties"] is False
    assert defs["CreatePodRequest"]["unevaluatedProperties"] is False
    assert defs["ErrorResponse"]["properties"]["title"] == {"type": "string"}  # a field named title is kept


# -- the derivation on a small document of its own ----------------------------------------------------------------


def _tiny_spec(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    thing = {
        "type": "object",
        "description": "prose",
        "x-internal": True,
        "required": ["title"],
        "additionalProperties": False,
        "properties": {
            "title": {"type": "string", "minLength": 1, "examples": ["a"]},
            "description": {"$ref": "#/components/schemas/Note"},
            **(extra or {}),
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {"version": "9"},
        "security": [{"bearerAuth": []}],
        "components": {
            "schemas": {
                "Thing": thing,
                "Note": {"type": ["string", "null"], "pattern": "^n", "title": "prose"},
                "Unused": {"type": "integer"},
            },
            "parameters": {"Tail": {"name": "tail", "in": "query", "schema": {"type": "integer", "maximum": 5}}},
            "headers": {"Limit": {"schema": {"type": "string", "description": "prose"}}},
            "responses": {
                "Gone": {
                    "description": "prose",
                    "content": {"application/problem+json": {"schema": {"type": "object"}}},
                }
            },
        },
        "paths": {
            route: {
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                **{
                    m: {
                        "summary": "prose",
                        "parameters": [{"$ref": "#/components/parameters/Tail"}],
                        "requestBody": {
                            "required": True,
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}},
                        },
                        "responses": {
                            "200": {
                                "description": "prose",
                                "headers": {"Limit": {"$ref": "#/components/headers/Limit"}},
                                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}},
                            },
                            "404": {"$ref": "#/components/responses/Gone"},
                        },
                    }
                    for m in methods
                },
            }
            for route, methods in derive_contract.ROUTES.items()
        },
    }


def test_references_become_local_defs_and_prose_goes() -> None:
    contract = derive_contract.derive(_tiny_spec(), "abc")
    assert contract["$defs"] == {
        "Thing": {
            "type": "object",
            "required": ["title"],
            "additionalProperties": False,
            "properties": {"title": {"type": "string", "minLength": 1}, "description": {"$ref": "#/$defs/Note"}},
        },
        "Note": {"type": ["string", "null"], "pattern": "^n"},
    }
    op = contract["routes"]["/v2/pods/{id}/action"]["POST"]
    assert op == {
        "auth": ["bearerAuth"],
        "parameters": {
            "query": {
                "tail": {
                    "required": False,
                    "schema": {"type": "integer", "maximum": 5},
                    "style": "form",
                    "explode": True,
                }
            },
            "path": {"id": {"required": True, "schema": {"type": "string"}}},
            "header": {},
        },
        "requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": "#/$defs/Thing"}}}},
        "responses": {
            "200": {
                "headers": {"Limit": {"required": False, "schema": {"type": "string"}}},
                "content": {"application/json": {"schema": {"$ref": "#/$defs/Thing"}}},
            },
            "404": {"headers": {}, "content": {"application/problem+json": {"schema": {"type": "object"}}}},
        },
    }
    assert contract["source"] == {"openapi": "3.1.0", "version": "9", "sha256": "abc"}


def test_a_keyword_it_does_not_know_stops_it() -> None:
    with pytest.raises(derive_contract.SpecError, match="'nullable'"):
        derive_contract.derive(_tiny_spec({"size": {"type": "integer", "nullable": True}}), "abc")


def test_a_missing_route_or_a_dangling_reference_stops_it() -> None:
    spec = _tiny_spec()
    del spec["paths"]["/v2/pods"]["post"]
    with pytest.raises(derive_contract.SpecError, match="no POST /v2/pods"):
        derive_contract.derive(spec, "abc")
    with pytest.raises(derive_contract.SpecError, match="does not exist"):
        derive_contract.derive(_tiny_spec({"size": {"$ref": "#/components/schemas/Nowhere"}}), "abc")


def test_an_openapi_3_0_document_is_refused() -> None:
    with pytest.raises(derive_contract.SpecError, match=r"OpenAPI 3\.1"):
        derive_contract.derive({**_tiny_spec(), "openapi": "3.0.3"}, "abc")
