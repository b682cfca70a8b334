"""Render screenshots/*.svg from the demo, so the README's pictures always show the real app.

The demo world runs on a frozen clock at a fixed instant, so re-running this changes nothing unless
the UI did. Usage: python scripts/screenshots.py
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from podtui.console.widget import TerminalView
from podtui.core.api import SdkApi
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.keys import generate_dedicated_key
from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, demo_world
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp

OUT = Path(__file__).resolve().parent.parent / "screenshots"
SIZE = (130, 32)

Steps = Callable[[Pilot[None], SimApiServer], Awaitable[None]]


async def _nothing(pilot: Pilot[None], sim: SimApiServer) -> None:
    pass


async def _sorted_filtered(pilot: Pilot[None], sim: SimApiServer) -> None:
    await pilot.press("o", "o", "o", "o", "O", "slash", *"running", "enter")


async def _details(pilot: Pilot[None], sim: SimApiServer) -> None:
    await pilot.press("j", "j", "enter")


async def _terminate(pilot: Pilot[None], sim: SimApiServer) -> None:
    await pilot.press("j", "j", "T")


async def _stale(pilot: Pilot[None], sim: SimApiServer) -> None:
    sim.faults.add("status", 502)
    sim.world.clock.advance(95)
    app = pilot.app
    assert isinstance(app, PodtuiApp)
    done = app.polls_done
    app.poll_now()
    while app.polls_done == done:
        await pilot.pause(0.05)


async def _help(pilot: Pilot[None], sim: SimApiServer) -> None:
    await pilot.press("question_mark")


async def _console(pilot: Pilot[None], sim: SimApiServer) -> None:
    """A console on a demo pod (real bash in the simulator's sandbox), running the demo's colour showcase."""
    app = pilot.app
    await pilot.press("c")
    view = None
    while view is None or not _prompt_at(view, 0):
        await pilot.pause(0.05)
        view = app.focused if isinstance(app.focused, TerminalView) else None
    await pilot.press(*"clear", "semicolon", "space", *"bash", "space", *"colors.sh", "enter")
    while not _prompt_at(view, 8):
        await pilot.pause(0.05)


def _prompt_at(view: TerminalView, first_row: int) -> bool:
    return any(line.endswith("/workspace#") for line in view.link.emulator.screen_lines()[first_row:])


async def _keys(pilot: Pilot[None], sim: SimApiServer) -> None:
    await pilot.press("K")
    await pilot.pause(0.5)


SHOTS: list[tuple[str, Steps, tuple[int, int]]] = [
    ("pod-list", _nothing, SIZE),
    ("pod-list-sorted-filtered", _sorted_filtered, SIZE),
    ("pod-detail", _details, (100, 48)),
    ("terminate-confirm", _terminate, SIZE),
    ("stale-data", _stale, SIZE),
    ("help", _help, SIZE),
    ("ssh-key", _keys, SIZE),
    ("console", _console, (110, 24)),
]
NEEDS_SSH = {"console"}


async def render(name: str, steps: Steps, size: tuple[int, int]) -> Path:
    clock = SimClock(start=SCREENSHOT_EPOCH, frozen=True)
    world = demo_world(clock, boot_s=30.0)
    with tempfile.TemporaryDirectory(prefix="podtui-shots-") as tmp:
        root = Path(tmp)
        if name in NEEDS_SSH:  # the whole simulator: API, gateway, pods with real shells
            key = generate_dedicated_key(root / "demo_key", comment="podtui-demo")
            world.pub_key = key.public_line + " podtui-demo"
            full = Simulator(world, root=root / "sim").start()
            sim, stop = full.api, full.stop
            settings = SshSettings(known_hosts=root / "known_hosts", gateway=full.gateway.address,
                                   key_path=key.path, use_agent=False, search_home=False)
        else:
            sim = SimApiServer(world).start()
            stop = sim.stop
            settings = SshSettings(known_hosts=root / "known_hosts")
        try:
            return await _shoot(name, steps, size, sim, settings)
        finally:
            stop()


async def _shoot(name: str, steps: Steps, size: tuple[int, int], sim: SimApiServer, settings: SshSettings) -> Path:
    clock = sim.world.clock
    api = SdkApi(sim.api_key, sim.url, clock=clock.now)
    app = PodtuiApp(api, poll_interval_s=3600, demo=True, clock=clock.now,
                    key_path=lambda: Path("/home/you/.ssh/id_ed25519_runpod"), ssh_settings=lambda: settings)
    async with app.run_test(size=size) as pilot:
        while app.feed.snapshot is None:
            await pilot.pause(0.05)
        await pilot.pause()
        await steps(pilot, sim)
        await pilot.pause(0.2)
        path = OUT / f"{name}.svg"
        path.write_text(app.export_screenshot(title=f"podtui --demo · {name}"), encoding="utf-8")
        return path


async def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name, steps, size in SHOTS:
        print(f"wrote {await render(name, steps, size)}")


if __name__ == "__main__":
    asyncio.run(main())
