"""The create form when a template is cleared or swapped for another: what the template set and the user did not
change goes back (its Jupyter, CUDA constraint, start command and hidden env included), what the user changed
stays, and the note says which; the template note names a start command only when there is one
(docs/launch.md#templates)."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import Input, Select, Static, TextArea

from podtui.core.api import V2Api
from podtui.core.api.create import create_body
from podtui.core.pod_spec import DEFAULT_IMAGE, CreatedPod, PodSpec
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.create_pod import CreatePodScreen
from tests.helpers.pilot import loaded, wait_until

R3090 = "NVIDIA GeForce RTX 3090"
TOKEN = "hf_TemplateTokenValue0123456789ab"


def text(form: CreatePodScreen, selector: str) -> str:
    return str(form.query_one(selector, Static).render())


async def test_clearing_or_swapping_a_template_takes_back_what_it_set(
    make_app: Callable[..., PodtuiApp], api: V2Api, sim: SimApiServer
) -> None:
    serve = api.create_template(
        {
            "name": "serve",
            "image": "vllm/vllm-openai:v0.6.3",
            "args": "--model Qwen/Qwen2.5-7B-Instruct",
            "disk": 40,
            "ports": ["8000/http"],
            "env": {"KEEP": "1", "HF_TOKEN": TOKEN},
            "startJupyter": True,
            "allowedCudaVersions": ["12.4"],
        }
    )
    plain = api.create_template(
        {"name": "plain", "image": "ubuntu:22.04", "env": {"OTHER": "2"}, "startJupyter": False}
    )
    app = make_app()
    results: list[CreatedPod | None] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        form = CreatePodScreen(gpu_type_id=R3090)
        await app.push_screen(form, results.append)
        await wait_until(pilot, lambda: plain.id in form.templates and form.spec is not None, 30)
        env = form.query_one("#env", TextArea)
        env.text = "MINE=1"  # typed before the template: kept through all of it
        select: Select[str] = form.query_one("#template", Select)
        select.value = serve.id
        await wait_until(pilot, lambda: form.spec is not None and form.spec.template_id == serve.id)
        assert env.text == "KEEP=1\nMINE=1" and text(form, "#env-note") == "also sent, not shown: HF_TOKEN"
        spec = form.spec
        assert spec.start_jupyter and spec.cuda_versions == ("12.4",) and spec.args == serve.args
        note = text(form, "#template-note")
        assert "starts with its command --model Qwen/Qwen2.5-7B-Instruct" in note and "starts Jupyter" in note
        form.query_one("#ports", Input).value = "8000/http,22/tcp"  # the user's change: it stays
        await pilot.pause()

        select.clear()
        await wait_until(pilot, lambda: form.spec is not None and form.spec.template_id is None)
        await pilot.pause()
        spec = form.spec
        assert spec is not None
        assert (spec.start_jupyter, spec.cuda_versions, spec.args, spec.registry) == (False, (), "", None)
        assert (
            spec.image == DEFAULT_IMAGE
            and (spec.container_gb, spec.volume_gb) == (20, 50)
            and spec.ports == "8000/http,22/tcp"
        )
        assert dict(spec.env) == {"MINE": "1"} and env.text == "MINE=1" and not form.query_one("#env-note").display
        body = create_body(spec, spec.choices[0])
        assert not {"templateId", "startJupyter", "args"} & body.keys() and "allowedCudaVersions" not in str(body)
        note = text(form, "#template-note")
        assert note.startswith("template serve cleared: took back its image, container disk, volume, Jupyter, CUDA")
        assert "start command, env KEEP, env HF_TOKEN (not shown); kept what you changed: ports" in note
        assert TOKEN not in note

        # another template after this one: the first one's settings go, the second one's come, said in one note
        select.value = serve.id
        await wait_until(pilot, lambda: form.spec is not None and form.spec.template_id == serve.id)
        select.value = plain.id
        await wait_until(pilot, lambda: form.spec is not None and form.spec.template_id == plain.id)
        await pilot.pause()
        spec = form.spec
        assert (spec.start_jupyter, spec.cuda_versions, spec.args, spec.image) == (False, (), "", "ubuntu:22.04")
        assert dict(spec.env) == {"OTHER": "2", "MINE": "1"}
        note = text(form, "#template-note")
        assert note.startswith("template serve cleared: took back its") and "env HF_TOKEN (not shown)" in note
        assert note.endswith("; filled from plain")  # no start command, no Jupyter: nothing more said
        form.query_one("#name", Input).value = "swapped"
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(results))
    created = results[0]
    assert created is not None
    pod = sim.world.pods[created.id]
    assert pod.template == plain.id and pod.image == "ubuntu:22.04" and pod.docker_args == ""
    assert "HF_TOKEN" not in pod.env and "JUPYTER_PASSWORD" not in pod.env and "KEEP" not in pod.env
    assert pod.env["MINE"] == "1" and pod.env["OTHER"] == "2"


async def test_clearing_a_prefills_template_takes_back_its_values(
    make_app: Callable[..., PodtuiApp], api: V2Api, sim: SimApiServer
) -> None:
    """A recreated pod's template: the fields hold the pod's values, which clearing the template keeps; what only
    the template gives (its start command, Jupyter) goes."""
    serve = api.create_template(
        {"name": "serve", "image": "vllm/vllm-openai:v0.6.3", "args": "--serve", "disk": 40, "startJupyter": True}
    )
    prefill = PodSpec(
        "again", R3090, image=serve.image, container_gb=33, volume_gb=0, ports="22/tcp", template_id=serve.id
    )
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await loaded(pilot, app)
        form = CreatePodScreen(prefill=prefill)
        await app.push_screen(form)
        await wait_until(pilot, lambda: serve.id in form.templates and form.spec is not None, 30)
        await pilot.pause()
        spec = form.spec
        assert spec is not None and spec.template_id == serve.id and spec.args == "--serve" and spec.start_jupyter
        assert form.query_one("#container", Input).value == "33"  # the prefill's, not poured over
        form.query_one("#template", Select).clear()
        await wait_until(pilot, lambda: form.spec is not None and form.spec.template_id is None)
        await pilot.pause()
        spec = form.spec
        assert (spec.image, spec.container_gb, spec.volume_gb, spec.ports) == (serve.image, 33, 0, "22/tcp")
        assert (spec.args, spec.start_jupyter) == ("", False)
        note = text(form, "#template-note")
        assert note == "template serve cleared: took back its Jupyter, start command"
