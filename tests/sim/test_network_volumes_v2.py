"""The simulator's network volumes over REST v2 (docs/runpod-facts.md#network-volumes): listed, made, read, grown,
renamed and deleted as the spec says; every refusal in words, and nothing changed by one; pods on a volume run in
its data centre; volumes bill from the balance by the second."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from podtui.sim.demo import demo_world
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

R3090 = "NVIDIA GeForce RTX 3090"
MODELS = "models-vol"  # the demo's volume eval-a100 mounts, in US-TX-3


def problem(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/problem+json"
    detail: str = r.json()["detail"]
    return detail


def volumes(v2: httpx.Client) -> dict[str, dict[str, Any]]:
    r = v2.get("/v2/network-volumes")
    assert r.status_code == 200, r.text
    return {v["id"]: v for v in r.json()["networkVolumes"]}


def test_the_demo_accounts_volumes_are_listed(v2: httpx.Client) -> None:
    found = volumes(v2)
    assert found[MODELS] == {"id": MODELS, "name": "models", "size": 50, "dataCenter": "US-TX-3", "type": "STANDARD"}
    assert {v["name"] for v in found.values()} == {"models", "datasets", "checkpoints"}
    assert v2.get(f"/v2/network-volumes/{MODELS}").json() == found[MODELS]


def test_a_volume_is_made_read_grown_renamed_and_deleted(v2: httpx.Client, sim: SimApiServer) -> None:
    r = v2.post("/v2/network-volumes", json={"name": "scratch", "size": 10, "dataCenter": "US-KS-2"})
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["type"] == "HIGH_PERFORMANCE"  # the data centre's default tier when none is asked
    assert len(made["id"]) == 10 and volumes(v2)[made["id"]] == made
    grown = v2.patch(f"/v2/network-volumes/{made['id']}", json={"size": 4096, "name": "bigger"})
    assert grown.status_code == 200 and (grown.json()["size"], grown.json()["name"]) == (4096, "bigger")
    same = v2.patch(f"/v2/network-volumes/{made['id']}", json={"size": 4096})
    assert same.status_code == 200  # the same size is not a shrink
    assert v2.delete(f"/v2/network-volumes/{made['id']}").status_code == 204
    assert made["id"] not in volumes(v2) and made["id"] not in sim.world.volumes
    assert "not found" in problem(v2.get(f"/v2/network-volumes/{made['id']}"), 404)


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"name": "x", "size": 10, "dataCenter": "EU-XX-9"}, 400, "no data center 'EU-XX-9'"),
        ({"name": "x", "size": 10, "dataCenter": "CA-MTL-1"}, 400, "does not offer network volumes"),
        ({"name": "x", "size": 10, "dataCenter": "EU-RO-1", "type": "HIGH_PERFORMANCE"}, 400, "offers STANDARD"),
        ({"name": "x", "size": 9, "dataCenter": "EU-RO-1"}, 400, "schema"),
        ({"name": "x", "size": 4097, "dataCenter": "EU-RO-1"}, 400, "schema"),
        ({"name": "", "size": 10, "dataCenter": "EU-RO-1"}, 400, "schema"),
        ({"name": "x", "size": 10}, 400, "schema"),
        ({"name": "x", "size": 10.5, "dataCenter": "EU-RO-1"}, 400, "schema"),
        ({"name": "x", "size": 10, "dataCenter": "EU-RO-1", "type": "FAST"}, 400, "schema"),
        ({"name": "x", "size": 10, "dataCenter": "EU-RO-1", "dataCenterId": "EU-RO-1"}, 400, "schema"),
    ],
)
def test_a_create_runpod_refuses_changes_nothing(
    v2: httpx.Client, sim: SimApiServer, body: dict[str, Any], status: int, said: str
) -> None:
    before = volumes(v2)
    r = v2.post("/v2/network-volumes", json=body)
    assert said in problem(r, status)
    if said == "schema":
        assert r.json()["errors"], r.text  # each fault named
    assert volumes(v2) == before


def test_an_unknown_field_is_named(v2: httpx.Client) -> None:
    r = v2.post("/v2/network-volumes", json={"name": "x", "size": 10, "dataCenter": "EU-RO-1", "bogus": 1})
    problem(r, 400)
    assert r.json()["errors"] == ["$: additional properties 'bogus' not allowed"]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"size": 49}, "cannot shrink"),
        ({}, "schema"),  # minProperties 1
        ({"size": 5000}, "schema"),
        ({"name": ""}, "schema"),
        ({"dataCenter": "EU-RO-1"}, "schema"),  # fixed when made
        ({"type": "HIGH_PERFORMANCE"}, "schema"),
    ],
)
def test_an_update_runpod_refuses_changes_nothing(v2: httpx.Client, body: dict[str, Any], said: str) -> None:
    before = volumes(v2)[MODELS]
    assert said in problem(v2.patch(f"/v2/network-volumes/{MODELS}", json=body), 400)
    assert volumes(v2)[MODELS] == before


def test_an_unknown_volume_is_404_everywhere(v2: httpx.Client) -> None:
    for method, kw in (("GET", {}), ("PATCH", {"json": {"name": "y"}}), ("DELETE", {})):
        assert "nosuchvol" in problem(v2.request(method, "/v2/network-volumes/nosuchvol", **kw), 404)


def test_a_volume_a_pod_mounts_is_not_deleted_until_the_pod_is_gone(v2: httpx.Client, sim: SimApiServer) -> None:
    said = problem(v2.delete(f"/v2/network-volumes/{MODELS}"), 409)
    assert "eval-a100" in said and DEMO_IDS["idle"] in said  # names the pod, in words
    v2.post(f"/v2/pods/{DEMO_IDS['idle']}/action", json={"action": "stop"})
    problem(v2.delete(f"/v2/network-volumes/{MODELS}"), 409)  # a stopped pod still has it
    assert v2.delete(f"/v2/pods/{DEMO_IDS['idle']}").status_code == 204
    assert v2.delete(f"/v2/network-volumes/{MODELS}").status_code == 204
    assert MODELS not in volumes(v2)


def create(v2: httpx.Client, **body: Any) -> httpx.Response:
    base: dict[str, Any] = {"name": "on-volume", "image": "runpod/pytorch:2.4.0", "gpu": {"id": R3090}}
    return v2.post("/v2/pods", json=base | body)


def test_a_pod_on_a_volume_runs_in_its_data_centre(v2: httpx.Client, sim: SimApiServer) -> None:
    datasets = next(v for v in volumes(v2).values() if v["name"] == "datasets")  # EU-RO-1
    mount = {"network": [{"volumeId": datasets["id"], "path": "/data"}]}
    r = create(v2, mounts=mount, cloud="COMMUNITY")
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["dataCenterId"] == "EU-RO-1" and made["mounts"] == mount
    assert v2.get(f"/v2/pods/{made['id']}").json()["mounts"] == mount
    # a preference that includes the volume's data centre is kept to it
    again = create(v2, mounts=mount, cloud="COMMUNITY", dataCenterIds=["EU-SE-1", "EU-RO-1"])
    assert again.status_code == 201 and again.json()["dataCenterId"] == "EU-RO-1"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"dataCenterIds": ["EU-SE-1"]}, "EU-RO-1, which dataCenterIds leaves out"),
        ({"mounts": {"network": [{"volumeId": "nosuchvol", "path": "/d"}]}}, "'nosuchvol' not found"),
        ({"mounts": {"network": []}}, "cannot be empty"),
        ({"dataCenterIds": ["MOON-1"]}, "no data center 'MOON-1'"),
    ],
)
def test_a_pod_that_cannot_have_its_volume_is_refused(
    v2: httpx.Client, sim: SimApiServer, body: dict[str, Any], said: str
) -> None:
    datasets = next(v for v in volumes(v2).values() if v["name"] == "datasets")
    mounts = {"network": [{"volumeId": datasets["id"], "path": "/data"}]}
    before = set(sim.world.pods)
    assert said in problem(create(v2, **({"mounts": mounts} | body)), 400)
    assert set(sim.world.pods) == before


def deploy(sim: SimApiServer, **fields: str) -> httpx.Response:
    """GraphQL's podFindAndDeployOnDemand with `fields` besides a GPU, an image and a name."""
    spec = {"name": "gql", "imageName": "runpod/pytorch:2.4.0", "gpuTypeId": R3090, "cloudType": "COMMUNITY"}
    given = ", ".join(f"{k}: {json.dumps(v)}" for k, v in (spec | fields).items()).replace('"COMMUNITY"', "COMMUNITY")
    query = f"mutation {{ podFindAndDeployOnDemand(input: {{{given}}}) {{ id }} }}"
    headers = {"Authorization": f"Bearer {sim.api_key}"}
    return httpx.post(f"{sim.url}/graphql", json={"query": query}, headers=headers, timeout=10)


def test_graphqls_create_keeps_the_same_volume_rules() -> None:
    sim = SimApiServer(demo_world(), graphql_mode="full").start()
    try:
        world = sim.world
        datasets = next(v for v in world.volumes.values() if v.name == "datasets")  # EU-RO-1
        before = set(world.pods)
        for fields, said in (
            ({"networkVolumeId": "nosuchvol"}, "'nosuchvol' not found"),
            ({"networkVolumeId": datasets.id, "dataCenterId": "EU-SE-1"}, "EU-RO-1, which dataCenterId leaves out"),
        ):
            errors = deploy(sim, **fields).json()["errors"]
            assert said in errors[0]["message"], errors
        assert set(world.pods) == before  # no pod made by a refusal
        made = deploy(sim, networkVolumeId=datasets.id).json()["data"]["podFindAndDeployOnDemand"]
        pod = world.pods[made["id"]]
        assert (pod.network_volume, pod.location) == (datasets.id, "EU-RO-1")  # in the volume's data centre
    finally:
        sim.stop()


def test_volumes_bill_from_the_balance_by_the_second(sim: SimApiServer) -> None:
    world = sim.world
    for pod in list(world.pods):
        world.terminate(pod)
    world.clock.advance(60)
    world.advance()
    start = world.balance
    gb = sum(v.size_gb for v in world.volumes.values())
    world.clock.advance(3600)
    world.advance()
    assert start - world.balance == pytest.approx(gb * 0.07 / 730)  # $0.07/GB/month, a month of 730 h
    assert world.spend_per_hr() == 0  # currentSpendPerHr is the pods' burn


def test_at_zero_a_pod_on_a_volume_is_stopped_and_keeps_it(v2: httpx.Client, sim: SimApiServer) -> None:
    sim.world.set_balance(0.001)
    sim.world.clock.advance(60)
    pods = {p["id"]: p for p in v2.get("/v2/pods").json()["pods"]}
    idle = pods[DEMO_IDS["idle"]]
    assert idle["status"] == "EXITED" and idle["mounts"] == {"network": [{"volumeId": MODELS, "path": "/workspace"}]}
    assert pods.get(DEMO_IDS["train"], {"status": "TERMINATED"})["status"] == "TERMINATED"  # no volume: gone
    assert MODELS in volumes(v2)
