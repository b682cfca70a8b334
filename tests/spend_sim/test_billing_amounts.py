"""What the simulator's billing routes answer is what the simulated pods and volumes cost, second by second
(docs/runpod-facts.md#pricing-and-the-balance): GPU or CPU time and disk while a pod runs, its volume alone while it
is stopped, nothing once terminated but its past kept; a network volume for as long as it exists; and the balance
loses exactly what billing says was spent (docs/spend.md#the-simulators-billing). The clock starts at 09:30 UTC."""

from __future__ import annotations

from typing import Any

import pytest

from podtui.sim import billing
from podtui.sim.clock import SimClock
from podtui.sim.gpu_market import SETTLED_TICKS, STOCK_TICK_S
from podtui.sim.server import SimApiServer
from podtui.sim.sim_pod import status_time
from podtui.sim.volumes import SimVolume
from podtui.sim.world import SimPod, World
from tests.helpers.sim import DEMO_IDS
from tests.spend_sim.conftest import HALF_PAST, Billing

HOUR = 3600.0
MONTH_H = 730.0
RUNNING_DISK = (20 * 0.10 + 50 * 0.10) / MONTH_H  # $/hr of the default 20 GB container disk and 50 GB volume
STOPPED_DISK = 50 * 0.20 / MONTH_H
DAY_OF = {"startTime": "2026-11-30T00:00:00Z", "endTime": "2026-12-01T00:00:00Z"}


def a_pod(pod_id: str = "podrun00000001", per_hr: float = 0.40, **kw: Any) -> SimPod:
    return SimPod(id=pod_id, name=pod_id, gpu_type="RTX 4090", gpu_count=1, cost_per_hr=per_hr, **kw)


def hourly(billing: Billing, **params: Any) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = billing.ok("/v2/billing/pods", bucketSize="hour", **DAY_OF, **params)["records"]
    return records


def at(records: list[dict[str, Any]], hour: int) -> dict[str, Any]:
    (found,) = [r for r in records if r["startTime"] == f"2026-11-30T{hour:02d}:00:00Z"]
    return found


def test_a_run_of_90_minutes_across_an_hour_is_split_by_the_second(bare: SimApiServer, bare_billing: Billing) -> None:
    world = bare.world
    world.add(a_pod(per_hr=0.40))  # from 09:30
    world.clock.advance(90 * 60)  # to 11:00
    records = hourly(bare_billing)
    assert [r["startTime"][11:16] for r in records] == ["09:00", "10:00"]  # nothing before it ran, nor after now
    assert at(records, 9)["gpuAmount"] == pytest.approx(0.20, abs=1e-6)
    assert at(records, 10)["gpuAmount"] == pytest.approx(0.40, abs=1e-6)
    assert at(records, 9)["diskAmount"] == pytest.approx(RUNNING_DISK / 2, abs=1e-6)
    assert at(records, 10)["totalAmount"] == pytest.approx(0.40 + RUNNING_DISK, abs=1e-6)
    assert all(r["cpuAmount"] == 0 for r in records)
    day = bare_billing.ok("/v2/billing/pods", **DAY_OF)
    assert day["metadata"]["totals"]["gpuAmount"] == pytest.approx(0.60, abs=1e-6)
    assert day["metadata"]["uniquePodCount"] == 1 and day["metadata"]["recordCount"] == 1


def test_a_stopped_pod_bills_its_volume_alone_and_a_terminated_one_keeps_its_past(
    bare: SimApiServer, bare_billing: Billing
) -> None:
    world = bare.world
    pod = world.add(a_pod(per_hr=1.00))
    world.clock.advance(30 * 60)  # 10:00
    world.stop(pod.id)
    world.clock.advance(2 * HOUR)  # 12:00
    world.terminate(pod.id)
    world.clock.advance(HOUR)  # 13:00, long past its removal
    assert pod.id not in {p.id for p in world.visible_pods()}
    records = hourly(bare_billing, podId=pod.id)
    assert [r["startTime"][11:13] for r in records] == ["09", "10", "11"]  # 12:00 on: terminated, nothing
    assert at(records, 9)["gpuAmount"] == pytest.approx(0.50, abs=1e-6)
    for hour in (10, 11):
        assert at(records, hour)["gpuAmount"] == 0
        assert at(records, hour)["diskAmount"] == pytest.approx(STOPPED_DISK, abs=1e-6)  # $0.20/GB/month stopped


def test_a_cpu_pod_is_billed_as_cpu(bare: SimApiServer, bare_billing: Billing) -> None:
    bare.world.add(
        SimPod(id="cpupod00000001", name="c", gpu_type="cpu3c", gpu_count=0, cost_per_hr=0.12, cpu_flavor="cpu3c")
    )
    bare.world.clock.advance(HOUR)
    (record,) = bare_billing.ok("/v2/billing/pods", lastN="1")["records"]
    assert record["cpuAmount"] == pytest.approx(0.12, abs=1e-6) and record["gpuAmount"] == 0
    assert bare_billing.ok("/v2/billing", lastN="1")["records"][0]["podCpuAmount"] == pytest.approx(0.12, abs=1e-6)


def test_a_booting_pod_bills_nothing_until_it_runs(bare: SimApiServer, bare_billing: Billing) -> None:
    world = bare.world
    world.boot_s = 1800.0
    world.add(a_pod(status="CREATED"))  # runs from 10:00
    world.clock.advance(90 * 60)
    (record,) = hourly(bare_billing)
    assert record["startTime"] == "2026-11-30T10:00:00Z" and record["gpuAmount"] == pytest.approx(0.40, abs=1e-6)


def test_volumes_bill_from_when_made_to_when_deleted_by_their_tier(bare: SimApiServer, bare_billing: Billing) -> None:
    world, http = bare.world, bare_billing.http
    standard = http.post("/v2/network-volumes", json={"name": "s", "size": 100, "dataCenter": "EU-RO-1"}).json()
    fast = http.post(
        "/v2/network-volumes", json={"name": "f", "size": 50, "dataCenter": "US-KS-2", "type": "HIGH_PERFORMANCE"}
    )
    assert fast.status_code == 201, fast.text
    world.clock.advance(HOUR)  # 10:30
    assert http.patch(f"/v2/network-volumes/{standard['id']}", json={"size": 200}).status_code == 200
    world.clock.advance(HOUR)  # 11:30
    assert http.delete(f"/v2/network-volumes/{fast.json()['id']}").status_code == 204
    world.clock.advance(2 * HOUR)  # 13:30
    per_gb_hr = 0.07 / MONTH_H
    body = bare_billing.ok("/v2/billing/network-volumes", **DAY_OF)
    by_id = {r["networkVolumeId"]: r for r in body["records"]}
    assert by_id[standard["id"]]["standardAmount"] == pytest.approx(per_gb_hr * (100 * 1 + 200 * 3), abs=1e-6)
    assert by_id[fast.json()["id"]]["highPerformanceAmount"] == pytest.approx(per_gb_hr * 50 * 2, abs=1e-6)
    assert by_id[fast.json()["id"]]["standardAmount"] == 0 and body["metadata"]["uniqueNetworkVolumeCount"] == 2
    (day,) = bare_billing.ok("/v2/billing", **DAY_OF)["records"]
    assert day["storageStandardAmount"] == by_id[standard["id"]]["totalAmount"]
    assert day["storageHighPerformanceAmount"] == by_id[fast.json()["id"]]["totalAmount"]


def test_the_aggregate_has_every_bucket_and_adds_up_the_others(bare: SimApiServer, bare_billing: Billing) -> None:
    world = bare.world
    world.add(a_pod("podaaaaaaaaaa1", per_hr=0.22))
    world.add(a_pod("podbbbbbbbbbb2", per_hr=1.64))
    bare_billing.http.post("/v2/network-volumes", json={"name": "v", "size": 40, "dataCenter": "EU-RO-1"})
    world.clock.advance(3 * HOUR)
    world.stop("podbbbbbbbbbb2")
    world.clock.advance(HOUR)  # 13:30
    hours = bare_billing.ok("/v2/billing", bucketSize="hour", **DAY_OF)["records"]
    assert len(hours) == 24 and sum(1 for r in hours if r["totalAmount"] == 0) == 24 - 5  # empty hours too
    pods = hourly(bare_billing)
    volumes = bare_billing.ok("/v2/billing/network-volumes", bucketSize="hour", **DAY_OF)["records"]
    for r in hours:
        these = [p for p in pods if p["startTime"] == r["startTime"]]
        assert r["podGpuAmount"] == pytest.approx(sum(p["gpuAmount"] for p in these), abs=1e-5)
        assert r["podDiskAmount"] == pytest.approx(sum(p["diskAmount"] for p in these), abs=1e-5)
        stored = sum(v["totalAmount"] for v in volumes if v["startTime"] == r["startTime"])
        assert r["storageStandardAmount"] == pytest.approx(stored, abs=1e-5)
    assert len(pods) == 2 * 5  # both pods in each hour from 09:00 to 13:00 (one of them stopped from 12:30)


def test_the_balance_loses_what_billing_says_was_spent(sim: SimApiServer) -> None:
    """The demo account from 09:00: pods run, stop, start and end, a volume is made, over a few hours."""
    world, billing = sim.world, Billing(sim)
    world.set_balance(100.0)  # enough for it all: running out is another test
    before = world.balance
    world.clock.advance(40 * 60)
    world.stop(DEMO_IDS["train"])
    billing.http.post("/v2/network-volumes", json={"name": "more", "size": 80, "dataCenter": "EU-RO-1"})
    world.clock.advance(75 * 60)
    world.terminate(DEMO_IDS["bursty"])
    world.resume(DEMO_IDS["train"], 1)
    world.clock.advance(2 * HOUR + 17)
    world.advance()
    spent = before - world.balance
    since = {"startTime": "2026-11-30T09:00:00Z"}
    totals = billing.ok("/v2/billing", bucketSize="hour", **since)["metadata"]["totals"]
    assert totals["totalAmount"] == pytest.approx(spent, abs=1e-4)
    # a day's bucket holds the morning's history too: the same as its hours from midnight
    day = billing.ok("/v2/billing", bucketSize="day", **since)["metadata"]["totals"]["totalAmount"]
    hours = billing.ok("/v2/billing", bucketSize="hour", **DAY_OF)["metadata"]["totals"]["totalAmount"]
    assert day == pytest.approx(hours, abs=1e-4) and day > spent
    pods = billing.ok("/v2/billing/pods", bucketSize="hour", **since)["metadata"]["totals"]["totalAmount"]
    volumes = billing.ok("/v2/billing/network-volumes", bucketSize="hour", **since)["metadata"]["totals"]
    assert pods + volumes["totalAmount"] == pytest.approx(spent, abs=1e-4)
    assert spent > 0.5  # hours of an A100 and more: not a trivial agreement


def test_when_the_money_runs_out_billing_stops_where_the_balance_did(bare: SimApiServer, bare_billing: Billing) -> None:
    world = bare.world
    world.add(a_pod(per_hr=2.00, network_volume=None))
    world.set_balance(1.00)  # half an hour of it
    world.clock.advance(3 * HOUR)
    world.advance()
    assert world.balance == 0
    total = bare_billing.ok("/v2/billing", **DAY_OF)["metadata"]["totals"]["totalAmount"]
    assert total == pytest.approx(1.00, abs=1e-6)


def test_the_record_grows_with_changes_not_with_time(bare: SimApiServer) -> None:
    world: World = bare.world
    pod = world.add(a_pod())
    for _ in range(500):
        world.clock.advance(7.3)
        world.advance()
    assert len(world.usage.pods[pod.id]) == 2  # one GPU charge and one disk charge, still open
    world.stop(pod.id)
    world.clock.advance(60)
    world.advance()
    assert len(world.usage.pods[pod.id]) == 3  # the disk at its stopped rate


@pytest.mark.parametrize("hours", [1.0, 10.0])  # stepped by the market's ticks; one jump past SETTLED_TICKS
def test_when_the_money_runs_out_the_pods_stop_at_that_moment(hours: float) -> None:
    assert (hours * HOUR > SETTLED_TICKS * STOCK_TICK_S) == (hours == 10.0)
    world = World(SimClock(start=HALF_PAST, frozen=True), balance=1.0)
    world.volumes = {"vol0000001": SimVolume("vol0000001", "data", 50, "EU-RO-1")}
    kept = world.add(a_pod("podkept000001", per_hr=2.00, network_volume="vol0000001"))
    lost = world.add(a_pod("podlost000001", per_hr=0.50))
    until = HALF_PAST + 1.0 / billing.per_hr([kept, lost], world.volumes.values()) * HOUR  # about 24 minutes in
    world.clock.advance(hours * HOUR)
    world.advance()
    assert world.balance == 0
    gpu = [(c.start, c.end) for c in world.usage.pods[kept.id] if c.kind == billing.GPU]
    assert gpu == [(HALF_PAST, pytest.approx(until, abs=1e-3))]
    assert kept.status == "EXITED" and kept.last_status_change.endswith(status_time(until))
    assert kept.stale_runtime is not None  # its last uptime is the one it had when it stopped, not now's
    assert kept.stale_runtime["uptimeInSeconds"] == int(until - HALF_PAST)
    assert lost.status == "TERMINATED" and lost.gone_at == pytest.approx(until + world.terminate_s, abs=1e-3)
    assert lost.last_status_change == f"Exited by RunPod: Insufficient balance: {status_time(until)}"


def test_a_long_jump_bills_a_boot_from_the_second_it_ends() -> None:
    """One 10-hour advance (past SETTLED_TICKS, so billed as one stretch): the 400 s boot is not billed."""
    world = World(SimClock(start=HALF_PAST, frozen=True), balance=1000.0, boot_s=400.0)
    pod = world.add(a_pod(per_hr=1.50, status="CREATED"))
    world.clock.advance(10 * HOUR)
    world.advance()
    gpu = sum(c.amount(0, billing.LATEST_TIME) for c in world.usage.pods[pod.id] if c.kind == billing.GPU)
    assert gpu == pytest.approx(1.50 * (36000 - 400) / HOUR, abs=1e-9)
    assert pod.status == "RUNNING" and pod.started_at == HALF_PAST + 400
