"""A podtui that closes while its follow-up is at the stop step leaves the stop to the next podtui, which sends it
once; a stop RunPod did not answer is sent again at the next look: neither is ever recorded as finished with the
stop unsent (docs/jobs.md#after-a-job)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.jobs.follow import FollowUp, remember_started
from podtui.core.jobs.job import Job
from podtui.core.jobs.job_memory import JobMemory
from podtui.core.pod import Pod, PodStatus
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.job_desk import _Hooks
from tests.helpers.job_follow import MakeFollow, wait_for
from tests.helpers.pilot import loaded


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
    # its end could not be said either: not marked said, so the next podtui says it
    assert entry is not None and not entry.finished and entry.then_done is None and entry.alerted is None, entry
    closing.close()

    follow, hooks = make_follow()  # the next podtui says the end and takes the stop up, each once
    follow.go_on()
    follow.go_on()
    assert hooks.kinds() == ["alert", "stop"], hooks.events
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


async def test_the_app_asks_runpod_how_the_pod_is_before_it_stops_it(
    pod: Pod, make_full_app: Callable[..., PodtuiApp], sim_api: V2Api
) -> None:
    """Another job's stop (or the user) stopped the pod since the last poll: the app's stop step finds it stopped,
    from RunPod now, and records that, rather than send a stop RunPod refuses and read it as not sent."""
    import asyncio

    from podtui.core.api import ApiConflict

    app = make_full_app()
    async with app.run_test(notifications=True) as pilot:
        await loaded(pilot, app)
        shown = next(p for p in app.pods() if p.id == pod.id)
        assert shown.status is PodStatus.RUNNING
        sim_api.stop_pod(pod.id)  # RunPod has it stopped; the app's last poll still shows it running
        words = await asyncio.to_thread(_Hooks(app.jobs).stop, _ended(pod), pod.name)
        assert words == "stop not needed: eval-a100 is stopped already", words
        # a stop sent on the poll's word is refused (409) and, the pod found stopped, taken for done
        with pytest.raises(ApiConflict):
            sim_api.stop_pod(pod.id)
        assert await asyncio.to_thread(app.pod_actions.send_waiting, "stop", shown) is None
        await pilot.pause(0.5)
        assert not any("failed" in str(n.message) for n in app._notifications)
