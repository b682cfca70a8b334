"""A pod's detached jobs as the Jobs tab draws them: the list as last read, and how it stands (docs/jobs.md)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from podtui.core.jobs.job import Job


@dataclass(frozen=True)
class PodJobs:
    """A pod's jobs as last listed (newest first; the pod's words as sent: shown through `visible`), or why they
    could not be."""

    pod_id: str
    jobs: tuple[Job, ...] = ()
    problems: tuple[str, ...] = ()  # records on the pod that could not be read, in words
    error: str | None = None  # the listing failed, in words
    at: float | None = None  # when it was listed (this machine's clock); None: never yet
    loading: bool = False
    pod_now: float | None = None  # the pod's clock when it was listed: a running job's time is counted on it
    listed_mono: float | None = None  # time.monotonic() then

    def pod_time(self) -> float:
        """The pod's clock now, as far as this machine can tell (its own, when the pod did not say)."""
        if self.pod_now is None or self.listed_mono is None:
            return time.time()
        return self.pod_now + (time.monotonic() - self.listed_mono)
