"""SVG snapshots: the profile's name leading the ticker line at 80x24 and 120x32, and the accounts view (two
accounts and one without its key) at 80x24 and 120x32, on the simulator's frozen clock.

Update after reviewing the report: pytest tests/profiles/test_snapshots.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from podtui.core.api import V2Api
from podtui.core.api.client import RunPodApi
from podtui.core.profiles import NoProfileKey
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.accounts import AccountsScreen
from tests.helpers.pilot import loaded, steady, wait_until
from tests.profiles.conftest import TwoAccounts

SIZES = [(80, 24), (120, 32)]
SOURCES = {
    "work": "env RUNPOD_KEY_WORK",
    "team": "podtui key file",
    "lab": "env RUNPOD_KEY_LAB",
}


def _app(make_app: Callable[..., PodtuiApp], accounts: TwoAccounts) -> PodtuiApp:
    keys = {"work": accounts.a.api_key, "team": accounts.b.api_key}

    def profile_api(name: str) -> RunPodApi:
        if name not in keys:
            raise NoProfileKey(f"profile {name} takes its key from the environment variable RUNPOD_KEY_LAB, not set")
        return V2Api(keys[name], accounts.url, timeout_s=10.0, clock=accounts.a.world.clock.now)

    return make_app(profile="work", profiles=SOURCES, profile_api=profile_api)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_profile_leads_the_ticker(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], accounts: TwoAccounts, size: tuple[int, int]
) -> None:
    app = _app(make_app, accounts)

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_accounts_view(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], accounts: TwoAccounts, size: tuple[int, int]
) -> None:
    app = _app(make_app, accounts)

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        app.push_screen(AccountsScreen())
        await wait_until(pilot, lambda: isinstance(app.screen, AccountsScreen))
        screen = app.screen
        assert isinstance(screen, AccountsScreen)
        await wait_until(pilot, lambda: bool(screen.rows) and None not in screen.rows.values())
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=ready)
