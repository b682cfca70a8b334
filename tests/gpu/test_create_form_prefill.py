"""The create form opened filled in (recreate, a volume, a template) against the simulator: a named GPU type that
is not free in the volume's data centre stays selected and is said in view at 80x24, never swapped unseen; a
volume without a GPU type looks on both clouds and says why a list is empty; RunPod's text reaches the boxes
escaped; a template that is gone is dropped and said; a template whose env or volume the user removed is not
linked (docs/launch.md)."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import Input, Select, Static, TextArea

from podtui.core.api import V2Api
from podtui.core.gpu import Cloud, Stock
from podtui.core.launch_memory import spec_of
from podtui.core.pod_spec import CreatedPod, PodSpec
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.create_pod import CreatePodScreen
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS

SMALL = (80, 24)
CHECKPOINTS = "c4p7n1v8ks"  # the demo's volume in US-KS-2


def text(form: CreatePodScreen, selector: str) -> str:
    return str(form.query_one(selector, Static).render())


def in_view(form: CreatePodScreen, selector: str) -> bool:
    """Drawn inside the terminal, whatever the form's scroll."""
    widget = form.query_one(selector)
    region, screen = widget.region, form.app.size
    return widget.display and region.height > 0 and region.y >= 0 and region.bottom <= screen.height


def options(form: CreatePodScreen, selector: str) -> dict[str, str]:
    select: Select[str] = form.query_one(selector, Select)
    return {str(v): str(p) for p, v in select._options if isinstance(v, str)}


async def open_form(app: PodtuiApp, prefill: PodSpec, results: list[CreatedPod | None]) -> CreatePodScreen:
    form = CreatePodScreen(prefill=prefill)
    await app.push_screen(form, results.append)
    return form


async def test_a_named_gpu_not_free_on_the_volume_stays_chosen_and_is_said(
    make_app: Callable[..., PodtuiApp], api: V2Api, sim: SimApiServer
) -> None:
    pod = api.fetch_snapshot().find(DEMO_IDS["idle"])  # eval-a100, on models-vol
    spec = spec_of(pod)
    assert spec.network_volume_id and pod.location
    gpu = api.gpu_types().find(spec.gpu_type_id)
    centre = pod.location
    assert gpu.stock_in(spec.cloud, 1, centre) is Stock.NONE  # not free there on its cloud now
    other = next(c for c in Cloud if c is not spec.cloud)
    assert gpu.stock_in(other, 1, centre) is not Stock.NONE
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        form = await open_form(app, spec, results)
        await wait_until(pilot, lambda: form.catalogue is not None and form.network_volume is not None, 30)
        await pilot.pause()
        assert form.query_one("#gpu", Select).value == gpu.id  # kept, not swapped for the cheapest free there
        assert options(form, "#gpu")[gpu.id].endswith(f"none free in {centre} now")
        assert form.query_one("#cloud", Select).value == spec.cloud.value  # the pod's cloud: a choice made
        assert form.spec is None and form.cost is None
        said = text(form, "#stock")
        assert said.startswith(f"{gpu.display_name} is not free on {spec.cloud.label} cloud in {centre}")
        assert f"it is on {other.label} cloud" in said and in_view(form, "#stock")
        assert f"{gpu.display_name} is not free there" in text(form, "#where")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "fix the fields marked in red first" in text(form, "#error")
        assert sim.rest_requests.count("POST /v2/pods") == 0
        form.query_one("#cloud", Select).value = other.value  # the user's choice: it is free there
        await wait_until(pilot, lambda: form.spec is not None)
        assert form.spec is not None and form.spec.gpu_type_id == gpu.id
        assert form.spec.data_centre_id == centre and form.spec.cloud is other
        assert not form.query_one("#stock", Static).display


async def test_a_volume_without_a_gpu_looks_on_both_clouds_and_an_empty_list_says_why(
    make_app: Callable[..., PodtuiApp], api: V2Api
) -> None:
    centre = next(v for v in api.network_volumes() if v.id == CHECKPOINTS).data_centre
    catalogue = api.gpu_types()
    community = [g for g in catalogue.types if g.stock_in(Cloud.COMMUNITY, 1, centre) is not Stock.NONE]
    either = [g.id for g in catalogue.types if any(g.stock_in(c, 1, centre) is not Stock.NONE for c in Cloud)]
    assert not community and either  # the demo's checkpoints: only secure cloud has GPUs there
    # the prefill the Volumes view builds: a volume, no GPU type, no cloud chosen
    prefill = PodSpec("checkpoints-pod", "", volume_gb=0, network_volume_id=CHECKPOINTS, data_centre_ids=(centre,))
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        form = await open_form(app, prefill, results)
        await wait_until(pilot, lambda: form.spec is not None, 30)
        assert form.query_one("#cloud", Select).value == "ANY"
        assert list(options(form, "#gpu")) == either
        assert form.spec is not None and form.spec.gpu_type_id in either
        form.query_one("#cloud", Select).value = Cloud.COMMUNITY.value  # the user's choice: nothing there
        await wait_until(pilot, lambda: form.spec is None)
        await pilot.pause()
        assert options(form, "#gpu") == {}
        assert form.query_one("#gpu", Select).prompt == f"no type free in {centre} on community cloud"
        assert text(form, "#stock") == (
            f"No GPU type can be picked: no type free in {centre} on community cloud now; try the other cloud"
        )
        assert in_view(form, "#stock")


async def test_runpods_text_reaches_the_boxes_escaped(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    raw_name = "llama\x1b]52;c;ZXZpbA==\x07x"
    prefill = PodSpec(
        raw_name,
        "NVIDIA GeForce RTX 3090",
        image="runpod/pytorch:2.1.0\x1b[2J",
        ports="22/tcp\x1b[5m",
        volume_gb=0,
        env=(("MODE", "a\x1b[31mred"), ("PLAIN", "1")),
    )
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        form = await open_form(app, prefill, results)
        await wait_until(pilot, lambda: form.catalogue is not None, 30)
        await pilot.pause()
        for box in ("#name", "#image", "#ports"):
            value = form.query_one(box, Input).value
            assert "\x1b" not in value and "\x07" not in value and "\\x1b" in value
        assert form.query_one("#env", TextArea).text == "PLAIN=1"
        assert text(form, "#env-note") == "also sent, not shown: MODE"
        assert "control characters" in text(form, "#err-name") and text(form, "#err-image")
        assert form.spec is None
        form.query_one("#name", Input).value = "llama-again"
        form.query_one("#image", Input).value = "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04"
        form.query_one("#ports", Input).value = "22/tcp"
        await wait_until(pilot, lambda: form.spec is not None)
        assert form.spec is not None and dict(form.spec.env) == {"MODE": "a\x1b[31mred", "PLAIN": "1"}
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(results))
    created = results[0]
    assert created is not None and sim.world.pods[created.id].env["MODE"] == "a\x1b[31mred"


async def test_a_template_gone_since_is_dropped_and_said(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    prefill = PodSpec("no-template", "NVIDIA GeForce RTX 3090", volume_gb=0, template_id="gone4template")
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        form = await open_form(app, prefill, results)
        await wait_until(pilot, lambda: "no longer on RunPod" in text(form, "#template-note"), 30)
        assert text(form, "#template-note").startswith("template gone4template is no longer on RunPod")
        assert "gone4template" not in options(form, "#template")
        await wait_until(pilot, lambda: form.spec is not None)
        assert form.spec is not None and form.spec.template_id is None
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(results))
    created = results[0]
    assert created is not None and sim.world.pods[created.id].template is None


async def test_a_template_whose_env_was_removed_is_not_linked_and_says_so(
    make_app: Callable[..., PodtuiApp], api: V2Api, sim: SimApiServer
) -> None:
    template = api.create_template(
        {"name": "with-env", "image": "ubuntu:22.04", "env": {"KEEP": "1", "DROP": "2"}, "startJupyter": True}
    )
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        form = CreatePodScreen(gpu_type_id="NVIDIA GeForce RTX 3090")
        await app.push_screen(form, results.append)
        await wait_until(pilot, lambda: template.id in options(form, "#template") and form.spec is not None, 30)
        form.query_one("#template", Select).value = template.id
        await wait_until(pilot, lambda: form.query_one("#env", TextArea).text == "KEEP=1\nDROP=2")
        await pilot.pause()
        assert "starts Jupyter (RunPod puts a JUPYTER_PASSWORD in the env)" in text(form, "#template-note")
        assert form.spec is not None and form.spec.template_id == template.id and form.spec.start_jupyter
        form.query_one("#env", TextArea).text = "KEEP=1"
        form.query_one("#name", Input).value = "unlinked"
        await wait_until(pilot, lambda: form.spec is not None and form.spec.template_id is None)
        assert text(form, "#review").startswith("Not linked to the template (you removed env DROP")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(results))
    created = results[0]
    assert created is not None
    pod = sim.world.pods[created.id]
    assert pod.template is None and "DROP" not in pod.env and pod.env["KEEP"] == "1"
    assert "JUPYTER_PASSWORD" in pod.env  # the template's Jupyter, sent explicitly
