"""Cost arithmetic: running, stopped, starting and terminated pods, pods without a runtime, interpolation between
polls, runway, a balance at zero and what it would delete; session spend; idleness over simulated time."""

from __future__ import annotations

from typing import Any

import pytest

from podtui.core.cost import (
    HOURS_PER_MONTH,
    SessionSpend,
    cost_view,
    pod_cost,
    projected_today,
)
from podtui.core.idle import IdleTracker
from podtui.core.pod import Snapshot, parse_account, parse_pods


def raw_pod(pid: str, status: str = "RUNNING", uptime: int | None = 3600, **over: Any) -> dict[str, Any]:
    """A pod as REST v2 gives it."""
    p: dict[str, Any] = {
        "id": pid,
        "name": f"pod-{pid}",
        "status": status,
        "cost": 0.50,
        "gpu": {"id": "NVIDIA GeForce RTX 3090", "count": 1},
        "disk": 20,
        "mounts": {"persistent": {"size": 100, "path": "/workspace"}},
        "runtime": None if uptime is None else {"uptime": uptime, "gpus": []},
    }
    p.update(over)
    return p


def snapshot(*pods: dict[str, Any], balance: float | None = 10.0, burn: float | None = None) -> Snapshot:
    """The pods from v2 and the balance from GraphQL, as V2Api puts them together."""
    parsed, problems = parse_pods({"pods": list(pods)})
    money = {"clientBalance": balance, "currentSpendPerHr": burn, "spendLimit": 80}
    account, more = parse_account({"data": {"myself": money}})
    return Snapshot(account, parsed, 1000.0, problems + more)


def test_a_running_pod_costs_its_gpu_and_its_disks() -> None:
    c = pod_cost(snapshot(raw_pod("a")).pods[0])
    disks = (20 * 0.10 + 100 * 0.10) / HOURS_PER_MONTH
    assert c.storage_per_hr == pytest.approx(disks) and c.per_hr == pytest.approx(0.50 + disks)
    assert c.accrued == pytest.approx(0.50)  # one hour at $0.50


def test_stopped_starting_and_terminated_pods() -> None:
    s = snapshot(
        raw_pod("x", "EXITED", uptime=7200),
        raw_pod("s", "RUNNING", uptime=None),
        raw_pod("c", "STARTING", uptime=None),
        raw_pod("t", "TERMINATED", uptime=None),
    )
    stopped, no_runtime, created, gone = (pod_cost(p) for p in s.pods)
    assert stopped.per_hr == pytest.approx(100 * 0.20 / HOURS_PER_MONTH) and stopped.accrued is None  # stale runtime
    assert no_runtime.accrued is None and no_runtime.per_hr > 0.5  # RUNNING, billed, no uptime reported yet
    assert created.per_hr == 0 and gone.per_hr == 0


def test_interpolation_runway_and_the_api_burn() -> None:
    s = snapshot(raw_pod("a"), raw_pod("b"), balance=3.0, burn=1.0)
    now = s.fetched_at + 1800  # half an hour after the poll
    v = cost_view(s, now)
    assert v.burn_per_hr == 1.0 and v.balance == pytest.approx(2.5)
    assert v.runway_s == pytest.approx(2.5 / v.pods_burn_per_hr * 3600)  # the higher of the two burns
    assert v.cost_of("a") is not None and v.cost_of("a").accrued == pytest.approx(0.75)  # type: ignore[union-attr]
    assert v.pods_burn_per_hr == pytest.approx(2 * (0.50 + 12 / HOURS_PER_MONTH))
    assert v.burn_disagrees  # $1.00 from the API, $1.03 from the pods: more than rounding, so it is said


def test_burn_cross_check() -> None:
    s = snapshot(raw_pod("a"), burn=0.5 + 12 / HOURS_PER_MONTH)
    assert not cost_view(s, s.fetched_at).burn_disagrees
    s = snapshot(raw_pod("a"), burn=3.0)
    assert cost_view(s, s.fetched_at).burn_disagrees
    s = snapshot(raw_pod("a"), burn=None)  # no API figure: the sum over pods is the burn
    assert cost_view(s, s.fetched_at).burn_per_hr == pytest.approx(0.5 + 12 / HOURS_PER_MONTH)


def test_a_balance_at_zero_and_what_it_deletes() -> None:
    with_volume = raw_pod("keep", mounts={"network": [{"volumeId": "nv1", "path": "/workspace"}]})
    s = snapshot(raw_pod("lose"), with_volume, raw_pod("off", "EXITED"), balance=0.0, burn=1.0)
    v = cost_view(s, s.fetched_at + 60)
    assert v.balance == 0.0 and v.runway_s == 0.0
    assert v.lose_data_at_zero == ("pod-lose", "pod-off")
    assert "terminates those without a network volume, deleting their data: pod-lose, pod-off" in v.at_zero_warning()
    assert cost_view(snapshot(raw_pod("a"), balance=None), 1000.0).runway_s is None
    assert cost_view(snapshot(balance=5.0, burn=0.0), 1000.0).runway_s is None  # nothing burns: no end


def test_session_spend_integrates_each_stretch_at_its_rate() -> None:
    spend = SessionSpend()
    spend.update(0.0, 3.6)
    spend.update(1800.0, 7.2)  # the first half hour at $3.6/hr
    assert spend.total == pytest.approx(1.8)
    spend.update(3600.0, 0.0)  # the second at $7.2/hr
    assert spend.total == pytest.approx(5.4)
    spend.update(3500.0, 1.0)  # a clock going backwards adds nothing
    assert spend.total == pytest.approx(5.4)
    assert projected_today(5.4, 2.0, 3 * 3600) == pytest.approx(11.4)


def test_idle_after_a_window_under_the_threshold() -> None:
    t = IdleTracker(threshold_pct=5.0, window_s=900)
    for i in range(0, 1000, 5):
        t.observe("a", 2.0, float(i))
        t.observe("b", 2.0 if i < 600 else 80.0, float(i))
    assert t.state("a", 899).idle is False and t.state("a", 900).idle is True
    assert t.newly_idle(1000) == ["a"] and t.newly_idle(1005) == []  # announced once
    assert t.state("a", 1800).cost(2.0) == pytest.approx(1.0)  # half an hour at $2/hr
    assert t.state("b", 1000).idle is False


def test_console_input_missing_telemetry_and_gaps() -> None:
    t = IdleTracker(threshold_pct=5.0, window_s=900, max_gap_s=600)
    t.observe("a", 1.0, 0.0)
    t.observe("a", 1.0, 500.0)
    t.typed("a", 600.0)  # someone is working in a console: the window counts from here
    t.observe("a", 1.0, 1000.0)
    assert t.state("a", 1400).idle is False and t.state("a", 1500).idle is True
    assert t.newly_idle(1500) == ["a"]
    t.observe("a", None, 1600.0)  # no telemetry is no evidence of idleness: the stretch ends
    assert t.state("a", 2000).idle is False
    t.observe("a", 1.0, 1700.0)
    t.observe("a", 1.0, 2300.0)  # more than 10 minutes since the last sample: start again from here
    assert t.state("a", 2599).idle is False and t.state("a", 3200).idle is True
    assert t.newly_idle(3200) == ["a"]  # busy or blind in between: announced again
    t.keep_only(set())
    assert t.state("a", 4000).idle is False


def test_the_busiest_gpu_decides() -> None:
    payload = raw_pod("m", gpu={"id": "NVIDIA A100 80GB PCIe", "count": 8})
    payload["runtime"]["gpus"] = [{"util": 35 if i == 0 else 0, "memoryUtil": 0} for i in range(8)]
    pod = snapshot(payload).pods[0]
    assert pod.gpu_util == pytest.approx(4.375) and pod.gpu_util_max == 35  # the mean would call it idle


def test_sparkline_and_runway_colours() -> None:
    from podtui.ui.widgets.account_bar import runway_style, sparkline

    assert sparkline(()) == "" and sparkline((2.0, 2.0, 2.0)) == "▄▄▄"
    assert sparkline((1.0, 1.0, 5.0, 5.0), width=4) == "▁▁██"
    assert len(sparkline(tuple(float(i) for i in range(100)))) == 8
    assert runway_style(30 * 3600, 24, 4) == "bold green"
    assert runway_style(10 * 3600, 24, 4) == "bold yellow"
    assert runway_style(3 * 3600, 24, 4) == "bold white on red"
    assert runway_style(None, 24, 4) == "bold"


def test_runway_takes_the_higher_burn_and_survives_odd_numbers() -> None:
    s = snapshot(raw_pod("a", cost=2.0), balance=1.0, burn=0.0)  # RunPod says 0, the pod costs $2/hr
    v = cost_view(s, s.fetched_at)
    assert v.burn_disagrees and v.runway_s is not None and v.runway_s < 3600  # the warning is not lost
    s = snapshot(raw_pod("a", cost=1e-12), balance=1e7, burn=1e-12)  # (a $1e12 balance is not money)
    assert cost_view(s, s.fetched_at).runway_s == pytest.approx(10 * 365 * 86400)  # clamped, formats fine


def test_an_error_pod_costs_what_runpod_says_it_costs() -> None:
    """v2's cost is 0 for a pod RunPod no longer bills; a pod in ERROR with a cost is still billed, and left out of
    the pods' sum it would understate the burn (the only burn there is once GraphQL is gone)."""
    billed, idle = snapshot(raw_pod("e", "ERROR", uptime=None), raw_pod("z", "ERROR", uptime=None, cost=0)).pods
    volume = 100 * 0.20 / HOURS_PER_MONTH
    assert pod_cost(billed).per_hr == pytest.approx(0.50 + volume) and pod_cost(billed).accrued is None
    assert pod_cost(idle).per_hr == pytest.approx(volume)
