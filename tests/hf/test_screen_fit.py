"""The Hugging Face screen at 80x24 and in its own words: its buttons stay in view and every field can be reached,
it names only what it offers (no `podtui hf` flags), and in the demo it names the repos the demo's Hub holds.

Update after reviewing the report: pytest tests/hf/test_screen_fit.py --snapshot-update
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static

from podtui.core.hf.token import found
from podtui.sim.hub import SimHub
from podtui.sim.hub_seed import default_seed
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.dialog import Frame
from podtui.ui.screens.hf_check import DEMO_REPOS, REPO_EXAMPLE, HfCheckScreen
from tests.helpers.pilot import opened_by_key, steady, wait_until

HUB_PORT = 38519  # fixed: the Hub's address is part of what the screen shows (tests/hf/test_snapshots.py has 38517)


@pytest.fixture
def fixed_hub() -> Iterator[SimHub]:
    h = SimHub(port=HUB_PORT).start()
    yield h
    h.stop()


def on_hub(make_app: Callable[..., PodtuiApp], hub: SimHub, **kw: Any) -> PodtuiApp:
    """The demo app checking on `hub` with alice's read token (she accepted llama-mini's license, not gemma-mini's)."""
    return make_app(hf_endpoint=lambda: hub.endpoint, hf_token=lambda: found(hub.token("read"), "demo"), **kw)


async def open_hf(pilot: Pilot[None], app: PodtuiApp) -> HfCheckScreen:
    return await opened_by_key(pilot, app, "H", HfCheckScreen)


async def check(pilot: Pilot[None], screen: HfCheckScreen, repo: str, kind: str = "model") -> str:
    """Check `repo` as the person does (type it, pick its type, enter); the lines the screen shows."""
    screen.query_one("#repo-type", Select).value = kind
    screen.query_one("#repo", Input).value = repo
    screen.query_one("#repo", Input).focus()
    await pilot.press("enter")
    await wait_until(pilot, lambda: screen.report is not None and screen.report.repo_id == repo)
    await pilot.pause()
    return lines(screen)


def lines(screen: HfCheckScreen) -> str:
    return str(screen.query_one("#lines", Static).render())


def test_the_demo_repos_named_are_the_demo_hubs() -> None:
    seed = default_seed()
    named = {f"{kind}:{repo}": what for repo, kind, what in DEMO_REPOS}
    assert set(named) == set(seed.repos)
    for key, what in named.items():
        repo = seed.repos[key]
        assert ("gated" in what) == bool(repo.gated), key
        if repo.gated:
            assert ("not accepted" not in what) == (repo.repo_id in seed.accepted["alice"]), key


@pytest.mark.parametrize("shown", ["hint", "gated"])
def test_hf_check_at_80x24(
    snap_compare: Any, make_app: Callable[..., PodtuiApp], fixed_hub: SimHub, shown: str
) -> None:
    app = on_hub(make_app, fixed_hub)

    async def ready(pilot: Pilot[None]) -> None:
        screen = await open_hf(pilot, app)
        if shown == "gated":
            await check(pilot, screen, "podtui-sim/gemma-mini")
        await steady(pilot, app)

    assert snap_compare(app, terminal_size=(80, 24), run_before=ready)


async def test_the_demo_names_its_repos_and_each_checks_as_named(
    make_app: Callable[..., PodtuiApp], hub: SimHub
) -> None:
    app = on_hub(make_app, hub)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_hf(pilot, app)
        hint = lines(screen)
        assert all(repo in hint for repo, _, _ in DEMO_REPOS)
        assert screen.query_one("#repo", Input).placeholder == DEMO_REPOS[0][0]
        for repo, kind, what in DEMO_REPOS:
            said = await check(pilot, screen, repo, kind)
            assert screen.report is not None
            assert screen.report.ok == ("not accepted" not in what), (repo, said)


async def test_outside_the_demo_the_example_is_a_hub_repo(make_app: Callable[..., PodtuiApp], hub: SimHub) -> None:
    app = on_hub(make_app, hub, demo=False)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_hf(pilot, app)
        assert screen.query_one("#repo", Input).placeholder == REPO_EXAMPLE
        assert not any(repo in lines(screen) for repo, _, _ in DEMO_REPOS)


async def test_the_screen_names_no_flags_of_the_command_line(make_app: Callable[..., PodtuiApp], hub: SimHub) -> None:
    endpoint = [hub.endpoint]
    app = make_app(hf_endpoint=lambda: endpoint[0], hf_token=lambda: found(hub.token("read"), "demo"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_hf(pilot, app)
        said = await check(pilot, screen, "podtui-sim/tiny-corpus")  # a dataset, checked as a model
        assert "for a dataset, pick dataset beside the repo id" in said.replace("\n", " ")
        said += await check(pilot, screen, "podtui-sim/tiny-gpt2")
        assert "(assumed)" in said
        endpoint[0] = "http://127.0.0.1:9"  # nothing listens: the Hub cannot be reached
        said += await check(pilot, screen, "podtui-sim/tiny-gpt2")
        assert "cannot reach the Hub" in said and "HF_ENDPOINT says otherwise" in said.replace("\n", " ")
        assert " --" not in said.replace("\n", " ")


@pytest.mark.parametrize("repo", ["podtui-sim/tiny-gpt2", "podtui-sim/tiny-corpus"], ids=["files", "refused"])
async def test_at_80x24_the_buttons_stay_in_view_and_every_field_is_reached(
    make_app: Callable[..., PodtuiApp], hub: SimHub, repo: str
) -> None:
    app = on_hub(make_app, hub)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_hf(pilot, app)
        await check(pilot, screen, repo)  # with its files, or refused (a dataset checked as a model) with none
        frame, foot = screen.query_one(Frame), screen.query_one("#foot")
        for button in ("#close", "#check", "#download"):
            assert app.screen.region.contains_region(screen.query_one(button).region)
        body = frame.scrollable_content_region
        fields = ["repo", "repo-type", "pod", "local-dir", "close", "check"]  # download: disabled until ok
        if screen.report is not None and screen.report.files:
            fields.insert(2, "files")
        reached = []
        for _ in range(len(fields) + 2):
            widget = app.focused
            assert widget is not None
            if widget.id in fields:
                reached.append(widget.id)
                assert body.contains_region(widget.region), widget.id
                if widget not in foot.query("*"):
                    assert not widget.region.overlaps(foot.region), widget.id  # not under the buttons
            await pilot.press("tab")
            await pilot.pause()
        assert set(fields) <= set(reached)
