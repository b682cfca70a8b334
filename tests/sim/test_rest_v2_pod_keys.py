"""Each simulated pod's own API key (RUNPOD_API_KEY in the pod, docs/runpod-facts.md#ssh-direct): it opens that pod
and nothing else, over REST v2 and over GraphQL (legacy runpodctl in pods), it ends with the pod, and it is in
the pod's environment but never in a log or the API's view of the pod."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from podtui.sim.demo import demo_world
from podtui.sim.podshell import PodMachine
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

TRAIN, IDLE, STOPPED = DEMO_IDS["train"], DEMO_IDS["idle"], DEMO_IDS["stopped"]


@pytest.fixture
def full_graphql(sim: SimApiServer) -> Iterator[SimApiServer]:
    """The demo world behind a second server whose GraphQL is whole (the suite may run with balance-only)."""
    with SimApiServer(sim.world, api_key=sim.api_key, graphql_mode="full") as server:
        yield server


def as_pod(sim: SimApiServer, pod_id: str) -> httpx.Client:
    key = sim.world.pods[pod_id].api_key
    return httpx.Client(base_url=sim.url, headers={"Authorization": f"Bearer {key}"}, timeout=10)


def forbidden(r: httpx.Response) -> bool:
    return r.status_code == 403 and r.headers["content-type"] == "application/problem+json"


def test_every_pod_has_a_key_of_its_own(sim: SimApiServer) -> None:
    keys = [p.api_key for p in sim.world.pods.values()]
    assert len(set(keys)) == len(keys) and all(len(k) >= 40 for k in keys) and sim.api_key not in keys
    assert all(k not in repr(p) for p, k in zip(sim.world.pods.values(), keys, strict=True))


def test_a_pods_key_acts_on_its_own_pod(sim: SimApiServer) -> None:
    with as_pod(sim, TRAIN) as own:
        assert own.get(f"/v2/pods/{TRAIN}").json()["id"] == TRAIN
        stopped = own.post(f"/v2/pods/{TRAIN}/action", json={"action": "stop"})
        assert stopped.status_code == 200 and stopped.json()["status"] == "EXITED"
        assert own.post(f"/v2/pods/{TRAIN}/action", json={"action": "start"}).status_code == 200
        assert own.delete(f"/v2/pods/{TRAIN}").status_code == 204
        assert own.get(f"/v2/pods/{TRAIN}").status_code == 401  # the pod is gone, and its key with it


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v2/pods", None),
        ("GET", f"/v2/pods/{IDLE}", None),
        ("POST", f"/v2/pods/{IDLE}/action", {"action": "stop"}),
        ("DELETE", f"/v2/pods/{IDLE}", None),
        ("PATCH", f"/v2/pods/{TRAIN}", {"name": "mine"}),  # its own pod, but not a change it may make
        ("POST", "/v2/pods", {"name": "x", "image": "a/b", "gpu": {"id": "NVIDIA GeForce RTX 3090"}}),
        ("GET", "/v2/account/ssh-keys", None),
        ("PUT", "/v2/account/ssh-keys", {"keys": []}),
        ("GET", "/v2/catalog/gpus", None),
    ],
)
def test_a_pods_key_may_do_nothing_else(sim: SimApiServer, method: str, path: str, body: Any) -> None:
    with as_pod(sim, TRAIN) as own:
        r = own.request(method, path, json=body)
    assert forbidden(r), (r.status_code, r.text)
    assert "RateLimit" in r.headers
    assert sim.world.pods[IDLE].status == "RUNNING" and sim.world.pods[TRAIN].name == "llama-lora-3090"


def test_graphql_lets_a_pods_key_read_and_stop_its_own_pod_only(full_graphql: SimApiServer) -> None:
    sim = full_graphql
    with as_pod(sim, TRAIN) as own:
        read = own.post("/graphql", json={"query": f'{{ pod(input: {{podId: "{TRAIN}"}}) {{ id desiredStatus }} }}'})
        assert read.json()["data"]["pod"] == {"id": TRAIN, "desiredStatus": "RUNNING"}
        for query in (
            f'mutation {{ podStop(input: {{podId: "{IDLE}"}}) {{ id }} }}',
            f'mutation {{ podTerminate(input: {{podId: "{TRAIN}"}}) }}',
            "query { myself { id clientBalance } }",
            "query { gpuTypes { id } }",
        ):
            assert forbidden(own.post("/graphql", json={"query": query})), query
        stop = own.post("/graphql", json={"query": f'mutation {{ podStop(input: {{podId: "{TRAIN}"}}) {{ id }} }}'})
        assert stop.json() == {"data": {"podStop": {"id": TRAIN}}}
    assert sim.world.pods[TRAIN].status == "EXITED" and sim.world.pods[IDLE].status == "RUNNING"


def test_a_pods_environment_has_its_key_the_api_and_its_id(sim: SimApiServer, tmp_path: Path) -> None:
    pod = sim.world.pods[STOPPED]  # stopped: nothing is started to build its machine
    env = PodMachine(tmp_path, pod, sim.url, sim.api_key, isolated=False).environment()
    assert env["RUNPOD_API_KEY"] == pod.api_key == env["PODTUI_SIM_KEY"]
    assert env["RUNPOD_POD_ID"] == STOPPED
    assert env["RUNPOD_API_BASE_URL"] == sim.url == env["PODTUI_SIM_API"]
    assert sim.api_key not in env.values()  # the account's key stays out of the pod


def test_no_key_is_logged(sim: SimApiServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with as_pod(sim, TRAIN) as own:
        own.get(f"/v2/pods/{TRAIN}")
        own.get(f"/v2/pods/{IDLE}")
        own.post("/graphql", json={"query": "query { myself { id } }"})
    httpx.get(f"{sim.url}/v2/pods", headers={"Authorization": f"Bearer {sim.api_key}"})
    assert "sim-api" in caplog.text  # the requests were logged ...
    for key in (sim.api_key, *(p.api_key for p in sim.world.pods.values())):
        assert key not in caplog.text  # ... without a key


def test_the_api_view_of_a_pod_holds_no_key(sim: SimApiServer) -> None:
    with httpx.Client(base_url=sim.url, headers={"Authorization": f"Bearer {sim.api_key}"}) as http:
        text = http.get("/v2/pods").text + http.post("/graphql", json={"query": "{ myself { id } }"}).text
    assert not any(p.api_key in text for p in sim.world.pods.values())


def test_a_world_loaded_again_keeps_its_pods_keys() -> None:
    world = demo_world()
    pod = world.pods[TRAIN]
    key = pod.api_key
    again = demo_world()
    pod.status = "RUNNING"
    again.pods.clear()
    again.add(pod)  # as a saved world is added back, key and all
    assert again.pod_for_key(key) is pod and again.pod_for_key("rpa_pod_nothing") is None
