"""The simulator's REST v2 routes: which handler answers a method and path, and what a caller's key may ask.

A path no route has is a 404 problem, a method its route does not take a 405 with Allow. A pod's own key
(RUNPOD_API_KEY in the pod) may read, act on and terminate that pod and nothing else: 403 otherwise
(docs/runpod-facts.md#ssh-direct). A refusal the World makes becomes the problem its status says; a handler that
fails is a 500 problem, its traceback logged, so a bug in the simulator is seen rather than a dropped connection.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

from podtui.sim import billing_v2, catalog_v2, logs_v2, pods_v2, templates_v2, volumes_v2
from podtui.sim.problem import Answer, json_answer, problem
from podtui.sim.v2_request import SSH_KEYS, Call, Refusal, json_body
from podtui.sim.world import SimError

Handler = Callable[[Call], Answer]
log = logging.getLogger(__name__)


def _keys(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def get_ssh_keys(call: Call) -> Answer:
    return json_answer(200, {"keys": _keys(call.world.pub_key)})


def put_ssh_keys(call: Call) -> Answer:
    """The whole set is replaced, not merged (docs/runpod-facts.md#ssh-keys); GraphQL's pubKey is the same keys
    one a line."""
    keys = [k.strip() for k in json_body(call, SSH_KEYS)["keys"]]
    call.world.set_pub_key("\n".join(keys))
    return json_answer(200, {"keys": _keys(call.world.pub_key)})


ROUTES: dict[str, dict[str, Handler]] = {
    "/v2/pods": {"GET": pods_v2.list_pods, "POST": pods_v2.create_pod},
    "/v2/pods/{id}": {"GET": pods_v2.get_pod, "PATCH": pods_v2.update_pod, "DELETE": pods_v2.delete_pod},
    "/v2/pods/{id}/action": {"POST": pods_v2.pod_action},
    "/v2/pods/{id}/logs": {"GET": logs_v2.pod_logs},
    "/v2/account/ssh-keys": {"GET": get_ssh_keys, "PUT": put_ssh_keys},
    "/v2/catalog/gpus": {"GET": catalog_v2.list_gpus},
    "/v2/catalog/datacenters": {"GET": catalog_v2.list_datacentres},
    "/v2/catalog/datacenters/{id}": {"GET": catalog_v2.get_datacentre},
    "/v2/catalog/templates": {"GET": templates_v2.list_public_templates},
    "/v2/network-volumes": {"GET": volumes_v2.list_volumes, "POST": volumes_v2.create_volume},
    "/v2/network-volumes/{id}": {
        "GET": volumes_v2.get_volume,
        "PATCH": volumes_v2.update_volume,
        "DELETE": volumes_v2.delete_volume,
    },
    "/v2/billing": {"GET": billing_v2.list_billing},
    "/v2/billing/pods": {"GET": billing_v2.list_pod_billing},
    "/v2/billing/network-volumes": {"GET": billing_v2.list_volume_billing},
    "/v2/billing/serverless": {"GET": billing_v2.list_serverless_billing},
    "/v2/billing/endpoints": {"GET": billing_v2.list_endpoint_billing},
    "/v2/billing/clusters": {"GET": billing_v2.list_cluster_billing},
    "/v2/templates": {"GET": templates_v2.list_templates, "POST": templates_v2.create_template},
    "/v2/templates/{id}": {
        "GET": templates_v2.get_template,
        "PATCH": templates_v2.update_template,
        "DELETE": templates_v2.delete_template,
    },
}
# What a pod's own key may do, on its own pod only.
POD_SCOPED = {("GET", "/v2/pods/{id}"), ("POST", "/v2/pods/{id}/action"), ("DELETE", "/v2/pods/{id}")}


def _matcher(template: str) -> re.Pattern[str]:
    return re.compile(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)))


_MATCHERS = [(template, _matcher(template)) for template in ROUTES]


def match(path: str) -> tuple[str, dict[str, str]] | None:
    """The route template `path` belongs to and its parameters, or None."""
    for template, pattern in _MATCHERS:
        m = pattern.fullmatch(path)
        if m is not None:
            return template, m.groupdict()
    return None


def template_for(method: str, path: str) -> str | None:
    """The route that answers `method` on `path`, if one does."""
    found = match(path)
    return found[0] if found is not None and method in ROUTES[found[0]] else None


def answer(call: Call) -> Answer:
    found = match(call.path)
    if found is None:
        return problem(404, f"no route for {call.path}")
    template, params = found
    methods = ROUTES[template]
    handler = methods.get(call.method)
    if handler is None:
        allow = ", ".join(methods)
        return problem(405, f"{call.method} is not allowed on {template}", headers={"Allow": allow})
    call.params = params
    if call.pod_scope is not None and not (
        (call.method, template) in POD_SCOPED and params.get("id") == call.pod_scope
    ):
        out = problem(403, "this key belongs to a pod and may act on that pod only")
    else:
        try:
            out = handler(call)
        except Refusal as r:
            out = r.answer
        except SimError as e:
            out = problem(e.status, str(e))
        except Exception:  # a bug of the simulator's: a 500 in words and its traceback in the log, never a hang
            log.exception("the simulator failed answering %r %s", call.method, template)
            out = problem(500, f"the simulator failed answering {call.method} {template}: see its log")
    out.route = template
    return out
