"""The Hugging Face screen, driven with keys: a check's lines, files and time; then a download into the queue."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Button, DataTable, Input, Select, Static

from podtui.core.api import V2Api
from podtui.core.hf.token import FoundToken, found
from podtui.sim.hub_seed import GATED_MODEL, PUBLIC_DATASET, PUBLIC_MODEL
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.hf_check import HfCheckScreen
from podtui.ui.screens.transfers import TransfersScreen
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import GATEWAY_POD


@pytest.fixture
def hf_app(make_full_app: Callable[..., PodtuiApp], tmp_path: Path) -> Callable[..., PodtuiApp]:
    return lambda **kw: make_full_app(
        transfer_history=tmp_path / "data" / "transfers.json", transfer_work_dir=tmp_path / "work", **kw
    )


async def test_check_then_download_on_a_pod(
    full_sim: Simulator, sim_api: V2Api, hf_app: Callable[..., PodtuiApp], tmp_path: Path
) -> None:
    hub = full_sim.hub
    token = [hub.token("no_license")]  # the app's token: the screen's check and the queue's download both use it
    app = hf_app(hf_endpoint=lambda: hub.endpoint, hf_token=lambda: found(token[0], "test"))
    async with app.run_test(size=(130, 40)) as pilot:
        await loaded(pilot, app)
        pods = list(app.feed.snapshot.pods)  # type: ignore[union-attr]
        pod = next(p for p in pods if p.name == GATEWAY_POD)
        screen = HfCheckScreen(pods, pod)
        await app.push_screen(screen)
        screen.query_one("#repo", Input).value = GATED_MODEL
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.report is not None)
        lines = str(screen.query_one("#lines", Static).render())
        assert "✗ gated (manual): the license is not accepted" in lines and f"{hub.endpoint}/{GATED_MODEL}" in lines
        assert screen.query_one("#download", Button).disabled
        assert screen.query_one("#files", DataTable).row_count == len(hub.repo(GATED_MODEL).files)
        await pilot.press("ctrl+s")  # refused: the check failed
        assert not app.transfers.queue().jobs()

        token[0] = hub.token("read")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: screen.report is not None and screen.report.ok)
        assert "has access" in str(screen.query_one("#lines", Static).render())
        assert "6 files" in str(screen.query_one("#summary", Static).render())
        assert screen.query_one("#local-dir", Input).value == "models/llama-mini"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        await wait_until(pilot, lambda: any(j.state == "verified" for j in app.transfers.queue().jobs()), timeout=60)
        job = app.transfers.queue().jobs()[-1]
        assert job.direction == "hub" and job.final_path and job.final_path.endswith("/models/llama-mini")


async def test_the_next_repo_gets_its_own_folder_unless_the_user_typed_one(
    full_sim: Simulator, sim_api: V2Api, hf_app: Callable[..., PodtuiApp], tmp_path: Path
) -> None:
    hub = full_sim.hub
    app = hf_app(hf_endpoint=lambda: hub.endpoint, hf_token=lambda: found(hub.token("read"), "test"))
    async with app.run_test(size=(130, 40)) as pilot:
        await loaded(pilot, app)
        screen = HfCheckScreen(list(app.feed.snapshot.pods))  # type: ignore[union-attr]
        await app.push_screen(screen)
        box = screen.query_one("#local-dir", Input)
        for repo, folder in ((GATED_MODEL, "models/llama-mini"), (PUBLIC_MODEL, "models/tiny-gpt2")):
            screen.query_one("#repo", Input).value = repo
            await pilot.press("enter")
            await wait_until(pilot, lambda r=repo: screen.report is not None and screen.report.repo_id == r)
            assert box.value == folder
        box.value = "mine/here"
        screen.query_one("#repo", Input).value = GATED_MODEL
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.report is not None and screen.report.repo_id == GATED_MODEL)
        assert box.value == "mine/here"
        screen.query_one("#repo", Input).value = "https://huggingface.co/datasets/" + PUBLIC_DATASET
        box.value = ""
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: screen.report is not None and screen.report.repo_id == PUBLIC_DATASET)
        assert screen.report.repo_type == "dataset" and screen.query_one("#repo-type", Select).value == "dataset"
        assert box.value == f"datasets/{PUBLIC_DATASET.rsplit('/')[-1]}"


async def test_a_slow_earlier_check_never_replaces_a_later_one(
    full_sim: Simulator, sim_api: V2Api, hf_app: Callable[..., PodtuiApp], tmp_path: Path
) -> None:
    hub = full_sim.hub
    calls: list[int] = []

    def token() -> FoundToken:
        calls.append(1)
        if len(calls) == 1:
            time.sleep(1.5)  # a slow Hub, a big listing: the first check lands after the second
        return found(hub.token("read"), "test")

    app = hf_app(hf_endpoint=lambda: hub.endpoint, hf_token=token)
    async with app.run_test(size=(130, 40)) as pilot:
        await loaded(pilot, app)
        pods = list(app.feed.snapshot.pods)  # type: ignore[union-attr]
        screen = HfCheckScreen(pods, next(p for p in pods if p.name == GATEWAY_POD))
        await app.push_screen(screen)
        screen.query_one("#repo", Input).value = GATED_MODEL
        await pilot.press("enter")
        await pilot.pause(0.2)
        screen.query_one("#repo", Input).value = PUBLIC_MODEL
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.report is not None)
        await pilot.pause(2.5)  # the first check has ended by now
        assert len(calls) == 2
        assert screen.report is not None and screen.report.repo_id == PUBLIC_MODEL
        assert GATED_MODEL not in str(screen.query_one("#lines", Static).render())
        assert screen.query_one("#local-dir", Input).value == "models/tiny-gpt2"
        screen.query_one("#repo", Input).value = GATED_MODEL  # typed, not checked: no download of the old report
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is screen and not app.transfers.queue().jobs()


async def test_read_only_refuses_the_download(
    full_sim: Simulator, sim_api: V2Api, hf_app: Callable[..., PodtuiApp], tmp_path: Path
) -> None:
    hub = full_sim.hub
    app = hf_app(read_only=True)
    async with app.run_test(size=(130, 40)) as pilot:
        await loaded(pilot, app)
        pods = list(app.feed.snapshot.pods)  # type: ignore[union-attr]
        screen = HfCheckScreen(
            pods, None, repo="podtui-sim/tiny-gpt2", endpoint=lambda: hub.endpoint, token=lambda: None
        )
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.report is not None)
        assert screen.report is not None and screen.report.ok
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is screen and app.transfers.started is None


async def test_a_malformed_repo_id_says_so(
    full_sim: Simulator, sim_api: V2Api, hf_app: Callable[..., PodtuiApp], tmp_path: Path
) -> None:
    app = hf_app()
    async with app.run_test(size=(130, 40)) as pilot:
        screen = HfCheckScreen([], None, endpoint=lambda: full_sim.hub.endpoint, token=lambda: None)
        await app.push_screen(screen)
        screen.query_one("#repo", Input).value = "two/slashes/here"
        await pilot.press("enter")
        await wait_until(pilot, lambda: "more than one /" in str(screen.query_one("#lines", Static).render()))
