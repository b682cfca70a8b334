"""One account reached by two profiles is counted once (docs/profiles.md#the-accounts-view); the accounts view's
refreshes, its runway words, and what the app says of a profile's key (the welcome screen, "RunPod API key")."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from textual.widgets import Static

from podtui.cli.main import main
from podtui.cli.session import open_session
from podtui.core.paths import Paths
from podtui.core.profiles import AccountBurn, marked_duplicates, runway_words, total_burn
from podtui.ui.app import PodtuiApp
from podtui.ui.build import build_app
from podtui.ui.screens.accounts import AccountsScreen
from podtui.ui.screens.welcome import WelcomeScreen
from tests.helpers.pilot import loaded, wait_until
from tests.profiles.conftest import TwoAccounts

SIZE = (120, 32)


def test_two_profiles_with_one_key_are_one_account(
    two_profiles: TwoAccounts,
    write_config: Callable[[str], Paths],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_config(
        'default_profile = "a"\n[profiles.a]\nkey_env = "KEY_A"\n[profiles.b]\nkey_file = true\n'
        '[profiles.again]\nkey_env = "KEY_AGAIN"\n'
    )
    monkeypatch.setenv("KEY_AGAIN", two_profiles.a.api_key)
    assert main(["profiles", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    rows = {r["profile"]: r for r in got["profiles"]}
    assert rows["again"]["same_account_as"] == "a" and rows["a"]["same_account_as"] is None
    assert got["total"]["balance"] == pytest.approx(rows["a"]["balance"] + rows["b"]["balance"], abs=0.01)
    assert got["total"]["burn_per_hr"] == pytest.approx(rows["a"]["burn_per_hr"] + rows["b"]["burn_per_hr"])
    assert got["total"]["key_source"] == "2 accounts"
    assert main(["profiles"]) == 0
    assert "same account as a, counted once" in capsys.readouterr().out


def test_two_keys_of_one_account_are_told_by_its_id() -> None:
    def row(name: str, account: str, balance: float) -> AccountBurn:
        return AccountBurn(name, "env", running=1, pods=1, burn_per_hr=1.0, balance=balance, account=account)

    rows = [row("a", "id u1", 10.0), row("b", "id u2", 5.0), row("a2", "id u1", 10.0)]
    assert [r.same_as for r in marked_duplicates(rows)] == [None, None, "a"]
    total = total_burn(rows)
    assert total.balance == pytest.approx(15.0) and total.running == 2 and total.source == "2 accounts"


def test_the_runway_reads_the_same_in_the_view_and_the_cli() -> None:
    idle = AccountBurn("a", "env", running=0, pods=0, burn_per_hr=0.0, balance=5.0)
    assert runway_words(idle) == "∞" and runway_words(total_burn([idle])) == "∞"
    assert runway_words(AccountBurn("a", "env", balance=None)) == "?"
    assert runway_words(AccountBurn("a", "env", balance=5.0, runway_s=7200.0)) == "2h 00m"


async def test_a_late_answer_of_an_earlier_refresh_is_dropped(
    two_profiles: TwoAccounts, make_app: Callable[..., PodtuiApp]
) -> None:
    with open_session(False, Paths.default(), allow_no_key=True) as services:
        app = build_app(services, poll_interval_s=600.0)
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot, app)
            screen = AccountsScreen()
            app.push_screen(screen)
            await wait_until(pilot, lambda: bool(screen.rows) and None not in screen.rows.values())
            fresh = screen.rows["a"]
            assert fresh is not None and screen.generation == 1
            stale = AccountBurn("a", "env KEY_A", error="an answer from before", problem="old")
            screen._landed(stale, screen.generation - 1)
            assert screen.rows["a"] is fresh
            totals = str(screen.query_one("#totals", Static).render())
            assert "total of 2:" in totals and "first runs out in" in totals


async def test_the_welcome_screen_names_the_profile_and_its_key_file(
    write_config: Callable[[str], Paths],
) -> None:
    paths = write_config('default_profile = "lab"\n[profiles.lab]\nkey_file = true\n')
    with open_session(False, Paths.default(), allow_no_key=True) as services:
        assert services.needs_key
        app = build_app(services, poll_interval_s=600.0)
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, WelcomeScreen))
            await wait_until(pilot, lambda: app.poller.done >= 1 and not app.poller.polling)  # said no key
            await pilot.pause()
            title = str(app.screen.query_one("#title", Static).render())
            intro = str(app.screen.query_one("#intro", Static).render())
    assert "profile lab" in title
    key = paths.config_dir / "keys" / "lab.key"
    assert intro.startswith("Profile lab: podtui needs this account's RunPod API key") and str(key) in intro


async def test_the_api_key_command_says_where_a_variables_key_is_given(
    two_profiles: TwoAccounts,
) -> None:
    with open_session(False, Paths.default()) as services:
        assert services.save_key is None
        app = build_app(services, poll_interval_s=600.0)
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot, app)
            app.navigator.open_welcome()
            await pilot.pause()
            said = [n.message for n in app._notifications]
    assert any("environment variable KEY_A" in m and "read -rs KEY_A" in m for m in said), said
    assert not any("demo" in m for m in said)
