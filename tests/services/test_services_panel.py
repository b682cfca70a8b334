"""The services panel driven through Pilot on the whole simulator (docs/services.md, docs/forwarding.md): S shows
the selected pod's ports (the pane's Services tab, or a screen of its own below 100x30); o opens a link, which a
browser standing in for the user's fetches for real through the simulated proxy; y copies it; p copies Jupyter's
password, never shown; f forwards a port and a real HTTP request goes through it; x stops it; a gateway-only pod is
told why not; remembered forwards come back in the next run."""

from __future__ import annotations

import asyncio
import socket
import webbrowser
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from textual.pilot import Pilot

from podtui.core.forward_memory import ForwardMemory, PortSpec
from podtui.core.paths import Paths
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.screens.services import ServicesScreen
from podtui.ui.widgets.pod_table import PodTable
from podtui.ui.widgets.services_panel import MASK, ServicesPanel
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS, needs_sshd

PANES = (120, 32)
SMALL = (90, 28)
SECRET = "s3cret-jupyter-pass"


@pytest.fixture
def app_on(make_full_app: Callable[..., PodtuiApp], full_sim: Simulator) -> Callable[..., PodtuiApp]:
    """The app with the simulator's proxy as its proxy_url (as the demo has)."""

    def make(**kw: Any) -> PodtuiApp:
        return make_full_app(proxy_url=lambda: full_sim.proxy_url, **kw)

    return make


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, str]]:
    """The user's browser: it fetches what it is given to open, and keeps (url, status, body)."""
    opened: list[tuple[str, int, str]] = []

    def fetch(url: str, *args: object, **kwargs: object) -> bool:
        answer = httpx.get(url, timeout=10.0, follow_redirects=True)
        opened.append((url, answer.status_code, answer.text))
        return True

    monkeypatch.setattr(webbrowser, "open", fetch)
    return opened


async def _services(pilot: Pilot[None], app: PodtuiApp, pod: str = "train") -> ServicesPanel:
    await loaded(pilot, app)
    table = app.screen.query_one(PodTable)
    table.cursor_row = table.visible_ids.index(DEMO_IDS[pod])
    screen = app.screen
    assert isinstance(screen, PodListScreen)
    await pilot.press("S")
    if screen.panes_on:
        await wait_until(pilot, lambda: screen.pane.active_tab == "services")
        panel = screen.pane.services_panel
    else:
        await wait_until(pilot, lambda: isinstance(app.screen, ServicesScreen))
        panel = app.screen.query_one(ServicesPanel)
    await wait_until(pilot, lambda: bool(panel.rows) and panel.pod is not None and panel.pod.id == DEMO_IDS[pod])
    assert panel.table.has_focus
    return panel


def _notes(app: PodtuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


def _screen_text(app: PodtuiApp) -> str:
    """Everything on screen, as an SVG screenshot holds it (the text, in whatever markup)."""
    return app.export_screenshot()


async def test_the_ports_and_a_link_that_opens_something_real(
    app_on: Callable[..., PodtuiApp], full_sim: Simulator, browser: list[tuple[str, int, str]]
) -> None:
    app = app_on()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await _services(pilot, app)
        assert [(s.port, s.type) for s in panel.rows] == [(8888, "http"), (22, "tcp")]
        jupyter = panel.rows[0]
        assert jupyter.url == full_sim.proxy_url.format(pod_id=DEMO_IDS["train"], port=8888)
        await pilot.press("o")
        await wait_until(pilot, lambda: len(browser) == 1)
        url, status, body = browser[0]
        assert url == jupyter.url and status == 200 and "Jupyter Server" in body
        await pilot.press("y")
        assert app.clipboard == jupyter.url
        await pilot.press("down", "o")  # 22/tcp: a TCP address is not for a browser
        await wait_until(pilot, lambda: any("not a browser" in n for n in _notes(app)))
        assert len(browser) == 1


async def test_jupyters_password_is_masked_and_copied(app_on: Callable[..., PodtuiApp], full_sim: Simulator) -> None:
    full_sim.world.pods[DEMO_IDS["train"]].env["JUPYTER_PASSWORD"] = SECRET
    app = app_on()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await _services(pilot, app)
        await wait_until(pilot, lambda: MASK in str(panel.query_one("#services-notes").render()))
        await pilot.press("p")
        assert app.clipboard == SECRET
        await pilot.pause()
        assert SECRET not in _screen_text(app) and not any(SECRET in n for n in _notes(app))


@needs_sshd
async def test_forward_a_port_and_reach_it_then_stop(
    app_on: Callable[..., PodtuiApp], full_sim: Simulator, browser: list[tuple[str, int, str]]
) -> None:
    app = app_on(demo=False)  # a real account's pods: their forwards are remembered
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await _services(pilot, app)
        await pilot.press("f", "f")  # pressed twice: one forward
        await wait_until(pilot, lambda: any(f.state == "listening" for f in app.forwards.of(DEMO_IDS["train"])))
        (made,) = app.forwards.of(DEMO_IDS["train"])
        assert made.remote_port == 8888 and made.local_address.startswith("127.0.0.1:")
        answer = httpx.get(f"http://{made.local_address}/", timeout=10.0)
        assert answer.status_code == 200 and "Jupyter Server" in answer.text
        await wait_until(pilot, lambda: str(panel.table.get_row_at(0)[3]) == f":{made.local_port}")
        assert panel.forwards_table.display and panel.forwards_table.get_row_at(0)[0] == made.local_address
        await pilot.press("o")  # forwarded here: the link opened is the local one
        await wait_until(pilot, lambda: len(browser) == 1)
        assert browser[0][0] == f"http://{made.local_address}/" and browser[0][1] == 200
        remembered = ForwardMemory.for_paths(app.services.paths).for_pod("llama-lora-3090")
        assert [s.remote for s in remembered] == [8888]
        await pilot.press("x")
        await wait_until(pilot, lambda: all(f.state == "stopped" for f in app.forwards.of(DEMO_IDS["train"])))
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://{made.local_address}/", timeout=2.0)
        # forgotten in the file as well, which a worker writes after the forward stopped
        await wait_until(pilot, lambda: ForwardMemory.for_paths(app.services.paths).for_pod("llama-lora-3090") == [])


@needs_sshd
async def test_remembered_forwards_come_back(app_on: Callable[..., PodtuiApp], full_sim: Simulator) -> None:
    full_sim.wait_ssh_ready()
    ForwardMemory.for_paths(Paths.default()).remember("llama-lora-3090", [PortSpec(8888, 0)])
    app = app_on(demo=False)
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await loaded(pilot, app)
        await wait_until(
            pilot, lambda: any(f.state == "listening" for f in app.forwards.of(DEMO_IDS["train"])), timeout=20
        )
        await wait_until(pilot, lambda: any("forwards restored" in n for n in _notes(app)))
        (made,) = app.forwards.of(DEMO_IDS["train"])
        assert httpx.get(f"http://{made.local_address}/", timeout=10.0).status_code == 200


@needs_sshd
async def test_the_demos_forwards_are_not_remembered(app_on: Callable[..., PodtuiApp], full_sim: Simulator) -> None:
    app = app_on()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await _services(pilot, app)
        await pilot.press("f")
        await wait_until(pilot, lambda: any(f.state == "listening" for f in app.forwards.of(DEMO_IDS["train"])))
        assert not ForwardMemory.for_paths(app.services.paths).path.exists()


async def test_a_gateway_only_pod_says_why_and_offers_the_link(
    app_on: Callable[..., PodtuiApp], full_sim: Simulator
) -> None:
    app = app_on()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await _services(pilot, app, pod="idle")
        notes = str(panel.query_one("#services-notes").render())
        assert "needs direct SSH" in notes and "524" in notes
        await pilot.press("f")
        await wait_until(pilot, lambda: any("no direct SSH" in n for n in _notes(app)))
        said = next(n for n in _notes(app) if "no direct SSH" in n)
        assert full_sim.proxy_url.format(pod_id=DEMO_IDS["idle"], port=8888) in said
        assert app.forwards.of(DEMO_IDS["idle"]) == []


async def test_below_the_panes_size_it_is_a_screen_of_its_own(
    app_on: Callable[..., PodtuiApp], full_sim: Simulator
) -> None:
    app = app_on()
    async with app.run_test(size=SMALL) as pilot:
        panel = await _services(pilot, app)
        assert isinstance(app.screen, ServicesScreen) and len(panel.rows) == 2
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))


async def test_hostile_addresses_are_shown_inert(app_on: Callable[..., PodtuiApp], full_sim: Simulator) -> None:
    """A public address with markup in it (RunPod's text, never podtui's) is shown and said as it is."""
    full_sim.world.pods[DEMO_IDS["train"]].public_ip = "[/]"
    app = app_on()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        panel = await _services(pilot, app)
        await pilot.press("down", "o", "y")
        await wait_until(pilot, lambda: any("[/]" in n for n in _notes(app)))
        assert panel.is_mounted and app.is_running


@needs_sshd
async def test_a_pod_gone_from_the_account_stops_its_forwards(
    app_on: Callable[..., PodtuiApp], full_sim: Simulator
) -> None:
    app = app_on()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await _services(pilot, app)
        await pilot.press("f")
        await wait_until(pilot, lambda: any(f.state == "listening" for f in app.forwards.of(DEMO_IDS["train"])))
        (made,) = app.forwards.of(DEMO_IDS["train"])
        with full_sim.world.lock:
            full_sim.world.pods.pop(DEMO_IDS["train"])
        app.poll_now()
        await wait_until(pilot, lambda: app.forwards.of(DEMO_IDS["train"]) == [])
        assert any("no longer on the account" in n for n in _notes(app))
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://{made.local_address}/", timeout=2.0)


@needs_sshd
async def test_a_restore_tried_again_makes_only_what_is_missing(
    app_on: Callable[..., PodtuiApp], full_sim: Simulator
) -> None:
    """One remembered forward comes back, one cannot (its local port is taken): the next try makes only that one."""
    full_sim.wait_ssh_ready()
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    busy = taken.getsockname()[1]
    ForwardMemory.for_paths(Paths.default()).remember("llama-lora-3090", [PortSpec(8888, 0), PortSpec(22, busy)])
    app = app_on(demo=False)
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: any("not restored" in n for n in _notes(app)), timeout=20)
        assert [f.remote_port for f in app.forwards.of(DEMO_IDS["train"])] == [8888]
        app.forwards._retry_at.clear()  # as RESTORE_AGAIN_S later: still taken, and not said again
        said = await asyncio.to_thread(app.forwards.restore, app.pods())
        assert said == [] and app.forwards._tries["llama-lora-3090"] == 2
        taken.close()
        app.forwards._retry_at.clear()
        said = await asyncio.to_thread(app.forwards.restore, app.pods())
        assert sorted(f.remote_port for f in app.forwards.of(DEMO_IDS["train"])) == [22, 8888], said


@needs_sshd
async def test_a_forward_given_up_on_starts_afresh(app_on: Callable[..., PodtuiApp], full_sim: Simulator) -> None:
    """A forwarder that failed for good (a changed host key, say) is replaced by a new one on the next f."""
    app = app_on()
    async with app.run_test(size=PANES, notifications=True) as pilot:
        await _services(pilot, app)
        await pilot.press("f")
        await wait_until(pilot, lambda: any(f.state == "listening" for f in app.forwards.of(DEMO_IDS["train"])))
        old = app.forwards._forwarders[DEMO_IDS["train"]]
        await asyncio.to_thread(old._fail, "the SSH host key changed (a test)")
        assert old.failed
        await pilot.press("f")  # again, straight away
        await wait_until(pilot, lambda: any(f.state == "listening" for f in app.forwards.of(DEMO_IDS["train"])))
        assert app.forwards._forwarders[DEMO_IDS["train"]] is not old
