"""The simulator's REST v2 template routes: the account's own (`/v2/templates`, read, made, changed and deleted)
and RunPod's public catalogue (`/v2/catalog/templates?source=`), docs/runpod-facts.md#templates.

`GET /v2/templates/{id}` answers a catalogue template as well as an own one; only own ones change or go. Names
are unique on an account; a template a pod was made from is not deleted while the pod exists (400).
"""

from __future__ import annotations

from typing import Any

from podtui.sim.problem import Answer, json_answer, no_content
from podtui.sim.templates import CATALOGUE, PUBLIC, SOURCES, SimTemplate, new_template_id
from podtui.sim.v2_request import CREATE_TEMPLATE, UPDATE_TEMPLATE, Call, json_body, refuse, template_fault
from podtui.sim.world import World


def find(world: World, template_id: str) -> SimTemplate:
    """An own template or a catalogue one, as a pod's templateId names it; 404 otherwise."""
    found = world.templates.get(template_id) or PUBLIC.get(template_id)
    if found is None:
        raise refuse(404, f"template {template_id!r} not found")
    return found


def _own(world: World, template_id: str) -> SimTemplate:
    found = world.templates.get(template_id)
    if found is None:
        why = "it is RunPod's, not this account's" if template_id in PUBLIC else "not found"
        raise refuse(404, f"template {template_id!r}: {why}")
    return found


def _unique_name(world: World, name: str, other_than: str | None = None) -> None:
    for template in world.templates.values():
        if template.name == name and template.id != other_than:
            raise refuse(400, f"a template called {name!r} already exists ({template.id}): names are unique")


def _registry(body: dict[str, Any]) -> None:
    if body.get("registry") is not None:  # the simulated account has no registry credentials
        raise refuse(400, f"container registry credential {body['registry']!r} not found")


def _apply(template: SimTemplate, body: dict[str, Any]) -> None:
    """The body's fields onto the template (checked already). `mounts: {}` leaves the mount as it is."""
    for name, attr in (
        ("name", "name"),
        ("image", "image"),
        ("args", "args"),
        ("disk", "disk"),
        ("registry", "registry"),
        ("serverless", "serverless"),
        ("public", "public"),
        ("category", "category"),
        ("startSsh", "start_ssh"),
        ("startJupyter", "start_jupyter"),
    ):
        if name in body:
            setattr(template, attr, body[name])
    if "ports" in body:
        template.ports = list(body["ports"])
    if "env" in body:
        template.env = dict(body["env"])
    if "allowedCudaVersions" in body:
        template.cuda_versions = list(body["allowedCudaVersions"])
    persistent = (body.get("mounts") or {}).get("persistent")
    if persistent is not None:
        template.volume_gb, template.volume_path = persistent["size"], persistent["path"]


def _check_image(image: str) -> None:
    from podtui.core.pod_spec import check_image  # Docker's reference grammar, as RunPod's backend checks

    try:
        check_image(image)
    except ValueError:
        raise refuse(400, f"invalid image name {image!r}") from None


def list_templates(call: Call) -> Answer:
    with call.world.lock:
        return json_answer(200, {"templates": [t.record() for t in call.world.templates.values()]})


def list_public_templates(call: Call) -> Answer:
    source = call.one("source") or "official"
    if source not in SOURCES:
        raise refuse(400, f"source takes {', '.join(SOURCES)}", [f"source: {source!r} is not one of them"])
    return json_answer(200, {"templates": [t.record() for t in CATALOGUE if t.source == source]})


def get_template(call: Call) -> Answer:
    with call.world.lock:
        return json_answer(200, find(call.world, call.params["id"]).record())


def create_template(call: Call) -> Answer:
    body = json_body(call, CREATE_TEMPLATE, template_fault)
    _registry(body)
    _check_image(body["image"])
    world = call.world
    with world.lock:
        _unique_name(world, body["name"])
        template = SimTemplate(new_template_id(), body["name"], body["image"])  # the spec's defaults otherwise
        _apply(template, body)
        world.templates[template.id] = template
        world.changed()
        return json_answer(201, template.record())


def update_template(call: Call) -> Answer:
    body = json_body(call, UPDATE_TEMPLATE, template_fault)
    _registry(body)
    if "image" in body:
        _check_image(body["image"])
    world = call.world
    with world.lock:
        template = _own(world, call.params["id"])
        if "name" in body:
            _unique_name(world, body["name"], other_than=template.id)
        _apply(template, body)  # pods made from it keep what they were made with
        world.changed()
        return json_answer(200, template.record())


def delete_template(call: Call) -> Answer:
    world = call.world
    with world.lock:
        template = _own(world, call.params["id"])
        users = [p for p in world.visible_pods() if p.template == template.id and p.status != "TERMINATED"]
        if users:
            named = ", ".join(f"{p.name} ({p.id})" for p in users)
            raise refuse(400, f"template {template.id} is in use by pod {named}: terminate the pod first")
        del world.templates[template.id]
        world.changed()
    return no_content()
