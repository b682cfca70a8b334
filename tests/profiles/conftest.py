"""Two RunPod accounts on one simulated address (the key of a request decides which answers), and a config.toml
with a profile for each (docs/profiles.md#key-isolation)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from podtui.core.paths import Paths
from podtui.sim.demo_team import team_world
from podtui.sim.exchange import Exchange
from podtui.sim.server import SimApiServer


@dataclass(frozen=True)
class TwoAccounts:
    a: SimApiServer  # the demo account
    b: SimApiServer  # the team account, served at a's address

    @property
    def url(self) -> str:
        return self.a.url


@pytest.fixture
def accounts(sim: SimApiServer) -> TwoAccounts:
    return TwoAccounts(sim, sim.serve_account(team_world(sim.world.clock)))


@pytest.fixture
def write_config(paths: Paths) -> Callable[[str], Paths]:
    """config.toml with `text`, in the test's isolated home."""

    def write(text: str) -> Paths:
        paths.config_dir.mkdir(parents=True, exist_ok=True)
        paths.config_file.write_text(text)
        return paths

    return write


TWO_PROFILES = """\
default_profile = "a"
[profiles.a]
key_env = "KEY_A"
[profiles.b]
key_file = true
daily_budget = 20
"""


@pytest.fixture
def two_profiles(
    accounts: TwoAccounts, write_config: Callable[[str], Paths], monkeypatch: pytest.MonkeyPatch
) -> TwoAccounts:
    """Profile a (the default) takes its key from KEY_A, profile b from its key file; the API at the simulator."""
    from podtui.core import profiles

    paths = write_config(TWO_PROFILES)
    monkeypatch.setenv("KEY_A", accounts.a.api_key)
    monkeypatch.setenv("RUNPOD_API_BASE_URL", accounts.url)
    profiles.store_key(paths, "b", accounts.b.api_key)
    return accounts


@pytest.fixture
def sent_keys(exchanges: list[Exchange]) -> Callable[[], list[str]]:
    """The Bearer key of every request the simulator received so far, in order (the header, not the outcome)."""

    def keys() -> list[str]:
        out = []
        for ex in list(exchanges):
            auth = next((v for k, v in ex.request_headers.items() if k.lower() == "authorization"), "")
            out.append(auth.partition(" ")[2])
        return out

    return keys
