"""First run with no API key: the welcome screen checks a key with RunPod before storing it (0600), never shows
it, refuses a wrong one without storing anything, and offers the demo, SSH setup and the Hugging Face check."""

from __future__ import annotations

import stat

import pytest

from podtui.cli.session import _api_once_a_key_exists
from podtui.core.api.deferred import DeferredApi
from podtui.core.config import load_config, save_api_key
from podtui.core.paths import Paths
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.keys import KeysScreen
from podtui.ui.screens.welcome import WelcomeScreen
from tests.helpers.app import build_test_app
from tests.helpers.pilot import wait_until


def first_run_app(paths: Paths, sim: SimApiServer) -> PodtuiApp:
    return build_test_app(
        DeferredApi(lambda: _api_once_a_key_exists(paths)),
        sim.world.clock.now,
        save_key=lambda v: save_api_key(paths, v),
        demo=False,
        needs_key=True,
    )


@pytest.fixture(autouse=True)
def api_at_the_simulator(sim: SimApiServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNPOD_API_BASE_URL", sim.url)  # where the SDK sends every call


def status_text(app: PodtuiApp) -> str:
    return str(app.screen.query_one("#status").render())


async def test_a_wrong_key_is_refused_and_nothing_is_stored(paths: Paths, sim: SimApiServer) -> None:
    app = first_run_app(paths, sim)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, WelcomeScreen))
        await pilot.press(*"rpa_WRONGKEY123", "enter")
        await wait_until(pilot, lambda: "not saved" in status_text(app), 10)
        assert "401" in status_text(app)
        assert "rpa_WRONGKEY123" not in app.export_screenshot()  # a password box: never on screen
    assert not paths.config_file.exists()


async def test_a_good_key_is_checked_stored_0600_and_the_pods_load(paths: Paths, sim: SimApiServer) -> None:
    app = first_run_app(paths, sim)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, WelcomeScreen))
        assert app.screen.query_one("#ssh").disabled  # SSH setup needs the account: not before the key
        await pilot.press(*sim.api_key, "enter")
        await wait_until(pilot, lambda: "accepted" in status_text(app), 10)
        assert sim.api_key not in app.export_screenshot()
        assert app.screen.query_one("#key").value == ""  # type: ignore[attr-defined]
        await wait_until(pilot, lambda: app.feed.snapshot is not None, 10)
        assert not app.screen.query_one("#ssh").disabled
        await pilot.press("enter")  # focus moved to "SSH key setup"
        await wait_until(pilot, lambda: isinstance(app.screen, KeysScreen))
    assert stat.S_IMODE(paths.config_file.stat().st_mode) == 0o600
    assert load_config(paths).api_key == sim.api_key


async def test_try_the_demo_and_later(paths: Paths, sim: SimApiServer) -> None:
    app = first_run_app(paths, sim)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, WelcomeScreen))
        await pilot.press("escape")  # later: the list stays, saying there is no key
        await wait_until(pilot, lambda: not isinstance(app.screen, WelcomeScreen))
        await wait_until(pilot, lambda: app.feed.failures > 0, 10)
        assert "no RunPod API key yet" in (app.feed.error or "")
    app = first_run_app(paths, sim)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, WelcomeScreen))
        app.screen.query_one("#demo").press()  # type: ignore[attr-defined]
        await wait_until(pilot, lambda: app.demo_requested, 5)
    assert app.demo_requested and app.return_code in (None, 0)
