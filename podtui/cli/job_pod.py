"""What `podtui run`, `podtui jobs` and `podtui job` share: the running pod a job command works on, its shell, how
a job's log is printed, and the one line a job's end reads as (docs/jobs.md#the-cli)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from podtui.core import units
from podtui.core.api.client import find_pod
from podtui.core.jobs.job import Job, JobError
from podtui.core.logs import shown
from podtui.core.pod import Pod, PodStatus
from podtui.core.services import Services
from podtui.core.ssh.errors import SshError
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.core.visible import visible


def running_pod(session: Services, ref: str) -> Pod:
    """The pod `ref` names, running; JobError when it is not (its jobs are on its volume, out of reach)."""
    pod = find_pod(session.api, ref)
    if pod.status is not PodStatus.RUNNING or pod.is_starting:
        raise JobError(
            f"{visible(pod.name)} is not running ({visible(pod.state)}): its jobs are out of reach until it runs "
            f"(podtui resume {visible(pod.name)})"
        )
    return pod


@contextmanager
def pod_shell(session: Services, pod: Pod) -> Iterator[RemoteShell]:
    with open_remote(pod, session.ssh_settings()) as shell:
        yield shell


def failed(e: JobError | SshError) -> int:
    """A job or pod error said on stderr: exit status 1."""
    where = "ssh: " if isinstance(e, SshError) else ""
    sys.stderr.write(f"podtui: {where}{visible(str(e))}\n")
    return 1


def how_it_ended(job: Job) -> str:
    code = f", exit code {job.exit_code}" if job.exit_code is not None else ""
    note = f": {visible(job.note)}" if job.note and job.state != "running" else ""
    return f"job {job.id} {job.state}{code}{note}"


def cost_of(job: Job, pod: Pod | None, pod_now: float | None) -> float | None:
    """What the pod cost over the job's run: its $/hr now times the duration; None when either is unknown."""
    took = took_s(job, pod_now)
    if took is None or pod is None or pod.cost_per_hr is None:
        return None
    return pod.cost_per_hr * took / 3600


def took_s(job: Job, pod_now: float | None) -> float | None:
    """How long the job ran, or has run until `pod_now` (the pod's clock); None when that cannot be said."""
    if job.ended is not None:
        return job.duration_s(job.ended)
    return None if pod_now is None else job.duration_s(pod_now)


def took_text(job: Job, pod_now: float | None) -> str:
    return units.duration(took_s(job, pod_now))


LINE_MAX = 1 << 20  # of a line that never ends, printed in pieces of this many characters


class LogLines:
    """A log's raw text printed line by line, each as it can be shown (`podtui.core.logs.shown`: a progress bar's
    last state, no colours, known secrets masked, nothing a terminal acts on); a line is printed once complete.

    What waits for its line's end is kept small: a progress bar's states before its last carriage return are never
    shown, so they are let go as they come (a bar redrawn for hours is one line), and a line longer than LINE_MAX
    is printed in pieces."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.pending = ""
        self.printed = 0

    def feed(self, text: str) -> None:
        *lines, rest = (self.pending + text).split("\n")
        self.pending = _last_state(rest)
        while len(self.pending) > LINE_MAX:
            lines.append(self.pending[:LINE_MAX])
            self.pending = self.pending[LINE_MAX:]
        for line in lines:
            self.out.write(shown(line) + "\n")
            self.printed += 1
        if lines:
            self.out.flush()

    def finish(self) -> None:
        if self.pending:
            self.feed("\n")


def _last_state(line: str) -> str:
    """What of an unfinished line can still be shown: from its last carriage return on (shown() keeps only that),
    the return kept so that the line still reads as a progress bar's."""
    cut = line.rfind("\r", 0, len(line) - 1)  # a return at the very end may come before its line feed
    return line[cut:] if cut > 0 else line
