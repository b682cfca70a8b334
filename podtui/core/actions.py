"""Stop, resume, restart and terminate: when each makes sense, and what to tell the user before doing it.

What is possible comes from the pod's own `actions` (RunPod lists the transitions valid now,
docs/runpod-facts.md#rest-v2); a locked pod says why it cannot be stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from podtui.core import units
from podtui.core.api.client import RunPodApi
from podtui.core.cost import HOURS_PER_MONTH, VOLUME_STOPPED
from podtui.core.pod import Pod, PodStatus

Verb = Literal["stop", "resume", "restart", "terminate"]
VERBS: tuple[Verb, ...] = ("stop", "resume", "restart", "terminate")
# the v2 action each verb sends ("resume" is RunPod's "start": the word people use for a stopped pod)
API_ACTION: dict[str, str] = {"stop": "stop", "resume": "start", "restart": "restart", "terminate": "terminate"}


# What the pod is doing once the request is accepted (it takes RunPod a while to finish).
UNDER_WAY: dict[str, str] = {
    "stop": "stopping",
    "resume": "resuming",
    "restart": "restarting",
    "terminate": "terminating",
}


# RunPod's own words for what a lock does (the spec's `locked`)
LOCKED_WORDS = "Locked pods cannot be stopped or reset"
DATA_AT_ZERO = "data deleted at $0"  # the mark of a pod without a network volume


class ActionRefused(Exception):
    """The action does not apply to the pod in its current state."""


class ReadOnly(ActionRefused):
    """Read-only mode is on: nothing that changes or costs anything is done."""


def guard(read_only: bool, what: str) -> None:
    """Call before anything that changes the account, a pod, or costs money."""
    if read_only:
        raise ReadOnly(f"read-only mode: {what} is switched off (--read-only, or read_only = true in config.toml)")


@dataclass(frozen=True)
class Confirmation:
    title: str
    body: str
    button: str
    danger: bool


def check(verb: Verb, pod: Pod) -> None:
    """Refuse what RunPod would refuse (409), in words, before anything is sent."""
    if pod.locked and _locked_out(verb, pod):
        raise ActionRefused(
            f"{pod.name} is locked: RunPod will not stop or restart it until it is unlocked "
            f"({LOCKED_WORDS.lower()}; `podtui edit POD --unlock`, or the edit screen)"
        )
    if pod.can(API_ACTION[verb]):
        return
    if verb == "terminate":
        raise ActionRefused(f"{pod.name} is {_status(pod)}; RunPod does not offer terminate for it now")
    if verb == "stop":
        raise ActionRefused(f"{pod.name} is {_status(pod)}; nothing to stop")
    if verb == "resume":
        raise ActionRefused(f"{pod.name} is {_status(pod)}; only a stopped pod (EXITED or ERROR) can be resumed")
    raise ActionRefused(f"{pod.name} is {_status(pod)}; only a running pod can be restarted")


def offered(verb: str, pod: Pod) -> bool:
    """The verb's key is live for this pod: RunPod offers it now, or the pod is locked (the key then says why)."""
    if verb not in API_ACTION:
        return False
    return pod.can(API_ACTION[verb]) or (pod.locked and _locked_out(verb, pod))


def _locked_out(verb: str, pod: Pod) -> bool:
    """What only the lock forbids: stop while the pod is up or coming up, restart while it runs."""
    if verb == "stop":
        return pod.status in (PodStatus.PROVISIONING, PodStatus.STARTING, PodStatus.RUNNING)
    return verb == "restart" and pod.status is PodStatus.RUNNING


def _status(pod: Pod) -> str:
    return pod.state if pod.status is PodStatus.UNKNOWN else pod.status.value


def perform(api: RunPodApi, verb: Verb, pod: Pod) -> None:
    """Send the action; raises ApiError subclasses on failure."""
    if verb == "stop":
        api.stop_pod(pod.id)
    elif verb == "resume":
        api.start_pod(pod.id)
    elif verb == "restart":
        api.restart_pod(pod.id)
    else:
        api.terminate_pod(pod.id)


def stopped_already(api: RunPodApi, pod_id: str) -> bool:
    """RunPod says the pod is stopped now: a stop it refused with 409 (another job's stop, or one whose answer was
    lost, got there first) did what it was for (docs/jobs.md#after-a-job). False when it cannot say."""
    from podtui.core.api.errors import ApiError

    try:
        return api.fetch_pod(pod_id).status is PodStatus.EXITED
    except ApiError:
        return False


def confirmation(verb: Verb, pod: Pod) -> Confirmation:
    gpu = f"{pod.gpu_label} at {units.rate(pod.cost_per_hr)}"
    if verb == "stop":
        keep = ""
        if pod.volume_gb:
            monthly = pod.volume_gb * VOLUME_STOPPED
            keep = (
                f"\nIts {pod.volume_gb:g} GB volume keeps billing while stopped "
                f"(${monthly:.2f}/month, {units.rate(monthly / HOURS_PER_MONTH)})."
            )
        return Confirmation(
            f"Stop {pod.name}?",
            f"{pod.id} · {gpu}\nGPU billing stops. {survives('stop', pod)}.{keep}",
            "Stop",
            danger=False,
        )
    if verb == "restart":
        return Confirmation(
            f"Restart {pod.name}?",
            f"{pod.id} · {gpu}\nThe container restarts: running processes end and the container disk is reset; "
            "the volume is kept. Keys added to the account since it started reach it now.",
            "Restart",
            danger=False,
        )
    if verb == "resume":
        return Confirmation(
            f"Resume {pod.name}?",
            f"{pod.id} · {gpu}\nBilling starts again as soon as the pod is running. "
            "Its machine may have no free GPU now (a stopped pod holds none).",
            "Resume",
            danger=False,
        )
    accrued = f"\nThis run has cost {units.money(pod.accrued_cost)} so far." if pod.accrued_cost else ""
    return Confirmation(
        f"TERMINATE {pod.name}?",
        f"{pod.id} · {gpu}{accrued}\n{survives('terminate', pod)}.\nThis cannot be undone.",
        "Terminate",
        danger=True,
    )


# --- what survives -------------------------------------------------------------------------------------------


def survives(verb: Verb, pod: Pod) -> str:
    """Which of the pod's data a stop or a terminate keeps, in a sentence (no full stop): stop keeps the volume
    (persistent or network) and wipes the container disk; terminate deletes the pod's own volume, while a network
    volume lives on by itself (docs/runpod-facts.md#pricing-and-the-balance)."""
    path = f" at {pod.volume_mount_path}" if pod.volume_mount_path else ""
    if verb == "terminate":
        if pod.network_volume:
            return f"The network volume {pod.network_volume} survives; the container disk is deleted"
        if pod.volume_gb:
            return f"Its container disk and its {pod.volume_gb:g} GB volume{path} are deleted for good"
        return "Its container disk is deleted for good (it has no volume)"
    if verb == "stop":
        if pod.network_volume:
            return f"The container disk is wiped; the network volume {pod.network_volume}{path} is kept"
        if pod.volume_gb:
            return f"The container disk is wiped; the {pod.volume_gb:g} GB volume{path} is kept"
        return "The container disk is wiped; it has no volume, so nothing of its files is kept"
    return "Nothing is deleted"


def fate(verb: Verb, pod: Pod) -> str:
    """survives() in a few words, for a list of pods with one line each: what becomes of the pod's volume."""
    if pod.network_volume:
        return f"net volume {pod.network_volume} kept"
    if verb == "terminate":
        return f"{pod.volume_gb:g} GB volume deleted" if pod.volume_gb else "no volume: its files deleted"
    if verb == "stop":
        return f"{pod.volume_gb:g} GB volume kept" if pod.volume_gb else "no volume: its files wiped"
    return "nothing deleted"


def loses_data_at_zero(pod: Pod) -> bool:
    """At $0 RunPod terminates the pods without a network volume (docs/runpod-facts.md#pricing-and-the-balance)."""
    return pod.status is not PodStatus.TERMINATED and not pod.network_volume


# --- several pods at once ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BulkItem:
    pod: Pod
    refused: str | None  # why the verb cannot be done to it now; None: it is done
    verb: Verb = "stop"

    @property
    def saves_per_hr(self) -> float:
        """What stopping or terminating it takes off the burn: its rate now, less what its volume still costs once
        stopped (a stopped pod's v2 cost is 0 while its volume bills on, which a terminate saves too)."""
        volume = (self.pod.volume_gb or 0.0) * VOLUME_STOPPED / HOURS_PER_MONTH
        running = self.pod.cost_per_hr or 0.0
        if self.pod.status is PodStatus.EXITED:
            running = 0.0
        return max(0.0, running - volume) if self.verb == "stop" else running + volume


@dataclass(frozen=True)
class BulkPlan:
    """One verb on several pods: which of them it applies to, what each costs, what it saves."""

    verb: Verb
    items: tuple[BulkItem, ...]

    @property
    def acting(self) -> tuple[Pod, ...]:
        return tuple(i.pod for i in self.items if i.refused is None)

    @property
    def refused(self) -> tuple[BulkItem, ...]:
        return tuple(i for i in self.items if i.refused is not None)

    @property
    def per_hr(self) -> float:
        return sum(p.cost_per_hr or 0.0 for p in self.acting)

    @property
    def saves_per_hr(self) -> float:
        return sum(i.saves_per_hr for i in self.items if i.refused is None)

    def summary(self) -> str:
        n = len(self.acting)
        pods = f"{n} pod{'s' if n != 1 else ''}"
        if not n:
            return f"None of these pods can be {PAST[self.verb]} now."
        return f"{self.verb.capitalize()} {pods}: they cost {units.rate(self.per_hr)} now; this saves " + (
            f"{units.rate(self.saves_per_hr)}."
        )


PAST: dict[str, str] = {"stop": "stopped", "resume": "resumed", "restart": "restarted", "terminate": "terminated"}


def bulk_plan(verb: Verb, pods: list[Pod] | tuple[Pod, ...]) -> BulkPlan:
    """Each pod once (in the order given), with why the verb does not apply to it now, if it does not."""
    items: list[BulkItem] = []
    seen: set[str] = set()
    for pod in pods:
        if pod.id in seen:
            continue
        seen.add(pod.id)
        try:
            check(verb, pod)
        except ActionRefused as e:
            items.append(BulkItem(pod, str(e), verb))
        else:
            items.append(BulkItem(pod, None, verb))
    return BulkPlan(verb, tuple(items))
