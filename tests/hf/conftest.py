"""Transfer queues whose pods reach the full simulator's Hub, with a token the tests can change."""

from __future__ import annotations

from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.sim.simulator import Simulator
from podtui.transfer.runner import TransferContext
from tests.helpers.sim import find_pod
from tests.helpers.transfer import MakeQueue


@pytest.fixture
def hf_token_box() -> list[str | None]:
    """The token the queue hands to pods; tests change it."""
    return [None]


@pytest.fixture
def context(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path, hf_token_box: list[str | None]
) -> TransferContext:
    """The transfer context of tests/conftest.py, with the simulator's Hub and the token in hf_token_box."""
    hf_token_box[0] = full_sim.hub.token("read")
    return TransferContext(
        lambda ref: find_pod(sim_api, ref),
        lambda: ssh_settings,
        tmp_path / "work",
        hf_token=lambda: hf_token_box[0],
        hf_endpoint=lambda: full_sim.hub.endpoint,
    )


@pytest.fixture
def make_queue(make_queue: MakeQueue) -> MakeQueue:
    """tests/conftest.py's queues, retrying a download once by default."""
    return lambda **kw: make_queue(**{"backoff_s": (0.2,), **kw})
