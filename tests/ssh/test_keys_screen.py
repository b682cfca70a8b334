"""The SSH key screen: shows the key's state and sets it up without dropping the account's other keys."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Static

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.keys import KeysScreen
from tests.helpers.pilot import loaded, wait_until

OLD_KEY = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 laptop"


def status(app: PodtuiApp) -> str:
    return str(app.screen.query_one("#status", Static).render())


async def test_set_up_from_the_app(make_app: Callable[..., PodtuiApp], sim: SimApiServer, tmp_path: Path) -> None:
    sim.world.set_pub_key(OLD_KEY)
    key = tmp_path / "ssh" / "id_ed25519_runpod"
    app = make_app(key_path=lambda: key)
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        await pilot.press("K")
        assert isinstance(app.screen, KeysScreen)
        await wait_until(pilot, lambda: "not created yet" in status(app))
        await pilot.press("s")
        await wait_until(pilot, lambda: "registered now (2 keys, none removed)" in status(app))
        # the pods running now accept the key only after a restart, and the screen names them
        assert "accept it only after a restart" in status(app) and "llama-lora-3090" in status(app)
        assert "notebook-4090" not in status(app)  # stopped: it gets the key when it is resumed
        assert key.exists() and (key.stat().st_mode & 0o777) == 0o600
        lines = sim.world.pub_key.split("\n")
        assert lines[0] == OLD_KEY and len(lines) == 2
        await pilot.press("escape")
        assert not isinstance(app.screen, KeysScreen)
        await pilot.press("K")
        await wait_until(pilot, lambda: "✔ registered" in status(app))


def test_keys_screen_snapshot(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app(key_path=lambda: Path("/home/you/.ssh/id_ed25519_runpod"))

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("K")
        await wait_until(pilot, lambda: "not created yet" in status(app))

    assert snap_compare(app, terminal_size=(120, 32), run_before=ready)
