"""The simulator's REST v2 pod routes: list, get, create, update, terminate, and the actions.

A create is mapped onto World.create (the names podFindAndDeployOnDemand takes) and refused as RunPod refuses:
400 for a GPU type it does not have, no stock or a rule broken, 402 for the balance, 404 for a template it does
not know, 422 for a serverless one. A pod on a network volume runs in the volume's data centre (World.create sees
to it, docs/runpod-facts.md#network-volumes); a template's settings come under the body's
(docs/runpod-facts.md#templates). An action not in the pod's `actions` is a 409 (docs/runpod-facts.md#rest-v2).
An edit follows docs/runpod-facts.md#editing-a-pod: a running pod restarts to take a new image, args, env, ports,
disk or mount.
"""

from __future__ import annotations

import secrets
from typing import Any

from podtui.sim import datacentres, pod_v2, templates_v2
from podtui.sim.gpu_market import NO_STOCK
from podtui.sim.pod_v2 import CUDA_VERSION
from podtui.sim.problem import Answer, json_answer, no_content
from podtui.sim.templates import SimTemplate
from podtui.sim.v2_request import CREATE_POD, POD_ACTION, UPDATE_POD, Call, json_body, partial_mount, refuse
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
        world.resume(pod_id, pod.gpu_count, call.blocked)
    elif action == "stop":
        world.stop(pod_id)
    else:
        world.restart(pod_id)
    with world.lock:
        return json_answer(200, pod_v2.record(world, world.get(pod_id)))


def _common_rules(body: dict[str, Any]) -> None:
    """What a body may ask only of what the simulated RunPod has (no registries, no global network), and the
    mount rules the schema cannot say."""
    if body.get("registry") is not None:
        raise refuse(400, f"container registry credential {body['registry']!r} not found")
    if body.get("globalNetworking"):  # every data centre says globalNetwork false (datacentres.py)
        raise refuse(400, "global networking is not offered in this pod's data center (no data center has it)")
    mounts = body.get("mounts") or {}
    if mounts.get("network") == []:
        raise refuse(400, "mounts.network cannot be empty: a network mount cannot be removed")
    if "persistent" in mounts and "network" in mounts:
        raise refuse(400, "mounts.persistent and mounts.network cannot both be given")


def _pod_template(world: World, template_id: str) -> SimTemplate:
    """The template a pod is made or edited from: the account's or the catalogue's, never a serverless one."""
    template = templates_v2.find(world, template_id)
    if template.serverless:
        raise refuse(422, f"template {template_id!r} is a serverless template: pods cannot use it")
    return template


def _with_template(template: SimTemplate, body: dict[str, Any]) -> dict[str, Any]:
    """The create body with the template's settings under it: the body's own fields win, env merges per key
    (the body's win), and a CPU pod takes neither the template's persistent mount nor its CUDA versions."""
    merged = dict(body)
    for name, value in (
        ("image", template.image),
        ("args", template.args),
        ("disk", template.disk),
        ("ports", list(template.ports)),
        ("startSsh", template.start_ssh),
        ("startJupyter", template.start_jupyter),
    ):
        merged.setdefault(name, value)
    merged["env"] = {**template.env, **(body.get("env") or {})}
    if "cpu" not in body:
        # `{}` is "no change" (the Mounts rule): the template's mount is the existing one, only a mount named
        # in the body replaces it (docs/runpod-facts.md#templates)
        if template.volume_gb and not body.get("mounts"):
            merged["mounts"] = {"persistent": {"size": template.volume_gb, "path": template.volume_path}}
        gpu = dict(body.get("gpu") or {})
        if template.cuda_versions and not ({"allowedCudaVersions", "minCudaVersion"} & set(gpu)):
            gpu["allowedCudaVersions"] = list(template.cuda_versions)
        if "gpu" in body:
            merged["gpu"] = gpu
    return merged


def _centres(body: dict[str, Any]) -> list[str]:
    """Where the pod may run: the body's dataCenterIds, each one known. World.create narrows them to a network
    volume's data centre, for GraphQL's creates as well."""
    wanted = list(body.get("dataCenterIds") or [])
    unknown = [c for c in wanted if datacentres.find(c) is None]
    if unknown:
        known = ", ".join(dc.id for dc in datacentres.DATA_CENTRES)
        raise refuse(400, f"there is no data center {', '.join(map(repr, unknown))}; data centers: {known}")
    return wanted


def _create_spec(world: World, body: dict[str, Any]) -> dict[str, Any]:
    """The CreatePodRequest in World.create's names, after the rules the schema cannot say."""
    if ("gpu" in body) == ("cpu" in body):
        raise refuse(400, "exactly one of gpu or cpu must be given")
    if "templateId" in body:
        body = _with_template(_pod_template(world, body["templateId"]), body)
    if "image" not in body:
        raise refuse(400, "the request body does not match the schema", ["$: missing properties 'image'"])
    _common_rules(body)
    mounts = body.get("mounts") or {}
    if "persistent" in mounts and "cpu" in body:
        raise refuse(400, "CPU pods cannot have mounts.persistent")
    centres = _centres(body)
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
        "dataCenterIds": centres,
        "templateId": body.get("templateId"),
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
    body = json_body(call, CREATE_POD, partial_mount)
    pod = call.world.create(_create_spec(call.world, body), call.blocked)
    with call.world.lock:
        return json_answer(201, pod_v2.record(call.world, pod))


# --- editing ---------------------------------------------------------------------------------------------------


def _check_mounts(pod: SimPod, mounts: dict[str, Any]) -> None:
    """The Mounts PATCH rules: a mount's kind and volume are fixed at create, a persistent mount may grow but not
    shrink, and only a path may change besides."""
    persistent, network = mounts.get("persistent"), mounts.get("network")
    kind = "network" if pod.network_volume else "persistent" if pod.volume_gb else None
    for asked in ("persistent", "network"):
        if mounts.get(asked) is not None and kind != asked:
            has = f"a {kind} mount" if kind else "no mount"
            raise refuse(400, f"pod {pod.id} was created with {has}: a {asked} mount cannot be added to it")
    if persistent is not None and persistent["size"] < pod.volume_gb:
        raise refuse(400, f"a persistent mount cannot shrink (it has {pod.volume_gb} GB)")
    for mount in network or []:
        if mount["volumeId"] != pod.network_volume:
            raise refuse(400, f"a network mount's volumeId cannot change (it is {pod.network_volume})")


def _mount_after(pod: SimPod, mounts: dict[str, Any]) -> tuple[int, str]:
    """The pod's mount (size, path) once `mounts` (checked already) applies: `{}` or no entry keeps it."""
    persistent = mounts.get("persistent")
    if persistent is not None:
        return int(persistent["size"]), str(persistent["path"])
    for mount in mounts.get("network") or []:
        return pod.volume_gb, str(mount["path"])
    return pod.volume_gb, pod.volume_mount_path


def _edits(world: World, body: dict[str, Any]) -> dict[str, Any]:
    """The PATCH body with a templateId's settings under it, applied once (no link kept): image, args, disk,
    ports, env (merged per key with the body's, replacing the pod's) and registry; never its mounts."""
    if "templateId" not in body:  # "" is an id too, and an unknown one (404)
        return body
    template = _pod_template(world, body["templateId"])
    merged = {
        "image": template.image,
        "args": template.args,
        "disk": template.disk,
        "ports": list(template.ports),
        **body,
        "env": {**template.env, **(body.get("env") or {})},
    }
    if template.registry is not None and template.source is None:
        merged.setdefault("registry", template.registry)
    return merged


def update_pod(call: Call) -> Answer:
    from podtui.core.pod_spec import check_image  # Docker's reference grammar, as RunPod's backend checks

    body = json_body(call, UPDATE_POD, partial_mount)
    world = call.world
    with world.lock:
        pod = world.get(call.params["id"])
        body = _edits(world, body)
        _common_rules(body)
        if "image" in body:
            try:
                check_image(body["image"])
            except ValueError:
                raise refuse(400, f"invalid image name {body['image']!r}") from None
        mounts = body.get("mounts") or {}
        _check_mounts(pod, mounts)
        before = (pod.image, pod.docker_args, dict(pod.env), pod.ports, pod.container_disk_gb)
        after = (
            str(body.get("image", pod.image)),
            str(body.get("args", pod.docker_args)),
            dict(body["env"]) if "env" in body else dict(pod.env),  # PATCH replaces the whole env
            ",".join(body["ports"]) if "ports" in body else pod.ports,
            int(body.get("disk", pod.container_disk_gb)),
        )
        mount_before = (pod.volume_gb, pod.volume_mount_path)
        mount_after = _mount_after(pod, mounts)
        # a running pod restarts to take them, a moved or grown mount included (it is mounted again), as
        # docs/runpod-facts.md#editing-a-pod says; a stopped one takes them on its next start
        restart = (after != before or mount_after != mount_before) and pod.status == "RUNNING"
        locked = bool(body.get("locked", pod.locked))
        if restart and locked:
            raise refuse(409, f"pod {pod.id} is locked: unlock it to change what needs a restart")
        pod.volume_gb, pod.volume_mount_path = mount_after
        pod.name = body.get("name", pod.name)
        pod.image, pod.docker_args, pod.env, pod.ports, pod.container_disk_gb = after
        pod.locked = locked
        world.changed()
    if restart:  # what RunPod's console edit does: the container is made again to take the change
        world.restart(pod.id, "Restarted to apply an edit", new_image=after[0] != before[0])
    with world.lock:
        return json_answer(200, pod_v2.record(world, world.get(pod.id)))
