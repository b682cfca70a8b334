"""Examining a pod: run the probe through its shell, read the answer, judge it.

The one module of the doctor that talks to a pod; `probe` (the script and its reading) and `checks` (the
verdicts) stay plain functions of text, so each is tested without SSH."""

from __future__ import annotations

from typing import TYPE_CHECKING

from podtui.core.doctor.checks import DoctorReport, diagnose
from podtui.core.doctor.probe import parse_probe, probe_script

if TYPE_CHECKING:
    from podtui.core.pod import Pod
    from podtui.core.ssh.connect import SshSettings
    from podtui.core.ssh.remote import RemoteShell

# Each step of the script has its own timeout (at most 60+60+15+15+15+10+15 = 190 s in all), under this one, so a
# hanging driver or network volume shows up as that check's failure rather than as no answer at all.
PROBE_TIMEOUT_S = 240.0


def run_doctor(shell: RemoteShell, volume: str = "/workspace", timeout_s: float = PROBE_TIMEOUT_S) -> DoctorReport:
    """Probe the pod through `shell` (run_remote's gateway or direct path) and judge what it found."""
    from podtui.core.ssh.errors import RemoteTimeout

    try:
        output, timed_out = shell.run(probe_script(volume), timeout_s).output, False
    except RemoteTimeout as e:  # judge what arrived; the rest is reported as not answered
        output, timed_out = e.output, True
    return diagnose(parse_probe(output), volume, timed_out=timed_out)


class PodNotReady(Exception):
    """The pod cannot be examined now (stopped, starting); the message says what to do."""


def doctor_pod(pod: Pod, settings: SshSettings) -> DoctorReport:
    """Examine a running pod over whichever route it offers (direct SSH's exec channel, else the gateway)."""
    from podtui.core.ssh.remote import open_remote

    if pod.state != "RUNNING":
        what = {
            "PROVISIONING": "is still starting: try again once it runs",
            "STARTING": "is still starting: try again once it runs",
            "EXITED": "is stopped: resume it first",
            "ERROR": "is in ERROR: resume (start) it first",
        }.get(pod.state, f"is {pod.state.lower()}: it cannot be examined")
        raise PodNotReady(f"{pod.name} {what}")
    with open_remote(pod, settings) as shell:
        return run_doctor(shell, pod.volume_mount_path or "/workspace")
