"""Alerts: what happened to the account that the user should hear of even when not looking, as data; the detector
that finds them in consecutive snapshots (with what the user asked and the cost ticker's events); the router that
sends each to the places the config names, once per occurrence and not again within the quiet period
(docs/alerts.md). Plain and clock-injected: the app (ui/alert_desk.py) and `podtui watch` (cli/watch_cmd.py) feed
the same objects.

An occurrence is one stretch of a condition: an idle stretch, an exit, a runway level crossed, a budget step of a
day, a transfer's end, a stuck start. The detector says it once, when it begins, and forgets it when it ends, so
it is said again only when it happens again; the router then keeps a pod that flaps (idle, busy, idle) from being
said more than once per quiet period.
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import os
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from podtui.core import units
from podtui.core.alert_rules import AlertRules, Kind, Sink
from podtui.core.cost import cost_view
from podtui.core.pod import Pod, PodStatus, Snapshot
from podtui.version import __version__

if TYPE_CHECKING:
    from podtui.core.config import Config
    from podtui.core.jobs.job import Job as DetachedJob
    from podtui.core.ticker import BudgetStep, WentIdle
    from podtui.transfer.job import TransferJob
    from podtui.transfer.sync.state import SyncResult

log = logging.getLogger(__name__)

Severity = Literal["information", "warning", "error"]  # Textual's notification levels, so the app shows them as is
ASKED_FOR_S = 600.0  # a stop or terminate the user asked explains the pod's exit this long after
DOWN = (PodStatus.EXITED, PodStatus.ERROR, PodStatus.TERMINATED)
REMEMBERED = 2000  # occurrences the router remembers having said (the oldest forgotten first)


_seq = itertools.count()  # numbers the occurrences the detector and the ticker begin: each is a new one


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Alert:
    kind: Kind
    text: str  # podtui's sentence; pod names in it as RunPod sent them (each sink makes it safe for its place)
    severity: Severity
    at: float  # epoch seconds
    occurrence: str  # one per occurrence: the router says each once
    quiet_key: str  # what the quiet period is counted per: the kind and its pod (or runway level, budget step)
    pod_id: str | None = None
    pod_name: str | None = None
    id: str = field(default_factory=new_id)  # the receivers' idempotency key: the same on every retry
    profile: str | None = None  # the account's profile (docs/profiles.md), set by the router; None: no profile

    @property
    def source(self) -> str:
        """ "podtui", or "podtui (work)" on a profile: which account an alert is about."""
        return f"podtui ({self.profile})" if self.profile else "podtui"

    @property
    def title(self) -> str:
        return f"{self.source}: {self.kind.replace('_', ' ')}" + (f" {self.pod_name}" if self.pod_name else "")

    def as_json(self) -> dict[str, Any]:
        """The alert as `podtui watch --json` and the webhook's json body give it (docs/alerts.md#the-webhook)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "severity": self.severity,
            "text": self.text,
            "pod": {"id": self.pod_id, "name": self.pod_name} if self.pod_id is not None else None,
            "time": iso_time(self.at),
            "ts": round(self.at, 3),
            "profile": self.profile,
            "source": "podtui",
            "version": __version__,
        }


def iso_time(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- what the cost ticker and the transfer queue report, as alerts ------------------------------------------------


def went_idle(event: WentIdle, at: float) -> Alert:
    """The ticker says a pod turned idle once per idle stretch: each is an occurrence."""
    pod = event.pod
    return Alert("idle", event.text, "warning", at, f"idle:{pod.id}:{next(_seq)}", f"idle:{pod.id}", pod.id, pod.name)


def budget_steps(steps: Iterable[BudgetStep], at: float) -> list[Alert]:
    """The ticker says each step once a day; 80% and 100% crossed in one second are said as 100%."""
    steps = sorted(steps, key=lambda s: s.step)
    return [
        Alert("budget", s.text, s.severity, at, f"budget:{s.day}:{s.step:g}", f"budget:{s.step:g}") for s in steps[-1:]
    ]


def transfer_ended(job: TransferJob, at: float) -> Alert | None:
    """A transfer verified or failed: one occurrence per end. A retried job keeps its id and can end again, and each
    end is news (a failure, then the retry verified): no quiet period, the occurrence is its own quiet key."""
    if job.state not in ("verified", "failed"):
        return None
    name = f"{job.label} ({job.pod_name or job.pod_id})"
    occurrence = f"transfer:{job.id}:{job.state}:{job.finished_at or at:.3f}:{job.attempts}"
    if job.state == "verified":
        text = f"{job.direction} {name}: verified"
        return Alert("transfer_verified", text, "information", at, occurrence, occurrence, job.pod_id, job.pod_name)
    text = f"{job.direction} {name} failed: {job.error or 'no reason given'}"
    return Alert("transfer_failed", text, "error", at, occurrence, occurrence, job.pod_id, job.pod_name)


JOB_SEVERITY: dict[str, Severity] = {"done": "information", "cancelled": "information", "failed": "warning"}


def job_ended(ended: DetachedJob, pod_name: str, at: float, next_step: str = "") -> Alert:
    """A detached job ended (docs/jobs.md#after-a-job): one occurrence per job, said once whatever podtui sees it
    end, and no quiet period (two jobs of one pod ending close together are two pieces of news). next_step: what
    podtui does now ("pulling 2 paths, then stopping the pod"), or nothing."""
    label = ended.label
    code = f" (exit {ended.exit_code})" if ended.exit_code is not None else ""
    took = ended.duration_s(at)
    after = f" after {units.duration(took)}" if took is not None and ended.ended is not None else ""
    words = {
        "done": f"done{code}{after}",
        "failed": f"failed{code}{after}",
        "cancelled": f"was cancelled{after}",
        "lost": "was lost",
    }.get(ended.state, ended.state)
    note = f": {ended.note}" if ended.note and ended.state in ("failed", "lost") else ""
    text = f"job {label} on {pod_name} {words}{note}" + (f"; {next_step}" if next_step else "")
    occurrence = f"job:{ended.pod_id}:{ended.id}:ended"
    severity = JOB_SEVERITY.get(ended.state, "error")  # lost: its work stopped with no exit, and nobody asked
    return Alert("job_ended", text, severity, at, occurrence, occurrence, ended.pod_id, pod_name)


def job_pod_kept(pod_id: str, pod_name: str, job_id: str, why: str, at: float) -> Alert:
    """A job's pulls did not all verify, so its pod was not stopped or terminated as asked: said as loudly as an
    error (the pod bills on), once per job (docs/jobs.md#after-a-job)."""
    occurrence = f"job:{pod_id}:{job_id}:kept"
    return Alert("job_ended", why, "error", at, occurrence, occurrence, pod_id, pod_name)


def sync_ended(result: SyncResult, at: float, watching: bool = False) -> Alert | None:
    """A sync the app ran ended (docs/sync.md): said as a transfer's end is, one occurrence per sync. A cancelled one
    is not news (it was asked for). In a watch (`watching`) only a failure is, and a watch that keeps failing is said
    once per quiet period; what verified shows in the pod's Sync tab."""
    if result.cancelled:
        return None
    spec = result.spec
    name = result.pod_name or spec.pod_id
    there = f"{name}:{result.remote_root or spec.remote}"
    here = _home_short(str(spec.local))
    way = f"{there} → {here}" if spec.pull else f"{here} → {there}"
    occurrence = f"sync:{spec.pod_id}:{result.started:.6f}"
    if result.ok:
        if watching:
            return None
        n = len(result.verified)
        text = f"sync {way}: {n} file{'' if n == 1 else 's'} verified on both ends ({units.size(result.copied_bytes)})"
        return Alert("transfer_verified", text, "information", at, occurrence, occurrence, spec.pod_id, name)
    if result.error is not None:
        text = f"sync {way} failed: {result.error}"
    else:
        path, reason = result.failed[0]
        n = len(result.failed)
        first = f"{path}: {reason}" if n == 1 else f"{n} files, the first {path}: {reason}"
        text = f"sync {way} failed for {first}"
    quiet = f"sync:{spec.pod_id}:watch" if watching else occurrence
    return Alert("transfer_failed", text, "error", at, occurrence, quiet, spec.pod_id, name)


def _home_short(path: str) -> str:
    """A local path as the user writes it: under the home folder with ~."""
    home = os.path.expanduser("~").rstrip("/")
    return "~" + path[len(home) :] if home and (path == home or path.startswith(home + "/")) else path


# --- the detector: consecutive snapshots in, the occurrences that began out ---------------------------------------


class AlertDetector:
    def __init__(self, config: Config, clock: Callable[[], float]) -> None:
        self.config = config
        self.clock = clock
        self._status: dict[str, PodStatus] = {}  # each pod's last known status
        self._names: dict[str, str] = {}  # each pod's name when last seen: a pod gone is named by it
        self._asked: dict[str, tuple[str, float]] = {}  # pod id: (verb, when) the user asked podtui
        self._stuck: set[str] = set()  # pods said to be stuck, until they are no longer starting
        self._runway: set[str] = set()  # the runway levels the balance is under now

    def asked(self, pod_id: str, verb: str) -> None:
        """The user asked podtui to stop or terminate the pod: its exit is theirs, not an alert."""
        self._asked[pod_id] = (verb, self.clock())

    def unasked(self, pod_id: str, verb: str) -> None:
        """RunPod refused the stop or terminate asked for: it explains no exit (a real one later is an alert)."""
        if self._asked.get(pod_id, ("", 0.0))[0] == verb:
            del self._asked[pod_id]

    def after_poll(self, snap: Snapshot, stuck: Iterable[tuple[Pod, float]] = ()) -> list[Alert]:
        """The occurrences that began with this snapshot. `stuck`: PodFeed.stuck(), the pods starting too long."""
        now = self.clock()
        self._asked = {p: a for p, a in self._asked.items() if now - a[1] <= ASKED_FOR_S}
        alerts = [*self._exits(snap, now), *self._stuck_starts(stuck, now)]
        runway = self._runway_crossed(snap, now)
        if runway is not None:
            alerts.append(runway)
        return alerts

    def _exits(self, snap: Snapshot, now: float) -> list[Alert]:
        out = []
        seen = {p.id for p in snap.pods}
        for pod in snap.pods:
            before = self._status.get(pod.id)
            if pod.status is PodStatus.UNKNOWN:
                continue  # no evidence either way: the last known status stands
            self._status[pod.id] = pod.status
            self._names[pod.id] = pod.name
            if before is None or before in DOWN or pod.status not in DOWN:
                continue
            verb = self._asked.pop(pod.id, ("", 0.0))[0]
            if verb == "terminate" or (verb == "stop" and pod.status is PodStatus.EXITED):
                continue  # what the user asked for
            out.append(self._exited(pod.id, pod.name, _exit_text(pod), now))
        if not snap.skipped_records:  # a pod missing from a whole answer is gone; from a partial one, perhaps not
            for gone in set(self._status) - seen:
                before = self._status.pop(gone)
                name = self._names.pop(gone, gone)
                verb = self._asked.pop(gone, ("", 0.0))[0]
                # RunPod's list leaves terminated pods out: a pod that vanished was terminated
                # (docs/alerts.md#events); one seen TERMINATED was said then
                if before is not PodStatus.TERMINATED and verb != "terminate":
                    out.append(self._exited(gone, name, _gone_text(name), now))
        return out

    def _exited(self, pod_id: str, name: str, text: str, now: float) -> Alert:
        return Alert("exited", text, "error", now, f"exited:{pod_id}:{next(_seq)}", f"exited:{pod_id}", pod_id, name)

    def _stuck_starts(self, stuck: Iterable[tuple[Pod, float]], now: float) -> list[Alert]:
        out = []
        now_stuck = set()
        for pod, for_s in stuck:
            now_stuck.add(pod.id)
            if pod.id in self._stuck:
                continue
            text = (
                f"{pod.name} has been starting for {units.duration(for_s)} and may be stuck: its system log "
                f"(podtui logs {pod.name} --source system) says why"
            )
            out.append(
                Alert(
                    "stuck", text, "warning", now, f"stuck:{pod.id}:{next(_seq)}", f"stuck:{pod.id}", pod.id, pod.name
                )
            )
        self._stuck = now_stuck
        return out

    def _runway_crossed(self, snap: Snapshot, now: float) -> Alert | None:
        """The most serious runway level newly crossed. An unknown runway (the balance unknown) says nothing and ends
        nothing; one back above a level ends that occurrence (a top-up, a pod stopped)."""
        view = cost_view(snap, now)
        runway = view.runway_s
        c = self.config
        if runway is None:
            if view.balance is not None:  # known balance, nothing burning: no runway to worry about
                self._runway.clear()
            return None
        under = {
            lvl
            for lvl, hours in (("warning", c.runway_warn_h), ("critical", c.runway_critical_h))
            if runway < hours * 3600
        }
        new = under - self._runway
        self._runway = under
        if not new:
            return None
        level = "critical" if "critical" in new else "warning"
        hours = c.runway_critical_h if level == "critical" else c.runway_warn_h
        balance = units.money(view.balance) if view.balance is not None else "?"
        text = (
            f"runway under {hours:g} h: the balance ({balance}) lasts {units.duration(runway)} at "
            f"{units.rate(max(view.burn_per_hr, view.pods_burn_per_hr))}"
        )
        if level == "critical":
            text += ". " + view.at_zero_warning()
        severity: Severity = "error" if level == "critical" else "warning"
        return Alert("runway", text, severity, now, f"runway:{level}:{next(_seq)}", f"runway:{level}")


def _exit_text(pod: Pod) -> str:
    if pod.status is PodStatus.ERROR:
        return (
            f"{pod.name} failed (ERROR): its container stopped and it may still bill; its log "
            f"(podtui logs {pod.name}) says why"
        )
    if pod.status is PodStatus.TERMINATED:
        return _gone_text(pod.name)
    return (
        f"{pod.name} stopped (EXITED) without this podtui asking: its main process ended, podtui's autostop watchdog "
        "on the pod stopped it, or a stop came from another podtui, the RunPod console or RunPod itself (at a $0 "
        "balance)"
    )


def _gone_text(name: str) -> str:
    return (
        f"{name} is gone (terminated) without this podtui asking: terminated from another podtui or the RunPod "
        "console, or by RunPod at a $0 balance; its data is gone unless it was on a network volume"
    )


# --- the router: each alert to its places, once per occurrence, not again within the quiet period -----------------


class AlertRouter:
    def __init__(
        self, rules: AlertRules, sinks: Mapping[Sink, Callable[[Alert], None]], profile: str | None = None
    ) -> None:
        """sinks: how each place is reached; a place the rules name but that is not here is skipped (`podtui watch`
        has no in-app toasts; its "app" is the line on stdout). profile: the account's profile, named in every
        alert that leaves (docs/alerts.md#the-webhook)."""
        self.rules = rules
        self.sinks = dict(sinks)
        self.profile = profile
        self._said: OrderedDict[str, None] = OrderedDict()
        self._last: dict[str, float] = {}  # quiet key: when it was last said
        self._broken: set[Sink] = set()  # sinks whose failure was logged (once each)

    def route(self, alert: Alert) -> tuple[Sink, ...]:
        """Send `alert` where the rules say; the places it went (none: said before, or quiet)."""
        if alert.occurrence in self._said:
            return ()
        self._said[alert.occurrence] = None
        while len(self._said) > REMEMBERED:
            self._said.popitem(last=False)
        last = self._last.get(alert.quiet_key)
        if last is not None and 0 <= alert.at - last < self.rules.quiet_s:
            log.info("alert %s not said again within the quiet period: %s", alert.quiet_key, alert.text)
            return ()
        self._last[alert.quiet_key] = alert.at
        if self.profile is not None:
            alert = replace(alert, profile=self.profile)
        places = tuple(s for s in self.rules.sinks_for(alert.kind) if s in self.sinks)
        for place in places:
            try:
                self.sinks[place](alert)
            except Exception:  # one place failing must not keep the alert from the others
                if place not in self._broken:
                    self._broken.add(place)
                    log.exception("alerts could not be sent to %s", place)
        return places

    def route_all(self, alerts: Iterable[Alert]) -> None:
        for a in alerts:
            self.route(a)
