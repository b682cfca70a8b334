"""`podtui watch` follows detached jobs headless, as the app does (docs/jobs.md#after-a-job): a job `podtui run`
started with a pull and `--then terminate` ends; the watch says its end on stdout, downloads and verifies the pull,
and terminates the pod without a question (the `--then terminate` given at run time is the confirmation), each
step on a line of stderr; and a pull that fails leaves the pod running, said on stdout as an error."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from podtui.cli.watch_cmd import cmd_watch
from podtui.core.api import V2Api
from podtui.core.config import Config
from podtui.core.jobs.follow import remember_started
from podtui.core.jobs.job import JobSpec, Pull
from podtui.core.jobs.job_memory import JobMemory
from podtui.core.paths import Paths
from podtui.core.pod import Pod, PodStatus
from podtui.core.services import Services
from podtui.core.ssh.connect import SshSettings
from tests.helpers.job_follow import OpenShell, run_job, wait_ended, wait_for


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "here"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def services(sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path, paths: Paths) -> Services:
    """What `podtui watch` runs on: the simulated RunPod, this test's data folder, jobs looked at every 5 s."""
    return Services(
        sim_api,
        config=Config(job_poll_s=5.0),
        paths=paths,
        ssh_settings=lambda: ssh_settings,
        transfer_history=tmp_path / "data" / "transfers.json",
        transfer_work_dir=tmp_path / "work",
    )


@pytest.fixture
def watching(services: Services) -> Iterator[Callable[[], tuple[io.StringIO, io.StringIO]]]:
    """`podtui watch` in a thread of this process, polling every half second, until the test ends."""
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def start() -> tuple[io.StringIO, io.StringIO]:
        out, err = io.StringIO(), io.StringIO()
        thread = threading.Thread(target=cmd_watch, args=(services, False, 0.5, False, out, err, stop), daemon=True)
        thread.start()
        threads.append(thread)
        return out, err

    yield start
    stop.set()
    for t in threads:
        t.join(30)


def _run(open_shell: OpenShell, pod: Pod, spec: JobSpec, paths: Paths) -> str:
    job = run_job(open_shell, pod, spec)
    remember_started(JobMemory.for_paths(paths), job, pod.name, time.time())  # as `podtui run` leaves it
    return job.id


def test_the_watch_says_pulls_and_terminates_as_run_asked(
    pod: Pod,
    open_shell: OpenShell,
    watching: Callable[[], tuple[io.StringIO, io.StringIO]],
    paths: Paths,
    here: Path,
    sim_api: V2Api,
) -> None:
    job_id = _run(
        open_shell,
        pod,
        JobSpec("sleep 1; echo done > result.txt", "eval", "/workspace", "terminate", (Pull("result.txt"),)),
        paths,
    )
    wait_ended(open_shell, pod, job_id)
    out, err = watching()
    wait_for(lambda: "terminate sent" in err.getvalue(), what="the terminate")
    lines = out.getvalue().splitlines()
    said = [ln for ln in lines if "job_ended" in ln]
    assert len(said) == 1 and "job eval on eval-a100 done (exit 0)" in said[0], lines
    assert (here / "result.txt").read_text() == "done\n"
    steps = err.getvalue()
    assert steps.index("pulling result.txt") < steps.index("terminate sent"), steps
    wait_for(lambda: pod.id not in {p.id for p in sim_api.fetch_snapshot().pods}, what="the pod terminated")
    assert not any("without this podtui asking" in ln for ln in out.getvalue().splitlines())


def test_the_watch_keeps_the_pod_when_a_pull_fails(
    pod: Pod,
    open_shell: OpenShell,
    watching: Callable[[], tuple[io.StringIO, io.StringIO]],
    paths: Paths,
    here: Path,
    sim_api: V2Api,
) -> None:
    job_id = _run(open_shell, pod, JobSpec("true", None, None, "stop", (Pull("nowhere/weights.bin"),)), paths)
    out, err = watching()
    wait_for(lambda: "left running" in out.getvalue(), what="the pod kept")
    kept = next(ln for ln in out.getvalue().splitlines() if "left running" in ln)
    assert " error " in kept and "weights.bin" in kept and job_id in wait_ended(open_shell, pod, job_id).id
    assert "stop sent" not in err.getvalue()
    found = sim_api.fetch_snapshot().find(pod.id)
    assert found is not None and found.status is PodStatus.RUNNING


def test_a_watch_ended_while_a_pod_is_slow_takes_no_step_after_and_the_next_watch_does(
    pod: Pod,
    open_shell: OpenShell,
    watching: Callable[[], tuple[io.StringIO, io.StringIO]],
    paths: Paths,
    sim_api: V2Api,
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ctrl+c while the pod is slow to say how its jobs are (docs/alerts.md#podtui-watch): the watch ends at once,
    and the poll it left behind, when the pod answers that the job ended, neither marks the end said (it could no
    longer say it) nor terminates the pod. The next watch says the end once and terminates as `--then` asked."""
    import podtui.core.jobs.checks as checks
    from podtui.cli.watch_cmd import POLL_THREAD

    job_id = _run(open_shell, pod, JobSpec("sleep 1", "eval", "/workspace", "terminate", ()), paths)
    real_look, asked, answer = checks.look, threading.Event(), threading.Event()

    def slow_look(*args: object, **kwargs: object) -> object:
        asked.set()
        answer.wait(60)
        return real_look(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(checks, "look", slow_look)
    out, err, until = io.StringIO(), io.StringIO(), threading.Event()
    first = threading.Thread(target=cmd_watch, args=(services, False, 0.5, False, out, err, until), daemon=True)
    first.start()
    assert asked.wait(30)
    until.set()  # as ctrl+c does
    first.join(30)
    assert not first.is_alive() and err.getvalue().rstrip().endswith("podtui watch: stopped")
    wait_ended(open_shell, pod, job_id)
    answer.set()  # the pod answers: the job has ended
    wait_for(lambda: not any(t.name == POLL_THREAD for t in threading.enumerate()), what="the poll left behind")
    entry = JobMemory.for_paths(paths).get(pod.id, job_id)
    assert entry is not None and entry.alerted is None and entry.then_done is None
    assert "job_ended" not in out.getvalue() and err.getvalue().rstrip().endswith("podtui watch: stopped")
    assert pod.id in {p.id for p in sim_api.fetch_snapshot().pods}

    monkeypatch.setattr(checks, "look", real_look)
    out2, err2 = watching()
    wait_for(lambda: "terminate sent" in err2.getvalue(), what="the next watch's terminate")
    assert len([ln for ln in out2.getvalue().splitlines() if "job_ended" in ln]) == 1


def test_a_watch_asked_to_end_before_a_poll_takes_no_step(
    pod: Pod, open_shell: OpenShell, paths: Paths, services: Services
) -> None:
    """ctrl+c while the watch says it started (or between two polls): no poll more, so an ended job's end is not
    marked said and its stop not sent; they are the next podtui's."""
    job = run_job(open_shell, pod, JobSpec("true", "eval", "/workspace", "stop", ()))
    memory = JobMemory.for_paths(paths)
    remember_started(memory, wait_ended(open_shell, pod, job.id), pod.name, time.time())  # seen ended, not followed
    out, err, until = io.StringIO(), io.StringIO(), threading.Event()
    until.set()
    assert cmd_watch(services, False, 0.5, False, out, err, until) == 0
    entry = memory.get(pod.id, job.id)
    assert entry is not None and entry.alerted is None and entry.then_done is None, entry
    assert "job_ended" not in out.getvalue() and "stop sent" not in err.getvalue()
