"""A podtui that closes while its follow-up is at the stop step leaves the stop to the next podtui, which sends it
once; a stop RunPod did not answer is sent again at the next look: neither is ever recorded as finished with the
stop unsent (docs/jobs.md#after-a-job)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from podtui.core.api import V2Api
from podtui.core.jobs.follow import FollowUp, remember_started
from podtui.core.jobs.job import Job
from podtui.core.jobs.job_memory import JobMemory
from podtui.core.pod import Pod, PodStatus
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.job_desk import _Hooks
from tests.helpers.job_follow import MakeFollow, wait_for


def _status(api: V2Api, pod: Pod) -> PodStatus | None:
    found = api.fetch_snapshot().find(pod.id)
    return found.status if found is not None else None


def _ended(pod: Pod) -> Job:
    now = time.time()
    return Job("job-closing", pod.id, "true", "train", "/workspace", "done", 0, now - 5, now, "stop", (), 0, 0)


def test_an_app_closing_at_the_stop_leaves_it_to_the_next_podtui(
    pod: Pod, make_app: Callable[..., PodtuiApp], make_follow: MakeFollow, sim_api: V2Api, tmp_path: Path
) -> None:
    memory_path = tmp_path / "data" / "jobs.json"  # the data folder make_follow's podtuis share
    job = _ended(pod)
    app = make_app()
    app.jobs.close()  # the app is closing: its loop runs nothing more for the follow-up's thread
    closing = FollowUp(JobMemory(memory_path), _Hooks(app.jobs), time.time)
    remember_started(closing.memory, job, pod.name, time.time())
    closing.go_on()
    entry = closing.entry(pod.id, job.id)
    assert entry is not None and not entry.finished and entry.then_done is None, entry
    closing.close()

    follow, hooks = make_follow()  # the next podtui takes the stop up, and sends it once
    follow.go_on()
    follow.go_on()
    assert hooks.kinds().count("stop") == 1, hooks.events
    entry = follow.entry(pod.id, job.id)
    assert entry is not None and entry.finished and entry.then_done == "stop sent"

    wait_for(lambda: _status(sim_api, pod) is PodStatus.EXITED, what="the pod stopped")


def test_a_stop_runpod_did_not_answer_is_sent_again_at_the_next_look(
    pod: Pod, make_follow: MakeFollow, full_sim: Simulator, sim_api: V2Api
) -> None:
    job = _ended(pod)
    follow, hooks = make_follow()
    full_sim.api.faults.add("status", 502, times=1, only="/action")  # the stop's request gets a gateway's 502 page
    follow.started(job, pod.name)  # its go_on meets the 502 (said in the log)
    entry = follow.entry(pod.id, job.id)
    assert entry is not None and not entry.finished and entry.then_done is None, entry
    follow.go_on()  # the next look (after a poll) sends it
    assert hooks.kinds().count("stop") == 1, hooks.events
    entry = follow.entry(pod.id, job.id)
    assert entry is not None and entry.finished and entry.then_done == "stop sent"
    wait_for(lambda: _status(sim_api, pod) is PodStatus.EXITED, what="the pod stopped")
