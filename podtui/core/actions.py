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
        raise ActionRefused(f"{pod.name} is locked: RunPod will not stop or restart it until it is unlocked")
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
            f"{pod.id} · {gpu}\nGPU billing stops; the container disk is wiped, the volume is kept.{keep}",
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
            "It may land on a machine with no free GPU.",
            "Resume",
            danger=False,
        )
    accrued = f"\nThis run has cost {units.money(pod.accrued_cost)} so far." if pod.accrued_cost else ""
    volume = (
        f"The network volume {pod.network_volume} survives."
        if pod.network_volume
        else "Its container disk and volume data are deleted for good."
    )
    return Confirmation(
        f"TERMINATE {pod.name}?",
        f"{pod.id} · {gpu}{accrued}\n{volume}\nThis cannot be undone.",
        "Terminate",
        danger=True,
    )
