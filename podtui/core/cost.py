"""What the account costs: per pod, in all, and how long the balance lasts.

RunPod bills per second; container disk $0.10/GB/month while running; volume $0.10/GB/month running and $0.20
stopped; at a $0 balance every pod is stopped and pods without a network volume are TERMINATED, losing their
data (docs/runpod-facts.md#pricing-and-the-balance). Between polls the figures are interpolated from the last
snapshot's rates (the ticker moves every second) and corrected when the next snapshot lands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from podtui.core.pod import Pod, PodStatus, Snapshot

HOURS_PER_MONTH = 730.0
CONTAINER_DISK_RUNNING = 0.10  # $/GB/month
VOLUME_RUNNING = 0.10
VOLUME_STOPPED = 0.20
MAX_RUNWAY_S = 10 * 365 * 86400.0  # beyond ten years it is "a long time", not a number to format
BURN_TOLERANCE = 0.02  # the API's burn and the sum over pods may differ by rounding; beyond this, say so


@dataclass(frozen=True)
class PodCost:
    pod: Pod
    per_hr: float  # what it costs right now: GPU and disks while running, the volume while stopped
    accrued: float | None  # this run so far (uptime x GPU rate), for a running pod
    storage_per_hr: float  # the disks' share of per_hr
    rate_known: bool = True  # False: a running pod whose $/hr RunPod did not give (or gave as garbage)

    @property
    def loses_data_at_zero(self) -> bool:
        """At $0 RunPod terminates pods without a network volume (docs/runpod-facts.md#pricing-and-the-balance)."""
        return self.pod.status is not PodStatus.TERMINATED and not self.pod.network_volume


def pod_cost(pod: Pod, elapsed_s: float = 0.0) -> PodCost:
    """elapsed_s: seconds since the snapshot was fetched, to move the accrued cost on between polls."""
    volume = pod.volume_gb or 0.0
    if pod.status is PodStatus.RUNNING:
        storage = ((pod.container_disk_gb or 0.0) * CONTAINER_DISK_RUNNING + volume * VOLUME_RUNNING) / HOURS_PER_MONTH
        gpu = pod.cost_per_hr or 0.0
        accrued = pod.accrued_cost
        if accrued is not None and pod.live_runtime is not None:
            accrued += gpu * elapsed_s / 3600.0
        # an unknown rate counts as 0 in the sums, which then say they are partial (unknown_rates)
        return PodCost(pod, gpu + storage, accrued, storage, rate_known=pod.cost_per_hr is not None)
    if pod.status is PodStatus.ERROR and pod.cost_per_hr:
        # RunPod still bills it at the rate it gives (v2's cost is 0 once a pod is not billed)
        storage = volume * VOLUME_STOPPED / HOURS_PER_MONTH
        return PodCost(pod, pod.cost_per_hr + storage, None, storage)
    if pod.status in (PodStatus.EXITED, PodStatus.ERROR):  # stopped: the volume bills on
        storage = volume * VOLUME_STOPPED / HOURS_PER_MONTH
        return PodCost(pod, storage, None, storage)
    return PodCost(pod, 0.0, None, 0.0)  # starting pods are not billed until they run; terminated ones never


@dataclass(frozen=True)
class CostView:
    pods: tuple[PodCost, ...]
    burn_per_hr: float  # the API's figure when it has one, else the sum over pods
    pods_burn_per_hr: float
    api_burn_per_hr: float | None
    balance: float | None  # interpolated to now
    spend_limit: float | None
    balance_unknown_why: str | None = None  # the balance is GraphQL's alone (docs/runpod-facts.md#graphql)

    @property
    def burn_disagrees(self) -> bool:
        api = self.api_burn_per_hr
        return api is not None and abs(api - self.pods_burn_per_hr) > max(BURN_TOLERANCE, 0.02 * api)

    @property
    def runway_s(self) -> float | None:
        """Seconds until the balance reaches $0; None when nothing burns or the balance is unknown. The higher of
        RunPod's burn and the pods' sum counts: when they disagree, the warning must not come late."""
        burn = max(self.burn_per_hr, self.pods_burn_per_hr)
        if self.balance is None or burn <= 0 or math.isnan(burn) or math.isnan(self.balance):
            return None
        return min(MAX_RUNWAY_S, max(0.0, self.balance / burn * 3600.0))

    @property
    def unknown_rates(self) -> tuple[str, ...]:
        """Names of running pods whose $/hr is unknown: the pods' sum (and the runway, when it uses it) is a floor."""
        return tuple(c.pod.name for c in self.pods if not c.rate_known)

    @property
    def lose_data_at_zero(self) -> tuple[str, ...]:
        """Names of the pods whose data is gone if the balance runs out."""
        return tuple(c.pod.name for c in self.pods if c.loses_data_at_zero)

    def at_zero_warning(self) -> str:
        lost = self.lose_data_at_zero
        text = "At $0 RunPod stops every pod"
        if lost:
            text += f" and terminates those without a network volume, deleting their data: {', '.join(lost)}"
        return text + "."

    def cost_of(self, pod_id: str) -> PodCost | None:
        return next((c for c in self.pods if c.pod.id == pod_id), None)


def cost_view(snapshot: Snapshot, now: float) -> CostView:
    elapsed = max(0.0, now - snapshot.fetched_at)
    costs = tuple(pod_cost(p, elapsed) for p in snapshot.pods)
    pods_burn = sum(c.per_hr for c in costs)
    api_burn = snapshot.account.spend_per_hr
    burn = api_burn if api_burn is not None else pods_burn
    balance = snapshot.account.balance
    if balance is not None:
        balance = max(0.0, balance - burn * elapsed / 3600.0)
    return CostView(
        costs, burn, pods_burn, api_burn, balance, snapshot.account.spend_limit, snapshot.account.unknown_why
    )


class SessionSpend:
    """Money spent since podtui started: the burn rate integrated over time, each stretch at the rate known then.

    A later snapshot corrects the rate from then on; the past is not rewritten (RunPod reports no history)."""

    def __init__(self) -> None:
        self.total = 0.0
        self._last: tuple[float, float] | None = None  # (time, burn $/hr) of the last update
        self.samples: list[tuple[float, float]] = []  # (time, burn) for the sparkline, one per update

    def update(self, now: float, burn_per_hr: float) -> float:
        if self._last is not None:
            then, rate = self._last
            if now > then:
                self.total += rate * (now - then) / 3600.0
        if self.samples and now <= self.samples[-1][0]:  # one sample per moment; the newest reading wins
            self.samples[-1] = (self.samples[-1][0], burn_per_hr)
        else:
            self.samples.append((now, burn_per_hr))
            del self.samples[:-600]  # ten minutes at one a second is plenty for a sparkline
        self._last = (now, burn_per_hr)
        return self.total


def projected_today(spent: float, burn_per_hr: float, seconds_left_today: float) -> float:
    """Spend by midnight: what this session has spent plus the current burn until the day ends."""
    return spent + burn_per_hr * max(0.0, seconds_left_today) / 3600.0
