"""The usage record is saved and loaded with the world (podtui/sim/state.py): billing answers the same past after a
reload, the time no simulator ran is a gap in it (nothing billed), a world saved without one loads with none, and a
record that cannot be read is refused in words."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from podtui.sim import billing
from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, demo_world
from podtui.sim.server import SimApiServer
from podtui.sim.state import StateError, StateFolder, world_from_record, world_record
from podtui.sim.world import World
from tests.helpers.sim import DEMO_IDS
from tests.spend_sim.conftest import Billing

DAY = 86400.0


def saved(world: World) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(json.dumps(world_record(world)))
    return record


def answers(world: World, **params: str) -> dict[str, Any]:
    with SimApiServer(world) as server:
        client = Billing(server)
        out = {route: client.ok(route, **params) for route in ("/v2/billing", "/v2/billing/pods")}
        client.http.close()
    return out


def test_a_reloaded_world_answers_the_same_past(tmp_path: Path) -> None:
    world = demo_world(SimClock(start=SCREENSHOT_EPOCH, frozen=True))
    world.clock.advance(3600)
    world.terminate(DEMO_IDS["bursty"])
    window = {"startTime": "2026-10-01T00:00:00Z", "endTime": "2026-12-01T00:00:00Z"}
    before = answers(world, **window)
    folder = StateFolder(tmp_path / "state").open()
    folder.save_world(world)
    back = folder.load_world(SimClock(start=world.clock.now(), frozen=True))
    folder.close()
    assert back is not None
    assert billing.usage_record(back.usage) == billing.usage_record(world.usage)
    assert answers(back, **window) == before
    assert DEMO_IDS["bursty"] in {r["podId"] for r in before["/v2/billing/pods"]["records"]}  # terminated, kept


def test_the_days_no_simulator_ran_are_a_gap_in_the_record() -> None:
    world = demo_world(SimClock(start=SCREENSHOT_EPOCH, frozen=True))
    record = saved(world)
    back = world_from_record(record, SimClock(start=SCREENSHOT_EPOCH + 2 * DAY, frozen=True))
    back.clock.advance(3600)
    back.advance()
    assert back.usage.total(SCREENSHOT_EPOCH, SCREENSHOT_EPOCH + 2 * DAY) == 0
    assert back.usage.total(SCREENSHOT_EPOCH + 2 * DAY, SCREENSHOT_EPOCH + 2 * DAY + 3600) > 0
    assert back.usage.total(0, SCREENSHOT_EPOCH) == pytest.approx(world.usage.total(0, SCREENSHOT_EPOCH))


def test_a_world_saved_without_a_usage_record_loads_with_none() -> None:
    record = saved(demo_world())
    del record["usage"]
    back = world_from_record(record)
    assert back.usage.pods == {} and back.usage.volumes == {}


@pytest.mark.parametrize(
    ("usage", "said"),
    [
        ([], "not a JSON object"),
        ({"pods": []}, "pods are not"),
        ({"pods": {"p1": {}}}, "no list of charges"),
        ({"pods": {"p1": [[0, 10, 1.0]]}}, "not [start, end, $/hr, kind]"),
        ({"pods": {"p1": [[0, 10, "1", "gpu"]]}}, "not [start, end, $/hr, kind]"),
        ({"pods": {"p1": [[0, 10, True, "gpu"]]}}, "not [start, end, $/hr, kind]"),
        ({"pods": {"p1": [[0, 10, 1.0, "standard"]]}}, "kind 'standard'"),
        ({"volumes": {"v1": [[0, 10, 1.0, "gpu"]]}}, "kind 'gpu'"),
        ({"pods": {"p1": [[10, 0, 1.0, "gpu"]]}}, "out of range"),
        ({"pods": {"p1": [[0, 10, -1.0, "gpu"]]}}, "out of range"),
        ({"pods": {"p1": [[0, 1e300, 1.0, "gpu"]]}}, "out of range"),
        ({"pods": {"p1": [[0, float("nan"), 1.0, "gpu"]]}}, "not [start, end, $/hr, kind]"),
        ({"pods": {"": [[0, 10, 1.0, "gpu"]]}}, "no list of charges"),
    ],
)
def test_a_usage_record_it_cannot_read_is_refused_in_words(usage: object, said: str) -> None:
    record = saved(demo_world()) | {"usage": usage}
    with pytest.raises(StateError, match=f"usage record.*{re.escape(said)}"):
        world_from_record(record)


def test_a_saved_file_with_a_broken_record_is_left_as_it_is(tmp_path: Path) -> None:
    folder = StateFolder(tmp_path / "state").open()
    text = json.dumps(saved(demo_world()) | {"usage": {"pods": {"p1": "lots"}}})
    folder.world_file.write_text(text)
    with pytest.raises(StateError, match="usage record"):
        folder.load_world()
    folder.close()
    assert folder.world_file.read_text() == text


def test_a_clock_set_back_since_the_save_bills_no_second_twice(caplog: pytest.LogCaptureFixture) -> None:
    """Saved at 09:00 with the demo's pods running, loaded by a clock two hours earlier: the record ends at the new
    now, so the hour billed from then on is billed once."""
    world = demo_world(SimClock(start=SCREENSHOT_EPOCH, frozen=True))
    per_hr = world.spend_per_hr() + world.storage_per_hr()
    earlier = SCREENSHOT_EPOCH - 2 * 3600
    with caplog.at_level(logging.WARNING, logger="podtui.sim"):
        back = world_from_record(saved(world), SimClock(start=earlier, frozen=True))
    assert "set back" in caplog.text
    charges = [c for book in (back.usage.pods, back.usage.volumes) for cs in book.values() for c in cs]
    assert max(c.end for c in charges) == earlier and all(c.start < earlier for c in charges)
    assert back.usage.total(0, earlier) == pytest.approx(world.usage.total(0, earlier))
    back.clock.advance(3600)
    back.advance()
    assert back.usage.total(earlier, earlier + 3600) == pytest.approx(per_hr, rel=1e-9)  # once, not twice


def test_a_saved_record_ending_before_now_is_kept_whole() -> None:
    world = demo_world(SimClock(start=SCREENSHOT_EPOCH, frozen=True))
    back = world_from_record(saved(world), SimClock(start=SCREENSHOT_EPOCH + 60, frozen=True))
    assert billing.usage_record(back.usage) == billing.usage_record(world.usage)
