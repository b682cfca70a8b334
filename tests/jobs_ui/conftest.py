"""The fixtures the follow-up's and the Jobs tab's tests share: the gateway-only demo pod (eval-a100), shells on it,
and follow-ups on one data folder whose hooks are a headless podtui's (tests/helpers/job_follow.py)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.jobs.follow import FollowUp
from podtui.core.jobs.job_memory import JobMemory
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import RemoteShell, open_remote
from tests.helpers.job_follow import Headless, MakeFollow, OpenShell
from tests.helpers.sim import DEMO_IDS
from tests.helpers.transfer import MakeQueue


@pytest.fixture
def pod(sim_api: V2Api) -> Pod:
    """eval-a100: reached through RunPod's (simulated) gateway only."""
    found = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    assert found is not None
    return found


@pytest.fixture
def open_shell(pod: Pod, ssh_settings: SshSettings) -> OpenShell:
    @contextmanager
    def opened() -> Iterator[RemoteShell]:
        with open_remote(pod, ssh_settings) as sh:
            yield sh

    return opened


@pytest.fixture
def make_follow(sim_api: V2Api, make_queue: MakeQueue, tmp_path: Path, full_sim: object) -> Iterator[MakeFollow]:
    """Follow-ups on one data folder, as several podtuis of one machine have them, each with its own queue."""
    made: list[FollowUp] = []
    memory_path = tmp_path / "data" / "jobs.json"

    def make(here: Path | None = None, read_only: bool = False, start: bool = True) -> tuple[FollowUp, Headless]:
        """start: the queue runs (else it only keeps what is added, in the history, as a podtui that stops now)."""
        queue = make_queue(watch_s=0.2)
        if start:
            queue.start()
        hooks = Headless(sim_api, queue, read_only)
        landing = here or tmp_path / "home-here"
        landing.mkdir(parents=True, exist_ok=True)
        follow = FollowUp(JobMemory(memory_path), hooks, time.time, here=lambda: landing)
        made.append(follow)
        return follow, hooks

    yield make
    for f in made:
        f.close()
