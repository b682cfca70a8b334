"""The simulated account's usage record and the one accounting both the balance and the billing history come from.

Every stretch of simulated time the World bills goes through `charge`: each pod's and each network volume's rates
(docs/runpod-facts.md#pricing-and-the-balance) are written into the record as charges (start, end, $/hr, kind)
and the same amount is taken from the balance, so what REST v2's billing routes answer (billing_v2.py) and what
the balance lost always agree (docs/spend.md#the-simulators-billing). Charges are kept after a pod is terminated
or a volume deleted: billing still names them by id. A stretch with the same rate as the charge before it
lengthens that charge, so the record grows with changes, not with time.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

# Storage prices, $/GB/month (docs/runpod-facts.md#pricing-and-the-balance): the ones podtui's own figures use
from podtui.core.cost import CONTAINER_DISK_RUNNING, HOURS_PER_MONTH, VOLUME_RUNNING, VOLUME_STOPPED
from podtui.sim.sim_pod import SimPod
from podtui.sim.volumes import NETWORK_VOLUME_MONTH, SimVolume

# GPU time is billed while the pod holds its machine: running, restarting, its container failed or not
BILLED = ("RUNNING", "RESTARTING", "DEAD")
STOPPED = ("EXITED", "PAUSED")  # the pod's volume alone bills

# What a charge is for: a pod's GPU or CPU time and its disk; a network volume's storage by its tier.
GPU, CPU, DISK = "gpu", "cpu", "disk"
STANDARD, HIGH_PERFORMANCE = "standard", "highPerformance"
POD_KINDS = (GPU, CPU, DISK)
VOLUME_KINDS = (STANDARD, HIGH_PERFORMANCE)
LATEST_TIME = 253402300799.0  # 9999-12-31T23:59:59Z, the last instant RFC 3339 writes


@dataclass
class Charge:
    """`per_hr` dollars an hour for `kind`, over [start, end) in the simulated clock's seconds."""

    start: float
    end: float
    per_hr: float
    kind: str

    def amount(self, start: float, end: float) -> float:
        """What this charge billed within [start, end)."""
        overlap = min(end, self.end) - max(start, self.start)
        return self.per_hr * overlap / 3600.0 if overlap > 0 else 0.0


def pod_rates(pod: SimPod) -> dict[str, float]:
    """What `pod` bills per hour in its status now, by kind: GPU (or CPU) time and disk while it holds its machine,
    its volume alone while stopped, nothing while it starts or once terminated."""
    if pod.status in BILLED:
        disk = (pod.container_disk_gb * CONTAINER_DISK_RUNNING + pod.volume_gb * VOLUME_RUNNING) / HOURS_PER_MONTH
        return {CPU if pod.cpu_flavor or not pod.gpu_count else GPU: pod.cost_per_hr, DISK: disk}
    if pod.status in STOPPED:
        return {DISK: pod.volume_gb * VOLUME_STOPPED / HOURS_PER_MONTH}
    return {}


def volume_kind(volume: SimVolume) -> str:
    return HIGH_PERFORMANCE if volume.type == "HIGH_PERFORMANCE" else STANDARD


def volume_per_hr(volume: SimVolume) -> float:
    """$0.07/GB/month for as long as it exists (docs/runpod-facts.md#network-volumes)."""
    return volume.size_gb * NETWORK_VOLUME_MONTH / HOURS_PER_MONTH


class Usage:
    """Per pod and per network volume, by id: every charge since the record began, oldest first."""

    def __init__(self) -> None:
        self.pods: dict[str, list[Charge]] = {}
        self.volumes: dict[str, list[Charge]] = {}

    def add(
        self, book: dict[str, list[Charge]], owner: str, kind: str, per_hr: float, start: float, end: float
    ) -> None:
        """One stretch billed: the charge of that kind and rate ending at `start` grows, or a new one begins."""
        if end <= start or per_hr <= 0:
            return
        charges = book.setdefault(owner, [])
        for last in reversed(charges[-len(POD_KINDS) :]):  # an owner has at most one open charge of each kind
            if last.kind == kind:
                if last.end == start and last.per_hr == per_hr:
                    last.end = end
                    return
                break
        charges.append(Charge(start, end, per_hr, kind))

    def pod_phase(self, pod: SimPod, start: float, end: float) -> float:
        """`pod` billed at its status's rates over [start, end); what it cost."""
        rates = pod_rates(pod)
        for kind, per_hr in rates.items():
            self.add(self.pods, pod.id, kind, per_hr, start, end)
        return sum(rates.values()) * max(0.0, end - start) / 3600.0

    def volume_phase(self, volume: SimVolume, start: float, end: float) -> float:
        per_hr = volume_per_hr(volume)
        self.add(self.volumes, volume.id, volume_kind(volume), per_hr, start, end)
        return per_hr * max(0.0, end - start) / 3600.0

    def forget_after(self, moment: float) -> int:
        """Drop what was billed from `moment` on (charges cut there, those after it gone): a record saved by a clock
        later than the one loading it would otherwise count that time twice. How many charges it changed."""
        changed = 0
        for book in (self.pods, self.volumes):
            for owner, charges in list(book.items()):
                kept = [c for c in charges if c.start < moment]
                changed += len(charges) - len(kept)
                for c in kept:
                    if c.end > moment:
                        c.end = moment
                        changed += 1
                if kept:
                    book[owner] = kept
                else:
                    del book[owner]
        return changed

    def total(self, start: float, end: float) -> float:
        """Everything billed within [start, end)."""
        return sum(c.amount(start, end) for book in (self.pods, self.volumes) for cs in book.values() for c in cs)


def per_hr(pods: Iterable[SimPod], volumes: Iterable[SimVolume]) -> float:
    return sum(sum(pod_rates(p).values()) for p in pods) + sum(volume_per_hr(v) for v in volumes)


def charge(
    usage: Usage, pods: Iterable[SimPod], volumes: Iterable[SimVolume], start: float, end: float, balance: float
) -> tuple[float, float | None]:
    """Bill [start, end) from `balance`: the balance after it, and the moment the money ran out (None while it
    lasts). When it runs out part way, the record stops where the money did, so the record and the balance never
    part, and the World stops the pods at that same moment."""
    pods, volumes = list(pods), list(volumes)
    rate = per_hr(pods, volumes)
    if end <= start or rate <= 0 or balance <= 0:
        return balance, None
    cost = rate * (end - start) / 3600.0
    ran_out = cost >= balance
    until = min(end, start + balance * 3600.0 / rate) if ran_out else end
    for pod in pods:
        usage.pod_phase(pod, start, until)
    for volume in volumes:
        usage.volume_phase(volume, start, until)
    return (0.0, until) if ran_out else (balance - cost, None)


# --- buckets -------------------------------------------------------------------------------------------------


def spread(charges: Iterable[Charge], edges: list[float]) -> list[dict[str, float]]:
    """The charges' amounts in each bucket [edges[i], edges[i+1]), by kind (kinds with nothing left out)."""
    out: list[dict[str, float]] = [{} for _ in range(max(0, len(edges) - 1))]
    for c in charges:
        first = max(0, bisect.bisect_right(edges, c.start) - 1)
        for i in range(first, len(out)):
            lo, hi = edges[i], edges[i + 1]
            if lo >= c.end:
                break
            got = c.amount(lo, hi)
            if got > 0:
                out[i][c.kind] = out[i].get(c.kind, 0.0) + got
    return out


# --- saved with the world ----------------------------------------------------------------------------------


def usage_record(usage: Usage) -> dict[str, Any]:
    """The record as JSON for state.py: each charge as [start, end, per_hr, kind]."""
    return {
        name: {owner: [[c.start, c.end, c.per_hr, c.kind] for c in charges] for owner, charges in book.items()}
        for name, book in (("pods", usage.pods), ("volumes", usage.volumes))
    }


def usage_from_record(record: object) -> Usage:
    """The record `usage_record` wrote; ValueError saying what is wrong with it."""
    if not isinstance(record, dict):
        raise ValueError("it is not a JSON object")
    usage = Usage()
    for name, book, kinds in (("pods", usage.pods, POD_KINDS), ("volumes", usage.volumes, VOLUME_KINDS)):
        saved = record.get(name, {})
        if not isinstance(saved, dict):
            raise ValueError(f"its {name} are not a JSON object")
        for owner, charges in saved.items():
            if not isinstance(charges, list) or not 0 < len(owner) <= 64:
                raise ValueError(f"{name} {owner[:40]!r} has no list of charges")
            book[owner] = [_charge(c, kinds, f"{name} {owner[:40]!r}") for c in charges]
    return usage


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _charge(saved: object, kinds: tuple[str, ...], where: str) -> Charge:
    if not (isinstance(saved, list) and len(saved) == 4 and all(_number(v) for v in saved[:3])):
        raise ValueError(f"{where} has a charge that is not [start, end, $/hr, kind]")
    start, end, per_hr_, kind = saved
    if kind not in kinds:
        raise ValueError(f"{where} has a charge of kind {str(kind)[:40]!r}, not one of {', '.join(kinds)}")
    if not 0 <= start <= end <= LATEST_TIME or per_hr_ < 0:
        raise ValueError(f"{where} has a charge whose times or rate are out of range")
    return Charge(float(start), float(end), float(per_hr_), kind)
