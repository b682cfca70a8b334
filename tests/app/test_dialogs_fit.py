"""Every dialog fits the terminal: at 80x24 (and larger) it is no wider or taller than the screen, its buttons are on
screen, uncovered, in the tab order and answer a click, and every field of its body scrolls into view when focused.
Each is opened from the demo as a user opens it, by keys; SVG snapshots show each at 80x24.

Update after reviewing the report: pytest tests/app/test_dialogs_fit.py --snapshot-update
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, Input, Static

from podtui.console.widget import TerminalView
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.countdown import CountdownScreen
from podtui.ui.screens.create_pod import CreatePodScreen
from podtui.ui.screens.dialog import Dialog
from podtui.ui.screens.keys import KeysScreen
from podtui.ui.screens.save_as import SaveAsScreen
from podtui.ui.screens.terminate import TerminateScreen
from podtui.ui.screens.welcome import WelcomeScreen
from podtui.ui.widgets.account_bar import AccountBar
from tests.helpers.console import PROMPT, last_line
from tests.helpers.pilot import loaded, polled, steady, wait_until

SMALL = (80, 24)
SIZES = [SMALL, (100, 30), (120, 32), (200, 50)]
KEY_PATH = Path("/home/you/.ssh/id_ed25519_runpod")

Open = Callable[[Pilot[None], PodtuiApp, SimApiServer], Awaitable[None]]


async def _on_top(pilot: Pilot[None], app: PodtuiApp, kind: type[Screen[Any]]) -> None:
    await wait_until(pilot, lambda: isinstance(app.screen, kind))
    await pilot.pause()


async def _confirm(pilot: Pilot[None], app: PodtuiApp, sim: SimApiServer) -> None:
    await pilot.press("j", "j", "s")  # stop llama-lora-3090
    await _on_top(pilot, app, ConfirmScreen)


async def _terminate(pilot: Pilot[None], app: PodtuiApp, sim: SimApiServer) -> None:
    await pilot.press("j", "j", "T")
    await _on_top(pilot, app, TerminateScreen)


async def _add_transfer(pilot: Pilot[None], app: PodtuiApp, sim: SimApiServer) -> None:
    from podtui.ui.screens.add_transfer import AddTransferScreen

    await pilot.press("j", "u")  # on eval-a100
    await _on_top(pilot, app, AddTransferScreen)


async def _create_pod(pilot: Pilot[None], app: PodtuiApp, sim: SimApiServer) -> None:
    await pilot.press("n")
    await _on_top(pilot, app, CreatePodScreen)
    await wait_until(pilot, lambda: "/hr" in str(app.screen.query_one("#cost", Static).render()))
    await wait_until(pilot, lambda: app.screen.query_one("#name", Input).value == "podtui-rtx-3090")  # the GPU's


async def _ssh_key(pilot: Pilot[None], app: PodtuiApp, sim: SimApiServer) -> None:
    await pilot.press("K")
    await _on_top(pilot, app, KeysScreen)
    await wait_until(pilot, lambda: "not created yet" in str(app.screen.query_one("#status", Static).render()))


async def _welcome(pilot: Pilot[None], app: PodtuiApp, sim: SimApiServer) -> None:
    await _on_top(pilot, app, WelcomeScreen)  # the first run opens it


async def _countdown(pilot: Pilot[None], app: PodtuiApp, sim: SimApiServer) -> None:
    app.pod_actions.countdown_s = 600
    await pilot.press("j", "A")  # autostop on eval-a100, the demo's idle pod
    for _ in range(3):  # fifteen idle minutes: the app counts down
        sim.world.clock.advance(300)
        await polled(pilot, app)
    await _held(pilot, app)


async def _countdown_quietly(pilot: Pilot[None], app: PodtuiApp, sim: SimApiServer) -> None:
    """As the app counts down once the pod is idle (PodActions.count_down), with no toast left behind it: the
    notes said on the way there stay on the list under the dialog until they time out, in real time."""
    app.pod_actions.countdown_s = 600
    await pilot.press("j", "A")
    app.clear_notifications()
    pod = next(p for p in app.pods() if p.name == "eval-a100")
    app.pod_actions.count_down(pod, 900.0, 1.643)
    await _held(pilot, app)


async def _held(pilot: Pilot[None], app: PodtuiApp) -> None:
    await _on_top(pilot, app, CountdownScreen)
    countdown = app.screen
    assert isinstance(countdown, CountdownScreen) and countdown.ticking is not None
    countdown.ticking.pause()  # held at its first second, for a snapshot that does not move
    countdown.left = 600
    countdown._show()


OPENERS: dict[str, tuple[Open, str]] = {  # how to open it, and the button that closes it without doing anything
    "confirm": (_confirm, "cancel"),
    "terminate": (_terminate, "cancel"),
    "add-transfer": (_add_transfer, "cancel"),
    "create-pod": (_create_pod, "cancel"),
    "ssh-key": (_ssh_key, "close"),
    "welcome": (_welcome, "later"),
    "countdown": (_countdown, "keep"),
}


def _app(make_app: Callable[..., PodtuiApp], name: str, tmp_path: Path) -> PodtuiApp:
    if name == "welcome":
        return make_app(needs_key=True, save_key=lambda value: tmp_path / "config.toml")
    return make_app(key_path=lambda: KEY_PATH, transfer_work_dir=tmp_path / "work")


@pytest.mark.parametrize("name", sorted(OPENERS))
def test_each_dialog_at_80x24(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], sim: SimApiServer, tmp_path: Path, name: str
) -> None:
    app = _app(make_app, name, tmp_path)
    opener = _countdown_quietly if name == "countdown" else OPENERS[name][0]

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await opener(pilot, app, sim)
        await still(pilot, app)

    assert snap_compare(app, terminal_size=SMALL, run_before=ready)


async def still(pilot: Pilot[None], app: PodtuiApp) -> None:
    """Nothing on screen that moves with real time: no toasts (they time out), the status line already saying
    that polls wait under the question (it says so at the next second), no blinking cursor."""
    app.clear_notifications()
    bars = list(app.screen_stack[-2].query(AccountBar))  # the screen under the dialog, if it has the line
    await wait_until(pilot, lambda: all("paused" in str(bar.render()) for bar in bars))
    await steady(pilot, app)


def _inside(outer: Region, inner: Region) -> bool:
    return outer.contains_region(inner)


def _on_top_at_its_middle(screen: Screen[Any], widget: Widget) -> bool:
    """What the screen has at the widget's middle is the widget: a click there lands on it."""
    x, y, width, height = widget.region
    return screen.get_widget_at(x + width // 2, y + height // 2)[0] is widget


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("name", sorted(OPENERS))
async def test_buttons_are_on_screen_and_answer(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, tmp_path: Path, name: str, size: tuple[int, int]
) -> None:
    app = _app(make_app, name, tmp_path)
    opener, closer = OPENERS[name]
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await opener(pilot, app, sim)
        screen = app.screen
        assert isinstance(screen, Dialog)
        frame = screen.query_one("#dialog")
        assert _inside(screen.region, frame.region), (frame.region, screen.region)  # nothing past the edges
        buttons = list(screen.query("#buttons Button").results(Button))
        assert buttons and any(b.id == closer for b in buttons)
        chain = screen.focus_chain
        for button in buttons:
            assert _inside(frame.region, button.region), (button, button.region, frame.region)
            assert _on_top_at_its_middle(screen, button)
            assert button.disabled or button in chain  # tab reaches it
        # every field of the body comes into view, clear of the buttons' bar, when it has the focus
        foot = screen.query_one("#foot").region
        view = frame.content_region
        for widget in [w for w in chain if w is not frame and w not in set(screen.query("#foot *"))]:
            widget.focus()
            try:
                await wait_until(pilot, lambda: _inside(view, widget.region) and not widget.region.overlaps(foot))  # noqa: B023
            except AssertionError:
                raise AssertionError(f"{widget} at {widget.region}: not in {view} clear of {foot}") from None
        await pilot.click(f"#{closer}")
        await wait_until(pilot, lambda: screen not in app.screen_stack)


async def test_the_terminate_button_is_reachable_once_the_name_is_typed(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        await _terminate(pilot, app, sim)
        screen = app.screen
        assert isinstance(screen, TerminateScreen)
        pod_id = screen.pod.id
        confirm = screen.query_one("#confirm", Button)
        assert confirm.disabled and confirm not in screen.focus_chain
        await pilot.press(*"llama-lora-3090")
        assert not confirm.disabled and confirm in screen.focus_chain
        await pilot.press("tab", "tab")  # from the name box: Cancel, then Terminate
        assert app.focused is confirm
        await pilot.click("#confirm")
        await wait_until(pilot, lambda: sim.world.pods[pod_id].status == "TERMINATED")


# --- save as: over a console on a pod ----------------------------------------------------------------------


@pytest.fixture
def fixed_place_and_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The file name offered is made of the folder podtui runs in and the local time: both fixed."""
    monkeypatch.chdir("/")
    was = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if was is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = was
    time.tzset()


async def _save_as(pilot: Pilot[None], app: PodtuiApp) -> SaveAsScreen:
    await loaded(pilot, app)
    await pilot.press("c")
    await wait_until(pilot, lambda: isinstance(app.focused, TerminalView), 10)
    view = app.focused
    assert isinstance(view, TerminalView)
    await wait_until(pilot, lambda: view.link.state == "connected" and last_line(view).endswith(PROMPT), 15)
    await pilot.press("ctrl+right_square_bracket", "S")  # out of the console, then save its output
    await _on_top(pilot, app, SaveAsScreen)
    screen = app.screen
    assert isinstance(screen, SaveAsScreen)
    return screen


def test_save_as_at_80x24(snap_compare: Any, console_app: Callable[[], PodtuiApp], fixed_place_and_time: None) -> None:
    app = console_app()

    async def ready(pilot: Pilot[None]) -> None:
        await _save_as(pilot, app)
        await still(pilot, app)

    assert snap_compare(app, terminal_size=SMALL, run_before=ready)


async def test_save_as_buttons_fit_and_save(console_app: Callable[[], PodtuiApp], tmp_path: Path) -> None:
    app = console_app()
    async with app.run_test(size=SMALL) as pilot:
        screen = await _save_as(pilot, app)
        frame = screen.query_one("#dialog")
        for button in screen.query("#buttons Button").results(Button):
            assert _inside(frame.region, button.region) and _on_top_at_its_middle(screen, button)
        target = tmp_path / "out.txt"
        screen.query_one("#path", Input).value = str(target)
        await pilot.click("#save")
        await wait_until(pilot, lambda: target.exists())
        assert PROMPT in target.read_text()
