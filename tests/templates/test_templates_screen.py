"""The Templates view driven with its keys against the simulated RunPod: yours and the public ones (p, s), what
tells a pod template from a serverless or CPU one shown at 80 columns, a pod from a template (enter), a template
from a pod (n: per-key choices, the token a secret reference, never shown or sent in clear, a key whose name alone
looks like a credential kept in clear only after a warning, a lost answer looked up rather than said to have
failed), delete one of yours (asked first), read-only mode, and a failed load said in the status line."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.widgets import Button, DataTable, Input, Select, Static

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.template_form import TemplateFormScreen
from podtui.ui.screens.templates import TemplatesScreen
from tests.helpers.pilot import opened_by_key, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (120, 40)
TOKEN = "hf_demoDemoDemoDemoDemoDemo0000"


def _text(screen: object, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())  # type: ignore[attr-defined]


async def _opened(pilot, app: PodtuiApp) -> TemplatesScreen:  # type: ignore[no-untyped-def]
    screen = await opened_by_key(pilot, app, "m", TemplatesScreen)
    await wait_until(pilot, lambda: screen.templates is not None)
    return screen


async def test_mine_then_public_and_its_sources(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        mine = {t.name for t in screen.templates or ()}
        assert mine == {t.name for t in sim.world.templates.values()}
        assert "Your templates" in _text(screen, "#title")
        await pilot.press("p")
        await wait_until(pilot, lambda: screen.templates is not None and screen.mode == "public")
        assert "Runpod Pytorch 2.4.0" in {t.name for t in screen.templates or ()}
        assert all(t.public for t in screen.templates or ())
        assert "official" in _text(screen, "#title")
        await pilot.press("s")
        await wait_until(pilot, lambda: screen.templates is not None and screen.source == "verified")
        assert "verified" in _text(screen, "#title")
        await pilot.press("p")
        await wait_until(pilot, lambda: screen.templates is not None and screen.mode == "mine")


async def test_a_template_from_a_pod_refers_to_its_token(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, TemplateFormScreen) and bool(app.screen.pods))
        form = app.screen
        assert isinstance(form, TemplateFormScreen)
        form.query_one("#pod", Select).value = DEMO_IDS["train"]
        await wait_until(pilot, lambda: len(form._choices) == 3)
        await pilot.pause()
        choices = dict(form._choices)
        assert choices["HF_TOKEN"].value == "reference" and choices["HF_HOME"].value == "keep"
        hf_token_options = [v for _, v in choices["HF_TOKEN"]._options]
        assert "keep" not in hf_token_options  # a credential cannot be kept in clear
        assert form.query_one("#name", Input).value == "llama-lora-3090-template"
        preview = _text(form, "#preview")
        assert "{{ RUNPOD_SECRET_hf_token }}" in preview and "hf_token" in preview
        choices["WANDB_PROJECT"].value = "omit"
        await pilot.pause()
        assert "left out   WANDB_PROJECT" in _text(form, "#preview")
        assert TOKEN not in app.export_screenshot()
        await pilot.click("#create")
        await wait_until(pilot, lambda: app.screen is screen)
        made = next(t for t in sim.world.templates.values() if t.name == "llama-lora-3090-template")
        assert made.env == {"HF_HOME": "/workspace/hf", "HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}"}
        await wait_until(pilot, lambda: any(t.id == made.id for t in screen.templates or ()))


async def test_runpods_refusal_stays_in_the_form(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await _opened(pilot, app)
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, TemplateFormScreen) and bool(app.screen.pods))
        form = app.screen
        taken = next(iter(sim.world.templates.values())).name
        form.query_one("#name", Input).value = taken  # names are unique on the account
        await pilot.pause()
        before = set(sim.world.templates)
        await pilot.click("#create")
        await wait_until(pilot, lambda: "RunPod did not create the template" in _text(form, "#error"))
        assert app.screen is form and form.query_one("#name", Input).value == taken
        assert not form.query_one("#create", Button).disabled and set(sim.world.templates) == before
        form.query_one("#name", Input).value = "a-free-name"
        await pilot.pause()
        await pilot.click("#create")  # the second press, at once, is not swallowed by the first's
        await wait_until(pilot, lambda: app.screen is not form)
        assert any(t.name == "a-free-name" for t in sim.world.templates.values())


async def test_delete_one_of_mine_asks_first(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        first = screen.selected
        assert first is not None
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen)
        assert first.id in sim.world.templates
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: first.id not in sim.world.templates)
        await wait_until(pilot, lambda: all(t.id != first.id for t in screen.templates or ()))


async def test_public_ones_cannot_be_deleted(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await pilot.press("p")
        await wait_until(pilot, lambda: screen.templates is not None and screen.mode == "public")
        await pilot.press("d")
        await pilot.pause()
        assert app.screen is screen


async def test_read_only(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        for key in ("n", "d"):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is screen, key


async def test_a_failed_load_is_said(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        sim.faults.add("server_error", 502, times=1, only="GET /v2/templates")
        screen = await opened_by_key(pilot, app, "m", TemplatesScreen)
        await wait_until(pilot, lambda: "cannot load the templates" in _text(screen, "#status"))
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: screen.templates is not None)
        assert screen.query_one(DataTable).row_count == len(sim.world.templates)


async def test_enter_opens_the_create_form_from_the_template(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    from podtui.ui.screens.create_pod import CreatePodScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _opened(pilot, app)
        await pilot.press("p")
        await wait_until(pilot, lambda: screen.templates is not None and screen.mode == "public")
        chosen = screen.selected
        assert chosen is not None
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CreatePodScreen))
        form = app.screen
        assert isinstance(form, CreatePodScreen) and form.prefill is not None
        assert form.prefill.template_id == chosen.id and form.prefill.image == chosen.image


async def test_kind_and_category_come_first_at_80_columns(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    """Enter on a serverless or CPU template cannot make a GPU pod: the narrowest screen says which is which."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _opened(pilot, app)
        await pilot.press("p")
        await wait_until(pilot, lambda: screen.templates is not None and screen.mode == "public")
        table = screen.query_one(DataTable)
        keys = [c.key.value for c in table.ordered_columns]
        assert keys[:3] == ["name", "kind", "category"] and "id" not in keys
        up_to_image = table.ordered_columns[: keys.index("image") + 1]
        assert sum(c.get_render_width(table) for c in up_to_image) <= 78  # the image, cut, fits the first screen
        screen_text = app.export_screenshot()
        assert "serverless" in screen_text and "CPU" in screen_text
        await pilot.resize_terminal(200, 50)
        await wait_until(pilot, lambda: "id" in [c.key.value for c in table.ordered_columns])


async def _form_on_train(pilot, app: PodtuiApp, sim: SimApiServer, env: dict[str, str]) -> TemplateFormScreen:  # type: ignore[no-untyped-def]
    with sim.world.lock:
        sim.world.pods[DEMO_IDS["train"]].env = env
    await _opened(pilot, app)
    await pilot.press("n")
    await wait_until(pilot, lambda: isinstance(app.screen, TemplateFormScreen) and bool(app.screen.pods))
    form = app.screen
    assert isinstance(form, TemplateFormScreen)
    form.query_one("#pod", Select).value = DEMO_IDS["train"]
    await wait_until(pilot, lambda: len(form._choices) == len(env))
    await pilot.pause()
    return form


async def test_a_key_named_like_a_credential_is_kept_in_clear_only_after_a_warning(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    env = {
        "TOKENIZERS_PARALLELISM": "false",
        "MAX_NEW_TOKENS": "512",
        "MODEL_NAME": "meta-llama/Meta-Llama-3-8B-Instruct",
        "GRADER_TOKEN": "alpha-beta",
        "CHECKPOINT": "0123456789abcdef0123456789abcdef01234567",
        "HF_TOKEN": TOKEN,
        "CACHE_URL": "redis://:s3cret@cache:6379",
    }
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        form = await _form_on_train(pilot, app, sim, env)
        choices = dict(form._choices)
        assert all(choices[k].value == "keep" for k in ("TOKENIZERS_PARALLELISM", "MAX_NEW_TOKENS", "MODEL_NAME"))
        assert all(choices[k].value == "reference" for k in ("GRADER_TOKEN", "CHECKPOINT", "HF_TOKEN", "CACHE_URL"))
        assert "keep" in [v for _, v in choices["GRADER_TOKEN"]._options]  # by its name only: may be kept
        assert "keep" in [v for _, v in choices["CHECKPOINT"]._options]  # a long run, maybe a hash: may be kept
        assert "keep" not in [v for _, v in choices["HF_TOKEN"]._options]  # a known kind of token: never
        assert "keep" not in [v for _, v in choices["CACHE_URL"]._options]  # a URL holding a password: never
        choices["GRADER_TOKEN"].value = "keep"
        await pilot.pause()
        assert "in clear   GRADER_TOKEN" in _text(form, "#preview")
        before = set(sim.world.templates)
        await pilot.click("#create")
        await pilot.pause()
        assert "Press Create again" in _text(form, "#error") and set(sim.world.templates) == before
        create = form.query_one("#create", Button)
        await wait_until(pilot, lambda: not create.has_class("-active"))  # a button takes no click while pressed
        await pilot.click("#create")
        await wait_until(pilot, lambda: not isinstance(app.screen, TemplateFormScreen))
        made = next(t for t in sim.world.templates.values() if t.id not in before)
        assert made.env == {
            "TOKENIZERS_PARALLELISM": "false",
            "MAX_NEW_TOKENS": "512",
            "MODEL_NAME": "meta-llama/Meta-Llama-3-8B-Instruct",
            "GRADER_TOKEN": "alpha-beta",
            "CHECKPOINT": "{{ RUNPOD_SECRET_checkpoint }}",
            "HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}",
            "CACHE_URL": "{{ RUNPOD_SECRET_cache_url }}",
        }


@pytest.mark.parametrize("made", [True, False], ids=["made-after-all", "not-listed"])
async def test_a_lost_answer_is_looked_up_never_said_to_have_failed(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp], monkeypatch: pytest.MonkeyPatch, made: bool
) -> None:
    monkeypatch.setattr(TemplateFormScreen, "lookup_delays", (0.0,))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        form = await _form_on_train(pilot, app, sim, {"HF_HOME": "/workspace/hf"})
        before = set(sim.world.templates)
        sim.faults.add("malformed" if made else "status", None if made else 502, times=1, only="POST /v2/templates")
        await pilot.click("#create")
        if made:
            await wait_until(pilot, lambda: not isinstance(app.screen, TemplateFormScreen))
            assert len(set(sim.world.templates) - before) == 1
            return
        await wait_until(pilot, lambda: "may have been created" in _text(form, "#error"))
        assert "did not create" not in _text(form, "#error")
        assert form.query_one("#create", Button).disabled
        form.query_one("#name", Input).focus()
        await pilot.press("enter")  # from the name box: still nothing sent again
        await pilot.pause()
        assert "may have been created" in _text(form, "#error") and set(sim.world.templates) == before
        assert sim.rest_requests.count("POST /v2/templates") == 1
