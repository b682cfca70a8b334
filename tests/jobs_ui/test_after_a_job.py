"""What follows a job's end in the real app on the whole simulator (docs/jobs.md#after-a-job): a job with a pull and
`then stop` ends, is said, its file is downloaded and verified, and its pod is stopped; a pull that fails leaves the
pod running and says so; an app started after the job ended, on the same data folder, finishes what the first left
(re-attach); a job lost because its pod stopped is said, and nothing more is done."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Select

from podtui.core.api import V2Api
from podtui.core.pod import PodStatus
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.new_job import NewJobScreen
from podtui.ui.widgets.jobs_panel import JobsPanel
from tests.helpers.jobs_tab import PANES, POD, jobs_panel, new_job
from tests.helpers.pilot import polled, wait_until


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the app runs: a pull without a local path lands here."""
    folder = tmp_path / "here"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def remembering_app(make_full_app: Callable[..., PodtuiApp], tmp_path: Path) -> Callable[[], PodtuiApp]:
    """The app as a real account's: its jobs and transfers remembered in the data folder, across runs."""

    def make() -> PodtuiApp:
        return make_full_app(
            demo=False, transfer_history=tmp_path / "data" / "transfers.json", transfer_work_dir=tmp_path / "work"
        )

    return make


def _notes(app: PodtuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def _status(app: PodtuiApp) -> PodStatus | None:
    pod = next((p for p in app.pods() if p.id == POD), None)
    return pod.status if pod is not None else None


async def _start(pilot: Pilot[None], app: PodtuiApp, command: str, pulls: str, then: str) -> JobsPanel:
    panel = await jobs_panel(pilot, app)
    form = await new_job(pilot, app, command, pulls)
    form.query_one("#then", Select).value = then
    await pilot.pause()
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: not isinstance(app.screen, NewJobScreen), 90)
    return panel


async def test_pull_verified_then_the_pod_stopped(remembering_app: Callable[[], PodtuiApp], here: Path) -> None:
    app = remembering_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await _start(pilot, app, "mkdir -p out && echo weights > out/model.bin", "out/model.bin", "stop")
        await wait_until(pilot, lambda: any("done (exit 0)" in n for n in _notes(app)), 90)
        await wait_until(pilot, lambda: any("stopping eval-a100 as asked" in n for n in _notes(app)), 90)
        notes = _notes(app)
        said = next(i for i, n in enumerate(notes) if "done (exit 0)" in n)
        verified = next(i for i, n in enumerate(notes) if "model.bin" in n and "verified" in n)
        stopping = next(i for i, n in enumerate(notes) if "stopping eval-a100 as asked" in n)
        assert said < verified < stopping, notes
        assert (here / "model.bin").read_text() == "weights\n"
        [pull] = app.transfers.jobs()
        assert pull.state == "verified" and pull.checksum
        await polled(pilot, app)
        await wait_until(pilot, lambda: _status(app) is PodStatus.EXITED, 30)
        assert not any("stopped (EXITED) without this podtui asking" in n for n in _notes(app))


async def test_a_stop_runpod_refuses_is_said_and_never_recorded_as_sent(
    remembering_app: Callable[[], PodtuiApp], here: Path, full_sim: Simulator
) -> None:
    """The follow-up waits for RunPod's answer to the stop: a refusal is said and recorded as not sent, the pod
    bills on as shown (it was once recorded as sent the moment the stop was handed to a worker)."""
    full_sim.api.faults.add("conflict", "the pod's state does not allow this now", times=1, only="/action")
    app = remembering_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await _start(pilot, app, "echo done", "", "stop")
        await wait_until(pilot, lambda: any("stop eval-a100 failed" in n for n in _notes(app)), 90)
        memory = app.jobs.follow().memory
        await wait_until(pilot, lambda: all(e.finished for e in memory.entries()), 30)
        [entry] = memory.entries()
        assert (entry.then_done or "").startswith("stop not sent: "), entry
        await polled(pilot, app)
        assert _status(app) is PodStatus.RUNNING


async def test_a_stop_that_got_no_answer_is_sent_again_after_the_next_poll(
    remembering_app: Callable[[], PodtuiApp], here: Path, full_sim: Simulator
) -> None:
    full_sim.api.faults.add("status", 502, times=1, only="/action")  # a gateway's page: no word from RunPod
    app = remembering_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await _start(pilot, app, "echo done", "", "stop")
        await wait_until(pilot, lambda: any("stop not sent yet" in n for n in _notes(app)), 90)
        [entry] = app.jobs.follow().memory.entries()
        assert not entry.finished and entry.then_done is None, entry  # never recorded as sent, nor given up
        await polled(pilot, app)
        await wait_until(pilot, lambda: all(e.finished for e in app.jobs.follow().memory.entries()), 90)
        [entry] = app.jobs.follow().memory.entries()
        assert entry.then_done == "stop sent", entry
        await polled(pilot, app)
        await wait_until(pilot, lambda: _status(app) is PodStatus.EXITED, 30)


async def test_a_pull_that_fails_keeps_the_pod_running(remembering_app: Callable[[], PodtuiApp], here: Path) -> None:
    app = remembering_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await _start(pilot, app, "echo forgot to save", "out/model.bin", "stop")
        await wait_until(pilot, lambda: any("left running" in n for n in _notes(app)), 90)
        kept = next(n for n in _notes(app) if "left running" in n)
        assert "out/model.bin" in kept and "not stopped as asked" in kept, kept
        await polled(pilot, app)
        assert _status(app) is PodStatus.RUNNING
        assert not any("stopping eval-a100 as asked" in n for n in _notes(app))


async def test_a_new_app_finishes_what_the_closed_one_left(
    remembering_app: Callable[[], PodtuiApp], here: Path, sim_api: V2Api, ssh_settings: Any
) -> None:
    from tests.helpers.job_follow import wait_ended

    first = remembering_app()
    async with first.run_test(size=PANES, notifications=True) as pilot:
        panel = await _start(pilot, first, "sleep 4 && echo late > late.txt", "late.txt", "stop")
        await wait_until(pilot, lambda: any(j.state == "running" for j in panel.jobs), 60)
        [job] = [j for j in panel.jobs if j.state == "running"]
    # no podtui runs while the job ends
    pod = sim_api.fetch_snapshot().find(POD)
    assert pod is not None
    from contextlib import contextmanager

    from podtui.core.ssh.remote import open_remote

    @contextmanager
    def shell() -> Any:
        with open_remote(pod, ssh_settings) as sh:
            yield sh

    assert wait_ended(shell, pod, job.id).state == "done"
    second = remembering_app()
    async with second.run_test(size=PANES, notifications=True) as pilot:
        await wait_until(pilot, lambda: any("done (exit 0)" in n for n in _notes(second)), 90)
        await wait_until(pilot, lambda: any("stopping eval-a100 as asked" in n for n in _notes(second)), 90)
        assert (here / "late.txt").read_text() == "late\n"
        await polled(pilot, second)
        await wait_until(pilot, lambda: _status(second) is PodStatus.EXITED, 30)


async def test_a_job_lost_because_its_pod_stopped(
    remembering_app: Callable[[], PodtuiApp], here: Path, sim_api: V2Api, full_sim: Simulator
) -> None:
    app = remembering_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await _start(pilot, app, "sleep 600", "out", "stop")
        await wait_until(pilot, lambda: any(j.state == "running" for j in panel.jobs), 60)
        sim_api.stop_pod(POD)
        await polled(pilot, app)
        await wait_until(pilot, lambda: _status(app) is PodStatus.EXITED, 30)
        await wait_until(pilot, lambda: any("was lost" in n for n in _notes(app)), 30)
        lost = next(n for n in _notes(app) if "was lost" in n)
        assert "its pod stopped while it ran" in lost and "its pulls and its pod's stop are not done" in lost, lost
        assert not app.transfers.jobs()


async def test_then_terminate_asks_first_in_the_app(remembering_app: Callable[[], PodtuiApp], here: Path) -> None:
    from podtui.ui.screens.terminate import TerminateScreen

    app = remembering_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await _start(pilot, app, "echo r > r.txt", "r.txt", "terminate")
        await wait_until(pilot, lambda: isinstance(app.screen, TerminateScreen), 90)
        assert any("it asked to terminate eval-a100: confirm it" in n for n in _notes(app))
        assert (here / "r.txt").read_text() == "r\n"  # verified before the question
        await pilot.press("escape")  # kept, this time
        await wait_until(pilot, lambda: not isinstance(app.screen, TerminateScreen))
        memory = app.jobs.follow().memory
        await wait_until(pilot, lambda: all(e.finished for e in memory.entries()), 30)
        [entry] = memory.entries()
        assert entry.then_done == "terminate declined: the pod was kept"
        await polled(pilot, app)
        assert _status(app) is PodStatus.RUNNING


async def test_a_confirmed_terminate_runpod_refuses_is_recorded_as_not_sent(
    remembering_app: Callable[[], PodtuiApp], here: Path, full_sim: Simulator
) -> None:
    from podtui.ui.screens.terminate import TerminateScreen

    full_sim.api.faults.add("conflict", "the pod is locked", times=1, only="DELETE")  # terminate is a DELETE
    app = remembering_app()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await _start(pilot, app, "echo r > r.txt", "r.txt", "terminate")
        await wait_until(pilot, lambda: isinstance(app.screen, TerminateScreen), 90)
        await pilot.press(*"eval", "minus", *"a100", "enter")  # the pod's name typed: confirmed
        memory = app.jobs.follow().memory
        await wait_until(pilot, lambda: all(e.finished for e in memory.entries()), 30)
        [entry] = memory.entries()
        assert (entry.then_done or "").startswith("terminate not sent: "), entry  # never "sent" on the user's yes
        assert "the pod is locked" in (entry.then_done or "")
        await polled(pilot, app)
        assert _status(app) is PodStatus.RUNNING


async def test_a_job_started_that_cannot_be_remembered_is_said_started(
    remembering_app: Callable[[], PodtuiApp], here: Path
) -> None:
    """The job memory cannot be written (its lock is not a file): the job runs all the same, so the form says it
    started (never "not started", which would have it started twice) and that it is not followed."""
    from podtui.core.jobs.job_memory import JobMemory

    app = remembering_app()
    memory = JobMemory.for_paths(app.services.paths).path
    assert memory is not None
    memory.with_name(memory.name + ".lock").mkdir(parents=True)
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await _start(pilot, app, "echo hi", "", "none")
        await wait_until(pilot, lambda: any("started on eval-a100" in n for n in _notes(app)), 30)
        assert any("runs but is not followed" in n for n in _notes(app)), _notes(app)
