"""The GPU advisor and the create-pod form, driven through Pilot against the simulator."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from textual.pilot import Pilot
from textual.widgets import Button, DataTable, Input, Select, Static, TextArea

from podtui.core.api import ApiUnavailable, create
from podtui.core.pod import Snapshot
from podtui.core.pod_spec import CreatedPod, PodSpec
from podtui.sim.gpu_market import NO_STOCK
from podtui.sim.server import SimApiServer
from podtui.sim.world import SimError
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.create_pod import CreatePodScreen
from podtui.ui.screens.gpus import GpusScreen
from tests.helpers.pilot import loaded, wait_until

SIZE = (130, 44)


def text(app: PodtuiApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def creates(sim: SimApiServer) -> int:
    return sim.rest_requests.count("POST /v2/pods")


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """A create that gives up waiting for RunPod's answer after 0.15 s."""
    monkeypatch.setattr(create, "CREATE_TIMEOUT_S", 0.15)


async def test_advisor_stars_the_cheapest_fit_and_explains(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        screen = GpusScreen()
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.catalogue is not None)
        table = screen.query_one(DataTable)
        assert table.row_count == 10
        await pilot.press("m", *"1B")
        await pilot.pause()
        assert "1B LoRA (bf16): about 3.7 GB" in text(app, "#estimate")
        advice = text(app, "#advice")
        assert "RTX 4090 ($0.40/hr)" in advice and "overkill below 7B" in advice
        assert screen.selected_gpu is not None and screen.selected_gpu.display_name == "RTX 3090"
        assert str(table.get_row_at(table.cursor_row)[0]) == "★ best"
        # a 7B full fine-tune: two 80 GB cards, the smaller ones dimmed
        screen.query_one("#method", Select).value = "full"
        await pilot.pause()
        screen.query_one("#model", Input).value = "7B"
        await pilot.pause()
        assert "146.6 GB" in text(app, "#estimate")
        assert screen.advice is not None and screen.advice.best is not None
        assert screen.advice.best.label == "2x A100 80GB PCIe"
        assert screen.selected_gpu is not None and screen.selected_gpu.display_name == "A100 80GB PCIe"
        rows = {str(table.get_row_at(i)[1]): table.get_row_at(i)[1] for i in range(table.row_count)}
        assert rows["RTX 3090"].style == "dim" and rows["A100 80GB PCIe"].style == "bold green"  # type: ignore[union-attr]
        await pilot.press("escape")  # out of the box first
        assert isinstance(app.screen, GpusScreen) and app.focused is table
        # the chosen GPU goes to the create form, with the advised count, cost shown before anything is sent
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, CreatePodScreen))
        form = app.screen
        assert isinstance(form, CreatePodScreen)
        await pilot.pause()
        assert form.query_one("#gpu", Select).value == "NVIDIA A100 80GB PCIe"
        assert form.query_one("#count", Input).value == "2"
        # 2 x $1.19 + (20 + 50 GB) x $0.10/GB/month over 730 h
        assert text(app, "#cost").startswith("Cost: $2.390/hr · $57.35/day while running")
        assert str(form.query_one("#create", Button).label) == "Create ($2.390/hr)"
        await pilot.press("ctrl+s")  # created: back to the pod list, where it is starting
        await wait_until(pilot, lambda: not isinstance(app.screen, (GpusScreen, CreatePodScreen)))
        await wait_until(
            pilot,
            lambda: (
                app.feed.snapshot is not None
                and any(p.name == "podtui-a100-80gb-pcie" and p.is_starting for p in app.feed.snapshot.pods)
            ),
        )


async def test_malformed_gpu_list_is_reported_not_fatal(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        body = (
            '{"gpus": [{"id": "NVIDIA L4", "name": "L4", "memory": 24, "price": {"community": 0.3, "secure": 0}, '
            '"availability": "PLENTY"}, {"id": "broken", "memory": "lots"}]}'
        )
        sim.faults.add("raw", body, times=8, only="GET /v2/catalog/gpus")  # every cloud and count
        screen = GpusScreen()
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.catalogue is not None)
        table = screen.query_one(DataTable)
        assert table.row_count == 1 and [str(c) for c in table.get_row_at(0)][1:] == [
            "L4",
            "24 GB",
            "1",
            "$0.30",
            "—",
            "unknown/none",  # an availability podtui does not know; not offered on secure cloud
        ]
        status = text(app, "#status")
        assert "2 problems in RunPod's list" in status and "broken" in status and "PLENTY" in status
        sim.faults.add("status", 500, times=1, only="GET /v2/catalog/gpus")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: "cannot load" in text(app, "#status"))
        assert "server error (500)" in text(app, "#status")


async def test_form_checks_every_field_live_and_sends_strings_intact(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        form = CreatePodScreen()  # loads the GPU list itself
        await app.push_screen(form, results.append)
        await wait_until(pilot, lambda: form.catalogue is not None)
        await pilot.pause()
        assert form.query_one("#gpu", Select).value == "NVIDIA GeForce RTX 3090"  # the cheapest
        assert form.query_one("#name", Input).value == "podtui-rtx-3090"  # follows the GPU until typed
        assert form.query_one("#ports", Input).value == "8888/http,22/tcp"
        assert text(app, "#cost").startswith("Cost: $0.230/hr · $5.51/day")
        name = 'llama "lora" {run} ü'
        form.query_one("#name", Input).value = name
        count = form.query_one("#count", Input)
        count.value = "9"
        form.query_one("#ports", Input).value = "22"
        env = 'HF_HOME=/workspace/hf\nNOTE=say "hi" }{\n1BAD=x'
        form.query_one("#env", TextArea).text = env
        await pilot.pause()
        assert "1 to 8" in text(app, "#err-count") and "8888/http" in text(app, "#err-ports")
        assert "variable name" in text(app, "#err-env") and text(app, "#err-name") == ""
        await pilot.press("ctrl+s")
        assert "fix the fields" in text(app, "#error") and creates(sim) == 0
        count.value = "2"
        form.query_one("#ports", Input).value = "8888/http,22/tcp"
        form.query_one("#env", TextArea).text = env.rsplit("\n", 1)[0]
        form.query_one("#container", Input).value = "40"
        await pilot.pause()
        # 2 x $0.22 + (40 + 50 GB) x $0.10 / 730
        assert text(app, "#cost").startswith("Cost: $0.452/hr · $10.86/day")
        await pilot.click("#create")
        await wait_until(pilot, lambda: bool(results))
        created = results[0]
        assert created is not None and not isinstance(app.screen, CreatePodScreen)
        pod = sim.world.pods[created.id]
        assert (pod.name, pod.gpu_count, pod.container_disk_gb, created.status) == (name, 2, 40, "PROVISIONING")
        assert pod.env == {"HF_HOME": "/workspace/hf", "NOTE": 'say "hi" }{'}
        assert pod.ports == "8888/http,22/tcp"  # direct SSH asked for
        # the list picks the new pod up
        await wait_until(
            pilot, lambda: app.feed.snapshot is not None and any(p.id == created.id for p in app.feed.snapshot.pods)
        )


async def test_runpods_refusal_shows_in_the_form_and_keeps_the_input(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        form = CreatePodScreen(gpu_type_id="NVIDIA H100 80GB HBM3")
        await app.push_screen(form)
        await wait_until(pilot, lambda: form.catalogue is not None)
        await pilot.pause()
        assert "no stock of 1 x H100 SXM on community cloud" in text(app, "#stock")
        form.query_one("#name", Input).value = "keep-me"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "did not create" in text(app, "#error"))
        assert NO_STOCK.rstrip(".") in text(app, "#error") and "try the other cloud" in text(app, "#error")
        assert isinstance(app.screen, CreatePodScreen)
        assert form.query_one("#name", Input).value == "keep-me"
        assert not form.query_one("#create", Button).disabled
        # low balance, then a refusal no choice would change
        form.query_one("#cloud", Select).value = "SECURE"
        sim.world.set_balance(1.0)
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "balance is too low" in text(app, "#error"))
        assert "Add credit" in text(app, "#error")
        sim.world.set_balance(50.0)
        sim.faults.add("conflict", "Deploys are paused for maintenance", times=1, only="POST /v2/pods")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "paused for maintenance" in text(app, "#error"))
        assert not [p for p in sim.world.pods.values() if p.name == "keep-me"]
        await pilot.press("ctrl+s")  # and then it works, with nothing retyped
        await wait_until(pilot, lambda: not isinstance(app.screen, CreatePodScreen))
        assert [p.cost_per_hr for p in sim.world.pods.values() if p.name == "keep-me"] == [2.99]


async def test_read_only_refuses_to_create(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        form = CreatePodScreen()
        await app.push_screen(form)
        await wait_until(pilot, lambda: form.catalogue is not None)
        assert form.query_one("#create", Button).disabled
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "read-only" in text(app, "#error") and creates(sim) == 0


async def test_a_starred_runner_up_opens_with_its_advised_count(make_app: Callable[..., PodtuiApp]) -> None:
    # review (test_star_count.py): a starred GPU other than the best opened the form with count 1
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        screen = GpusScreen()
        await app.push_screen(screen)
        await wait_until(pilot, lambda: screen.catalogue is not None)
        screen.query_one("#method", Select).value = "inference"
        await pilot.pause()
        screen.query_one("#model", Input).value = "70B"
        await pilot.pause()
        assert screen.advice is not None and screen.advice.best is not None
        assert screen.advice.best.label == "4x A100 80GB PCIe"
        assert "NVIDIA A100-SXM4-80GB" in screen.advice.recommended_ids
        table = screen.query_one(DataTable)
        assert screen.catalogue is not None
        ids = [g.id for g in screen.catalogue.types]
        table.move_cursor(row=ids.index("NVIDIA A100-SXM4-80GB"))
        await pilot.pause()
        row = [str(c) for c in table.get_row_at(table.cursor_row)]
        # the row shows the count the job needs, and its prices and stock are for that count
        assert row[:7] == ["★", "A100 SXM 80GB", "80 GB", "4", "$5.56", "$6.96", "low/high"]
        assert "for the GPUs the job needs" in text(app, "#title")  # prices and stock for the GPUs column's count
        assert [str(c) for c in table.get_row_at(ids.index("NVIDIA GeForce RTX 3090"))][3:5] == ["1", "$0.22"]
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, CreatePodScreen))
        form = app.screen
        assert isinstance(form, CreatePodScreen)
        await pilot.pause()
        assert form.query_one("#gpu", Select).value == "NVIDIA A100-SXM4-80GB"
        assert form.query_one("#count", Input).value == "4"
        assert form.query_one("#cloud", Select).value == "COMMUNITY"  # in stock (Low) and cheapest
        assert text(app, "#cost").startswith("Cost: $5.570/hr")


def slow_world(sim: SimApiServer, delay: float, fail: bool = False) -> None:
    """RunPod's create taking longer than podtui waits (and maybe refusing in the end)."""
    orig = sim.world.create

    def slow(spec: dict[str, object], *more: object) -> object:
        time.sleep(delay)
        if fail:
            raise SimError("Something went wrong.")
        return orig(spec, *more)  # type: ignore[arg-type]

    sim.world.create = slow  # type: ignore[method-assign,assignment]


async def _fill_and_create(pilot: Pilot[None], app: PodtuiApp, name: str) -> CreatePodScreen:
    form = CreatePodScreen()
    form.lookup_delays = (0.0, 0.25, 0.5)
    await app.push_screen(form)
    await wait_until(pilot, lambda: form.catalogue is not None)
    await pilot.pause()
    form.query_one("#name", Input).value = name
    form.query_one("#env", TextArea).text = f"HF_TOKEN={TOKEN}"
    await pilot.pause()
    await pilot.press("ctrl+s")
    return form


TOKEN = "hf_NeverShowThisToken123456"


async def test_a_slow_create_is_looked_up_not_repeated(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, quick: None
) -> None:
    # review (create2.py): after a timeout the form re-enabled Create, and a second press made a second pod
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        slow_world(sim, 0.4)
        form = await _fill_and_create(pilot, app, "slow-one")
        await wait_until(pilot, lambda: "may have been created" in text(app, "#error"))
        assert form.query_one("#create", Button).disabled
        await pilot.press("ctrl+s")  # pressing again does nothing while it looks
        await wait_until(pilot, lambda: not isinstance(app.screen, CreatePodScreen))
        ids = [p.id for p in sim.world.pods.values() if p.name == "slow-one"]
        assert len(ids) == 1 and creates(sim) == 1
        assert any(f"created after all: slow-one ({ids[0]})" in n.message for n in app._notifications)


async def test_an_unanswered_create_not_found_yet_only_looks_again(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, quick: None
) -> None:
    """Not found is not "not created": RunPod may still be carrying it out, so the button keeps to looking."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        slow_world(sim, 0.3, fail=True)
        form = await _fill_and_create(pilot, app, "never-made")
        await wait_until(pilot, lambda: "RunPod may still be creating it" in text(app, "#error"))
        button = form.query_one("#create", Button)
        assert not button.disabled and str(button.label) == "Check again"
        await pilot.press("ctrl+s")  # looks again, never creates
        await pilot.pause(0.5)
        assert creates(sim) == 1 and not [p for p in sim.world.pods.values() if p.name == "never-made"]


async def test_when_the_lookup_fails_create_only_looks_again(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, monkeypatch: pytest.MonkeyPatch, quick: None
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        slow_world(sim, 0.3)
        real = app.services.api.fetch_snapshot

        def down() -> Snapshot:
            raise ApiUnavailable("cannot reach RunPod's API")

        monkeypatch.setattr(app.services.api, "fetch_snapshot", down)
        form = await _fill_and_create(pilot, app, "unsure")
        await wait_until(pilot, lambda: "looking for it failed" in text(app, "#error"))
        button = form.query_one("#create", Button)
        assert str(button.label) == "Check again" and not button.disabled
        monkeypatch.setattr(app.services.api, "fetch_snapshot", real)
        await pilot.press("ctrl+s")  # looks, does not create
        await wait_until(pilot, lambda: not isinstance(app.screen, CreatePodScreen))
        assert creates(sim) == 1 and len([p for p in sim.world.pods.values() if p.name == "unsure"]) == 1


async def test_a_crash_in_the_create_worker_never_shows_the_env(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, monkeypatch: pytest.MonkeyPatch, quick: None
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)

        def boom(spec: PodSpec) -> CreatedPod:
            raise RuntimeError(f"bug while sending {dict(spec.env)}")

        monkeypatch.setattr(app.services.api, "create_pod", boom)
        form = await _fill_and_create(pilot, app, "crashy")
        await wait_until(pilot, lambda: "RunPod may still be creating it" in text(app, "#error"))
        assert app.is_running and isinstance(app.screen, CreatePodScreen)
        assert TOKEN not in text(app, "#error") and TOKEN not in repr(form.spec)
        assert not [p for p in sim.world.pods.values() if p.name == "crashy"]
