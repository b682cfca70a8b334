"""The cost ticker: the session's and today's spend, the burn integrated every second between polls; idleness
tracked at each poll (console input and transfers count as use); the daily budget's steps. It says what happened
as events, and the UI decides how to tell the user (a notification, a bell, the autostop countdown).

Today is the UTC day, as in the Spend view (docs/spend.md): today's spend is what the ledger knows the pods podtui
saw cost today before this session (`spent_today_before`, handed in by whoever reads the ledger) plus the burn
integrated since (docs/alerts.md#events)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from podtui.core import units
from podtui.core.config import Config
from podtui.core.cost import CostView, SessionSpend, cost_view
from podtui.core.idle import IdleState, IdleTracker
from podtui.core.pod import Pod, PodStatus, Snapshot

if TYPE_CHECKING:
    from podtui.core.ledger import Ledger

BUDGET_STEPS = (0.8, 1.0)


def utc_day(t: float) -> dt.date:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).date()


def spent_today_before(ledger: Ledger, upto: float) -> tuple[dt.date, float]:
    """The UTC day of `upto`, and what the ledger's runs cost from its midnight until `upto` (the session's start):
    pods podtui saw, in this session too (the ledger dates a pod first seen running back by its uptime) or another.
    Reads the ledger's file: in a thread worker."""
    day = utc_day(upto)
    midnight = dt.datetime.combine(day, dt.time(), dt.timezone.utc).timestamp()
    return day, sum(r.cost_between(midnight, upto) for r in ledger.between(midnight, upto))


@dataclass(frozen=True)
class Ticker:
    """Everything the ticker line shows, as of one instant."""

    view: CostView
    session_spend: float
    burn_history: tuple[float, ...]
    runway_warn_h: float
    runway_critical_h: float
    idle_pods: int
    today_spend: float
    daily_budget: float | None


@dataclass(frozen=True)
class WentIdle:
    """A running pod turned idle: said once per idle stretch."""

    pod: Pod
    text: str
    countdown: tuple[float, float] | None  # (idle seconds, $/hr): the user asked podtui to stop it once idle


@dataclass(frozen=True)
class BudgetStep:
    """Today's spend crossed a step of the daily budget: said once a day per step."""

    step: float
    text: str
    day: str = ""  # the day it belongs to (ISO date): said once a day, so once per occurrence (docs/alerts.md#events)

    @property
    def severity(self) -> Literal["warning", "error"]:
        return "error" if self.step >= 1 else "warning"


class CostTicker:
    def __init__(self, config: Config, clock: Callable[[], float]) -> None:
        self.config = config
        self.clock = clock
        self.idle = IdleTracker(
            config.idle_threshold_pct, config.idle_window_min * 60.0, max_gap_s=max(600.0, 3 * config.poll_interval_s)
        )  # a sleep or an outage restarts it
        self.session_spend = SessionSpend()
        self.today_spend = SessionSpend()  # integrated today since the session started (or since midnight)
        self._today: dt.date | None = None
        self._before: tuple[dt.date, float, bool] | None = None  # (day, spent before the session, quiet)
        self._budget_told: set[float] = set()
        self.idle_states: dict[str, IdleState] = {}
        self.idle_marks: dict[str, tuple[float, float]] = {}  # pod id: (seconds idle, what that has cost)
        self.autostop_pods: set[str] = set()  # in-app autostop, opted in per pod

    def after_poll(self, snap: Snapshot, transferring: Iterable[str]) -> list[WentIdle]:
        """Feed the idle tracker (a transfer is use, whatever the GPU does); the pods that turned idle."""
        now = self.clock()
        running = {p.id for p in snap.pods if p.status is PodStatus.RUNNING and p.live_runtime is not None}
        self.idle.keep_only(running)
        for p in snap.pods:
            if p.id in running:
                self.idle.observe(p.id, p.gpu_util_max, now)  # one busy GPU of eight is a busy pod
        for pid in transferring:
            self.idle.typed(pid, now)
        view = cost_view(snap, now)
        self._spend(now, view.burn_per_hr)  # at each poll too, so a new burn applies from the moment it is known
        self.idle_states = {pid: s for pid in running if (s := self.idle.state(pid, now)).idle}
        self.idle_marks = {
            pid: (s.seconds, s.cost(cost.per_hr))
            for pid, s in self.idle_states.items()
            if (cost := view.cost_of(pid)) is not None
        }
        events = []
        for pid in self.idle.newly_idle(now):
            pod = next(p for p in snap.pods if p.id == pid)
            cost = view.cost_of(pid)
            per_hr = units.rate(cost.per_hr) if cost else "?"
            text = (
                f"{pod.name} is idle: GPU under {self.idle.threshold_pct:g}% for "
                f"{units.duration(self.idle.window_s)}, still billing {per_hr}"
            )
            countdown = (
                (self.idle_states[pid].seconds, cost.per_hr) if pid in self.autostop_pods and cost is not None else None
            )
            events.append(WentIdle(pod, text, countdown))
        return events

    def spent_before(self, day: dt.date, spent: float, quiet: bool) -> None:
        """What today (the UTC `day`) cost before this session, from the ledger (`spent_today_before`). quiet: a
        budget step it reaches already is where things stand, not news (the app: the ticker line shows it)."""
        self._before = (day, max(0.0, spent), quiet)
        if day == self._today and quiet:  # the steps told are those today stands past now
            self._budget_told = self._steps_reached(self.today_total)

    @property
    def before_known(self) -> bool:
        """The ledger's part of today has been handed in."""
        return self._before is not None

    @property
    def today_total(self) -> float:
        """Today's spend: the ledger's before this session, and the burn integrated since."""
        before = self._before[1] if self._before is not None and self._before[0] == self._today else 0.0
        return before + self.today_spend.total

    def _steps_reached(self, spent: float) -> set[float]:
        budget = self.config.daily_budget
        return {step for step in BUDGET_STEPS if budget and spent >= budget * step}

    def tick(self, snap: Snapshot | None) -> list[BudgetStep]:
        """Every second: integrate the burn into the session's and today's spend; the budget steps crossed."""
        if snap is None:
            return []
        now = self.clock()
        spent = self._spend(now, cost_view(snap, now).burn_per_hr)
        budget = self.config.daily_budget
        steps = []
        if budget:
            for step in sorted(self._steps_reached(spent) - self._budget_told):
                self._budget_told.add(step)
                steps.append(
                    BudgetStep(
                        step,
                        f"{step:.0%} of today's budget spent: {units.money(spent)} of {units.money(budget)} "
                        "(the UTC day)",
                        str(self._today),
                    )
                )
        return steps

    def typed(self, pod_id: str) -> None:
        """Someone typed into a console on the pod: it is in use."""
        self.idle.typed(pod_id, self.clock())

    def set_autostop(self, pod: Pod, on: bool, countdown_s: int) -> str:
        """Opt the pod in or out of in-app autostop; what to tell the user."""
        if not on:
            self.autostop_pods.discard(pod.id)
            return f"in-app autostop off for {pod.name}"
        self.autostop_pods.add(pod.id)
        return (
            f"in-app autostop on for {pod.name}: once idle {units.duration(self.idle.window_s)} under "
            f"{self.idle.threshold_pct:g}% GPU, podtui counts down {countdown_s} s and stops it (while podtui "
            "runs; `podtui autostop` works with the laptop closed)"
        )

    def _spend(self, now: float, burn: float) -> float:
        """Integrate the burn into this session's and today's spend; return today's."""
        self.session_spend.update(now, burn)
        today = utc_day(now)
        if today != self._today:  # a new (UTC) day: today's spend and its budget start again
            self._today, self.today_spend, self._budget_told = today, SessionSpend(), set()
            if self._before is not None and self._before[0] == today and self._before[2]:
                self._budget_told = self._steps_reached(self._before[1])
        self.today_spend.update(now, burn)
        return self.today_total

    def ticker(self, snap: Snapshot | None) -> Ticker | None:
        if snap is None:
            return None
        c = self.config
        samples = tuple(b for _, b in self.session_spend.samples)
        return Ticker(
            cost_view(snap, self.clock()),
            self.session_spend.total,
            samples,
            c.runway_warn_h,
            c.runway_critical_h,
            len(self.idle_states),
            self.today_total,
            c.daily_budget,
        )
