"""podtui's ssh config file, once written, follows the pods while the app runs (docs/ssh-out.md): a pod's new
port is in it after the next poll; without a file the app writes none; the demo's pods never go in it."""

from __future__ import annotations

from collections.abc import Callable

from podtui.core.ssh.ssh_config import config_file
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS


async def test_the_written_file_follows_a_new_port(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app(demo=False)
    path = config_file(app.services.paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# written by podtui ssh-config --write\n")
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: "Host runpod-llama-lora-3090" in path.read_text())
        with sim.world.lock:
            sim.world.pods[DEMO_IDS["train"]].direct_ssh_port = 41999
        app.poll_now()
        await wait_until(pilot, lambda: "Port 41999" in path.read_text())


async def test_no_file_is_made(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app(demo=False)
    path = config_file(app.services.paths)
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        await pilot.pause(0.3)
    assert not path.exists()


async def test_the_demos_pods_never_go_in_it(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app(demo=True)
    path = config_file(app.services.paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# yours\n")
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        await pilot.pause(0.3)
    assert path.read_text() == "# yours\n"
