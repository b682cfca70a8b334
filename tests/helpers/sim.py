"""The demo world's pods, as the tests name them, and where a simulated pod keeps its files on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.pod import Pod
from podtui.sim.podshell import PodMachine
from podtui.sim.simulator import Simulator
from podtui.sim.sshd import sshd_available

DEMO_IDS = {
    "train": "q7x2m9fk4r8t1a",  # llama-lora-3090, training
    "idle": "b3n8v1c6z0p5we",  # eval-a100, idle
    "stopped": "k5d0r2t9y7u3io",  # notebook-4090, EXITED
    "starting": "h1j4k8l2m6n0pq",  # sweep-h100x2, CREATED
    "bursty": "w9e3r5t7y1u2io",  # data-prep-a5000
}
GATEWAY_POD = "eval-a100"  # reachable only through RunPod's (simulated) gateway: the PTY route
DIRECT_POD = "llama-lora-3090"  # direct SSH where this machine has sshd: the exec route

needs_sshd = pytest.mark.skipif(
    not sshd_available(), reason="needs root and OpenSSH's sshd (scripts/setup-test-env.sh)"
)


def find_pod(api: V2Api, ref: str) -> Pod:
    """The pod named or numbered `ref`, as the API lists it now."""
    pod = api.fetch_snapshot().find(ref)
    assert pod is not None, ref
    return pod


def pod_id(api: V2Api, name: str) -> str:
    return find_pod(api, name).id


def machine(sim: Simulator, key: str) -> PodMachine:
    """The simulated machine of the demo pod DEMO_IDS[key]."""
    return sim.gateway.machine(sim.world.pods[DEMO_IDS[key]])


def pod_root(sim: Simulator, api: V2Api, name: str) -> Path:
    """The folder on this machine that is the pod's `/`."""
    return sim.gateway.machine(sim.world.pods[pod_id(api, name)]).root


def pod_workspace(sim: Simulator, api: V2Api, name: str) -> Path:
    """The folder on this machine that is the pod's /workspace."""
    return sim.gateway.machine(sim.world.pods[pod_id(api, name)]).workspace
