"""When podtui looks at the jobs it follows, and the look itself (docs/jobs.md#after-a-job): the app and `podtui watch`
both ask, after each poll, which running pods are due a look, and look at them one at a time.

A pod is due when it runs and podtui remembers a job running on it: every `every_s` when one of those jobs asked for
pulls or a stop (its end starts something), another job's stop waits for them, or the user is looking at the pod, SLOW
times less often otherwise (its end is an alert, nothing more), and at once the first time (at start-up: a job that
ended while no podtui ran). A look opens one SSH shell on the pod and asks about each of those jobs; opening it costs a
second or two, so it is not done more often than that."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from podtui.core.jobs.job import Job, JobNotFound
from podtui.core.pod import Pod, PodStatus

if TYPE_CHECKING:  # SSH loads with the first look, not with the app's first frame
    from podtui.core.jobs.job_memory import Followed
    from podtui.core.ssh.connect import SshSettings

SLOW = 10


class JobChecks:
    def __init__(self, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.every_s, self.clock = every_s, clock
        self._last: dict[str, float] = {}  # pod id: when its jobs were last looked at

    def due(
        self,
        pods: Iterable[Pod],
        running: Mapping[str, Sequence[Followed]],
        looking_at: str | None = None,
        waiting: Iterable[str] = (),
    ) -> list[tuple[Pod, list[str]]]:
        """The running pods due a look now, with the ids of the jobs to ask about; each is counted as looked at.
        waiting: pods where an ended job's stop waits for the jobs still running there (FollowUp.waiting)."""
        waiting = set(waiting)
        now = self.clock()
        out = []
        for pod in pods:
            entries = running.get(pod.id)
            if pod.status is not PodStatus.RUNNING or not entries:
                continue
            often = pod.id == looking_at or pod.id in waiting or any(e.asked_for_something for e in entries)
            last = self._last.get(pod.id)
            if last is not None and now - last < (self.every_s if often else self.every_s * SLOW):
                continue
            self._last[pod.id] = now
            out.append((pod, [e.job.id for e in entries]))
        return out

    def looked(self, pod_id: str) -> None:
        """The pod's jobs were read another way (its whole list, for the Jobs tab): that counts as a look."""
        self._last[pod_id] = self.clock()


def look(pod: Pod, settings: SshSettings, job_ids: Sequence[str]) -> tuple[list[Job], list[str]]:
    """One shell on the pod, each job asked about: the jobs as their records say now, and the ids the pod has no
    record of. Raises SshError or JobError, in words."""
    from podtui.core.jobs.remote_jobs import find_job
    from podtui.core.ssh.remote import open_remote

    seen: list[Job] = []
    gone: list[str] = []
    with open_remote(pod, settings) as shell:
        for job_id in job_ids:
            try:
                seen.append(find_job(shell, pod.id, job_id))
            except JobNotFound:
                gone.append(job_id)
    return seen, gone
