"""Detached jobs in the follow-up's and the Jobs tab's tests: jobs started and waited for on a simulated pod over one
shell, and the follow-up's hooks as a podtui without a screen has them (as `podtui watch` runs it)."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from podtui.core import actions
from podtui.core.alerts import Alert, Severity
from podtui.core.api import V2Api
from podtui.core.jobs.follow import STOP_SENT, TERMINATE_SENT, FollowUp
from podtui.core.jobs.job import Job, JobSpec
from podtui.core.jobs.remote_jobs import find_job, start_job
from podtui.core.pod import Pod
from podtui.core.ssh.remote import RemoteShell
from podtui.transfer.queue import TransferQueue

OpenShell = Callable[[], AbstractContextManager[RemoteShell]]


def run_job(open_shell: OpenShell, pod: Pod, spec: JobSpec) -> Job:
    with open_shell() as sh:
        return start_job(sh, pod.id, spec, now=time.time())


def wait_ended(open_shell: OpenShell, pod: Pod, job_id: str, timeout_s: float = 90.0) -> Job:
    """The job once it has ended, looked at every half second over one shell."""
    deadline = time.monotonic() + timeout_s
    with open_shell() as sh:
        while True:
            job = find_job(sh, pod.id, job_id)
            if job.ended_yet:
                return job
            assert time.monotonic() < deadline, f"job {job_id} still {job.state}"
            time.sleep(0.5)


def wait_for(condition: Callable[[], bool], timeout_s: float = 90.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"{what} never came"
        time.sleep(0.1)


class Headless:
    """The follow-up's hooks as a podtui without a screen has them (`podtui watch`): alerts and lines kept in order
    in `events`, the pulls in a real transfer queue, the stop and terminate sent to the simulated RunPod."""

    def __init__(self, api: V2Api, queue: TransferQueue, read_only: bool = False) -> None:
        self.api, self._queue, self.read_only = api, queue, read_only
        self.events: list[tuple[str, str]] = []
        self.alerts: list[Alert] = []
        queue.on_change = self._transfer_changed

    def _transfer_changed(self, job: object) -> None:
        state = getattr(job, "state", "")
        if state in ("queued", "verified", "failed"):
            self.events.append((f"transfer {state}", str(getattr(job, "source", ""))))

    def alert(self, alert: Alert) -> None:
        self.alerts.append(alert)
        self.events.append(("alert", alert.text))

    def queue(self) -> TransferQueue:
        return self._queue

    def stop(self, job: Job, pod_name: str) -> str:
        pod = self.api.fetch_snapshot().find(job.pod_id)
        assert pod is not None
        actions.perform(self.api, "stop", pod)
        self.events.append(("stop", pod_name))
        return STOP_SENT

    def terminate(self, job: Job, pod_name: str) -> str:
        pod = self.api.fetch_snapshot().find(job.pod_id)
        assert pod is not None
        actions.perform(self.api, "terminate", pod)
        self.events.append(("terminate", pod_name))
        return TERMINATE_SENT

    def say(self, text: str, severity: Severity) -> None:
        self.events.append((f"say {severity}", text))

    def busy(self, pod_id: str) -> bool:
        return pod_id in self._queue.busy_pods()

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]


MakeFollow = Callable[..., tuple[FollowUp, Headless]]
