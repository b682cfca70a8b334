"""PATCH /v2/pods/{id} as the spec's Mounts and UpdatePodRequest say (docs/runpod-facts.md#editing-a-pod): the mount
rules, name and lock at once, a running pod restarted to take a new image, args, env, ports, disk or mount (its
logs say so), a template applied once, and a restart that passes through STARTING for a few simulated seconds where the
world is so made. Every refusal changes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

TRAIN, IDLE, STOPPED, STARTING = DEMO_IDS["train"], DEMO_IDS["idle"], DEMO_IDS["stopped"], DEMO_IDS["starting"]
R3090 = "NVIDIA GeForce RTX 3090"
RESTART_S = 6.0  # the slow_restarts fixture's


def problem(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/problem+json"
    detail: str = r.json()["detail"]
    return detail


def pod(v2: httpx.Client, pod_id: str) -> dict[str, Any]:
    r = v2.get(f"/v2/pods/{pod_id}")
    assert r.status_code == 200, r.text
    found: dict[str, Any] = r.json()
    return found


def system_log(sim: SimApiServer, pod_id: str) -> list[str]:
    world = sim.world
    return [e.line for e in world.logs.entries(world.pods[pod_id], world.clock.now()) if e.source == "system"]


def mountless(v2: httpx.Client) -> str:
    body = {"name": "bare", "image": "runpod/pytorch:2.4.0", "gpu": {"id": R3090}, "cloud": "COMMUNITY"}
    r = v2.post("/v2/pods", json=body)
    assert r.status_code == 201 and r.json()["mounts"] == {}, r.text
    made: str = r.json()["id"]
    return made


@pytest.mark.parametrize("mounts", [None, {}])
def test_no_mounts_or_empty_leaves_them(v2: httpx.Client, sim: SimApiServer, mounts: dict[str, Any] | None) -> None:
    sim.world.clock.advance(60)
    before = pod(v2, TRAIN)["mounts"]
    body: dict[str, Any] = {"name": "kept"} | ({} if mounts is None else {"mounts": mounts})
    assert v2.patch(f"/v2/pods/{TRAIN}", json=body).json()["mounts"] == before
    assert sim.world.pods[TRAIN].started_at != sim.world.clock.now()  # nothing to remount: no restart


def test_a_persistent_mount_grows_and_moves(v2: httpx.Client) -> None:
    r = v2.patch(f"/v2/pods/{TRAIN}", json={"mounts": {"persistent": {"size": 80, "path": "/data"}}})
    assert r.status_code == 200 and r.json()["mounts"] == {"persistent": {"size": 80, "path": "/data"}}


def test_a_network_mount_moves_but_keeps_its_volume(v2: httpx.Client, sim: SimApiServer) -> None:
    sim.world.clock.advance(60)
    assert pod(v2, IDLE)["status"] == "RUNNING"
    mount = {"network": [{"volumeId": "models-vol", "path": "/models"}]}
    r = v2.patch(f"/v2/pods/{IDLE}", json={"mounts": mount})
    assert r.status_code == 200 and r.json()["mounts"] == mount
    # mounted again at its new path: the running pod's container restarts (docs/runpod-facts.md#editing-a-pod)
    assert sim.world.pods[IDLE].started_at == sim.world.clock.now()
    assert system_log(sim, IDLE)[-2:] == ["restart container", "start container"]


@pytest.mark.parametrize(
    ("target", "mounts", "status", "said"),
    [
        (IDLE, {"network": []}, 400, "cannot be empty"),
        (TRAIN, {"network": []}, 400, "cannot be empty"),
        (IDLE, {"persistent": {"size": 20, "path": "/w"}}, 400, "created with a network mount"),
        (TRAIN, {"network": [{"volumeId": "models-vol", "path": "/w"}]}, 400, "created with a persistent mount"),
        (IDLE, {"network": [{"volumeId": "d8k2x9m4qa", "path": "/w"}]}, 400, "volumeId cannot change"),
        (TRAIN, {"persistent": {"size": 49, "path": "/workspace"}}, 400, "cannot shrink"),
        (TRAIN, {"persistent": {"size": 60}}, 422, ""),  # partial entries
        (IDLE, {"network": [{"path": "/w"}]}, 422, ""),
        (TRAIN, {"persistent": {"size": 60, "path": "/w"}, "network": [{"volumeId": "v", "path": "/x"}]}, 400, ""),
        (TRAIN, {"volume": {"size": 60}}, 400, "schema"),
    ],
)
def test_the_mount_rules(v2: httpx.Client, target: str, mounts: dict[str, Any], status: int, said: str) -> None:
    before = pod(v2, target)
    assert said in problem(v2.patch(f"/v2/pods/{target}", json={"name": "changed", "mounts": mounts}), status)
    after = pod(v2, target)
    assert (after["name"], after["mounts"]) == (before["name"], before["mounts"])


def test_no_mount_can_be_added_to_a_pod_made_without_one(v2: httpx.Client) -> None:
    bare = mountless(v2)
    for mounts in ({"persistent": {"size": 20, "path": "/w"}}, {"network": [{"volumeId": "models-vol", "path": "/w"}]}):
        assert "created with no mount" in problem(v2.patch(f"/v2/pods/{bare}", json={"mounts": mounts}), 400)
    assert pod(v2, bare)["mounts"] == {}


def test_name_and_lock_change_at_once_without_a_restart(v2: httpx.Client, sim: SimApiServer) -> None:
    started = sim.world.pods[TRAIN].started_at
    r = v2.patch(f"/v2/pods/{TRAIN}", json={"name": "renamed", "locked": True})
    assert r.status_code == 200 and (r.json()["name"], r.json()["locked"]) == ("renamed", True)
    assert r.json()["actions"] == ["terminate"] and sim.world.pods[TRAIN].started_at == started
    assert "restart container" not in system_log(sim, TRAIN)


def test_an_edit_restarts_a_running_pod(v2: httpx.Client, sim: SimApiServer) -> None:
    sim.world.clock.advance(60)
    r = v2.patch(f"/v2/pods/{TRAIN}", json={"image": "runpod/pytorch:2.4.0", "env": {"ONLY": "this"}})
    assert r.status_code == 200, r.text
    edited = r.json()
    assert edited["image"] == "runpod/pytorch:2.4.0" and edited["env"] == {"ONLY": "this"}
    assert edited["runtime"]["uptime"] == 0 and sim.world.pods[TRAIN].started_at == sim.world.clock.now()
    log = system_log(sim, TRAIN)
    assert log[-5:] == [  # the new image pulled, the container made again
        "restart container",
        "pulling image runpod/pytorch:2.4.0",
        "Status: Downloaded newer image for runpod/pytorch:2.4.0",
        "create container runpod/pytorch:2.4.0",
        "start container",
    ]
    assert "Restarted to apply an edit" in sim.world.pods[TRAIN].last_status_change


@pytest.mark.parametrize(
    "change",
    [
        {"args": "--steps 10"},
        {"ports": ["22/tcp"]},
        {"disk": 25},
        {"env": {"A": "1"}},
        {"mounts": {"persistent": {"size": 50, "path": "/data"}}},  # moved: mounted again
        {"mounts": {"persistent": {"size": 60, "path": "/workspace"}}},  # grown
    ],
)
def test_each_container_setting_restarts_it(v2: httpx.Client, sim: SimApiServer, change: dict[str, Any]) -> None:
    sim.world.clock.advance(60)
    assert v2.patch(f"/v2/pods/{TRAIN}", json=change).status_code == 200
    assert sim.world.pods[TRAIN].started_at == sim.world.clock.now()
    assert system_log(sim, TRAIN)[-2:] == ["restart container", "start container"]


def test_the_same_values_or_a_stopped_pod_do_not_restart(v2: httpx.Client, sim: SimApiServer) -> None:
    sim.world.clock.advance(60)
    train = sim.world.pods[TRAIN]
    same = {"image": train.image, "args": train.docker_args, "env": dict(train.env), "disk": train.container_disk_gb}
    same["mounts"] = pod(v2, TRAIN)["mounts"]
    assert same["mounts"] == {"persistent": {"size": 50, "path": "/workspace"}}
    assert v2.patch(f"/v2/pods/{TRAIN}", json=same).status_code == 200
    assert train.started_at != sim.world.clock.now()
    r = v2.patch(f"/v2/pods/{STOPPED}", json={"image": "runpod/pytorch:2.4.0"})
    assert r.status_code == 200 and r.json()["status"] == "EXITED" and r.json()["image"] == "runpod/pytorch:2.4.0"


def test_a_locked_running_pod_is_not_restarted_by_an_edit(v2: httpx.Client, sim: SimApiServer) -> None:
    v2.patch(f"/v2/pods/{TRAIN}", json={"locked": True})
    before = pod(v2, TRAIN)
    assert "locked" in problem(v2.patch(f"/v2/pods/{TRAIN}", json={"image": "runpod/pytorch:2.4.0"}), 409)
    moved = {"mounts": {"persistent": {"size": 50, "path": "/data"}}}  # a remount is a restart too
    assert "locked" in problem(v2.patch(f"/v2/pods/{TRAIN}", json=moved), 409)
    assert (pod(v2, TRAIN)["image"], pod(v2, TRAIN)["mounts"]) == (before["image"], before["mounts"])
    # unlocking in the same edit lets it through
    r = v2.patch(f"/v2/pods/{TRAIN}", json={"image": "runpod/pytorch:2.4.0", "locked": False})
    assert r.status_code == 200 and r.json()["image"] == "runpod/pytorch:2.4.0" and r.json()["locked"] is False


def test_a_template_is_applied_once(v2: httpx.Client, sim: SimApiServer) -> None:
    r = v2.patch(f"/v2/pods/{TRAIN}", json={"templateId": "vs3k8p1q6n", "env": {"EXTRA": "1"}, "disk": 44})
    assert r.status_code == 200, r.text
    edited = r.json()
    assert edited["image"] == "vllm/vllm-openai:v0.6.3" and edited["args"].startswith("--model Qwen")
    assert edited["ports"] == ["8000/http", "22/tcp"] and edited["disk"] == 44  # the body's over the template's
    assert edited["env"] == {"HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}", "EXTRA": "1"}  # replaces the pod's env
    assert edited["mounts"] == {"persistent": {"size": 50, "path": "/workspace"}}  # mounts never applied
    assert edited["template"] is None  # no link kept
    assert "nosuch" in problem(v2.patch(f"/v2/pods/{TRAIN}", json={"templateId": "nosuch"}), 404)
    # "" is an id like any other, and no template has it: 404, nothing changed
    assert "template '' not found" in problem(v2.patch(f"/v2/pods/{TRAIN}", json={"templateId": "", "disk": 9}), 404)
    assert pod(v2, TRAIN)["disk"] == 44
    assert "serverless" in problem(v2.patch(f"/v2/pods/{TRAIN}", json={"templateId": "runpod-worker-vllm"}), 422)


def test_a_restart_passes_through_starting(slow_restarts: SimApiServer) -> None:
    sim = slow_restarts
    with httpx.Client(base_url=sim.url, headers={"Authorization": f"Bearer {sim.api_key}"}, timeout=10) as v2:
        sim.world.clock.advance(60)
        restarted = v2.post(f"/v2/pods/{TRAIN}/action", json={"action": "restart"})
        assert restarted.status_code == 200, restarted.text
        now = restarted.json()
        assert now["status"] == "STARTING" and now["runtime"] is None and now["ssh"]["proxy"] is None
        assert now["actions"] == ["stop", "terminate"]
        assert "restart" in problem(v2.post(f"/v2/pods/{TRAIN}/action", json={"action": "restart"}), 409)
        sim.world.clock.advance(RESTART_S / 2)
        assert pod(v2, TRAIN)["status"] == "STARTING"
        sim.world.clock.advance(RESTART_S / 2)
        up = pod(v2, TRAIN)
        assert up["status"] == "RUNNING" and up["runtime"]["uptime"] == 0
        assert system_log(sim, TRAIN)[-2:] == ["restart container", "start container"]
        # an edit restarts the same way
        sim.world.clock.advance(60)
        assert v2.patch(f"/v2/pods/{TRAIN}", json={"args": "--resume"}).json()["status"] == "STARTING"
        sim.world.clock.advance(RESTART_S)
        assert pod(v2, TRAIN)["status"] == "RUNNING"
        # stopped while it restarts: it stops
        v2.post(f"/v2/pods/{TRAIN}/action", json={"action": "restart"})
        assert v2.post(f"/v2/pods/{TRAIN}/action", json={"action": "stop"}).json()["status"] == "EXITED"
        sim.world.clock.advance(RESTART_S)
        assert pod(v2, TRAIN)["status"] == "EXITED"
