"""The create form when GPUs are scarce, driven through Pilot against the simulator: a network volume fixes the
data centre and lists only the GPU types free there, a template fills the fields (what is typed wins), a prefill
fills every field, a second and third GPU are tried in order, the line under the GPU says where it is free, and
Create pressed twice creates once (docs/launch.md)."""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import Input, Select, Static, TextArea

from podtui.core.api import V2Api
from podtui.core.gpu import Cloud, Stock
from podtui.core.pod_spec import Choice, CreatedPod, PodSpec
from podtui.core.volume import NetworkVolume
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.create_pod import CreatePodScreen
from tests.helpers.pilot import loaded, wait_until

SIZE = (120, 40)
R4090, R3090 = "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090"
TEMPLATE = "Runpod Pytorch 2.4.0"
TOKEN = "hf_PrefilledTokenValue0123456789"


def text(app: PodtuiApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def posts(sim: SimApiServer) -> int:
    return sim.rest_requests.count("POST /v2/pods")


def options(form: CreatePodScreen, selector: str) -> list[str]:
    select: Select[str] = form.query_one(selector, Select)
    return [str(v) for _, v in select._options if isinstance(v, str)]


def volume_where(api: V2Api, gpu_id: str) -> NetworkVolume:
    centre = api.gpu_types().find(gpu_id).where(Cloud.COMMUNITY)[0].id
    return api.create_network_volume("scratch", 100, centre)


async def opened(pilot: Pilot[None], app: PodtuiApp, form: CreatePodScreen, results: list[CreatedPod | None]) -> None:
    await loaded(pilot, app)
    await app.push_screen(form, results.append)
    await wait_until(pilot, lambda: form.catalogue is not None and bool(form.templates) and form.spec is not None)
    await pilot.pause()


async def test_a_network_volume_fixes_the_data_centre_and_lists_what_is_free_there(
    make_app: Callable[..., PodtuiApp], api: V2Api, sim: SimApiServer
) -> None:
    volume = volume_where(api, R4090)
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=SIZE) as pilot:
        form = CreatePodScreen()
        await opened(pilot, app, form, results)
        assert len(options(form, "#gpu")) == 10  # every type, no volume yet
        assert text(app, "#where").startswith("RTX 3090 free in  ")
        await wait_until(pilot, lambda: volume.id in options(form, "#netvol"))
        form.query_one("#netvol", Select).value = volume.id
        await wait_until(pilot, lambda: form.query_one("#volume", Input).value == "0")
        await pilot.pause()
        catalogue = form.catalogue
        assert catalogue is not None
        # on a volume both clouds, as `create --volume`, while the user has not chosen one
        assert form.query_one("#cloud", Select).value == "ANY"
        either = [
            g.id for g in catalogue.types if any(g.stock_in(c, 1, volume.data_centre) is not Stock.NONE for c in Cloud)
        ]
        assert options(form, "#gpu") == either
        form.query_one("#cloud", Select).value = "COMMUNITY"
        await pilot.pause()
        free = [g.id for g in catalogue.types if g.stock_in(Cloud.COMMUNITY, 1, volume.data_centre) is not Stock.NONE]
        assert options(form, "#gpu")[: len(free)] == free and options(form, "#gpu2")[: len(free)] == free
        assert R4090 in free and len(free) < 10
        form.query_one("#gpu", Select).value = R4090
        await pilot.pause()
        assert text(app, "#where").startswith(
            f"only the types free in {volume.data_centre}, where scratch is, are listed; RTX 4090 there: community "
        )
        assert "network volume $7.00/month, with or without the pod" in text(app, "#cost")
        # a volume of its own beside the network volume is refused by name
        form.query_one("#volume", Input).value = "50"
        await pilot.pause()
        assert "no volume of its own" in text(app, "#err-volume") and form.spec is None
        form.query_one("#volume", Input).value = "0"
        await pilot.pause()
        assert form.spec is not None and form.spec.network_volume_id == volume.id
        assert form.spec.choices == (Choice(R4090, 1, Cloud.COMMUNITY, volume.data_centre),)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(results))
    created = results[0]
    assert created is not None and created.data_centre_id == volume.data_centre
    pod = sim.world.pods[created.id]
    assert pod.location == volume.data_centre


async def test_a_template_fills_the_fields_and_what_is_typed_wins(
    make_app: Callable[..., PodtuiApp], api: V2Api, sim: SimApiServer
) -> None:
    template = next(t for t in api.public_templates("official") if t.name == TEMPLATE)
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=SIZE) as pilot:
        form = CreatePodScreen()
        await opened(pilot, app, form, results)
        assert template.id in options(form, "#template")
        assert "runpod-worker-vllm" not in options(form, "#template")  # serverless: no pod can use it
        assert not any(t.category == "CPU" for t in form.templates.values())
        form.query_one("#template", Select).value = template.id
        await wait_until(pilot, lambda: form.query_one("#image", Input).value == template.image)
        assert form.query_one("#container", Input).value == str(template.disk_gb)
        assert form.query_one("#volume", Input).value == str(template.volume_gb)
        assert form.query_one("#ports", Input).value == ",".join(template.ports)
        assert form.query_one("#env", TextArea).text == "\n".join(f"{k}={v}" for k, v in template.env)
        assert f"filled from {TEMPLATE}" in text(app, "#template-note")
        form.query_one("#ports", Input).value = "22/tcp"  # typed after: it wins
        form.query_one("#name", Input).value = "from-template"
        await pilot.pause()
        assert form.spec is not None and form.spec.template_id == template.id and form.spec.ports == "22/tcp"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(results))
    pod = next(p for p in sim.world.pods.values() if p.name == "from-template")
    assert pod.image == template.image and pod.ports == "22/tcp"


async def test_a_prefill_fills_every_field_and_keeps_secrets_out_of_sight(
    make_app: Callable[..., PodtuiApp], api: V2Api, sim: SimApiServer
) -> None:
    volume = volume_where(api, R4090)
    template = next(t for t in api.public_templates("official") if t.name == TEMPLATE)
    prefill = PodSpec(
        "recreated",
        R4090,
        1,
        Cloud.COMMUNITY,
        image="runpod/pytorch:2.2.0-py3.10-cuda12.1.1-devel-ubuntu22.04",
        container_gb=33,
        volume_gb=0,
        volume_mount_path="/data",
        ports="22/tcp",
        env=(("HF_TOKEN", TOKEN), ("MODE", "train"), ("NOTE", "two\nlines")),
        data_centre_ids=(volume.data_centre,),
        network_volume_id=volume.id,
        template_id=template.id,
        fallbacks=(Choice(R3090, 1, Cloud.COMMUNITY),),
    )
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=SIZE) as pilot:
        form = CreatePodScreen(prefill=prefill)
        await opened(pilot, app, form, results)
        await wait_until(pilot, lambda: form.query_one("#netvol", Select).value == volume.id)
        await pilot.pause()
        assert form.query_one("#name", Input).value == "recreated"
        assert form.query_one("#image", Input).value == prefill.image
        assert form.query_one("#image-choice", Select).value == prefill.image
        assert (form.query_one("#container", Input).value, form.query_one("#volume", Input).value) == ("33", "0")
        assert form.query_one("#ports", Input).value == "22/tcp"
        assert form.query_one("#gpu", Select).value == R4090
        assert form.query_one("#template", Select).value == template.id  # chosen, its values not poured over
        env = form.query_one("#env", TextArea).text
        assert env == "MODE=train" and TOKEN not in env
        assert text(app, "#env-note") == "also sent, not shown: HF_TOKEN, NOTE"
        spec = form.spec
        assert spec is not None
        assert (spec.name, spec.volume_mount_path, spec.network_volume_id, spec.template_id) == (
            "recreated",
            "/data",
            volume.id,
            template.id,
        )
        assert dict(spec.env) == {"HF_TOKEN": TOKEN, "MODE": "train", "NOTE": "two\nlines"}
        free_3090 = api.gpu_types().find(R3090).stock_in(Cloud.COMMUNITY, 1, volume.data_centre) is not Stock.NONE
        # the fallback is kept whether or not it is free there: when not, the review says it is skipped
        assert form.query_one("#gpu2", Select).value == R3090
        assert (
            f"RTX 3090 (community cloud) in {volume.data_centre}: none free" in text(app, "#review")
        ) is not free_3090
        # the name does not follow the GPU: it was given
        form.query_one("#gpu", Select).value = options(form, "#gpu")[0]
        await pilot.pause()
        assert form.query_one("#name", Input).value == "recreated"
        form.query_one("#gpu", Select).value = R4090
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(results))
    created = results[0]
    assert created is not None
    pod = sim.world.pods[created.id]
    assert pod.env["HF_TOKEN"] == TOKEN and pod.env["NOTE"] == "two\nlines" and pod.location == volume.data_centre


async def test_the_second_gpu_is_tried_when_the_first_cannot_be_placed(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    sim.faults.add("no_capacity", R4090, only="POST /v2/pods")
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=SIZE) as pilot:
        form = CreatePodScreen(gpu_type_id=R4090)
        await opened(pilot, app, form, results)
        assert not form.query_one("#review", Static).display  # one candidate: the GPU line says it all
        form.query_one("#gpu2", Select).value = R3090
        await pilot.pause()
        assert text(app, "#review") == "Tries in order: RTX 4090 (community) → RTX 3090 (community)"
        form.query_one("#cloud", Select).value = "ANY"
        await pilot.pause()
        assert form.spec is not None and [c.cloud for c in form.spec.choices] == [
            Cloud.COMMUNITY,
            Cloud.SECURE,
            Cloud.COMMUNITY,
            Cloud.SECURE,
        ]
        form.query_one("#cloud", Select).value = "COMMUNITY"
        await pilot.pause()
        await pilot.press("ctrl+s", "ctrl+s")  # twice in one burst: one create
        await wait_until(pilot, lambda: bool(results))
    created = results[0]
    assert created is not None and created.gpu_type_id == R3090
    assert created.candidate == Choice(R3090, 1, Cloud.COMMUNITY)
    assert len(created.refused) == 1 and created.refused[0].startswith(f"1 x {R4090} (community cloud): (400)")
    assert posts(sim) == 2 and len([p for p in sim.world.pods.values() if p.name == "podtui-rtx-4090"]) == 1
    assert any("RTX 3090" in n.message and "RTX 4090" in n.message for n in app._notifications)


async def test_the_navigator_opens_the_form_prefilled_once(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        spec = PodSpec("again", R3090, 2, Cloud.SECURE, image="ubuntu:22.04", volume_gb=0)  # not a listed image
        app.navigator.open_create_pod(spec)
        app.navigator.open_create_pod(spec)  # a key pressed twice
        await wait_until(pilot, lambda: isinstance(app.screen, CreatePodScreen))
        form = app.screen
        assert isinstance(form, CreatePodScreen)
        await wait_until(pilot, lambda: form.spec is not None)
        assert sum(isinstance(s, CreatePodScreen) for s in app.screen_stack) == 1
        assert form.query_one("#count", Input).value == "2" and form.query_one("#cloud", Select).value == "SECURE"
        assert form.query_one("#image", Input).value == "ubuntu:22.04"
        assert form.query_one("#image-choice", Select).value == Select.NULL
        assert form.spec == spec


async def test_load_failures_are_said_and_lose_nothing(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    sim.faults.add("status", 500, only="GET /v2/network-volumes")
    sim.faults.add("status", 500, only="GET /v2/catalog/templates")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        form = CreatePodScreen(prefill=PodSpec("kept", R3090, volume_gb=0, network_volume_id="vol0x1"))
        await app.push_screen(form)
        await wait_until(pilot, lambda: "cannot load the network volumes" in text(app, "#netvol-note"))
        await wait_until(pilot, lambda: "cannot load RunPod's templates" in text(app, "#template-note"))
        await wait_until(pilot, lambda: form.spec is not None)
        # the prefill's volume is kept though the list could not be read; the account's own templates still came
        assert form.spec is not None and form.spec.network_volume_id == "vol0x1"
        assert form.query_one("#netvol", Select).value == "vol0x1"


async def test_a_volume_prefill_without_a_gpu_picks_the_cheapest_type_free_there(
    make_app: Callable[..., PodtuiApp], api: V2Api
) -> None:
    volume = volume_where(api, R4090)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        prefill = PodSpec(
            "on-scratch", "", volume_gb=0, network_volume_id=volume.id, data_centre_ids=(volume.data_centre,)
        )
        app.navigator.open_create_pod(prefill)
        await wait_until(pilot, lambda: isinstance(app.screen, CreatePodScreen))
        form = app.screen
        assert isinstance(form, CreatePodScreen)
        await wait_until(pilot, lambda: form.spec is not None and form.spec.network_volume_id == volume.id)
        catalogue = form.catalogue
        assert catalogue is not None
        free = [g for g in catalogue.types if g.stock_in(Cloud.COMMUNITY, 1, volume.data_centre) is not Stock.NONE]
        cheapest = min(free, key=lambda g: g.community_price or 1e9)
        assert form.spec.gpu_type_id == cheapest.id and form.spec.data_centre_id == volume.data_centre
        assert form.query_one("#name", Input).value == "on-scratch"
