"""Whether another job's stop or terminate does for this one (core/jobs/follow.py, docs/jobs.md#after-a-job): one that
ran beside it, sent, does; one being sent or asked about is waited for; an earlier run's does not; a stop does
not do for a terminate."""

from __future__ import annotations

from dataclasses import replace

from podtui.core.jobs.follow import ASKED, STOP_SENT, STOPPING, TERMINATE_SENT, UNDER_WAY, _done_by_another
from podtui.core.jobs.job import Job, Then
from podtui.core.jobs.job_memory import Followed


def _ended(job_id: str, then: Then, started: float, ended: float, then_done: str | None = None) -> Followed:
    job = Job(job_id, "pod1", "true", job_id, "/workspace", "done", 0, started, ended, then, (), 0, 0)
    return Followed(job, "eval-a100", ended, then_done=then_done)


def test_what_another_jobs_step_does_for_this_one() -> None:
    mine = _ended("mine", "stop", started=100, ended=200)
    beside = [_ended("other", "stop", started=150, ended=300, then_done=STOP_SENT)]
    assert _done_by_another([mine, *beside], mine) == "stop sent with job other"
    for under_way in (STOPPING, ASKED):
        assert _done_by_another([mine, _ended("o", "terminate", 150, 300, under_way)], mine) == UNDER_WAY
    earlier = _ended("earlier", "stop", started=10, ended=50, then_done=STOP_SENT)  # the pod was started again since
    assert _done_by_another([mine, earlier], mine) is None
    terminate = _ended("t", "terminate", started=100, ended=200)
    assert _done_by_another([terminate, *beside], terminate) is None  # a stop is not a terminate
    terminated = _ended("other", "terminate", started=150, ended=300, then_done=TERMINATE_SENT)
    assert _done_by_another([mine, terminated], mine) == "terminate sent with job other"
    refused = _ended("other", "stop", started=150, ended=300, then_done="stop not sent: 409")
    assert _done_by_another([mine, refused], mine) is None
    elsewhere = replace(beside[0], job=replace(beside[0].job, pod_id="pod2"))
    assert _done_by_another([mine, elsewhere], mine) is None
