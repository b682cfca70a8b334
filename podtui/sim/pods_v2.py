"""The simulator's REST v2 pod routes: list, get, create, update, terminate, and the actions.

A create is mapped onto World.create (the names podFindAndDeployOnDemand takes) and refused as RunPod refuses:
400 for a GPU type it does not have, no stock or a rule broken, 402 for the balance. An action not in the pod's
`actions` is a 409 (docs/runpod-facts.md#rest-v2).
"""

from __future__ import annotations

import secrets
from typing import Any

from podtui.sim import pod_v2
from podtui.sim.gpu_market import NO_STOCK
from podtui.sim.pod_v2 import CUDA_VERSION
from podtui.sim.problem import Answer, json_answer, no_content
from podtui.sim.v2_request import CREATE_POD, POD_ACTION, UPDATE_POD, Call, json_body, refuse
from podtui.sim.world import SimPod, World

DEFAULT_DISK_GB = 50


def list_pods(call: Call) -> Answer:
    flag = call.one("includeClusterPods")
    if flag not in (None, "true", "false"):
        raise refuse(400, "includeClusterPods is true or false", [f"includeClusterPods: {flag!r} is not a boolean"])
    world = call.world
    with world.lock:  # the simulator has no clusters: nothing more to include
        pods = [pod_v2.record(world, p) for p in world.visible_pods() if p.status != "TERMINATED"]
    return json_answer(200, {"pods": pods})


def get_pod(call: Call) -> Answer:
    world = call.world
    with world.lock:
        return json_answer(200, pod_v2.record(world, world.get(call.params["id"])))


def delete_pod(call: Call) -> Answer:
    call.world.terminate(call.params["id"])
    return no_content()


def pod_action(call: Call) -> Answer:
    action = json_body(call, POD_ACTION)["action"]
    world, pod_id = call.world, call.params["id"]
    with world.lock:
        pod = world.get(pod_id)
        valid = pod_v2.actions(world, pod)
        status = pod_v2.status(world, pod)
    if action not in valid:
        if pod.locked and action in pod_v2.LOCKED_OUT:
            raise refuse(409, f"pod {pod_id} is locked: unlock it (PATCH locked false) to {action} it")
        raise refuse(409, f"cannot {action} pod {pod_id} while it is {status}; valid now: {', '.join(valid)}")
    if action == "terminate":
        world.terminate(pod_id)
        return no_content()
    if action == "start":
        world.resume(pod_id, pod.gpu_count)
    elif action == "stop":
        world.stop(pod_id)
    else:
        world.restart(pod_id)
    with world.lock:
        return json_answer(200, pod_v2.record(world, world.get(pod_id)))


def _volumes(world: World) -> set[str]:
    with world.lock:
        return {p.network_volume for p in world.pods.values() if p.network_volume}


def _common_rules(world: World, body: dict[str, Any]) -> None:
    """What a body may ask only of what the simulated RunPod has: no templates, registries or global network."""
    if body.get("templateId"):
        raise refuse(404, f"template {body['templateId']!r} not found")
    if body.get("registry") is not None:
        raise refuse(400, f"container registry credential {body['registry']!r} not found")
    if body.get("globalNetworking"):
        raise refuse(400, "global networking is not offered in this pod's data center")
    network = (body.get("mounts") or {}).get("network")
    if network == []:
        raise refuse(400, "mounts.network cannot be empty")
    for mount in network or []:
        if mount["volumeId"] not in _volumes(world):
            raise refuse(400, f"network volume {mount['volumeId']!r} not found")


def _create_spec(world: World, body: dict[str, Any]) -> dict[str, Any]:
    """The CreatePodRequest in World.create's names, after the rules the schema cannot say."""
    _common_rules(world, body)
    if ("gpu" in body) == ("cpu" in body):
        raise refuse(400, "exactly one of gpu or cpu must be given")
    if "image" not in body:
        raise refuse(400, "the request body does not match the schema", ["$: missing properties 'image'"])
    mounts = body.get("mounts") or {}
    if "persistent" in mounts and "network" in mounts:
        raise refuse(400, "mounts.persistent and mounts.network cannot both be given")
    if "persistent" in mounts and "cpu" in body:
        raise refuse(400, "CPU pods cannot have mounts.persistent")
    ports = list(body.get("ports") or [])
    env = dict(body.get("env") or {})
    if body.get("startJupyter") and "JUPYTER_PASSWORD" not in env:
        env["JUPYTER_PASSWORD"] = secrets.token_urlsafe(12)  # docs/runpod-facts.md#rest-v2
    spec: dict[str, Any] = {
        "name": body["name"],
        "imageName": body["image"],
        "cloudType": body.get("cloud", "SECURE"),
        "containerDiskInGb": body.get("disk", DEFAULT_DISK_GB),
        "ports": ",".join(ports),
        "env": [{"key": k, "value": v} for k, v in env.items()],
        "supportPublicIp": "22/tcp" in ports,  # a published TCP port gets the machine's public IP
        "dockerArgs": body.get("args", ""),
        "dataCenterIds": body.get("dataCenterIds") or [],
    }
    if "gpu" in body:
        gpu = body["gpu"]
        allowed, floor = gpu.get("allowedCudaVersions") or [], gpu.get("minCudaVersion")
        if allowed and floor is not None:
            raise refuse(400, "gpu.allowedCudaVersions and gpu.minCudaVersion cannot both be given")
        mine = tuple(int(x) for x in CUDA_VERSION.split("."))
        if (allowed and CUDA_VERSION not in allowed) or (floor and tuple(map(int, floor.split("."))) > mine):
            raise refuse(400, NO_STOCK)  # no machine with that CUDA: a capacity error, not a fallback
        spec |= {"gpuTypeId": gpu["id"], "gpuCount": gpu.get("count", 1)}
    else:
        spec |= {"cpuFlavorId": body["cpu"]["id"], "vcpuCount": body["cpu"]["vcpuCount"]}
    if "persistent" in mounts:
        spec |= {"volumeInGb": mounts["persistent"]["size"], "volumeMountPath": mounts["persistent"]["path"]}
    for mount in mounts.get("network") or []:
        spec |= {"networkVolumeId": mount["volumeId"], "volumeMountPath": mount["path"]}
    return spec


def create_pod(call: Call) -> Answer:
    body = json_body(call, CREATE_POD)
    pod = call.world.create(_create_spec(call.world, body))
    with call.world.lock:
        return json_answer(201, pod_v2.record(call.world, pod))


def _update_mounts(pod: SimPod, mounts: dict[str, Any]) -> None:
    """Only a mount's path may change, and a persistent volume may grow; its kind and volume are fixed. Checked
    whole before anything changes."""
    persistent, network = mounts.get("persistent"), mounts.get("network") or []
    if persistent is not None:
        if pod.network_volume or not pod.volume_gb:
            raise refuse(400, "this pod has no persistent mount to change")
        if persistent["size"] < pod.volume_gb:
            raise refuse(400, f"a persistent mount cannot shrink (it has {pod.volume_gb} GB)")
    if any(mount["volumeId"] != pod.network_volume for mount in network):
        raise refuse(400, "a network mount's volumeId cannot change")
    if persistent is not None:
        pod.volume_gb, pod.volume_mount_path = persistent["size"], persistent["path"]
    for mount in network:
        pod.volume_mount_path = mount["path"]


def update_pod(call: Call) -> Answer:
    from podtui.core.pod_spec import check_image  # Docker's reference grammar, as RunPod's backend checks

    body = json_body(call, UPDATE_POD)
    world = call.world
    _common_rules(world, body)
    if "image" in body:
        try:
            check_image(body["image"])
        except ValueError:
            raise refuse(400, f"invalid image name {body['image']!r}") from None
    with world.lock:
        pod = world.get(call.params["id"])
        _update_mounts(pod, body.get("mounts") or {})
        pod.name = body.get("name", pod.name)
        pod.image = body.get("image", pod.image)
        pod.docker_args = body.get("args", pod.docker_args)
        pod.container_disk_gb = int(body.get("disk", pod.container_disk_gb))
        pod.ports = ",".join(body["ports"]) if "ports" in body else pod.ports
        pod.env = dict(body["env"]) if "env" in body else pod.env  # PATCH replaces the whole env
        pod.locked = body.get("locked", pod.locked)
        return json_answer(200, pod_v2.record(world, pod))
