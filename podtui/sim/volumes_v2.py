"""The simulator's REST v2 network volume routes: list, get, create, update and delete
(docs/runpod-facts.md#network-volumes).

A volume lives in one data centre that offers network volumes of its type; its size only grows; one a pod mounts
is not deleted while that pod exists (409 naming the pod).
"""

from __future__ import annotations

from podtui.sim import datacentres
from podtui.sim.problem import Answer, json_answer, no_content
from podtui.sim.v2_request import CREATE_VOLUME, UPDATE_VOLUME, Call, json_body, refuse
from podtui.sim.volumes import SimVolume, new_volume_id
from podtui.sim.world import World


def _volume(world: World, volume_id: str) -> SimVolume:
    found = world.volumes.get(volume_id)
    if found is None:
        raise refuse(404, f"network volume {volume_id!r} not found")
    return found


def list_volumes(call: Call) -> Answer:
    world = call.world
    with world.lock:
        world.advance()
        return json_answer(200, {"networkVolumes": [v.record() for v in world.volumes.values()]})


def get_volume(call: Call) -> Answer:
    with call.world.lock:
        return json_answer(200, _volume(call.world, call.params["id"]).record())


def create_volume(call: Call) -> Answer:
    body = json_body(call, CREATE_VOLUME)
    centre = datacentres.find(body["dataCenter"])
    if centre is None:
        known = ", ".join(dc.id for dc in datacentres.DATA_CENTRES)
        raise refuse(400, f"there is no data center {body['dataCenter']!r}; data centers: {known}")
    if not centre.volume_types:
        raise refuse(400, f"data center {centre.id} does not offer network volumes")
    kind = body.get("type") or centre.default_volume_type
    if kind not in centre.volume_types:
        offered = " or ".join(centre.volume_types)
        raise refuse(400, f"data center {centre.id} does not offer {kind} network volumes (it offers {offered})")
    world = call.world
    with world.lock:
        world.advance()  # billed from now on, not since the last look at the balance
        volume = SimVolume(new_volume_id(), body["name"], body["size"], centre.id, str(kind))
        world.volumes[volume.id] = volume
        world.changed()
        return json_answer(201, volume.record())


def update_volume(call: Call) -> Answer:
    body = json_body(call, UPDATE_VOLUME)
    world = call.world
    with world.lock:
        volume = _volume(world, call.params["id"])
        if "size" in body and body["size"] < volume.size_gb:
            raise refuse(400, f"a network volume cannot shrink: {volume.id} has {volume.size_gb} GB")
        world.advance()
        volume.name = body.get("name", volume.name)
        volume.size_gb = body.get("size", volume.size_gb)
        world.changed()
        return json_answer(200, volume.record())


def delete_volume(call: Call) -> Answer:
    world = call.world
    with world.lock:
        volume = _volume(world, call.params["id"])
        users = [p for p in world.visible_pods() if p.network_volume == volume.id and p.status != "TERMINATED"]
        if users:
            named = ", ".join(f"{p.name} ({p.id})" for p in users)
            raise refuse(409, f"network volume {volume.id} is mounted by pod {named}: terminate the pod first")
        world.advance()
        del world.volumes[volume.id]
        world.changed()
    return no_content()
