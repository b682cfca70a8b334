"""Hugging Face downloads in the tests: a checked repo, the job the app would queue, and its run on the pod."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from podtui.core.hf.check import check_repo
from podtui.core.hf.report import HubReport
from podtui.core.pod import Pod
from podtui.sim.simulator import Simulator
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue


def checked(sim: Simulator, repo: str, kind: str = "read") -> HubReport:
    """The check of `repo` on the simulator's Hub with a token of `kind`, which must pass."""
    report = check_repo(repo, sim.hub.token(kind), sim.hub.endpoint)
    assert report.ok, report.lines
    return report


def hub_job(report: HubReport, pod: Pod, target: str) -> TransferJob:
    """What `podtui hf download` and the screen queue: the check's files and commit go with the job."""
    return TransferJob(
        pod.id,
        "hub",
        report.repo_id,
        target,
        pod_name=pod.name,
        name=report.repo_id,
        repo_type=report.repo_type,
        revision=report.sha,
        total_bytes=report.total_bytes,
        hub_files=[f.to_json() for f in report.files],
    )


def wait_for_job(q: TransferQueue, job_id: str, cond: Callable[[TransferJob], bool], timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        job = q.get(job_id)
        if job is not None and cond(job):
            return
        time.sleep(0.05)
    raise AssertionError(f"not reached: {q.get(job_id)}")


def run_sh_processes(job_id: str) -> list[int]:
    """The pids of the download's script on the pod (the simulated pods' processes are this machine's)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if f"/.podtui/hf/{job_id}/run.sh".encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found
