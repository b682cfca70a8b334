"""A transfer queue wired to the full simulator: real SSH to simulated pods, the history in a temp data dir."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from podtui.core.api import SdkApi
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.sim.simulator import Simulator
from podtui.transfer.history import TransferHistory
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext

GATEWAY_POD = "eval-a100"  # reachable only through the gateway
DIRECT_POD = "llama-lora-3090"  # has direct SSH where this machine has sshd


def lookup(api: SdkApi) -> Callable[[str], Pod]:
    def find(ref: str) -> Pod:
        pod = api.fetch_snapshot().find(ref)
        assert pod is not None, ref
        return pod
    return find


@pytest.fixture
def context(sim_api: SdkApi, ssh_settings: SshSettings, tmp_path: Path) -> TransferContext:
    return TransferContext(lookup(sim_api), lambda: ssh_settings, tmp_path / "work")


@pytest.fixture
def history_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "transfers.json"


@pytest.fixture
def make_queue(context: TransferContext, history_path: Path) -> Iterator[Callable[..., TransferQueue]]:
    made: list[TransferQueue] = []

    def make(**kw: object) -> TransferQueue:
        kw.setdefault("backoff_s", (0.2, 0.2, 0.2))
        q = TransferQueue(context, TransferHistory(history_path), **kw)  # type: ignore[arg-type]
        made.append(q)
        return q
    yield make
    for q in made:
        q.close()


def pod_workspace(sim: Simulator, api: SdkApi, name: str) -> Path:
    pod = api.fetch_snapshot().find(name)
    assert pod is not None
    return sim.gateway.machine(sim.world.pods[pod.id]).workspace


def pod_id(api: SdkApi, name: str) -> str:
    pod = api.fetch_snapshot().find(name)
    assert pod is not None
    return pod.id
