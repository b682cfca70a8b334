"""What follows a job's end, against the whole simulator with the real transfer queue: the alert, then the pulls
downloaded and verified, then the stop; each once, across a restart and with two podtuis at once; a pull that fails
keeps the pod running and says so; a lost job gets its alert and nothing else (docs/jobs.md#after-a-job)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.jobs.follow import FollowUp
from podtui.core.jobs.job import JobSpec, Pull
from podtui.core.pod import Pod, PodStatus
from podtui.sim.simulator import Simulator
from tests.helpers.job_follow import Headless, MakeFollow, OpenShell, run_job, wait_ended, wait_for


def _stopped_after_going_on(follows: list[FollowUp], hooks: list[Headless]) -> bool:
    """Each podtui takes its follow-ups on (as the app does when a transfer ends): has one of them stopped the pod?"""
    for follow in follows:
        follow.go_on()
    return any("stop" in h.kinds() for h in hooks)


def _status(api: V2Api, pod: Pod) -> PodStatus:
    found = api.fetch_snapshot().find(pod.id)
    assert found is not None
    return found.status


def test_alert_then_pull_verified_then_stop_each_once(
    pod: Pod, open_shell: OpenShell, make_follow: MakeFollow, sim_api: V2Api, tmp_path: Path
) -> None:
    follow, hooks = make_follow()
    spec = JobSpec("mkdir -p out && echo trained > out/model.txt", "train", then="stop", pulls=(Pull("out/model.txt"),))
    job = run_job(open_shell, pod, spec)
    follow.started(job, pod.name)
    ended = wait_ended(open_shell, pod, job.id)
    assert ended.state == "done"
    follow.seen(pod.id, pod.name, [ended])
    wait_for(lambda: "transfer verified" in hooks.kinds(), what="the pull verified")
    follow.go_on()
    wait_for(lambda: "stop" in hooks.kinds(), what="the stop")
    follow.seen(pod.id, pod.name, [ended])  # seen again, and again: nothing more happens
    follow.go_on()
    firsts = list(dict.fromkeys(hooks.kinds()))  # the order of each kind's first event
    assert [k for k in firsts if k in ("alert", "transfer queued", "transfer verified", "stop")] == [
        "alert",
        "transfer queued",
        "transfer verified",
        "stop",
    ], hooks.events
    assert hooks.kinds().count("alert") == 1 and hooks.kinds().count("stop") == 1
    assert len(hooks.queue().jobs()) == 1
    assert hooks.alerts[0].kind == "job_ended" and hooks.alerts[0].severity == "information"
    assert "train on eval-a100 done (exit 0)" in hooks.alerts[0].text
    assert (tmp_path / "home-here" / "model.txt").read_text() == "trained\n"
    wait_for(lambda: _status(sim_api, pod) is PodStatus.EXITED, what="the pod stopped")
    entry = follow.entry(pod.id, job.id)
    assert entry is not None and entry.finished and entry.then_done == "stop sent"


def test_a_pull_that_fails_keeps_the_pod_running_and_says_so(
    pod: Pod, open_shell: OpenShell, make_follow: MakeFollow, sim_api: V2Api
) -> None:
    follow, hooks = make_follow()
    spec = JobSpec("echo nothing written", then="stop", pulls=(Pull("out/missing.bin"),))
    job = run_job(open_shell, pod, spec)
    follow.started(job, pod.name)
    follow.seen(pod.id, pod.name, [wait_ended(open_shell, pod, job.id)])
    wait_for(lambda: "transfer failed" in hooks.kinds(), what="the pull failed")
    follow.go_on()
    wait_for(lambda: len(hooks.alerts) == 2, what="the second alert")
    kept = hooks.alerts[1]
    assert kept.kind == "job_ended" and kept.severity == "error", kept
    assert "eval-a100 is left running, not stopped as asked" in kept.text and "missing.bin" in kept.text
    follow.go_on()
    assert "stop" not in hooks.kinds() and len(hooks.alerts) == 2
    assert _status(sim_api, pod) is PodStatus.RUNNING
    entry = follow.entry(pod.id, job.id)
    assert entry is not None and entry.finished and (entry.then_done or "").startswith("kept: ")


def test_a_job_lost_with_its_pod_gets_its_alert_and_nothing_else(
    pod: Pod, open_shell: OpenShell, make_follow: MakeFollow, sim_api: V2Api, full_sim: Simulator
) -> None:
    follow, hooks = make_follow()
    job = run_job(open_shell, pod, JobSpec("sleep 600", "long", then="stop", pulls=(Pull("out"),)))
    follow.started(job, pod.name)
    assert follow.running()[pod.id][0].job.id == job.id
    sim_api.stop_pod(pod.id)
    wait_for(lambda: _status(sim_api, pod) is PodStatus.EXITED, what="the pod stopped")
    follow.pods_seen(sim_api.fetch_snapshot().pods, whole=True)
    assert len(hooks.alerts) == 1
    lost = hooks.alerts[0]
    assert lost.severity == "error" and "long on eval-a100 was lost" in lost.text, lost.text
    assert "its pulls and its pod's stop are not done" in lost.text
    assert not hooks.queue().jobs() and "stop" not in hooks.kinds()
    assert not follow.running()
    # the pod back up, its record now reads lost too: said once
    sim_api.start_pod(pod.id)
    full_sim.world.clock.advance(31)  # its boot, in simulated time
    wait_for(lambda: _status(sim_api, pod) is PodStatus.RUNNING, what="the pod running again")
    follow.seen(pod.id, pod.name, [wait_ended(open_shell, pod, job.id)])
    assert len(hooks.alerts) == 1


def test_a_podtui_that_stopped_halfway_is_taken_up_by_the_next_without_a_step_twice(
    pod: Pod, open_shell: OpenShell, make_follow: MakeFollow, sim_api: V2Api, tmp_path: Path
) -> None:
    first, first_hooks = make_follow(start=False)  # its queue never runs: it stops with the pull queued
    spec = JobSpec("echo weights > w.bin", then="stop", pulls=(Pull("w.bin"),))
    job = run_job(open_shell, pod, spec)
    first.started(job, pod.name)
    first.seen(pod.id, pod.name, [wait_ended(open_shell, pod, job.id)])
    assert first_hooks.kinds().count("alert") == 1
    [queued] = first_hooks.queue().jobs()
    first_hooks.queue().close()
    first.close()  # that podtui is gone
    second, second_hooks = make_follow()
    second.go_on()  # at start: what the first left undone; again as its transfers move (the app's desk does)
    wait_for(lambda: _stopped_after_going_on([second], [second_hooks]), what="the stop")
    assert "alert" not in second_hooks.kinds()  # said once, by the first
    assert [j.id for j in second_hooks.queue().jobs()] == [queued.id]  # the same pull, adopted, not a second
    assert second_hooks.queue().get(queued.id).state == "verified"  # type: ignore[union-attr]
    assert (tmp_path / "home-here" / "w.bin").read_text() == "weights\n"
    second.go_on()
    assert second_hooks.kinds().count("stop") == 1


def test_a_stop_waits_for_another_job_running_on_the_pod(
    pod: Pod, open_shell: OpenShell, make_follow: MakeFollow, sim_api: V2Api
) -> None:
    """Job A asks for a stop and ends while job B still runs on the pod: the stop waits (said once) until B ends,
    rather than kill B with the pod."""
    follow, hooks = make_follow()
    other = run_job(open_shell, pod, JobSpec("while [ ! -e go ]; do sleep 0.2; done", "other"))
    follow.started(other, pod.name)
    first = run_job(open_shell, pod, JobSpec("true", "first", then="stop"))
    follow.started(first, pod.name)
    follow.seen(pod.id, pod.name, [wait_ended(open_shell, pod, first.id)])
    follow.go_on()
    assert "stop" not in hooks.kinds(), hooks.events
    held = [text for kind, text in hooks.events if kind == "say information" and "once job other ends" in text]
    assert len(held) == 1, hooks.events
    assert _status(sim_api, pod) is PodStatus.RUNNING
    assert follow.waiting() == {pod.id}  # its pod looked at as often as one whose job asked for a stop
    with open_shell() as shell:
        shell.run("touch /workspace/go", timeout_s=30)
    follow.seen(pod.id, pod.name, [wait_ended(open_shell, pod, other.id)])
    assert hooks.kinds().count("stop") == 1, hooks.events
    assert follow.waiting() == set()
    wait_for(lambda: _status(sim_api, pod) is PodStatus.EXITED, what="the pod stopped")


def test_two_jobs_that_both_ask_for_a_stop_send_one(
    pod: Pod, open_shell: OpenShell, make_follow: MakeFollow, sim_api: V2Api
) -> None:
    """A sweep: two jobs on one pod, each `--then stop`; the first to end waits for the other, and then one stop
    goes, recorded for both (a second would be refused by RunPod and read as "not sent")."""
    follow, hooks = make_follow()
    second = run_job(open_shell, pod, JobSpec("while [ ! -e go ]; do sleep 0.2; done", "second", then="stop"))
    follow.started(second, pod.name)
    first = run_job(open_shell, pod, JobSpec("true", "first", then="stop"))
    follow.started(first, pod.name)
    follow.seen(pod.id, pod.name, [wait_ended(open_shell, pod, first.id)])
    assert "stop" not in hooks.kinds(), hooks.events
    with open_shell() as shell:
        shell.run("touch /workspace/go", timeout_s=30)
    follow.seen(pod.id, pod.name, [wait_ended(open_shell, pod, second.id)])
    follow.go_on()
    assert hooks.kinds().count("stop") == 1, hooks.events
    words = sorted(e.then_done or "" for e in follow.memory.entries())
    assert all(e.finished for e in follow.memory.entries())
    assert words[0] == "stop sent" and words[1].startswith("stop sent with job "), words
    wait_for(lambda: _status(sim_api, pod) is PodStatus.EXITED, what="the pod stopped")


def test_two_podtuis_at_once_take_each_step_once_between_them(
    pod: Pod, open_shell: OpenShell, make_follow: MakeFollow
) -> None:
    a, a_hooks = make_follow()
    b, b_hooks = make_follow()
    job = run_job(open_shell, pod, JobSpec("echo x > x.txt", then="stop", pulls=(Pull("x.txt"),)))
    a.started(job, pod.name)
    ended = wait_ended(open_shell, pod, job.id)
    both = [threading.Thread(target=f.seen, args=(pod.id, pod.name, [ended])) for f in (a, b)]
    for t in both:
        t.start()
    for t in both:
        t.join(60)
    wait_for(lambda: "transfer verified" in a_hooks.kinds() + b_hooks.kinds(), what="the pull verified")
    wait_for(lambda: _stopped_after_going_on([a, b], [a_hooks, b_hooks]), what="the stop")
    a.go_on()
    b.go_on()
    events = a_hooks.kinds() + b_hooks.kinds()
    assert events.count("alert") == 1 and events.count("stop") == 1, (a_hooks.events, b_hooks.events)
    assert len(a_hooks.queue().jobs() if a_hooks.alerts else b_hooks.queue().jobs()) == 1


def test_a_cancelled_job_and_read_only_mode_get_the_alert_alone(
    pod: Pod, open_shell: OpenShell, make_follow: MakeFollow
) -> None:
    from podtui.core.jobs.remote_jobs import cancel_job

    follow, hooks = make_follow()
    job = run_job(open_shell, pod, JobSpec("sleep 600", "c", then="stop", pulls=(Pull("x"),)))
    follow.started(job, pod.name)
    with open_shell() as sh:
        cancelled = cancel_job(sh, pod.id, job.id, grace_s=1.0)
    follow.seen(pod.id, pod.name, [cancelled])
    assert [a.severity for a in hooks.alerts] == ["information"]
    assert "c on eval-a100 was cancelled" in hooks.alerts[0].text
    assert not hooks.queue().jobs() and "stop" not in hooks.kinds()

    watching, read_only = make_follow(read_only=True)
    job = run_job(open_shell, pod, JobSpec("true", then="stop", pulls=(Pull("x"),)))
    watching.started(job, pod.name)
    watching.seen(pod.id, pod.name, [wait_ended(open_shell, pod, job.id)])
    assert len(read_only.alerts) == 1 and "read-only mode" in read_only.alerts[0].text
    assert not read_only.queue().jobs() and "stop" not in read_only.kinds()


def test_a_podtui_ending_leaves_the_stop_to_the_next(
    pod: Pod,
    open_shell: OpenShell,
    make_follow: MakeFollow,
    sim_api: V2Api,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A hook that refuses to start a request because its podtui is ending (Closing, as `podtui watch` at ctrl+c):
    the step is not marked done, nothing is logged as a failure, no later step is tried; the next podtui sends the
    stop once, without saying the end again."""
    from podtui.core.jobs.follow import Closing

    follow, hooks = make_follow()

    def ending(job: object, pod_name: str) -> str:
        raise Closing()

    monkeypatch.setattr(hooks, "stop", ending)
    job = run_job(open_shell, pod, JobSpec("true", "eval", then="stop"))
    follow.started(job, pod.name)
    follow.seen(pod.id, pod.name, [wait_ended(open_shell, pod, job.id)])
    entry = follow.entry(pod.id, job.id)
    assert entry is not None and entry.alerted is not None and entry.then_done is None and not entry.finished
    assert "stop" not in hooks.kinds() and "failed" not in caplog.text
    follow.close()
    after, next_hooks = make_follow()
    after.go_on()
    assert next_hooks.kinds() == ["stop"], next_hooks.events  # the end was said already: not again
    entry = after.entry(pod.id, job.id)
    assert entry is not None and entry.then_done == "stop sent" and entry.finished
    wait_for(lambda: _status(sim_api, pod) is PodStatus.EXITED, what="the next podtui's stop")
