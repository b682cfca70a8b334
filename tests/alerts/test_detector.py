"""The detector and the router, on plain snapshots and a clock the test moves: each occurrence said once, again only
after it ended and came back, never twice within the quiet period; a user's stop is not an alert."""

from __future__ import annotations

from collections.abc import Callable

from podtui.core.alert_rules import AlertRules, parse_alert_rules
from podtui.core.alerts import Alert, AlertDetector, AlertRouter, budget_steps, transfer_ended
from podtui.core.config import Config
from podtui.core.pod import Account, Pod, PodStatus, Runtime, Snapshot
from podtui.core.ticker import BudgetStep
from podtui.transfer.job import TransferJob

T0 = 1_800_000_000.0
UP = Runtime(uptime_s=60)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def pod(status: PodStatus, pid: str = "p1", name: str = "trainer", cost: float = 1.0) -> Pod:
    return Pod(pid, name, status, runtime=UP if status is PodStatus.RUNNING else None, cost_per_hr=cost)


def snap(*pods: Pod, balance: float | None = 1000.0, at: float = T0) -> Snapshot:
    return Snapshot(Account(balance=balance), pods, at)


def detector(clock: Clock, **config: float) -> AlertDetector:
    return AlertDetector(Config(**config), clock)  # type: ignore[arg-type]


def kinds(alerts: list[Alert]) -> list[str]:
    return [a.kind for a in alerts]


def test_an_exit_nobody_asked_for_is_said_once() -> None:
    clock = Clock()
    d = detector(clock)
    assert d.after_poll(snap(pod(PodStatus.EXITED))) == []  # first sight: where things stand
    assert d.after_poll(snap(pod(PodStatus.RUNNING))) == []
    [alert] = d.after_poll(snap(pod(PodStatus.EXITED)))
    assert (alert.kind, alert.severity, alert.pod_id, alert.pod_name) == ("exited", "error", "p1", "trainer")
    assert "without this podtui asking" in alert.text
    assert d.after_poll(snap(pod(PodStatus.EXITED))) == []  # still exited: the same occurrence
    d.after_poll(snap(pod(PodStatus.RUNNING)))
    [error] = d.after_poll(snap(pod(PodStatus.ERROR)))
    assert "failed (ERROR)" in error.text and error.occurrence != alert.occurrence


def test_a_stop_the_user_asked_for_is_not_an_alert_but_an_error_after_it_is() -> None:
    clock = Clock()
    d = detector(clock)
    d.after_poll(snap(pod(PodStatus.RUNNING)))
    d.asked("p1", "stop")
    assert d.after_poll(snap(pod(PodStatus.EXITED))) == []
    d.after_poll(snap(pod(PodStatus.RUNNING)))
    assert kinds(d.after_poll(snap(pod(PodStatus.EXITED)))) == ["exited"]  # the ask was used up
    d.after_poll(snap(pod(PodStatus.RUNNING)))
    d.asked("p1", "stop")
    assert kinds(d.after_poll(snap(pod(PodStatus.ERROR)))) == ["exited"]  # a stop does not explain a failure
    d.after_poll(snap(pod(PodStatus.RUNNING)))
    d.asked("p1", "terminate")
    assert d.after_poll(snap(pod(PodStatus.TERMINATED))) == []


def test_an_old_ask_explains_nothing() -> None:
    clock = Clock()
    d = detector(clock)
    d.after_poll(snap(pod(PodStatus.RUNNING)))
    d.asked("p1", "stop")
    clock.now += 3600
    assert kinds(d.after_poll(snap(pod(PodStatus.EXITED)))) == ["exited"]


def test_unknown_status_and_a_partial_answer_keep_what_was_known() -> None:
    clock = Clock()
    d = detector(clock)
    d.after_poll(snap(pod(PodStatus.RUNNING)))
    assert d.after_poll(snap(pod(PodStatus.UNKNOWN))) == []
    partial = Snapshot(Account(balance=1000.0), (), T0, problems=("pod 0: garbage; skipped",))
    assert d.after_poll(partial) == []
    assert kinds(d.after_poll(snap(pod(PodStatus.EXITED)))) == ["exited"]  # still known as running before


def test_stuck_once_until_it_starts() -> None:
    clock = Clock()
    d = detector(clock)
    p = pod(PodStatus.STARTING)
    [alert] = d.after_poll(snap(p), [(p, 900.0)])
    assert alert.kind == "stuck" and "may be stuck" in alert.text and "podtui logs trainer" in alert.text
    assert d.after_poll(snap(p), [(p, 1200.0)]) == []
    assert d.after_poll(snap(pod(PodStatus.RUNNING)), []) == []
    assert kinds(d.after_poll(snap(p), [(p, 700.0)])) == ["stuck"]


def test_runway_warning_then_critical_each_once_and_again_after_a_top_up() -> None:
    clock = Clock()
    d = detector(clock, runway_warn_h=24.0, runway_critical_h=4.0)
    running = pod(PodStatus.RUNNING, cost=1.0)  # $1/hr and the disks
    assert d.after_poll(snap(running, balance=100.0)) == []
    [warn] = d.after_poll(snap(running, balance=20.0))
    assert (warn.kind, warn.severity) == ("runway", "warning") and "under 24 h" in warn.text
    assert d.after_poll(snap(running, balance=19.0)) == []
    [crit] = d.after_poll(snap(running, balance=3.0))
    assert crit.severity == "error" and "under 4 h" in crit.text and "At $0" in crit.text
    assert d.after_poll(snap(running, balance=None)) == []  # unknown: nothing ends, nothing begins
    assert d.after_poll(snap(running, balance=2.0)) == []
    d.after_poll(snap(running, balance=500.0))  # topped up
    assert [a.severity for a in d.after_poll(snap(running, balance=2.0))] == ["error"]  # straight to critical


def test_transfer_ends_and_budget_steps() -> None:
    job = TransferJob("p1", "pull", "/w/model.bin", "/tmp/x", pod_name="trainer", state="verified", finished_at=T0)
    ok = transfer_ended(job, T0)
    assert ok is not None and ok.kind == "transfer_verified" and "model.bin (trainer): verified" in ok.text
    job.state, job.error = "failed", "checksums differ"
    bad = transfer_ended(job, T0)
    assert bad is not None and bad.kind == "transfer_failed" and "checksums differ" in bad.text
    job.state = "transferring"
    assert transfer_ended(job, T0) is None
    steps = [BudgetStep(0.8, "80%", "2027-01-15"), BudgetStep(1.0, "100%", "2027-01-15")]
    [step] = budget_steps(steps, T0)  # both in one second: the higher one
    assert (step.severity, step.occurrence) == ("error", "budget:2027-01-15:1")


def _router(rules: AlertRules, log: list[tuple[str, str]], fail: str | None = None) -> AlertRouter:
    def place(name: str) -> Callable[[Alert], None]:
        def send(alert: Alert) -> None:
            if name == fail:
                raise RuntimeError("down")
            log.append((name, alert.occurrence))

        return send

    return AlertRouter(rules, {s: place(s) for s in ("app", "desktop", "notify-send", "webhook")})


def idle_alert(at: float, n: int = 0) -> Alert:
    return Alert("idle", "trainer is idle", "warning", at, f"idle:p1:{n}", "idle:p1", "p1", "trainer")


def test_router_once_per_occurrence_and_quiet_per_kind_and_pod() -> None:
    sent: list[tuple[str, str]] = []
    r = _router(parse_alert_rules({"quiet_min": 30, "webhook": "https://example.com/podtuirouter-hook-1"}), sent)
    assert r.route(idle_alert(T0)) == ("app", "desktop", "notify-send", "webhook")
    assert r.route(idle_alert(T0)) == ()  # the same occurrence, told again: said once
    assert r.route(idle_alert(T0 + 600, 1)) == ()  # the pod flapped: quiet
    other = Alert("idle", "x", "warning", T0 + 600, "idle:p2:1", "idle:p2", "p2", "other")
    assert r.route(other) != ()  # another pod is not quiet
    assert r.route(idle_alert(T0 + 1801, 2)) != ()
    assert len(sent) == 12


def test_a_failing_place_keeps_the_alert_from_none_of_the_others() -> None:
    sent: list[tuple[str, str]] = []
    r = _router(AlertRules(desktop=False), sent, fail="app")
    r.route(idle_alert(T0))
    r = _router(parse_alert_rules({"webhook": "https://example.com/podtuirouter-hook-2"}), sent, fail="desktop")
    r.route(idle_alert(T0))
    assert [s for s, _ in sent] == ["app", "notify-send", "webhook"]


def test_a_retried_transfer_is_said_at_each_end() -> None:
    sent: list[tuple[str, str]] = []
    r = _router(AlertRules(), sent)
    job = TransferJob("p1", "pull", "/w/model.bin", "/tmp/x", pod_name="trainer", state="failed", finished_at=T0)
    job.error = "connection lost"
    failed = transfer_ended(job, T0)
    assert failed is not None and r.route(failed) != ()
    job.state, job.error, job.finished_at, job.attempts = "verified", None, T0 + 60, job.attempts + 1  # the retry
    verified = transfer_ended(job, T0 + 60)
    assert verified is not None and r.route(verified) != ()  # the same job id: still news
    assert [o for s, o in sent if s == "app"] == [failed.occurrence, verified.occurrence]


def test_a_pod_gone_from_a_whole_answer_was_terminated() -> None:
    clock = Clock()
    d = detector(clock)
    d.after_poll(snap(pod(PodStatus.RUNNING), pod(PodStatus.EXITED, "p2", "notebook")))
    partial = Snapshot(Account(balance=1000.0), (), T0, problems=("pod 0: garbage; skipped",))
    assert d.after_poll(partial) == []  # perhaps the record skipped: not gone
    alerts = d.after_poll(snap())
    assert sorted((a.kind, a.pod_name) for a in alerts) == [("exited", "notebook"), ("exited", "trainer")]
    assert all("is gone (terminated)" in a.text and a.severity == "error" for a in alerts)
    assert d.after_poll(snap()) == []  # said once
    d.after_poll(snap(pod(PodStatus.RUNNING)))
    d.asked("p1", "terminate")
    assert d.after_poll(snap()) == []  # asked here
    d.after_poll(snap(pod(PodStatus.RUNNING)))
    d.after_poll(snap(pod(PodStatus.TERMINATED)))  # said as terminated, then left out of the list
    assert d.after_poll(snap()) == []


def test_a_refused_ask_explains_nothing() -> None:
    clock = Clock()
    d = detector(clock)
    d.after_poll(snap(pod(PodStatus.RUNNING)))
    d.asked("p1", "stop")
    d.unasked("p1", "terminate")  # another verb's refusal leaves it
    d.unasked("p1", "stop")
    assert kinds(d.after_poll(snap(pod(PodStatus.EXITED)))) == ["exited"]


def test_the_router_names_the_profile() -> None:
    seen: list[Alert] = []
    r = AlertRouter(AlertRules(), {"app": seen.append}, profile="work")
    r.route(idle_alert(T0))
    [a] = seen
    assert a.profile == "work" and a.title == "podtui (work): idle trainer" and a.as_json()["profile"] == "work"
    assert idle_alert(T0).as_json()["profile"] is None and idle_alert(T0).title == "podtui: idle trainer"
