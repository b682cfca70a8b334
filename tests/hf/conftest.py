"""A Hub stand-in on its own for the checks; the full simulator (pods that reach its Hub) for downloads."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from podtui.core.api import SdkApi
from podtui.core.hf.check import check_repo
from podtui.core.hf.report import HubReport
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.sim.hub import SimHub
from podtui.sim.simulator import Simulator
from podtui.transfer.history import TransferHistory
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext

GATEWAY_POD = "eval-a100"  # reachable only through RunPod's (simulated) gateway: the PTY path
DIRECT_POD = "llama-lora-3090"  # direct SSH where this machine has sshd: the exec path


@pytest.fixture
def hub() -> Iterator[SimHub]:
    with SimHub() as h:
        yield h


def find_pod(api: SdkApi, ref: str) -> Pod:
    pod = api.fetch_snapshot().find(ref)
    assert pod is not None, ref
    return pod


@pytest.fixture
def hf_token_box() -> list[str | None]:
    """The token the queue hands to pods; tests change it."""
    return [None]


@pytest.fixture
def hub_context(full_sim: Simulator, sim_api: SdkApi, ssh_settings: SshSettings, tmp_path: Path,
                hf_token_box: list[str | None]) -> TransferContext:
    hf_token_box[0] = full_sim.hub.token("read")
    return TransferContext(lambda ref: find_pod(sim_api, ref), lambda: ssh_settings, tmp_path / "work",
                           hf_token=lambda: hf_token_box[0], hf_endpoint=lambda: full_sim.hub.endpoint)


@pytest.fixture
def history_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "transfers.json"


@pytest.fixture
def make_queue(hub_context: TransferContext, history_path: Path) -> Iterator[Callable[..., TransferQueue]]:
    made: list[TransferQueue] = []

    def make(**kw: object) -> TransferQueue:
        kw.setdefault("backoff_s", (0.2,))
        q = TransferQueue(hub_context, TransferHistory(history_path), **kw)  # type: ignore[arg-type]
        made.append(q)
        return q
    yield make
    for q in made:
        q.close()


def hub_job(report: HubReport, pod: Pod, target: str) -> TransferJob:
    """What `podtui hf download` and the screen queue: the check's files and commit go with the job."""
    return TransferJob(pod.id, "hub", report.repo_id, target, pod_name=pod.name, name=report.repo_id,
                       repo_type=report.repo_type, revision=report.sha, total_bytes=report.total_bytes,
                       hub_files=[f.to_json() for f in report.files])


def checked(sim: Simulator, repo: str, kind: str = "read") -> HubReport:
    report = check_repo(repo, sim.hub.token(kind), sim.hub.endpoint)
    assert report.ok, report.lines
    return report


def pod_root(sim: Simulator, api: SdkApi, name: str) -> Path:
    pod = find_pod(api, name)
    return sim.gateway.machine(sim.world.pods[pod.id]).root
