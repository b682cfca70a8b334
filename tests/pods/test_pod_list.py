"""The pod list driven through Pilot: sort, filter, details, stop/resume/terminate, stale data."""

from __future__ import annotations

import io
from collections.abc import Callable

from rich.console import Console
from textual.widgets import Button, Input
from textual.widgets._footer import FooterKey

from podtui.core.config import Config
from podtui.core.pod import PodStatus
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.help import HelpScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.screens.terminate import TerminateScreen
from podtui.ui.widgets.account_bar import AccountBar
from podtui.ui.widgets.pod_details import detail_renderable
from podtui.ui.widgets.pod_table import PodTable
from podtui.ui.widgets.status_line import StatusLine
from tests.helpers.pilot import details_shown, loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (130, 30)
ONE_SCREEN = (130, 29)  # under the panes' 100x30: Enter opens the details screen (docs/architecture.md#panes)


def names(app: PodtuiApp) -> list[str]:
    table = app.screen.query_one(PodTable)
    return [table._pods[i].name for i in table.visible_ids]


def greyed(app: PodtuiApp) -> set[str]:
    """The keys the footer shows greyed out (their binding is disabled on this screen)."""
    return {k.key for k in app.screen.query(FooterKey) if k.has_class("-disabled")}


def shown(app: PodtuiApp) -> set[str]:
    """The keys the footer shows (a key kept off it for room is still bound, and listed by ? and ctrl+p)."""
    return {k.key for k in app.screen.query(FooterKey)}


def live(app: PodtuiApp, verb: str) -> bool:
    """The verb's key does something on this screen now (check_action: None greys it out, and it does nothing)."""
    return app.screen.check_action("pod", (verb,)) is not None


def selected(app: PodtuiApp) -> str:
    pod = app.screen.query_one(PodTable).selected_pod
    assert pod is not None
    return pod.name


async def test_list_shows_demo_pods_sorted_by_name(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        assert names(app) == ["data-prep-a5000", "eval-a100", "llama-lora-3090", "notebook-4090", "sweep-h100x2"]
        bar = str(app.screen.query_one(AccountBar).render())
        assert "$23.87" in bar and "DEMO" in bar and "live" in bar


async def test_cursor_keys_and_sort(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        table = app.screen.query_one(PodTable)
        await pilot.press("j", "j")
        assert table.selected_pod is not None and table.selected_pod.name == "llama-lora-3090"
        await pilot.press("k")
        assert table.selected_pod.name == "eval-a100"
        # o cycles the sort column: name -> id -> status
        await pilot.press("o")
        assert table.sort_key == "id"
        assert names(app)[0] == "eval-a100"  # b3n8...
        await pilot.press("O")
        assert table.sort_reverse and names(app)[0] == "data-prep-a5000"  # w9e3...
        for _ in range(4):  # -> status, gpu, util, rate
            await pilot.press("o")
        assert table.sort_key == "rate"
        await pilot.press("O")
        assert names(app)[0] == "sweep-h100x2"  # $5.98/hr
        # the cursor stayed on the pod it was on
        assert table.selected_pod.name == "eval-a100"


async def test_filter(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await pilot.press(*"rtx")
        assert names(app) == ["data-prep-a5000", "llama-lora-3090", "notebook-4090"]
        await pilot.press("space", *"exited")
        assert names(app) == ["notebook-4090"]
        await pilot.press("enter")  # keep the filter, back to the table
        assert isinstance(app.focused, PodTable)
        await polled(pilot, app)
        assert names(app) == ["notebook-4090"]  # survives a refresh
        await pilot.press("escape")
        assert len(names(app)) == 5


async def test_filter_with_hostile_input(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("slash", *'"{[bold]\\ü')
        assert names(app) == []
        await pilot.press("escape")
        assert len(names(app)) == 5


def detail_text(app: PodtuiApp) -> str:
    """The details of the pod on screen, as text, each line's padding trimmed."""
    pod = details_shown(app)
    assert pod is not None
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(detail_renderable(pod))
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


async def test_details(make_full_app: Callable[..., PodtuiApp], full_sim: Simulator) -> None:
    app = make_full_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "j", "enter")
        text = detail_text(app)
        # both commands as RunPod's `ssh` block gives them: the simulator's gateway stands where ssh.runpod.io is
        _, port = full_sim.gateway.address
        assert f"Proxy (PTY only)     ssh q7x2m9fk4r8t1a-6f3a91c2@127.0.0.1 -p {port}\n" in text
        assert "Direct (exec, sftp)  ssh root@127.0.0.1 -p " in text
        assert "stop, restart, terminate" in text and "Locked" not in text  # RunPod's offer, in the keys' words
        assert "hf_demo" not in text and "HF_TOKEN" in text  # env is redacted
        assert "runpod/pytorch:2.1.0" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, PodDetailScreen)


async def test_details_without_an_endpoint_say_why(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()  # the API alone: no gateway, so RunPod's answer names no proxy for a running pod
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "j", "enter")  # llama-lora-3090, running
        text = detail_text(app)
        assert "Proxy (PTY only)     — (RunPod gave none)" in text and "ssh root@127.0.0.1 -p 40122" in text
        await pilot.press("escape", "j", "j", "enter")  # sweep-h100x2, provisioning and locked
        text = detail_text(app)
        assert "sweep-h100x2  h1j4k8l2m6n0pq  PROVISIONING" in text
        assert "— (RunPod gives none until the pod runs)" in text and "— (needs 22/tcp published" in text
        assert "Can                 terminate" in text and "RunPod will not stop or restart it" in text


async def test_stop_through_the_ui(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "j", "s")  # llama-lora-3090
        assert isinstance(app.screen, ConfirmScreen)
        assert isinstance(app.focused, Button) and app.focused.id == "cancel"
        await pilot.press("enter")  # the default answer is Cancel
        assert not isinstance(app.screen, ConfirmScreen)
        assert sim.world.pods[DEMO_IDS["train"]].status == "RUNNING"
        await pilot.press("s", "y")
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["train"]].status == "EXITED")
        await wait_until(pilot, lambda: app.screen.query_one(PodTable).selected_pod.status is PodStatus.EXITED)


async def test_resume_and_terminate_through_the_ui(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "j", "j", "r")  # notebook-4090, stopped
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("tab", "enter")  # move to the Resume button and press it
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["stopped"]].status == "CREATED")
        # the clock stands still: it stays in the first half of its boot, looking for its machine
        await wait_until(pilot, lambda: app.screen.query_one(PodTable).selected_pod.state == "PROVISIONING")
        await wait_until(pilot, lambda: {"s", "T"} <= shown(app) and "r" in greyed(app))

        await pilot.press("T")
        assert isinstance(app.screen, TerminateScreen)
        assert "TERMINATE notebook-4090" in str(app.screen.query_one("#title").render())
        assert app.focused is not None and app.focused.id == "cancel"  # the safe answer is the default
        await pilot.press("enter")  # Cancel
        assert sim.world.pods[DEMO_IDS["stopped"]].status == "CREATED"
        await pilot.press("T", "y", "enter")  # no y/n shortcut here: "y" starts the name, which is wrong
        assert isinstance(app.screen, TerminateScreen) and sim.world.pods[DEMO_IDS["stopped"]].status == "CREATED"
        assert app.screen.query_one("#confirm", Button).disabled
        await pilot.press("escape", "T", *"notebook", "minus", *"409")  # typing goes to the name box
        assert app.screen.query_one("#confirm", Button).disabled  # not the whole name yet
        await pilot.press("0", "enter")
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["stopped"]].status == "TERMINATED")
        await wait_until(pilot, lambda: "notebook-4090" not in names(app))  # v2 lists terminated pods no more


async def test_terminate_with_a_plain_yes_when_configured(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app(config=Config(confirm_terminate="yn"))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "T")  # eval-a100
        assert isinstance(app.screen, TerminateScreen) and not app.screen.query("#name")
        await pilot.press("y")
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["idle"]].status == "TERMINATED")


async def test_read_only_refuses_every_action(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app(read_only=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        # each verb on a pod RunPod would do it to: refused all the same, and said
        for moves, key in ((["j"], "s"), (["j"], "R"), (["j"], "r"), (["g"], "T")):
            await pilot.press(*moves, key)
            assert not isinstance(app.screen, (ConfirmScreen, TerminateScreen)), key
        assert sum("read-only mode" in n.message for n in app._notifications) == 4
        assert {p.status for p in sim.world.pods.values()} == {"RUNNING", "EXITED", "CREATED"}  # nothing changed
        await pilot.press("K")
        await pilot.press("s")
        await wait_until(pilot, lambda: "Read-only mode" in str(app.screen.query_one("#status").render()))


async def test_keys_follow_what_runpod_offers(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=ONE_SCREEN, notifications=True) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: greyed(app) == {"r"})  # data-prep-a5000 runs: all but resume
        assert [v for v in ("stop", "resume", "restart", "terminate") if live(app, v)] == [
            "stop",
            "restart",
            "terminate",
        ]
        await pilot.press("j", "j", "j")
        assert selected(app) == "notebook-4090"  # EXITED: RunPod offers start and terminate only
        await wait_until(pilot, lambda: greyed(app) == {"s", "R"} & shown(app))
        assert [v for v in ("stop", "resume", "restart", "terminate") if live(app, v)] == ["resume", "terminate"]
        await pilot.press("s", "R")  # greyed out: nothing happens, nothing is said
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen) and not app._notifications
        await pilot.press("enter")  # the details screen greys the same keys
        assert isinstance(app.screen, PodDetailScreen)
        await wait_until(pilot, lambda: greyed(app) == {"s", "R"} & shown(app))
        assert [v for v in ("stop", "resume", "restart", "terminate") if live(app, v)] == ["resume", "terminate"]
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(app.screen, PodDetailScreen) and not app._notifications
        await pilot.press("escape")
        assert {p.status for p in sim.world.pods.values()} == {"RUNNING", "EXITED", "CREATED"}  # nothing sent


async def test_a_locked_pod_says_why(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=ONE_SCREEN, notifications=True) as pilot:
        await loaded(pilot, app)
        await pilot.press("G")
        assert selected(app) == "sweep-h100x2"  # locked, provisioning: RunPod offers terminate only
        # stop stays live, to say why not; restart is not a provisioning pod's, lock or no lock
        await wait_until(pilot, lambda: greyed(app) == {"r", "R"} & shown(app))
        assert live(app, "stop") and not live(app, "restart") and not live(app, "resume")
        await pilot.press("s")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        said = [n.message for n in app._notifications]
        assert len(said) == 1 and "sweep-h100x2 is locked" in said[0], said
        await pilot.press("enter")
        assert isinstance(app.screen, PodDetailScreen)
        await wait_until(pilot, lambda: greyed(app) == {"r", "R"} & shown(app))
        await pilot.press("s")
        await wait_until(pilot, lambda: len(app._notifications) == 2)
        assert "locked" in list(app._notifications)[-1].message
        assert sim.world.pods[DEMO_IDS["starting"]].status == "CREATED"


async def test_api_error_after_confirm_is_shown(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        sim.faults.add("conflict", "The pod is being migrated to another machine", times=1, only="POST /v2/pods/")
        await pilot.press("j", "j", "s", "y")
        await wait_until(pilot, lambda: any("being migrated" in n.message for n in app._notifications))
        assert sim.world.pods[DEMO_IDS["train"]].status == "RUNNING"


async def test_failed_poll_keeps_data_and_marks_it_stale(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add("status", 502)
        sim.world.clock.advance(42)
        await polled(pilot, app)
        assert len(names(app)) == 5  # the last good data stays
        bar = str(app.screen.query_one(AccountBar).render())
        assert "STALE" in bar and "42s old" in bar
        status = str(app.screen.query_one(StatusLine).render())
        assert "server error (502)" in status
        sim.faults.clear()
        await polled(pilot, app)
        assert "live" in str(app.screen.query_one(AccountBar).render())
        status = str(app.screen.query_one(StatusLine).render())
        assert "server error" not in status
        # the H100 pod finished booting meanwhile: the burn rose, and under 4 h of runway the line says what $0 does
        assert "The balance lasts 2h 54m" in status and "deleting their data" in status


async def test_401_mid_session(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add("unauthorized")
        await polled(pilot, app)
        status = str(app.screen.query_one(StatusLine).render())
        assert "refused the API key" in status and sim.api_key not in status


async def test_no_poll_while_a_modal_is_open(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app(poll_interval_s=0.2)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        done = app.poller.done
        await pilot.pause(0.8)
        assert app.poller.done == done
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.poller.done > done)


async def test_polls_never_overlap(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        sim.faults.add("latency", 0.3, times=1)
        requests, done = len(sim.requests), app.poller.done
        for _ in range(5):
            app.poll_now()
        await wait_until(pilot, lambda: app.poller.done >= done + 2)
        await pilot.pause(0.3)
        assert len(sim.requests) - requests == 2  # the one in flight, then one more


async def test_command_palette_lists_actions(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        from podtui.ui.commands import PodCommands

        async def titles() -> list[str]:
            return [hit.text async for hit in PodCommands(app.screen).discover()]

        for expected in (
            "Stop data-prep-a5000",
            "Restart data-prep-a5000",
            "Terminate data-prep-a5000",
            "Filter pods",
            "Refresh now",
            "Help: keys",
            "Open pod eval-a100",
        ):
            assert expected in await titles()
        # only the verbs RunPod offers for the selected pod now
        assert not {t for t in await titles() if t.startswith("Resume ")}
        await pilot.press("j", "j", "j")  # notebook-4090, stopped
        verbs = {t for t in await titles() if t.split()[0] in ("Stop", "Resume", "Restart", "Terminate")}
        assert verbs == {"Resume notebook-4090", "Terminate notebook-4090"}
        await pilot.press("j")  # sweep-h100x2, locked and provisioning: stop stays, to say why not when chosen
        verbs = {t for t in await titles() if t.split()[0] in ("Stop", "Resume", "Restart", "Terminate")}
        assert verbs == {"Stop sweep-h100x2", "Terminate sweep-h100x2"}
        await pilot.press("g")
        await pilot.press("ctrl+p")
        await pilot.press(*"open pod eval")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PodDetailScreen))
        assert app.screen.pod_id == DEMO_IDS["idle"]


async def test_help_and_quit(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "q")
    assert app.return_code == 0


async def test_markup_and_control_characters_in_api_text(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    """Pod names and status text are data: `[/]` and escape sequences must neither crash nor style."""
    pod = sim.world.pods[DEMO_IDS["stopped"]]
    pod.name = "[/]bad [@click=app.quit]x[/] \x1b[31mred"
    pod.last_status_change = "Exited by [/bold] RunPod [@click=app.quit]"
    pod.gpu_type = "RTX [/] 4090"
    app = make_app()
    async with app.run_test(size=ONE_SCREEN, notifications=True) as pilot:
        await loaded(pilot, app)
        name = next(n for n in names(app) if n.startswith("[/]"))
        assert "\x1b" not in name
        await pilot.press("g")  # it sorts first
        assert app.screen.query_one(PodTable).selected_pod.name == name
        await pilot.press("s")  # refused: the notification carries the name
        await pilot.pause()
        await pilot.press("enter")
        assert isinstance(app.screen, PodDetailScreen)
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.press(*"bad")
        await pilot.pause(0.3)
        await pilot.press("escape", "escape")
    assert app.return_code in (0, None)
