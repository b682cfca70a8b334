"""The app's side of the cost ticker: session and daily spend integrated every second, idleness tracked at each
poll (with console input counting as use), and the notifications and bell that go with them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from podtui.core import actions, units
from podtui.core.config import Config
from podtui.core.cost import CostView, SessionSpend, cost_view
from podtui.core.idle import IdleState, IdleTracker
from podtui.core.pod import Pod, PodStatus, Snapshot
from podtui.ui.pod_view import Cells, row_cells

if TYPE_CHECKING:
    from podtui.ui.app import PodtuiApp

BUDGET_STEPS = (0.8, 1.0)


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


class CostsMixin:
    """Mixed into PodtuiApp."""

    config: Config

    def init_costs(self) -> None:
        c = self.config
        self.idle = IdleTracker(c.idle_threshold_pct, c.idle_window_min * 60.0,
                                max_gap_s=max(600.0, 3 * c.poll_interval_s))  # a sleep or an outage restarts it
        self.session_spend = SessionSpend()
        self.today_spend = SessionSpend()
        self._today: dt.date | None = None
        self._budget_told: set[float] = set()
        self.idle_states: dict[str, IdleState] = {}
        self.autostop_pods: set[str] = set()  # in-app autostop, opted in per pod
        self.autostop_countdown_s = 60

    @property
    def _app(self) -> PodtuiApp:
        return cast("PodtuiApp", self)

    def costs_after_poll(self, snap: Snapshot, rows: dict[str, Cells]) -> dict[str, Cells]:
        """Feed the idle tracker; return the rows with idle pods marked (how long, and what it has cost)."""
        app = self._app
        now = app.now()
        running = {p.id for p in snap.pods if p.status is PodStatus.RUNNING and p.live_runtime is not None}
        self.idle.keep_only(running)
        for p in snap.pods:
            if p.id in running:
                self.idle.observe(p.id, p.gpu_util_max, now)  # one busy GPU of eight is a busy pod
        for pid in self._app.transferring_pods():
            self.idle.typed(pid, now)  # a transfer is use, whatever the GPU does
        view = cost_view(snap, now)
        self._spend(now, view.burn_per_hr)  # at each poll too, so a new burn applies from the moment it is known
        self.idle_states = {pid: s for pid in running if (s := self.idle.state(pid, now)).idle}
        marked = dict(rows)
        for p in snap.pods:
            state = self.idle_states.get(p.id)
            cost = view.cost_of(p.id)
            if state is not None and cost is not None:
                marked[p.id] = row_cells(p, idle=(state.seconds, state.cost(cost.per_hr)))
        for pid in self.idle.newly_idle(now):
            pod = next(p for p in snap.pods if p.id == pid)
            cost = view.cost_of(pid)
            per_hr = units.rate(cost.per_hr) if cost else "?"
            app.notify(f"{pod.name} is idle: GPU under {self.idle.threshold_pct:g}% for "
                       f"{units.duration(self.idle.window_s)}, still billing {per_hr}", severity="warning",
                       timeout=15, markup=False)
            app.bell()
            if pid in self.autostop_pods and not app.read_only and cost is not None:
                self._count_down(pod, self.idle_states[pid].seconds, cost.per_hr)
        return marked

    def toggle_autostop(self, pod: Pod) -> None:
        app = self._app
        if pod.id in self.autostop_pods:
            self.autostop_pods.discard(pod.id)
            app.notify(f"in-app autostop off for {pod.name}", markup=False)
            return
        try:
            actions.guard(app.read_only, "autostop")
        except actions.ActionRefused as e:
            app.notify(str(e), severity="warning", markup=False)
            return
        self.autostop_pods.add(pod.id)
        app.notify(f"in-app autostop on for {pod.name}: once idle {units.duration(self.idle.window_s)} under "
                   f"{self.idle.threshold_pct:g}% GPU, podtui counts down {self.autostop_countdown_s} s and stops "
                   "it (while podtui runs; `podtui autostop` works with the laptop closed)", markup=False, timeout=10)

    def watchdog(self, pod: Pod, action: str) -> None:
        """install, remove or status of the on-pod watchdog, in a thread worker; the answer comes as a note."""
        app = self._app
        if action != "status":
            try:
                actions.guard(app.read_only, f"autostop {action}")
            except actions.ActionRefused as e:
                app.notify(str(e), severity="warning", markup=False)
                return
        app.notify(f"autostop watchdog on {pod.name}: {action}…", timeout=3, markup=False)
        app.run_worker(lambda: self._watchdog(pod, action), thread=True, group="watchdog", exit_on_error=False)

    def _watchdog(self, pod: Pod, action: str) -> None:
        from podtui.core import autostop
        from podtui.core.ssh.errors import SshError
        from podtui.core.ssh.remote import open_remote

        app = self._app
        c = self.config
        try:
            with open_remote(pod, app.ssh_settings()) as shell:
                if action == "install":
                    st = autostop.install(shell, c.idle_threshold_pct, c.idle_window_min * 60)
                elif action == "remove":
                    autostop.remove(shell)
                    st = autostop.status(shell)
                else:
                    st = autostop.status(shell)
            text, severity = f"autostop watchdog on {pod.name}: {st.label}", "information"
        except (SshError, autostop.AutostopError) as e:
            text, severity = f"autostop watchdog on {pod.name}: {e}", "error"
        app.call_from_thread(app.notify, text, severity=severity, markup=False, timeout=10)

    def _count_down(self, pod: Pod, idle_s: float, per_hr: float) -> None:
        from podtui.ui.screens.countdown import CountdownScreen

        app = self._app
        if any(isinstance(s, CountdownScreen) for s in app.screen_stack):
            app.notify(f"{pod.name} is idle too; autostop waits until the open countdown is answered",
                       markup=False)
            return  # one countdown at a time, always the one on top

        def answered(stop: bool | None) -> None:
            if stop:
                app.start_action("stop", pod)
            else:
                app.notify(f"{pod.name} keeps running; autostop waits for its next idle stretch", markup=False)

        app.open_screen(CountdownScreen(pod, idle_s, per_hr, self.autostop_countdown_s), ("countdown", pod.id),
                        answered)

    def console_typed(self, pod_id: str) -> None:
        self.idle.typed(pod_id, self._app.now())

    def cost_tick(self) -> None:
        """Every second: integrate the burn into the session's and today's spend; budget notifications."""
        app = self._app
        snap = app.feed.snapshot
        if snap is None:
            return
        now = app.now()
        spent = self._spend(now, cost_view(snap, now).burn_per_hr)
        budget = self.config.daily_budget
        if budget:
            for step in BUDGET_STEPS:
                if spent >= budget * step and step not in self._budget_told:
                    self._budget_told.add(step)
                    app.notify(f"{step:.0%} of today's budget spent: {units.money(spent)} of {units.money(budget)} "
                               f"(since podtui started today)", severity="error" if step >= 1 else "warning",
                               timeout=20, markup=False)
                    app.bell()

    def _spend(self, now: float, burn: float) -> float:
        """Integrate the burn into this session's and today's spend; return today's."""
        self.session_spend.update(now, burn)
        today = dt.datetime.fromtimestamp(now).date()
        if today != self._today:  # a new day: today's spend and its budget start again
            self._today, self.today_spend, self._budget_told = today, SessionSpend(), set()
        return self.today_spend.update(now, burn)

    def ticker(self) -> Ticker | None:
        snap = self._app.feed.snapshot
        if snap is None:
            return None
        c = self.config
        samples = tuple(b for _, b in self.session_spend.samples)
        return Ticker(cost_view(snap, self._app.now()), self.session_spend.total, samples, c.runway_warn_h,
                      c.runway_critical_h, len(self.idle_states), self.today_spend.total, c.daily_budget)
