"""Stop, resume, restart and terminate follow what RunPod says a pod may do now: its `actions` and `locked`
(docs/runpod-facts.md#rest-v2). Keys RunPod does not offer are greyed out and do nothing; a locked pod says why;
RunPod's 409 is said in words and changes nothing; restart is `POST /v2/pods/{id}/action {"action": "restart"}`,
from the TUI and the CLI alike."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from textual.pilot import Pilot

from podtui.cli.main import main
from podtui.sim.exchange import Exchange
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.commands import PodCommands
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.screens.pod_list import PodListScreen
from tests.helpers.pilot import loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (150, 29)  # the one-screen flow: Enter opens the details screen (docs/architecture.md#panes)
# the list is sorted by name: data-prep-a5000, eval-a100, llama-lora-3090, notebook-4090, sweep-h100x2
ROW = {"bursty": 0, "idle": 1, "train": 2, "stopped": 3, "starting": 4}
CHANGES = ("POST /v2/pods/", "DELETE /v2/pods/")  # requests that change a pod


def action_bodies(seen: list[Exchange], pod_id: str) -> list[object]:
    """The JSON bodies of the actions sent for the pod."""
    return [
        json.loads(e.request_body) for e in list(seen) if e.method == "POST" and e.path == f"/v2/pods/{pod_id}/action"
    ]


def notes(app: PodtuiApp) -> list[str]:
    return [n.message for n in app._notifications]


def changes(sim: SimApiServer, since: int = 0) -> list[str]:
    return [r for r in sim.rest_requests[since:] if r.startswith(CHANGES)]


async def select(pilot: Pilot[None], app: PodtuiApp, key: str) -> None:
    """Put the list's cursor on the demo pod DEMO_IDS[key] (the cursor starts on the first row)."""
    screen = app.screen
    assert isinstance(screen, PodListScreen)
    await pilot.press(*["j"] * ROW[key])
    assert screen.selected_pod is not None and screen.selected_pod.id == DEMO_IDS[key]


def live(app: PodtuiApp, verb: str) -> bool | None:
    """What the screen on top says of the verb's key: True live, None greyed out."""
    return app.screen.check_action("pod", (verb,))


def palette_verbs(app: PodtuiApp) -> set[str]:
    names = [c[0] for c in PodCommands(app.screen)._commands()]
    return {verb for verb in ("Stop", "Resume", "Restart", "Terminate") if any(n.startswith(verb + " ") for n in names)}


def eventually(condition: Callable[[], bool]) -> None:
    """Wait for what a worker thread sends (the action goes out after the question is answered), never for long."""
    for _ in range(500):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("condition not met in time")


# --- the keys follow `actions` ---------------------------------------------------------------------------------


async def test_a_running_pod_offers_stop_restart_terminate_and_greys_resume(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await select(pilot, app, "train")
        for screen_kind in (PodListScreen, PodDetailScreen):
            assert isinstance(app.screen, screen_kind)
            assert [live(app, v) for v in ("stop", "restart", "terminate", "resume")] == [True, True, True, None]
            assert palette_verbs(app) == {"Stop", "Restart", "Terminate"}
            await pilot.press("r")  # greyed out: no question, nothing sent, nothing said
            await pilot.pause()
            assert isinstance(app.screen, screen_kind) and changes(sim) == [] and notes(app) == []
            if screen_kind is PodListScreen:
                await pilot.press("enter")
                await wait_until(pilot, lambda: isinstance(app.screen, PodDetailScreen))
        await pilot.press("R")  # live: it asks first
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        assert changes(sim) == [] and sim.world.pods[DEMO_IDS["train"]].status == "RUNNING"


async def test_an_exited_pod_offers_resume_and_terminate_only(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await select(pilot, app, "stopped")
        assert [live(app, v) for v in ("resume", "terminate", "stop", "restart")] == [True, True, None, None]
        assert palette_verbs(app) == {"Resume", "Terminate"}
        await pilot.press("s", "R")
        await pilot.pause()
        assert isinstance(app.screen, PodListScreen) and changes(sim) == [] and notes(app) == []
        await pilot.press("r")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await wait_until(pilot, lambda: any(n == "notebook-4090: resuming" for n in notes(app)))
        assert changes(sim) == [f"POST /v2/pods/{DEMO_IDS['stopped']}/action"]
        assert sim.world.pods[DEMO_IDS["stopped"]].status == "CREATED"  # RunPod's start: on its way
        await wait_until(pilot, lambda: not app.poller.polling)
        await polled(pilot, app)
        # PROVISIONING now: stop and terminate, no resume
        assert [live(app, v) for v in ("stop", "terminate", "resume", "restart")] == [True, True, None, None]


async def test_a_locked_pod_says_so_on_stop_and_restart(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        sim.world.clock.advance(31)  # the demo's locked sweep has booted: RUNNING, and still locked
        await polled(pilot, app)
        await select(pilot, app, "starting")
        assert isinstance(app.screen, PodListScreen) and app.screen.selected_pod is not None
        pod = app.screen.selected_pod
        assert pod.status.value == "RUNNING" and pod.locked and pod.actions == {"terminate"}
        # its keys are live so that they can say why nothing happens; resume is not offered at all
        assert [live(app, v) for v in ("stop", "restart", "terminate", "resume")] == [True, True, True, None]
        for key in ("s", "R"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, PodListScreen)  # not asked: RunPod would refuse
        said = [n for n in notes(app) if "locked" in n]
        unlock = "(locked pods cannot be stopped or reset; `podtui edit POD --unlock`, or the edit screen)"
        assert said == [f"sweep-h100x2 is locked: RunPod will not stop or restart it until it is unlocked {unlock}"] * 2
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PodDetailScreen))
        assert "RunPod will not stop or restart it" in "\n".join(
            strip.text for strip in app.screen._compositor.render_strips()
        )
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, PodDetailScreen) and len([n for n in notes(app) if "locked" in n]) == 3
        assert changes(sim) == [] and sim.world.pods[DEMO_IDS["starting"]].status == "RUNNING"


# --- RunPod's 409 ---------------------------------------------------------------------------------------------


async def test_a_409_is_said_in_words_and_changes_nothing(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        started = sim.world.pods[DEMO_IDS["train"]].started_at
        sim.faults.add("conflict", "the pod is being migrated to another machine", times=1, only="POST /v2/pods/")
        await select(pilot, app, "train")
        await pilot.press("s", "y")
        await wait_until(pilot, lambda: any("failed" in n for n in notes(app)))
        assert [n for n in notes(app) if "failed" in n] == [
            f"stop llama-lora-3090 failed: RunPod refused POST /v2/pods/{DEMO_IDS['train']}/action (409): "
            "the pod is being migrated to another machine"
        ]
        await wait_until(pilot, lambda: not app.poller.polling)
        await polled(pilot, app)
        pod = sim.world.pods[DEMO_IDS["train"]]
        assert pod.status == "RUNNING" and pod.started_at == started
        assert app.feed.snapshot is not None and app.feed.snapshot.find("llama-lora-3090").state == "RUNNING"


async def test_actions_gone_stale_on_runpod_get_runpods_409(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    """The pod was stopped elsewhere since the last poll: RunPod's own 409 names what is valid now."""
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await select(pilot, app, "train")
        sim.world.stop(DEMO_IDS["train"])  # on runpod.io, not here: the list still says RUNNING
        await pilot.press("R", "y")
        await wait_until(pilot, lambda: any("failed" in n for n in notes(app)))
        note = next(n for n in notes(app) if "failed" in n)
        assert note.startswith("restart llama-lora-3090 failed: RunPod refused POST /v2/pods/")
        assert "(409): cannot restart pod" in note and "while it is EXITED; valid now: start, terminate" in note
        await wait_until(pilot, lambda: not app.poller.polling)
        await wait_until(pilot, lambda: live(app, "resume") is True)  # refreshed: the keys follow
        assert sim.world.pods[DEMO_IDS["train"]].status == "EXITED"


# --- restart -----------------------------------------------------------------------------------------------------


async def test_restart_from_the_tui_sends_the_restart_action(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, exchanges: list[Exchange]
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        pid = DEMO_IDS["train"]
        before = sim.world.pods[pid].started_at
        assert before is not None and before < sim.world.clock.now()
        await select(pilot, app, "train")
        await pilot.press("R")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await wait_until(pilot, lambda: "llama-lora-3090: restarting" in notes(app))
        assert changes(sim) == [f"POST /v2/pods/{pid}/action"]
        await wait_until(pilot, lambda: action_bodies(exchanges, pid) == [{"action": "restart"}])
        assert sim.world.pods[pid].started_at == sim.world.clock.now()  # a new run, on the same machine
        await wait_until(pilot, lambda: not app.poller.polling)
        await polled(pilot, app)
        assert app.feed.snapshot is not None and app.feed.snapshot.find(pid).uptime_s == 0


def test_restart_from_the_cli_sends_the_restart_action(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], exchanges: list[Exchange]
) -> None:
    pid = DEMO_IDS["train"]
    assert main(["restart", "llama-lora", "--yes"]) == 0
    assert capsys.readouterr().out == f'pod "{pid}" (llama-lora-3090) restarting\n'
    assert changes(cli_env) == [f"POST /v2/pods/{pid}/action"]
    eventually(lambda: action_bodies(exchanges, pid) == [{"action": "restart"}])
    assert cli_env.world.pods[pid].started_at == cli_env.world.clock.now()
    # on an exited pod: refused in words before anything is sent
    assert main(["restart", DEMO_IDS["stopped"], "--yes"]) == 1
    assert capsys.readouterr().err == ("podtui: error: notebook-4090 is EXITED; only a running pod can be restarted\n")
    assert changes(cli_env) == [f"POST /v2/pods/{pid}/action"]
