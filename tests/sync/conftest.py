"""Syncs against the whole simulator, by route: rsync (the direct pod), SFTP (the direct pod on an image without
rsync) and the console (the gateway-only pod)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.keys import KeyFile
from podtui.sim.clock import SimClock
from podtui.sim.demo import demo_world
from podtui.sim.image import NO_RSYNC_IMAGE
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS, DIRECT_POD, GATEWAY_POD
from tests.helpers.sync import CONSOLE, RSYNC, SFTP, Syncer


@pytest.fixture(params=[RSYNC, SFTP, CONSOLE])
def route(request: pytest.FixtureRequest) -> str:
    """The route a sync is expected to take (`auto` picks it from the pod); a test names one with parametrize."""
    return str(request.param)


@pytest.fixture
def sync_sim(clock: SimClock, tmp_path: Path, user_key: KeyFile, route: str) -> Iterator[Simulator]:
    """The whole simulator; for the SFTP route, its direct pod runs an image without rsync."""
    world = demo_world(clock, boot_s=30.0)
    world.pub_key = user_key.public_line + " tester"
    if route == "sftp":
        world.pods[DEMO_IDS["train"]].image = NO_RSYNC_IMAGE
    sim = Simulator(world, root=tmp_path / "sim").start()
    sim.stop_grace_s = 0.0  # a stopped pod's container ends at once
    yield sim
    sim.stop()


@pytest.fixture
def syncer(sync_sim: Simulator, tmp_path: Path, user_key: KeyFile, route: str) -> Syncer:
    api = V2Api(sync_sim.api.api_key, sync_sim.api.url, timeout_s=5.0, clock=sync_sim.world.clock.now)
    settings = SshSettings(
        known_hosts=tmp_path / "known_hosts",
        gateway=sync_sim.gateway.address,
        key_path=user_key.path,
        use_agent=False,
        connect_timeout_s=5.0,
    )
    return Syncer(sync_sim, api, settings, GATEWAY_POD if route == "console" else DIRECT_POD, route)
