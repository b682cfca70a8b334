"""A resume RunPod refuses because the pod's machine has no free GPU: the offer (wait and retry, recreate on the
network volume, cancel), the retries in a thread worker until the GPUs come back (a dropped connection or a rate
limit is tried again too, after the wait RunPod asks for), stopping them, and the CLI's words."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.widgets import Button

from podtui.cli.main import main
from podtui.core import resume
from podtui.core.api import V2Api
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.screens.resume_offer import ResumeOfferScreen
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (120, 32)
STOPPED = DEMO_IDS["stopped"]  # notebook-4090: no network volume


def test_the_words_are_recognised() -> None:
    from podtui.sim.world import RESUME_NO_GPUS  # the simulator's copy of RunPod's words: a test may read it

    assert resume.no_free_gpu(RESUME_NO_GPUS) and not resume.no_free_gpu("Your balance is too low")


async def resume_refused(pilot: object, app: PodtuiApp, sim: SimApiServer) -> None:
    await loaded(pilot, app)  # type: ignore[arg-type]
    sim.faults.add("no_capacity")
    await pilot.press("j", "j", "j", "r", "tab", "enter")  # type: ignore[attr-defined]
    await wait_until(pilot, lambda: isinstance(app.screen, ResumeOfferScreen))  # type: ignore[arg-type]


async def test_the_offer_and_cancel(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await resume_refused(pilot, app, sim)
        assert "not enough free GPUs" in str(app.screen.query_one("#said").render())
        assert "no network volume" in str(app.screen.query_one("#volume").render())
        assert not app.screen.query("#recreate")  # without a network volume: nothing to recreate on
        assert app.focused is not None and app.focused.id == "cancel"
        await pilot.press("enter")
        assert isinstance(app.screen, PodListScreen) and sim.world.pods[STOPPED].status == "EXITED"


async def test_wait_and_retry_until_the_gpus_come_back(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    app.pod_actions.retry_every_s = 0.2
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await resume_refused(pilot, app, sim)
        assert str(app.screen.query_one("#retry", Button).label) == "Retry every 0.2 s"  # what will be done
        await pilot.click("#retry")
        await wait_until(pilot, lambda: any("try 2 of" in n.message for n in app._notifications))
        assert STOPPED in app.pod_actions.retries and sim.world.pods[STOPPED].status == "EXITED"
        sim.faults.clear()  # GPUs free again
        await wait_until(pilot, lambda: sim.world.pods[STOPPED].status == "CREATED")
        await wait_until(pilot, lambda: any("resuming (after" in n.message for n in app._notifications))
        assert STOPPED not in app.pod_actions.retries


async def test_resume_again_stops_the_retries(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    app.pod_actions.retry_every_s = 0.2
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await resume_refused(pilot, app, sim)
        await pilot.click("#retry")
        await wait_until(pilot, lambda: STOPPED in app.pod_actions.retries)
        await pilot.press("r")
        assert isinstance(app.screen, ConfirmScreen) and "Stop trying" in str(app.screen.query_one("#title").render())
        await pilot.press("tab", "enter")
        await wait_until(pilot, lambda: any("stopped trying" in n.message for n in app._notifications))
        assert STOPPED not in app.pod_actions.retries and sim.world.pods[STOPPED].status == "EXITED"


async def test_recreate_on_the_network_volume(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    sim.world.stop(DEMO_IDS["idle"])  # eval-a100, whose data is on the network volume models-vol
    sim.world.pods[DEMO_IDS["idle"]].env["NOTE"] = "line1\nline2"  # the list's copy shows it as the text \n
    app = make_app()
    opened = []
    app.navigator.open_create_pod = lambda prefill=None: opened.append(prefill)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add("no_capacity")
        await pilot.press("j", "r", "tab", "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ResumeOfferScreen))
        assert "models-vol" in str(app.screen.query_one("#recreate", Button).label)
        await pilot.click("#recreate")
        await wait_until(pilot, lambda: bool(opened))
        (spec,) = opened
        assert spec.network_volume_id == "models-vol" and spec.name == "eval-a100"
        assert dict(spec.env)["NOTE"] == "line1\nline2"  # from the pod as RunPod has it


def test_the_cli_names_both_ways_out(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    cli_env.world.stop(DEMO_IDS["idle"])
    cli_env.faults.add("no_capacity")
    assert main(["resume", "eval-a100", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "`podtui resume eval-a100`" in err and "`podtui recreate eval-a100 --gpu TYPE`" in err
    assert "models-vol" in err


def test_a_dropped_connection_or_a_rate_limit_is_tried_again(sim: SimApiServer, api: V2Api) -> None:
    sim.world.stop(DEMO_IDS["idle"])
    action = f"POST /v2/pods/{DEMO_IDS['idle']}/action"
    sim.faults.add("status", 502, times=1, only=action)  # a gateway's page: the answer is lost
    pod = api.fetch_pod(DEMO_IDS["idle"])
    retrying = resume.RetryingResume(pod, every_s=0.01)
    tries: list[tuple[int, float, bool]] = []

    def tried(n: int, wait_s: float) -> None:
        tries.append((n, wait_s, retrying.unanswered))
        if n == 1:
            sim.faults.add("retry_after", "1", times=1, only=action)  # then RunPod asks for a second's rest

    outcome = retrying.run(api, tried)
    assert outcome == "resumed" and retrying.tries == 3 and retrying.error is None
    assert tries == [(1, 0.01, True), (2, 1.0, True)]  # the wait RunPod asked for, not the shorter own one
    assert sim.world.pods[DEMO_IDS["idle"]].status == "CREATED"


def test_a_start_whose_answer_was_lost_counts_once_it_went_through(sim: SimApiServer, api: V2Api) -> None:
    """The answer to a start is lost, but the start went through: the next try's refusal (it is running) ends the
    retries as resumed, not failed."""
    pod_id = DEMO_IDS["idle"]
    sim.world.stop(pod_id)
    sim.faults.add("status", 504, times=1, only=f"POST /v2/pods/{pod_id}/action")
    retrying = resume.RetryingResume(api.fetch_pod(pod_id), every_s=0.01)
    pod = sim.world.pods[pod_id]

    def went_through(n: int, wait_s: float) -> None:
        sim.world.resume(pod_id, pod.gpu_count)  # the lost start did reach RunPod

    assert retrying.run(api, went_through) == "resumed" and retrying.tries == 2


def test_a_definite_refusal_ends_the_retries(sim: SimApiServer, api: V2Api) -> None:
    sim.world.stop(DEMO_IDS["idle"])
    sim.faults.add("conflict", "the pod is being migrated", only=f"POST /v2/pods/{DEMO_IDS['idle']}/action")
    retrying = resume.RetryingResume(api.fetch_pod(DEMO_IDS["idle"]), every_s=0.01)
    assert retrying.run(api) == "failed" and retrying.tries == 1 and "migrated" in (retrying.error or "")
