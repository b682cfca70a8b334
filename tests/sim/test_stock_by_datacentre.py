"""GPU stock per cloud and data centre (docs/runpod-facts.md#data-centres-and-stock): the catalogue's dataCenters,
a create placed only where it may go (NO_STOCK when none of them has the GPUs), a resume needing GPUs in its own
data centre, stock running out and coming back as other tenants' pods come and go (the same way for the same
seed), the no_capacity fault, and 402 when the balance cannot cover a create or a start."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from podtui.sim.gpu_market import NO_STOCK, STOCK_TICK_S
from podtui.sim.server import SimApiServer
from podtui.sim.world import RESUME_NO_GPUS, World
from tests.helpers.sim import DEMO_IDS

R3090, R4090, A5000 = "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090", "NVIDIA RTX A5000"
IMAGE = "runpod/pytorch:2.4.0"


def problem(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/problem+json"
    detail: str = r.json()["detail"]
    return detail


def create(v2: httpx.Client, gpu: str = R4090, count: int = 1, **more: Any) -> httpx.Response:
    body = {"name": "x", "image": IMAGE, "gpu": {"id": gpu, "count": count}, "cloud": "COMMUNITY"}
    return v2.post("/v2/pods", json=body | more)


def catalogue(v2: httpx.Client, count: int = 1, cloud: str = "COMMUNITY") -> dict[str, dict[str, Any]]:
    params = {"include": "AVAILABILITY", "product": "POD", "count": count, "cloud": cloud}
    r = v2.get("/v2/catalog/gpus", params=params)
    assert r.status_code == 200, r.text
    return {g["id"]: g for g in r.json()["gpus"]}


def test_the_catalogue_gives_stock_per_data_centre(v2: httpx.Client) -> None:
    r4090 = catalogue(v2)[R4090]
    assert r4090["dataCenters"] == [
        {"id": "EU-RO-1", "name": "EU Romania 1", "availability": "HIGH"},
        {"id": "EU-SE-1", "name": "EU Sweden 1", "availability": "LOW"},
    ]
    assert "dataCenters" not in catalogue(v2, cloud="SECURE")[R4090]  # to be had nowhere: left out
    assert catalogue(v2, count=4)[R4090]["dataCenters"][1]["availability"] == "NONE"  # 2 free in Sweden
    params = {"include": "AVAILABILITY", "product": "POD", "cloud": "COMMUNITY", "countryCodes": "SE"}
    only = {g["id"]: g for g in v2.get("/v2/catalog/gpus", params=params).json()["gpus"]}[R4090]
    assert [d["id"] for d in only["dataCenters"]] == ["EU-SE-1"] and only["availability"] == "LOW"


def test_a_create_lands_where_it_may_and_nowhere_else(v2: httpx.Client, sim: SimApiServer) -> None:
    made = create(v2, count=2, dataCenterIds=["EU-SE-1", "EU-RO-1"])
    assert made.status_code == 201 and made.json()["dataCenterId"] == "EU-SE-1", made.text  # the first that has it
    assert sim.world.gpu_types[R4090].free_in("COMMUNITY", "EU-SE-1") == 0
    assert NO_STOCK in problem(create(v2, dataCenterIds=["EU-SE-1"]), 400)  # none left there
    assert NO_STOCK in problem(create(v2, dataCenterIds=["US-KS-2"]), 400)  # never stocked there
    elsewhere = create(v2, dataCenterIds=["EU-SE-1", "EU-RO-1"])
    assert elsewhere.status_code == 201 and elsewhere.json()["dataCenterId"] == "EU-RO-1"


def test_a_drained_data_centre_recovers_as_time_passes(v2: httpx.Client, sim: SimApiServer) -> None:
    assert create(v2, count=8, dataCenterIds=["EU-RO-1"]).status_code == 201
    gpu = sim.world.gpu_types[R4090]
    assert gpu.free_in("COMMUNITY", "EU-RO-1") == 0
    problem(create(v2, dataCenterIds=["EU-RO-1"]), 400)
    sim.world.clock.advance(STOCK_TICK_S)  # other tenants' pods end
    assert create(v2, dataCenterIds=["EU-RO-1"]).status_code == 201
    sim.world.clock.advance(100 * STOCK_TICK_S)  # long after: back where it usually is
    sim.world.advance()
    assert gpu.free_in("COMMUNITY", "EU-RO-1") == 8 and gpu.free_in("COMMUNITY", "EU-SE-1") == 2


def test_the_same_seed_moves_the_market_the_same_way() -> None:
    def run(seed: int) -> list[int]:
        world = World(balance=1000, spend_limit=1000, seed=seed)
        spec = {"gpuTypeId": R3090, "gpuCount": 8, "cloudType": "COMMUNITY", "imageName": IMAGE}
        for _ in range(3):
            world.create(spec | {"dataCenterIds": ["EU-RO-1"]})
        seen = []
        for _ in range(6):
            world.clock.advance(STOCK_TICK_S)
            world.advance()
            seen.append(world.gpu_types[R3090].free_in("COMMUNITY", "EU-RO-1"))
        return seen

    first = run(7)
    assert first == run(7)
    assert first[0] > 0 and first == sorted(first) and first[-1] <= 24  # up toward the usual 24, never past it
    assert any(run(seed) != first for seed in range(8, 14))  # another world's tenants come and go otherwise


def test_a_resume_needs_gpus_in_its_own_data_centre(v2: httpx.Client, sim: SimApiServer) -> None:
    made = create(v2, count=2, dataCenterIds=["EU-SE-1"]).json()
    assert v2.post(f"/v2/pods/{made['id']}/action", json={"action": "stop"}).status_code == 200
    other = create(v2, count=2, dataCenterIds=["EU-SE-1"])  # the two it gave back, rented again
    assert other.status_code == 201
    assert sim.world.gpu_types[R4090].free["COMMUNITY"] >= 2  # free elsewhere does not help
    assert RESUME_NO_GPUS in problem(v2.post(f"/v2/pods/{made['id']}/action", json={"action": "start"}), 400)
    assert v2.get(f"/v2/pods/{made['id']}").json()["status"] == "EXITED"
    assert v2.delete(f"/v2/pods/{other.json()['id']}").status_code == 204
    started = v2.post(f"/v2/pods/{made['id']}/action", json={"action": "start"})
    assert started.status_code == 200 and started.json()["dataCenterId"] == "EU-SE-1"


@pytest.mark.parametrize(
    ("value", "refused", "placed"),
    [
        (None, [R4090, R3090], []),
        (R4090, [R4090], [R3090]),
        (f"{R4090}@EU-RO-1", [], [R4090]),  # Sweden still has some
        ("@EU-RO-1,@EU-SE-1", [R4090], []),
    ],
)
def test_no_capacity_refuses_creates(
    v2: httpx.Client, sim: SimApiServer, value: str | None, refused: list[str], placed: list[str]
) -> None:
    sim.faults.add("no_capacity", value, only="POST /v2/pods")
    for gpu in refused:
        assert NO_STOCK in problem(create(v2, gpu=gpu, dataCenterIds=["EU-RO-1", "EU-SE-1"]), 400)
    for gpu in placed:
        r = create(v2, gpu=gpu, dataCenterIds=["EU-RO-1", "EU-SE-1"])
        assert r.status_code == 201, r.text
        if value and "@EU-RO-1" in value:
            assert r.json()["dataCenterId"] == "EU-SE-1"
    assert catalogue(v2)[R4090]["availability"] != "NONE"  # the catalogue is no reservation: it still says so


def test_no_capacity_refuses_a_start_and_clears(v2: httpx.Client, sim: SimApiServer) -> None:
    stopped = DEMO_IDS["stopped"]  # notebook-4090 in EU-RO-1
    sim.faults.add("no_capacity", f"{R4090}@EU-RO-1", times=1, only=f"POST /v2/pods/{stopped}/action")
    assert RESUME_NO_GPUS in problem(v2.post(f"/v2/pods/{stopped}/action", json={"action": "start"}), 400)
    assert sim.world.pods[stopped].status == "EXITED"
    assert v2.post(f"/v2/pods/{stopped}/action", json={"action": "start"}).status_code == 200


def test_the_balance_must_cover_a_create_and_a_start(v2: httpx.Client, sim: SimApiServer) -> None:
    sim.world.set_balance(0.30)  # under an hour of a 4090 ($0.40/hr), over one of a 3090 ($0.22/hr)
    said = problem(create(v2), 402)
    assert "balance is too low to deploy" in said and "add funds" in said
    said = problem(v2.post(f"/v2/pods/{DEMO_IDS['stopped']}/action", json={"action": "start"}), 402)
    assert "balance is too low to start this pod" in said
    assert sim.world.pods[DEMO_IDS["stopped"]].status == "EXITED"
    assert create(v2, gpu=R3090).status_code == 201
