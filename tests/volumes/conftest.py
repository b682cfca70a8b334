"""The volume tests' own fixtures: the simulated account with two network volumes, one mounted by a pod."""

from __future__ import annotations

import pytest

from podtui.sim.server import SimApiServer
from podtui.sim.volumes import SimVolume
from tests.helpers.sim import DEMO_IDS

DATASETS = SimVolume("vol0datasets", "datasets", 200, "EU-RO-1", "STANDARD")
CHECKPOINTS = SimVolume("vol1checkpts", "checkpoints", 50, "US-KS-2", "HIGH_PERFORMANCE")


@pytest.fixture
def no_volumes(sim: SimApiServer) -> SimApiServer:
    """The account without network volumes (and no pod on one), whatever the demo world starts with."""
    with sim.world.lock:
        sim.world.volumes.clear()
        for pod in sim.world.pods.values():
            pod.network_volume = None
    return sim


@pytest.fixture
def volumes(no_volumes: SimApiServer) -> SimApiServer:
    """Only `datasets` (200 GB in EU-RO-1, mounted by llama-lora-3090) and `checkpoints` (50 GB in US-KS-2,
    unused)."""
    sim = no_volumes
    world = sim.world
    with world.lock:
        for v in (DATASETS, CHECKPOINTS):
            world.volumes[v.id] = SimVolume(v.id, v.name, v.size_gb, v.data_centre, v.type)
        world.pods[DEMO_IDS["train"]].network_volume = DATASETS.id
    return sim
