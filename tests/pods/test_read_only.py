"""Read-only mode refuses every path that changes or costs anything: in the CLI, in the app's keys and in its
palette; it says why, and RunPod (the simulator) receives no mutation and no pod changes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.cli.main import main
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.add_transfer import AddTransferScreen
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS

MUTATIONS = ("mutation", "podStop", "podResume", "podTerminate", "podFindAndDeploy", "updateUserSettings")


def world_state(sim: SimApiServer) -> tuple[object, ...]:
    return (sorted((p.id, p.status) for p in sim.world.pods.values()), sim.world.pub_key)


def mutations(sim: SimApiServer) -> list[str]:
    return [q for q in sim.requests if any(m in q for m in MUTATIONS)]


CLI_MUTATIONS = [
    ["stop", "llama-lora-3090", "--yes"],
    ["resume", "notebook-4090", "--yes"],
    ["terminate", "eval-a100", "--yes"],
    ["create", "--gpu", "NVIDIA GeForce RTX 3090", "--yes"],
    ["keys", "setup"],
    ["push", "eval-a100", "/etc/hostname"],
    ["pull", "eval-a100", "x", "--then-terminate", "--yes"],
    ["autostop", "eval-a100", "install"],
    ["autostop", "eval-a100", "remove"],
    ["hf", "download", "eval-a100", "gpt2"],
]


@pytest.mark.parametrize("how", ["flag", "config"])
def test_cli_refuses_every_mutating_command(
    how: str, cli_env: SimApiServer, isolated_home: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    if how == "config":
        cfg = isolated_home / "config" / "podtui"
        cfg.mkdir(parents=True, exist_ok=True)
        (cfg / "config.toml").write_text("read_only = true\n")
    before = world_state(cli_env)
    for args in CLI_MUTATIONS:
        rc = main(["--read-only", *args] if how == "flag" else args)
        err = capfd.readouterr().err
        assert rc == 1 and "read-only mode" in err and err.count("\n") == 1, (args, rc, err)
    assert world_state(cli_env) == before and mutations(cli_env) == []
    assert not (isolated_home / ".ssh").exists()  # key setup made no key either


def said(app: PodtuiApp, *words: str) -> bool:
    return any(all(w in n.message for w in words) for n in app._notifications)


async def test_app_keys_and_palette_refuse_every_mutation(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    app = make_app(read_only=True)
    before = world_state(sim)
    async with app.run_test(size=(130, 32)) as pilot:
        await loaded(pilot, app)
        table = app.screen.query_one(PodTable)
        table.cursor_row = table.visible_ids.index(DEMO_IDS["train"])  # a running pod
        for key in ("s", "T", "A"):
            app.clear_notifications()
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is app.screen_stack[1] and said(app, "read-only"), key  # no question was opened
        table.cursor_row = table.visible_ids.index(DEMO_IDS["stopped"])
        app.clear_notifications()
        await pilot.press("r")
        await pilot.pause()
        assert said(app, "read-only") and len(app.screen_stack) == 2
        app.clear_notifications()
        await pilot.press("n")  # create
        await pilot.pause()
        assert said(app, "read-only") and len(app.screen_stack) == 2
        # the palette offers no stop/resume/terminate; its watchdog commands refuse
        table.cursor_row = table.visible_ids.index(DEMO_IDS["train"])
        from podtui.ui.commands import PodCommands

        provider = PodCommands(app.screen)
        titles = [hit.text or "" async for hit in provider.discover()]
        assert not [t for t in titles if t.split()[0] in ("Stop", "Resume", "Terminate")]
        for action in ("install", "remove"):
            hits = [hit async for hit in provider.discover()]
            run = next(h.command for h in hits if (h.text or "").endswith(f"watchdog on llama-lora-3090: {action}"))
            app.clear_notifications()
            run()
            await pilot.pause()
            assert said(app, "read-only"), action
        # uploads and then-terminate in the transfer dialog
        screen = AddTransferScreen(list(app.feed.snapshot.pods), table.selected_pod)  # type: ignore[union-attr]
        results: list[object] = []
        await app.push_screen(screen, results.append)
        screen.query_one("#remote").value = "x.bin"  # type: ignore[attr-defined]
        screen.query_one("#terminate").value = True  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert results == [] and "read-only mode" in str(screen.query_one("#error").render())
        await pilot.press("escape")
        await pilot.pause()
        # SSH key setup
        await pilot.press("K")
        await wait_until(pilot, lambda: "KeysScreen" in type(app.screen).__name__)
        await pilot.pause(0.3)
        await pilot.click("#setup")
        await pilot.pause(0.3)
        assert said(app, "read-only") or "read-only" in str(app.screen.query_one("#status").render())
        await pilot.press("escape")
    assert world_state(sim) == before and mutations(sim) == []


async def test_app_refuses_a_hub_download(sim: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    from podtui.sim.hub import SimHub
    from podtui.sim.hub_seed import PUBLIC_MODEL
    from podtui.ui.screens.hf_check import HfCheckScreen

    with SimHub() as hub:
        app = make_app(read_only=True, hf_endpoint=lambda: hub.endpoint)
        async with app.run_test(size=(130, 32)) as pilot:
            await loaded(pilot, app)
            pods = list(app.feed.snapshot.pods)  # type: ignore[union-attr]
            screen = HfCheckScreen(
                pods,
                next(p for p in pods if p.id == DEMO_IDS["train"]),
                repo=PUBLIC_MODEL,
                endpoint=lambda: hub.endpoint,
                token=lambda: None,
            )
            await app.push_screen(screen)
            await wait_until(pilot, lambda: screen.report is not None)
            await pilot.pause()
            screen.action_download()
            await pilot.pause()
            assert said(app, "read-only") and app.transfers.queue().jobs() == []
    assert mutations(sim) == []
