"""Derive the REST v2 contract podtui and its simulator are held to from RunPod's OpenAPI 3.1 document.

Only the routes podtui uses (or will) are kept. Every $ref is rewritten into a local "$defs" (JSON Schema
2020-12), and only what a validator checks survives: types, formats, required, enums, patterns, bounds,
additional/unevaluated properties. Descriptions, titles, summaries and examples are dropped. The output is
sorted, so the same document always gives the same file. See docs/runpod-facts.md#rest-v2.

Usage: python scripts/derive_contract.py SPEC_PATH [--out PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "tests" / "contract" / "runpod-v2.contract.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"

# Route template -> methods. The catalog, billing, volume and template routes are here for the features that
# will use them; a route left out is a violation wherever podtui or the simulator touches it.
ROUTES: dict[str, tuple[str, ...]] = {
    "/v2/pods": ("get", "post"),
    "/v2/pods/{id}": ("get", "patch", "delete"),
    "/v2/pods/{id}/action": ("post",),
    "/v2/pods/{id}/logs": ("get",),
    "/v2/account/ssh-keys": ("get", "put"),
    "/v2/catalog/gpus": ("get",),
    "/v2/catalog/datacenters": ("get",),
    "/v2/catalog/datacenters/{id}": ("get",),
    "/v2/catalog/templates": ("get",),
    "/v2/billing": ("get",),
    "/v2/billing/pods": ("get",),
    "/v2/billing/network-volumes": ("get",),
    "/v2/billing/serverless": ("get",),
    "/v2/billing/endpoints": ("get",),
    "/v2/billing/clusters": ("get",),
    "/v2/network-volumes": ("get", "post"),
    "/v2/network-volumes/{id}": ("get", "patch", "delete"),
    "/v2/templates": ("get", "post"),
    "/v2/templates/{id}": ("get", "patch", "delete"),
}

# Keywords whose value is one schema, a list of schemas, or a map of names to schemas.
_ONE_SCHEMA = {
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
}
_SCHEMA_LIST = {"allOf", "anyOf", "oneOf", "prefixItems"}
_SCHEMA_MAP = {"properties", "patternProperties", "dependentSchemas"}
# Keywords kept as they are: what a validator asserts, and defaults (values, not prose).
_VALUES = {
    "type",
    "enum",
    "const",
    "format",
    "required",
    "dependentRequired",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minContains",
    "maxContains",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minProperties",
    "maxProperties",
    "default",
    "readOnly",
    "writeOnly",
    "deprecated",
}
# Prose and OpenAPI-only annotations, dropped. Anything neither kept nor listed here stops the derivation, so a
# keyword a new spec brings in is looked at rather than lost.
_DROPPED = {"description", "title", "summary", "examples", "example", "discriminator", "$comment", "externalDocs"}


class SpecError(ValueError):
    pass


class _Deriver:
    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec = spec
        self.components: Mapping[str, Any] = spec.get("components", {})
        self.defs: dict[str, Any] = {}
        self._pending: list[str] = []

    # -- schemas -------------------------------------------------------------------------------------------------

    def schema(self, node: Any, where: str) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            raise SpecError(f"{where}: a schema must be an object or a boolean, not {type(node).__name__}")
        out: dict[str, Any] = {}
        for key, value in node.items():
            at = f"{where}/{key}"
            if key == "$ref":
                out[key] = self.schema_ref(value, at)
            elif key in _ONE_SCHEMA:
                out[key] = self.schema(value, at)
            elif key in _SCHEMA_LIST:
                out[key] = [self.schema(v, f"{at}/{i}") for i, v in enumerate(value)]
            elif key in _SCHEMA_MAP:
                out[key] = {name: self.schema(v, f"{at}/{name}") for name, v in value.items()}
            elif key in _VALUES:
                out[key] = value
            elif key in _DROPPED or key.startswith("x-"):
                continue
            else:
                raise SpecError(f"{where}: keyword {key!r} is neither kept nor dropped; decide in derive_contract.py")
        return out

    def schema_ref(self, ref: object, where: str) -> str:
        prefix = "#/components/schemas/"
        if not isinstance(ref, str) or not ref.startswith(prefix):
            raise SpecError(f"{where}: only references to {prefix}* are expected in schemas, found {ref!r}")
        name = ref[len(prefix) :]
        if name not in self.components.get("schemas", {}):
            raise SpecError(f"{where}: {ref} does not exist")
        if name not in self.defs and name not in self._pending:
            self._pending.append(name)
        return f"#/$defs/{name}"

    def close_defs(self) -> None:
        while self._pending:
            name = self._pending.pop()
            self.defs[name] = {}  # claimed before descending, so a schema that refers to itself ends
            self.defs[name] = self.schema(self.components["schemas"][name], f"#/components/schemas/{name}")

    # -- operations ----------------------------------------------------------------------------------------------

    def component(self, node: Mapping[str, Any], kind: str, where: str) -> Mapping[str, Any]:
        """`node`, or the component it refers to (parameters, responses, headers, request bodies)."""
        seen = 0
        while "$ref" in node:
            ref = node["$ref"]
            prefix = f"#/components/{kind}/"
            if not isinstance(ref, str) or not ref.startswith(prefix):
                raise SpecError(f"{where}: expected a reference to {prefix}*, found {ref!r}")
            found = self.components.get(kind, {}).get(ref[len(prefix) :])
            if found is None:
                raise SpecError(f"{where}: {ref} does not exist")
            node = found
            seen += 1
            if seen > 10:
                raise SpecError(f"{where}: references go round in a circle")
        return node

    def parameters(self, listed: list[Any], where: str) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {"query": {}, "path": {}, "header": {}}
        for i, raw in enumerate(listed):
            p = self.component(raw, "parameters", f"{where}/{i}")
            place = p["in"]
            if place not in out:
                raise SpecError(f"{where}/{i}: parameters in {place!r} are not handled")
            entry: dict[str, Any] = {
                "required": bool(p.get("required", place == "path")),
                "schema": self.schema(p["schema"], f"{where}/{i}/schema"),
            }
            if place == "query":
                style = p.get("style", "form")
                entry["style"] = style
                entry["explode"] = bool(p.get("explode", style == "form"))
            out[place][p["name"]] = entry
        return out

    def content(self, content: Mapping[str, Any], where: str) -> dict[str, Any]:
        return {
            media: {"schema": self.schema(body["schema"], f"{where}/{media}/schema")} if "schema" in body else {}
            for media, body in content.items()
        }

    def response(self, raw: Mapping[str, Any], where: str) -> dict[str, Any]:
        r = self.component(raw, "responses", where)
        headers = {}
        for name, h in r.get("headers", {}).items():
            header = self.component(h, "headers", f"{where}/headers/{name}")
            headers[name] = {
                "required": bool(header.get("required", False)),
                "schema": self.schema(header["schema"], f"{where}/headers/{name}/schema"),
            }
        return {"headers": headers, "content": self.content(r.get("content", {}), f"{where}/content")}

    def operation(self, path: str, method: str) -> dict[str, Any]:
        item = self.spec["paths"].get(path)
        if item is None or method not in item:
            raise SpecError(f"the spec has no {method.upper()} {path}")
        op = item[method]
        where = f"#/paths/{path}/{method}"
        # operation parameters override the path's, by name and place (OpenAPI 3.1, Path Item Object)
        merged: dict[tuple[str, str], Any] = {}
        for i, raw in enumerate([*item.get("parameters", []), *op.get("parameters", [])]):
            p = self.component(raw, "parameters", f"{where}/parameters/{i}")
            merged[(p["in"], p["name"])] = raw
        body = None
        if "requestBody" in op:
            rb = self.component(op["requestBody"], "requestBodies", f"{where}/requestBody")
            body = {
                "required": bool(rb.get("required", False)),
                "content": self.content(rb.get("content", {}), f"{where}/requestBody/content"),
            }
        security = op.get("security", self.spec.get("security", []))
        return {
            "auth": sorted({name for requirement in security for name in requirement}),
            "parameters": self.parameters(list(merged.values()), f"{where}/parameters"),
            "requestBody": body,
            "responses": {
                str(status): self.response(r, f"{where}/responses/{status}") for status, r in op["responses"].items()
            },
        }


def derive(spec: Mapping[str, Any], source_sha256: str) -> dict[str, Any]:
    if not str(spec.get("openapi", "")).startswith("3.1"):
        raise SpecError(f"expected an OpenAPI 3.1 document, found openapi={spec.get('openapi')!r}")
    d = _Deriver(spec)
    routes = {path: {m.upper(): d.operation(path, m) for m in methods} for path, methods in ROUTES.items()}
    d.close_defs()
    return {
        "$schema": DIALECT,
        "$defs": d.defs,
        "source": {"openapi": spec["openapi"], "version": spec.get("info", {}).get("version"), "sha256": source_sha256},
        "routes": routes,
    }


def render(contract: Mapping[str, Any]) -> str:
    return json.dumps(contract, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def derive_file(spec_path: Path) -> str:
    raw = spec_path.read_bytes()
    return render(derive(json.loads(raw), hashlib.sha256(raw).hexdigest()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", type=Path, help="RunPod's REST v2 OpenAPI document (JSON)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"default: {DEFAULT_OUT.relative_to(REPO)}")
    args = parser.parse_args(argv)
    try:
        text = derive_file(args.spec)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"derive_contract: {e}", file=sys.stderr)
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    contract = json.loads(text)
    count = sum(len(methods) for methods in contract["routes"].values())
    print(f"{args.out}: {count} operations on {len(contract['routes'])} routes, {len(contract['$defs'])} schemas")
    return 0


if __name__ == "__main__":
    sys.exit(main())
