"""When the jobs podtui follows are looked at (core/jobs/checks.py, docs/jobs.md#after-a-job): at once the first
time, then every `every_s` for a pod whose job asked for something, that the user looks at, or where an ended job's
stop waits for the jobs still running there; ten times less often otherwise; never a pod that is not running."""

from __future__ import annotations

from podtui.core.jobs.checks import SLOW, JobChecks
from podtui.core.jobs.job import Job, Pull
from podtui.core.jobs.job_memory import Followed
from podtui.core.pod import Pod, PodStatus


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _running(pod_id: str, job_id: str, asked: bool = False) -> Followed:
    then = "stop" if asked else None
    pulls = (Pull("out"),) if asked else ()
    job = Job(job_id, pod_id, "python train.py", None, "/workspace", "running", None, 1.0, None, then, pulls, 0, 0)
    return Followed(job, f"pod-{pod_id}", 1.0)


def _due(checks: JobChecks, pods: list[Pod], waiting: frozenset[str] = frozenset(), at: str | None = None) -> list[str]:
    running = {"a": [_running("a", "j1")], "b": [_running("b", "j2", asked=True)], "c": [_running("c", "j3")]}
    return [pod.id for pod, _ in checks.due(pods, running, at, waiting)]


def test_the_cadence_of_each_kind_of_pod() -> None:
    clock = Clock()
    checks = JobChecks(30.0, clock)
    pods = [Pod(id=i, name=f"pod-{i}", status=PodStatus.RUNNING) for i in "abcd"]
    pods.append(Pod(id="e", name="pod-e", status=PodStatus.EXITED))
    assert _due(checks, pods) == ["a", "b", "c"]  # at once, the first time; d has no job; e is not running
    clock.now += 31
    assert _due(checks, pods, waiting=frozenset("c")) == ["b", "c"]  # c: a stop there waits for its job
    clock.now += 31
    assert _due(checks, pods, at="a") == ["a", "b"]  # a: on show
    clock.now += 30 * SLOW
    assert _due(checks, pods) == ["a", "b", "c"]  # the slow cadence came round for c
    checks.looked("b")
    assert _due(checks, pods) == []
