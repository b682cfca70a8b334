"""Stop, resume and terminate: when each makes sense, and what to tell the user before doing it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from podtui.core import units
from podtui.core.api.client import RunPodApi
from podtui.core.cost import HOURS_PER_MONTH, VOLUME_STOPPED
from podtui.core.pod import Pod, PodStatus

Verb = Literal["stop", "resume", "terminate"]


# What the pod is doing once the request is accepted (it takes RunPod a while to finish).
UNDER_WAY: dict[str, str] = {"stop": "stopping", "resume": "resuming", "terminate": "terminating"}


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
    if verb == "stop" and pod.status not in (PodStatus.RUNNING, PodStatus.CREATED, PodStatus.RESTARTING):
        raise ActionRefused(f"{pod.name} is not running ({pod.status.value}); nothing to stop")
    if verb == "resume" and pod.status not in (PodStatus.EXITED, PodStatus.PAUSED):
        raise ActionRefused(f"{pod.name} is {pod.status.value}; only a stopped pod can be resumed")
    if verb == "terminate" and pod.status is PodStatus.TERMINATED:
        raise ActionRefused(f"{pod.name} is already terminated")


def perform(api: RunPodApi, verb: Verb, pod: Pod) -> None:
    """Send the action; raises ApiError subclasses on failure."""
    if verb == "stop":
        api.stop_pod(pod.id)
    elif verb == "resume":
        # resume asks for the GPUs the pod had (0 for a CPU pod; 1 when RunPod did not say)
        api.resume_pod(pod.id, 1 if pod.gpu_count is None else pod.gpu_count)
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
