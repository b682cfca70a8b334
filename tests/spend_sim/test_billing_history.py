"""The demo account's generated past (podtui/sim/billing_history.py): a month of earlier pods, terminated and still
billed by id, the current pods since they were made and the volumes since they were made; days that differ; the
same past from the same seed and day; and the record running on from it without a gap or an overlap."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from podtui.sim import billing
from podtui.sim.billing_history import PAST_PODS, give_past, stopped_at
from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, demo_world
from podtui.sim.demo_team import TEAM_PAST_PODS, team_world
from podtui.sim.world import World
from tests.helpers.sim import DEMO_IDS
from tests.spend_sim.conftest import Billing

DAY = 86400.0


def month(billing_: Billing, route: str, **params: Any) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = billing_.ok(route, lastN="31", **params)["records"]
    return records


def test_a_month_that_looks_like_a_users(billing: Billing) -> None:
    days = month(billing, "/v2/billing")
    spent = [d["totalAmount"] for d in days]
    assert 60 < sum(spent) < 600  # a fine-tuning user's month, not nothing and not a fortune
    assert len({round(s, 2) for s in spent if s}) >= 15  # days differ
    assert max(spent) > 5 * sorted(spent)[len(spent) // 2]  # a few big days (long runs), many small
    assert sum(1 for d in days if d["podGpuAmount"] > 0) >= 10
    assert all(d["serverlessGpuAmount"] == d["endpointAmount"] == d["clusterGpuAmount"] == 0 for d in days)
    assert sum(d["podCpuAmount"] for d in days) > 0  # the CPU pod
    assert sum(d["storageHighPerformanceAmount"] for d in days) > 0  # the checkpoints volume's tier


def test_earlier_pods_are_terminated_yet_billed_by_id(billing: Billing) -> None:
    records = month(billing, "/v2/billing/pods")
    billed = {r["podId"] for r in records}
    listed = {p["id"] for p in billing.ok("/v2/pods")["pods"]}
    gone = billed - listed
    assert len(gone) == len(PAST_PODS)
    assert listed - billed == {DEMO_IDS["starting"]}  # still booting: never billed yet
    per_pod = Counter[str]()
    for r in records:
        per_pod[r["podId"]] += r["totalAmount"]
    assert max(per_pod[p] for p in gone) > 15  # a long fine-tune on a big GPU
    assert min(per_pod[p] for p in gone) < 1  # a short experiment


def test_the_current_pods_are_billed_since_they_were_made(billing: Billing) -> None:
    stopped = month(billing, "/v2/billing/pods", podId=DEMO_IDS["stopped"])
    assert [r["startTime"][:10] for r in stopped] == ["2026-11-27", "2026-11-28", "2026-11-29", "2026-11-30"]
    assert stopped[1]["gpuAmount"] > 0  # its last run, on the 28th, until it was stopped at 22:14:03
    assert stopped[2]["gpuAmount"] == 0 and stopped[2]["diskAmount"] == pytest.approx(50 * 0.20 / 730 * 24, abs=1e-6)
    (training,) = month(billing, "/v2/billing/pods", podId=DEMO_IDS["train"])
    ran_h = (2 * 3600 + 17 * 60 + 42) / 3600  # it started 2h 17m 42s before now
    assert training["gpuAmount"] == pytest.approx(0.22 * ran_h, abs=1e-6)


def test_the_volumes_are_billed_since_they_were_made(billing: Billing) -> None:
    records = month(billing, "/v2/billing/network-volumes")
    ids = {r["networkVolumeId"] for r in records}
    assert ids >= {"models-vol", "d8k2x9m4qa", "c4p7n1v8ks"} and len(ids) == 4  # and one deleted since
    daily = [r for r in records if r["networkVolumeId"] == "models-vol" and r["startTime"] < "2026-11-30"]
    assert daily[-1]["standardAmount"] == pytest.approx(50 * 0.07 / 730 * 24, abs=1e-6)  # a whole day of 50 GB


def test_the_past_ends_where_the_world_bills_on() -> None:
    world = demo_world(SimClock(start=SCREENSHOT_EPOCH, frozen=True))
    charges = [c for book in (world.usage.pods, world.usage.volumes) for cs in book.values() for c in cs]
    assert max(c.end for c in charges) == world.billed_until == SCREENSHOT_EPOCH  # nothing in the future
    assert min(c.start for c in charges) > SCREENSHOT_EPOCH - 45 * DAY
    before = {k: len(v) for k, v in world.usage.pods.items()}
    world.clock.advance(600)
    world.advance()
    assert {k: len(v) for k, v in world.usage.pods.items()} == {**before, DEMO_IDS["starting"]: 2}  # runs on


def test_the_same_seed_and_day_give_the_same_past() -> None:
    def past(seed: int, at: float) -> dict[str, Any]:
        world = World(SimClock(start=at, frozen=True), seed=seed)
        give_past(world)
        return billing.usage_record(world.usage)

    assert past(7, SCREENSHOT_EPOCH) == past(7, SCREENSHOT_EPOCH + 3600)  # later the same day
    assert past(7, SCREENSHOT_EPOCH) != past(8, SCREENSHOT_EPOCH)
    assert past(7, SCREENSHOT_EPOCH) != past(7, SCREENSHOT_EPOCH + DAY)


@pytest.mark.parametrize("later", [0.0, 10 * DAY + 1234.5, 400 * DAY + 77.25])  # the screenshots' day; real clocks
def test_the_stopped_pod_says_when_it_stopped_on_any_clock(later: float) -> None:
    """Its status names the moment its billing history stops its GPU time, whatever day the clock is on."""
    world = demo_world(SimClock(start=SCREENSHOT_EPOCH + later, frozen=True))
    pod = world.pods[DEMO_IDS["stopped"]]
    stopped = stopped_at(pod)
    assert stopped is not None and pod.last_started_at is not None
    assert pod.last_started_at < stopped < world.clock.now()
    gpu = [c for c in world.usage.pods[pod.id] if c.kind == billing.GPU]
    assert max(c.end for c in gpu) == stopped  # no GPU time after the pod says it stopped
    if not later:
        assert pod.last_status_change.startswith("Exited by user: Sat Nov 28 2026 22:14:03")


def test_the_team_account_has_a_smaller_past_of_its_own() -> None:
    clock = SimClock(start=SCREENSHOT_EPOCH + 3 * DAY + 999.0, frozen=True)
    team, demo = team_world(clock), demo_world(clock)
    live = {p.id for p in team.pods.values()}
    past = set(team.usage.pods) - live
    assert len(past) == len(TEAM_PAST_PODS) < len(PAST_PODS)
    assert not past & set(demo.usage.pods)  # its own seed: its own ids
    now = clock.now()
    assert 0 < team.usage.total(now - 30 * DAY, now) < demo.usage.total(now - 30 * DAY, now) * 2
    assert team.usage.total(0, now - 22 * DAY) == 0  # three weeks, not a month
    (notebook,) = [p for p in team.pods.values() if p.status == "EXITED"]
    stopped = stopped_at(notebook)
    assert stopped is not None
    assert max(c.end for c in team.usage.pods[notebook.id] if c.kind == billing.GPU) == stopped
    assert billing.usage_record(team_world(clock).usage) == billing.usage_record(team.usage)  # the same again
