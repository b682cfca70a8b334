"""The app on profiles: the accounts view fetching every profile with its own key, a failing profile said on its
row, the palette's switch ending the app with the profile asked for, and the CLI's loop starting it again on that
profile (docs/profiles.md#switching)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.pilot import Pilot
from textual.widgets import Static

from podtui.cli import main as cli_main
from podtui.cli.session import open_session, profile_paths
from podtui.core.paths import Paths
from podtui.core.services import Services
from podtui.ui.app import PodtuiApp
from podtui.ui.build import build_app
from podtui.ui.screens.accounts import AccountsScreen
from tests.helpers.pilot import loaded, wait_until
from tests.profiles.conftest import TwoAccounts

SIZE = (120, 32)


async def _palette(pilot: Pilot[None], app: PodtuiApp, words: str) -> None:
    await pilot.press("ctrl+p")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*words)
    await pilot.pause(0.3)  # the palette searches as it is typed, in a worker of its own
    await pilot.press("enter")


async def _accounts(pilot: Pilot[None], app: PodtuiApp) -> AccountsScreen:
    await _palette(pilot, app, "accounts: burn")
    await wait_until(pilot, lambda: isinstance(app.screen, AccountsScreen))
    screen = app.screen
    assert isinstance(screen, AccountsScreen)
    await wait_until(pilot, lambda: bool(screen.rows) and None not in screen.rows.values())
    return screen


async def test_the_accounts_view_asks_each_profile_with_its_own_key(
    two_profiles: TwoAccounts,
    write_config: Callable[[str], Paths],
    sent_keys: Callable[[], list[str]],
) -> None:
    write_config(
        'default_profile = "a"\n[profiles.a]\nkey_env = "KEY_A"\n[profiles.b]\nkey_file = true\n'
        '[profiles.gone]\nkey_env = "KEY_GONE"\n'
    )
    with open_session(False, Paths.default(), allow_no_key=True) as services:
        app = build_app(services, poll_interval_s=600.0)
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot, app)
            screen = await _accounts(pilot, app)
            rows = screen.rows
            assert rows["a"] is not None and rows["a"].balance == pytest.approx(23.87, abs=0.01)
            assert rows["b"] is not None and rows["b"].running == 2
            assert rows["gone"] is not None and "KEY_GONE, which is not set" in (rows["gone"].error or "")
            totals = str(screen.query_one("#totals", Static).render())
            assert "total of 2:" in totals and "1 not counted" in totals and "$436.37" in totals
            assert set(sent_keys()) == {two_profiles.a.api_key, two_profiles.b.api_key}
            await pilot.press("ctrl+r")  # asked again, the same way
            await wait_until(pilot, lambda: None not in screen.rows.values())
            assert set(sent_keys()) == {two_profiles.a.api_key, two_profiles.b.api_key}
            await pilot.press("down", "enter")  # b: the app ends, asking for it
        assert app.profile_requested == "b"


async def test_without_profiles_the_view_says_how_to_add_them(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.push_screen(AccountsScreen())
        await wait_until(pilot, lambda: isinstance(app.screen, AccountsScreen) and bool(app.screen.query("#status")))
        await wait_until(pilot, lambda: "no profiles" in str(app.screen.query_one("#status", Static).render()))


async def test_the_palette_switches_profile(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app(profile="a", profiles={"a": "env KEY_A", "b": "podtui key file"})
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await _palette(pilot, app, "switch to profile b")
    assert app.profile_requested == "b" and not app.demo_requested


class _FakeApp:
    """What `_run_tui` does with an app: runs it, closes its connections, reads what it asked for."""

    def __init__(self, services: Services, asks: str | None) -> None:
        self.services, self.profile_requested = services, asks
        self.demo_requested = False
        self.return_code = 0

    def run(self, **_kw: Any) -> None:
        self.balance = self.services.api.fetch_snapshot().account.balance

    def close_connections(self) -> None:
        pass


def test_the_cli_starts_the_app_again_on_the_profile_asked_for(
    two_profiles: TwoAccounts, sent_keys: Callable[[], list[str]]
) -> None:
    made: list[_FakeApp] = []
    asks = iter(["b", "a", None])

    def build(services: Services, **_kw: Any) -> Any:
        made.append(_FakeApp(services, next(asks)))
        return made[-1]

    paths = profile_paths(Paths.default(), None, False)
    assert cli_main._run_tui(False, None, SIZE, None, paths, build=build) == 0
    assert [m.services.profile for m in made] == ["a", "b", "a"]
    assert [m.balance for m in made] == [pytest.approx(b, abs=0.01) for b in (23.87, 412.50, 23.87)]
    keys = sent_keys()
    # each run's requests carry that run's key alone (pods and balance, twice each way)
    assert keys.count(two_profiles.b.api_key) >= 1 and set(keys) == {two_profiles.a.api_key, two_profiles.b.api_key}
    assert made[1].services.paths.data_dir == Paths.default().data_dir / "profiles" / "b"


def test_the_demo_switches_between_its_two_accounts_on_one_simulator(tmp_path: Path) -> None:
    made: list[_FakeApp] = []
    asks = iter(["team", None])

    def build(services: Services, **_kw: Any) -> Any:
        made.append(_FakeApp(services, next(asks)))
        return made[-1]

    paths = profile_paths(Paths.default(), None, True)
    assert cli_main._run_tui(True, None, SIZE, None, paths, build=build) == 0
    assert [m.services.profile for m in made] == ["main", "team"]
    assert made[1].balance == pytest.approx(412.50, abs=1.0) and made[0].balance != made[1].balance
    first, second = (m.services.profile_api for m in made)
    assert getattr(first, "__self__", None) is getattr(second, "__self__", None)  # the same demo simulator
