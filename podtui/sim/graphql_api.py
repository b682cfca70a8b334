"""The simulator's GraphQL endpoint (POST /graphql) in the three lives RunPod's GraphQL has while it is retired
(docs/runpod-facts.md#api-lifecycle):

- "full": the whole schema (schema.py), as before REST v2;
- "balance-only": the account's key may ask only the balance (`myself { id clientBalance currentSpendPerHr
  spendLimit }`, which REST v2 does not have); anything else is a 410 page. A pod's own key (legacy runpodctl and
  nvidia-smi inside pods) still has the whole schema, for its own pod;
- "retired": every request is a 410 page.

The mode comes from PODTUI_SIM_GRAPHQL (default "full"); the "graphql_retired" fault retires it for a while.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, Protocol

from graphql import FieldNode, GraphQLError, GraphQLSchema, OperationDefinitionNode, OperationType, graphql_sync, parse

from podtui.sim.faults import Fault, mangle_graphql, set_status
from podtui.sim.problem import Answer, graphql_gone, json_answer, problem
from podtui.sim.schema import pod_record
from podtui.sim.world import SimError, World

MODES = ("full", "balance-only", "retired")
MODE_ENV = "PODTUI_SIM_GRAPHQL"
BALANCE_FIELDS = {"id", "clientBalance", "currentSpendPerHr", "spendLimit", "__typename"}


class GraphqlHost(Protocol):
    """What the endpoint needs of the server it runs in (SimApiServer)."""

    @property
    def world(self) -> World: ...
    @property
    def schema(self) -> GraphQLSchema: ...
    @property
    def root(self) -> object: ...
    @property
    def graphql_mode(self) -> str: ...

    def record_document(self, query: str) -> None: ...


def mode_from_env() -> str:
    mode = os.environ.get(MODE_ENV, "").strip() or "full"
    if mode not in MODES:
        raise ValueError(f"{MODE_ENV}={mode!r}: use one of {', '.join(MODES)}")
    return mode


def _fields(node: Any) -> list[FieldNode] | None:
    """The fields a selection asks for; None when it uses fragments (not a plain balance query)."""
    selections = list(node.selection_set.selections) if node.selection_set else []
    if not all(isinstance(s, FieldNode) for s in selections):
        return None
    return [s for s in selections if isinstance(s, FieldNode)]


def is_balance_query(document: str) -> bool:
    """Whether a document asks for the balance and nothing else."""
    try:
        parsed = parse(document)
    except GraphQLError:
        return False
    for op in parsed.definitions:
        if not isinstance(op, OperationDefinitionNode) or op.operation != OperationType.QUERY:
            return False
        top = _fields(op)
        if not top or any(f.name.value not in ("myself", "__typename") for f in top):
            return False
        for f in top:
            inner = _fields(f) if f.name.value == "myself" else []
            if inner is None or (f.name.value == "myself" and not inner) or f.arguments:
                return False
            if any(g.name.value not in BALANCE_FIELDS or g.selection_set for g in inner):
                return False
    return True


class Forbidden(Exception):
    """A pod's own key asked for something other than its own pod."""


class PodScope:
    """The resolvers a pod's own key gets: its own pod, and stopping it (legacy `runpodctl stop pod`)."""

    def __init__(self, world: World, pod_id: str) -> None:
        self.world = world
        self.pod_id = pod_id

    def _own(self, input: dict[str, Any]) -> str:
        if input.get("podId") != self.pod_id:
            raise Forbidden("this key belongs to a pod and may act on that pod only")
        return self.pod_id

    def pod(self, _info: Any, input: dict[str, Any]) -> dict[str, Any] | None:
        pod_id = self._own(input)
        with self.world.lock:
            p = self.world.pods.get(pod_id)
            return pod_record(self.world, p) if p else None

    def podStop(self, _info: Any, input: dict[str, Any]) -> dict[str, Any]:
        try:
            pod = self.world.stop(self._own(input))
        except SimError as e:
            raise GraphQLError(str(e)) from None
        return pod_record(self.world, pod)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def refused(*_args: Any, **_kwargs: Any) -> Any:
            raise Forbidden(f"this key belongs to a pod: {name} is not allowed")

        return refused


def _document(body: Any) -> str:
    query = body.get("query") if isinstance(body, dict) else None
    return query if isinstance(query, str) else ""


def document_of(raw: bytes) -> str:
    """The GraphQL document of a request body, "" when there is none (faults with `only` skip it)."""
    try:
        return _document(json.loads(raw))
    except ValueError:
        return ""


def execute(server: GraphqlHost, body: dict[str, Any], root: object = None) -> tuple[dict[str, Any], bool]:
    """Run a request's document (the account's resolvers unless `root` says otherwise): the answer, and whether a
    pod's key asked for more than its pod."""
    query = body.get("query")
    if not isinstance(query, str):
        return {"errors": [{"message": "Must provide query string."}]}, False
    variables = body.get("variables")
    result = graphql_sync(
        server.schema,
        query,
        root_value=server.root if root is None else root,
        variable_values=variables if isinstance(variables, dict) else None,
    )
    out: dict[str, Any] = {"data": result.data}
    if result.errors:
        out["errors"] = [{"message": e.message, "path": e.path} for e in result.errors]
    return out, any(isinstance(e.original_error, Forbidden) for e in result.errors or ())


def answer(server: GraphqlHost, raw: bytes, pod_scope: str | None, by_kind: dict[str, Fault]) -> Answer:
    """The answer to an authorized GraphQL request (faults before the body, and the key, handled by the server)."""
    try:
        body = json.loads(raw)
        if not isinstance(body, dict):
            raise ValueError
    except ValueError:
        return json_answer(400, {"errors": [{"message": "Body is not a JSON object."}]})
    if "raw" in by_kind:
        return Answer(200, raw=str(by_kind["raw"].value or "").encode(), fault=True)
    if "graphql_error" in by_kind:
        message = str(by_kind["graphql_error"].value or "Something went wrong.")
        return Answer(200, {"errors": [{"message": message}]}, fault=True)
    if pod_scope is None and server.graphql_mode == "balance-only" and not is_balance_query(_document(body)):
        return graphql_gone()
    result, forbidden = execute(server, body, None if pod_scope is None else PodScope(server.world, pod_scope))
    if forbidden:
        return problem(403, "this key belongs to a pod and may act on that pod only")
    out = Answer(200, result)
    if "partial" in by_kind:
        mangle_graphql(result)
        out.fault = True
    if "unknown_status" in by_kind:
        set_status(result, str(by_kind["unknown_status"].value or "HIBERNATING"), graphql=True)
        out.fault = True
    return out
