"""Bad input everywhere it can be typed or shown: pod refs and names with quotes, braces, newlines, unicode and
Rich markup; paths with spaces and unicode on every transfer way; a config file podtui cannot read.

What the user sees (screen text, CLI output, exit status) and that nothing is lost (pods untouched, files
byte-for-byte) are asserted together."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Button, Input, OptionList, TextArea

from podtui.cli.main import main
from podtui.core.api import V2Api
from podtui.core.paths import Paths
from podtui.sim.hub import SimHub
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator
from podtui.sim.world import SimPod
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.add_transfer import AddTransferScreen
from podtui.ui.screens.create_pod import CreatePodScreen
from podtui.ui.screens.hf_check import HfCheckScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.screens.terminate import TerminateScreen
from podtui.ui.screens.welcome import WelcomeScreen
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS, needs_sshd
from tests.helpers.transfer import MakeQueue

SIZE = (130, 32)
# Refs a user might type (or paste) that match no pod: quotes and braces, URL path punctuation, a newline, unicode,
# Rich markup.
BAD_REFS = [
    'x"y',
    '"){ myself { id } }',
    "a\nb",
    "ünïcödé 🚀",
    "{",
    "[/]",
    "[red]x[/]",
    "'; rm -rf ~",
    "../account/ssh-keys",
    "zz/action?x=1#",
    "%2e%2e",
]
# Names RunPod may hand back: markup that Rich would eat or choke on, quotes and braces, unicode.
MARKUP_NAME = "[red]x[/]"
CLOSE_TAG = "[/]"
ODD_NAME = "a\"b'{c} ünï 🚀"


def screen_text(app: PodtuiApp) -> str:
    """What the terminal shows for the screen on top, as plain text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def statuses(sim: SimApiServer) -> dict[str, str]:
    return {p.id: p.status for p in sim.world.pods.values()}


def rename(sim: SimApiServer) -> None:
    sim.world.pods[DEMO_IDS["idle"]].name = MARKUP_NAME  # eval-a100, RUNNING
    sim.world.pods[DEMO_IDS["train"]].name = CLOSE_TAG  # llama-lora-3090, RUNNING
    sim.world.pods[DEMO_IDS["bursty"]].name = ODD_NAME  # data-prep-a5000, RUNNING


# --- the CLI ----------------------------------------------------------------------------------------------


def _cli_args(command: str, ref: str, tmp_path: Path) -> list[str]:
    return {
        "stop": ["stop", ref, "--yes"],
        "resume": ["resume", ref, "--yes"],
        "terminate": ["terminate", ref, "--yes"],
        "exec": ["exec", ref, "--", "true"],
        "push": ["push", ref, str(tmp_path)],
        "pull": ["pull", ref, "x"],
        "doctor": ["doctor", ref],
        "autostop": ["autostop", ref, "status"],
    }[command]


@pytest.mark.parametrize("command", ["stop", "resume", "terminate", "exec", "push", "pull", "doctor", "autostop"])
def test_cli_refs_that_match_no_pod_say_so_and_send_nothing(
    command: str, cli_env: SimApiServer, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    before = statuses(cli_env)
    for ref in BAD_REFS:
        cli_env.requests.clear()
        cli_env.rest_requests.clear()
        rc = main(_cli_args(command, ref, tmp_path))
        out, err = capfd.readouterr()
        assert rc == 1, (ref, err)
        assert err.startswith("podtui: error: no pod with id or name ") and err.count("\n") == 1, (ref, err)
        assert "Traceback" not in err and out == ""
        # only the read-only pod list (and the balance) were asked for: the ref reached no path and no document
        assert cli_env.rest_requests == ["GET /v2/pods"], (ref, cli_env.rest_requests)
        assert all(q.lstrip().startswith("query podtuiBalance") for q in cli_env.requests)
    assert statuses(cli_env) == before


def test_cli_blank_ref_is_no_pod(cli_env: SimApiServer, capfd: pytest.CaptureFixture[str]) -> None:
    for ref in ("", " ", "\t"):
        assert main(["stop", ref, "--yes"]) == 1
        assert capfd.readouterr().err == "podtui: error: no pod given\n"


# Ids RunPod might hand back that would change the URL they are put in: another route, another pod, a query.
EVIL_IDS = [
    f"{DEMO_IDS['train']}/action",
    "../account/ssh-keys",
    f"..%2F{DEMO_IDS['train']}",
    f"{DEMO_IDS['train']}?x=",
    f"{DEMO_IDS['train']}#",
    "ev1l id",
    'ev1l"){podTerminate(input:{podId:"q7x2m9fk4r8t1a"})}',
]


@pytest.mark.parametrize("evil", EVIL_IDS)
@pytest.mark.parametrize("verb", ["stop", "restart", "terminate"])
def test_a_pod_id_from_the_api_that_would_change_the_url_is_never_sent(
    cli_env: SimApiServer, capfd: pytest.CaptureFixture[str], evil: str, verb: str
) -> None:
    cli_env.world.add(SimPod(id=evil, name="evil", gpu_type="RTX 3090", gpu_count=1, cost_per_hr=0.22))
    before = statuses(cli_env)
    cli_env.rest_requests.clear()
    assert main([verb, "evil", "--yes"]) != 0
    err = capfd.readouterr().err
    assert err.startswith("podtui: error: refused to send id ") and err.count("\n") == 1 and "Traceback" not in err
    assert cli_env.rest_requests == ["GET /v2/pods"]  # the list only: no action, no delete, on any path
    assert statuses(cli_env) == before and before[DEMO_IDS["train"]] == before[evil] == "RUNNING"


def test_an_unsafe_id_from_the_api_is_not_a_usage_error(
    cli_env: SimApiServer, capfd: pytest.CaptureFixture[str]
) -> None:
    cli_env.world.add(SimPod(id='ev1l"}', name="evil", gpu_type="RTX 3090", gpu_count=1, cost_per_hr=0.22))
    assert main(["stop", "evil", "--yes"]) == 1  # the user typed nothing wrong: exit 2 is for usage
    assert capfd.readouterr().err.startswith("podtui: error: refused to send id")


def test_cli_names_are_printed_literally_and_match_exactly(
    cli_env: SimApiServer, capfd: pytest.CaptureFixture[str]
) -> None:
    rename(cli_env)
    assert main(["pods"]) == 0
    out = capfd.readouterr().out
    for name in (MARKUP_NAME, CLOSE_TAG, ODD_NAME):
        assert f"\n{name} " in out
    assert main(["stop", MARKUP_NAME, "--yes"]) == 0
    assert capfd.readouterr().out == f'pod "{DEMO_IDS["idle"]}" ({MARKUP_NAME}) stopping\n'
    # terminate takes the whole name, quotes, braces and emoji included
    assert main(["terminate", ODD_NAME[:3], "--yes"]) == 2
    assert "whole id or name" in capfd.readouterr().err
    assert cli_env.world.pods[DEMO_IDS["bursty"]].status == "RUNNING"
    assert main(["terminate", ODD_NAME, "--yes"]) == 0
    assert capfd.readouterr().out == f'pod "{DEMO_IDS["bursty"]}" ({ODD_NAME}) terminating\n'
    assert main(["stop", CLOSE_TAG, "--yes"]) == 0
    assert CLOSE_TAG in capfd.readouterr().out


def test_a_newline_in_a_name_never_reaches_the_terminal(
    cli_env: SimApiServer, capfd: pytest.CaptureFixture[str]
) -> None:
    cli_env.world.pods[DEMO_IDS["idle"]].name = "two\nlines\x1b[31mred"
    assert main(["pods"]) == 0
    out = capfd.readouterr().out
    assert "\x1b" not in out and "two\\nlines\\x1b[31mred" in out  # visible, and inert
    legends = ("locked: ", "$0!: ")  # the table's marks, explained under it
    assert len([line for line in out.strip().splitlines() if not line.startswith(legends)]) == 8  # heading, 5 pods,
    # blank, balance


# --- the app: names shown literally --------------------------------------------------------------------


async def test_names_with_markup_show_literally_everywhere(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    rename(sim)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        text = screen_text(app)
        for name in (MARKUP_NAME, CLOSE_TAG, ODD_NAME):
            assert f" {name} " in text
        # the filter: markup, quotes and unicode typed as they are
        await pilot.press("slash", *"[/]")
        await pilot.pause()
        table = app.screen.query_one(PodTable)
        assert {table._pods[i].name for i in table.visible_ids} == {MARKUP_NAME, CLOSE_TAG}
        await pilot.press("escape")
        await pilot.press("escape")  # out of the box, then clear
        await pilot.pause()
        assert len(table.visible_ids) == 5
        # details
        app.navigator.open_details(DEMO_IDS["idle"])
        await pilot.pause()
        assert isinstance(app.screen, PodDetailScreen)
        assert f"{MARKUP_NAME}  {DEMO_IDS['idle']}  RUNNING" in screen_text(app)
        await pilot.press("escape")
        # the palette
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"open pod")
        await wait_until(pilot, lambda: "Open pod notebook-4090" in screen_text(app))
        text = screen_text(app)
        for name in (MARKUP_NAME, CLOSE_TAG, ODD_NAME):
            assert f"Open pod {name}" in text
        await pilot.press("escape")
        await pilot.pause()


async def test_terminate_question_names_the_pod_literally_and_takes_it_typed(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    rename(sim)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        pods = {p.name: p for p in app.feed.snapshot.pods}  # type: ignore[union-attr]
        for name in (MARKUP_NAME, ODD_NAME):
            app.pod_actions.request("terminate", pods[name])
            await pilot.pause()
            assert isinstance(app.screen, TerminateScreen)
            text = screen_text(app)
            assert f"TERMINATE {name}?" in text and f"Type the pod's name, {name}, to confirm:" in text
            box = app.screen.query_one("#name", Input)
            box.focus()
            await pilot.press(*name[:-1])  # one character short: still refused
            assert box.value == name[:-1] and app.screen.query_one("#confirm", Button).disabled
            await pilot.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, TerminateScreen)
            assert any("not the pod's name" in n.message for n in app._notifications)
            assert sim.world.pods[pods[name].id].status == "RUNNING"
            await pilot.press(name[-1], "enter")
            await wait_until(pilot, lambda: sim.world.pods[pods[name].id].status == "TERMINATED")  # noqa: B023


# --- forms and boxes ---------------------------------------------------------------------------------------


async def test_create_form_sends_odd_names_and_env_intact_and_refuses_a_newline(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    app = make_app()
    results: list[object] = []
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        form = CreatePodScreen()
        await app.push_screen(form, results.append)
        await wait_until(pilot, lambda: form.catalogue is not None)
        name_box = form.query_one("#name", Input)
        await wait_until(pilot, lambda: name_box.value == "podtui-rtx-3090")  # the name follows the GPU until typed
        name_box.value = "two\nlines"  # as a paste could leave it
        await pilot.pause()
        assert form.query_one("#err-name").render().plain.strip() != ""  # type: ignore[attr-defined]
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, CreatePodScreen) and len(sim.world.pods) == 5
        name = f'{MARKUP_NAME} "q" {{b}} \\n ü🚀'
        name_box.value = name
        form.query_one("#env", TextArea).text = 'NOTE=[b]x[/] "q" {b} \\ ü🚀\nEMPTY='
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(results))
        created = [p for p in sim.world.pods.values() if p.id not in DEMO_IDS.values()]
        assert len(created) == 1 and created[0].name == name
        assert created[0].env == {"NOTE": '[b]x[/] "q" {b} \\ ü🚀', "EMPTY": ""}
        await wait_until(pilot, lambda: f"{name[:12]}" in screen_text(app))


async def test_hf_repo_box_takes_markup_and_quotes_without_crashing(make_app: Callable[..., PodtuiApp]) -> None:
    with SimHub() as hub:
        app = make_app(hf_endpoint=lambda: hub.endpoint)
        async with app.run_test(size=SIZE) as pilot:
            await loaded(pilot, app)
            for repo in (CLOSE_TAG, MARKUP_NAME, 'a"b/{c}', "ünï/🚀", "x\ny"):
                screen = HfCheckScreen([], repo="")
                await app.push_screen(screen)
                screen.query_one("#repo", Input).value = repo
                screen.action_check()
                await wait_until(pilot, lambda: "checking" not in screen_text(app))
                text = screen_text(app)
                assert "Repo id" in text and "Traceback" not in text and app.is_running
                assert screen.query_one("#download", Button).disabled  # nothing to download from a bad id
                await pilot.press("escape")
                await pilot.pause()


async def test_add_transfer_keeps_typed_paths_and_shows_pod_names_literally(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    rename(sim)
    app = make_app()
    results: list[TransferJob | None] = []
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        pods = list(app.feed.snapshot.pods)  # type: ignore[union-attr]
        selected = next(p for p in pods if p.name == MARKUP_NAME)
        screen = AddTransferScreen(pods, selected)
        await app.push_screen(screen, results.append)
        await pilot.pause()
        assert f"{MARKUP_NAME}  ({selected.id})" in screen_text(app)
        remote = 'out dir/ünï 🚀 "q" {b} [x].bin'
        local = "/tmp/dl here/ü 'q' {b}"
        screen.query_one("#remote", Input).value = remote
        screen.query_one("#local", Input).value = local
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: bool(results))
        job = results[0]
        assert job is not None and (job.direction, job.source, job.target) == ("pull", remote, local)
        assert job.pod_name == MARKUP_NAME and job.pod_id == selected.id


async def test_pod_folder_listing_shows_names_literally_and_picks_them_exactly(
    full_sim: Simulator, sim_api: V2Api, make_full_app: Callable[..., PodtuiApp], tmp_path: Path
) -> None:
    pod = sim_api.fetch_snapshot().find("eval-a100")  # gateway only: the PTY path
    start = full_sim.gateway.machine(full_sim.world.pods[pod.id]).workspace  # where its shell starts
    odd = ["[red]x", "[bold]", 'a "b" {c}', "ü 🚀.txt", "-dash"]  # no "/" in a file name
    for name in odd:
        (start / name).write_text("x")
    app = make_full_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        screen = AddTransferScreen(list(app.feed.snapshot.pods), pod)  # type: ignore[union-attr]
        await app.push_screen(screen)
        screen.action_browse()
        listing = screen.query_one("#listing", OptionList)
        await wait_until(pilot, lambda: listing.option_count > 1, timeout=20)
        await pilot.pause()
        prompts = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert set(odd) <= set(prompts)
        text = screen_text(app)  # the box is 8 lines high: the first names are on screen, as they are
        assert "[red]x" in text and "[bold]" in text and 'a "b" {c}' in text
        for i in range(listing.option_count):
            if str(listing.get_option_at_index(i).prompt) == odd[0]:
                listing.highlighted = i
        listing.action_select()
        await pilot.pause()
        assert screen.query_one("#remote", Input).value == odd[0]


# --- paths with spaces and unicode, every way, both directions ------------------------------------------------


ODD_FILE = "ünï cödé 🚀 'q' \"d\" {b} [x].bin"
ODD_DIR = "my run  (1)/ü dir"


@pytest.fixture
def queue(make_queue: MakeQueue, local_runpodctl: Path, full_sim: Simulator) -> TransferQueue:
    """The transfer queue on the whole simulator, each way open: the console, SFTP and the simulator's runpodctl."""
    full_sim.relay.rate_bytes_per_s = None
    return make_queue()


@pytest.mark.parametrize(
    ("pod_name", "via"),
    [
        ("eval-a100", "console"),
        ("eval-a100", "runpodctl"),
        pytest.param("llama-lora-3090", "sftp", marks=needs_sshd),
    ],
)
def test_odd_paths_travel_both_ways_verified(
    pod_name: str, via: str, queue: TransferQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    pod = sim_api.fetch_snapshot().find(pod_name)
    ws = full_sim.gateway.machine(full_sim.world.pods[pod.id]).workspace
    local_dir = tmp_path / ODD_DIR
    local_dir.mkdir(parents=True)
    up = local_dir / ODD_FILE
    up.write_bytes(os.urandom(200_000))
    (ws / "from pod ü").mkdir()
    (ws / "from pod ü" / ODD_FILE).write_bytes(os.urandom(150_000))
    down = tmp_path / "down here ü"
    down.mkdir()
    # relative paths on the pod: they start where its shell starts (/workspace; a sandbox folder here)
    jobs = [
        TransferJob(pod.id, "push", str(up), f"{ODD_DIR}/", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pod.id, "pull", f"from pod ü/{ODD_FILE}", str(down), route_choice=via),  # type: ignore[arg-type]
        TransferJob(pod.id, "push", str(local_dir), "", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pod.id, "pull", "from pod ü", str(down), route_choice=via),
    ]  # type: ignore[arg-type]
    for j in jobs:
        queue.add(j)
    queue.start()
    assert queue.wait([j.id for j in jobs], 90)
    done = [queue.get(j.id) for j in jobs]
    assert [(j.state, j.route) for j in done] == [("verified", via)] * 4, [j.log for j in done]  # type: ignore[union-attr]
    assert (ws / ODD_DIR / ODD_FILE).read_bytes() == up.read_bytes()
    assert (down / ODD_FILE).read_bytes() == (ws / "from pod ü" / ODD_FILE).read_bytes()
    assert (ws / "ü dir" / ODD_FILE).read_bytes() == up.read_bytes()
    assert (down / "from pod ü" / ODD_FILE).read_bytes() == (ws / "from pod ü" / ODD_FILE).read_bytes()
    assert up.exists()  # the source is never touched


# --- a config file podtui cannot read ------------------------------------------------------------------------


BAD_CONFIGS = {
    "bad toml": b'api_key = "unterminated\npoll_interval_s = [\n',
    "not utf-8": b'api_key = "\xff\xfe"\n',
    "duplicate key": b"read_only = true\nread_only = false\n",
}


@pytest.fixture(params=list(BAD_CONFIGS))
def bad_config(request: pytest.FixtureRequest, paths: Paths) -> tuple[Path, bytes]:
    data = BAD_CONFIGS[request.param]
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_bytes(data)
    return paths.config_file, data


def test_bad_config_is_named_and_never_rewritten(
    bad_config: tuple[Path, bytes],
    cli_env: SimApiServer,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, data = bad_config
    for args in (["pods"], ["config", "show"], ["stop", "llama-lora", "--yes"]):
        assert main(args) == 1, args
        err = capfd.readouterr().err
        assert err.startswith(f"podtui: error: {path}") and "podtui has not changed it" in err, err
        assert err.count("\n") == 1 and "Traceback" not in err
    assert cli_env.world.pods[DEMO_IDS["train"]].status == "RUNNING"
    monkeypatch.setattr("sys.stdin", io.StringIO("rpa_NEWKEYNEWKEYNEWKEYNEWKEY1234\n"))
    assert main(["config", "set-key", "--stdin"]) == 1
    err = capfd.readouterr().err
    assert str(path) in err and "rpa_NEWKEY" not in err
    assert path.read_bytes() == data
    assert sorted(p.name for p in path.parent.iterdir()) == ["config.toml"]  # no temporary file left either


async def test_welcome_screen_refuses_to_overwrite_a_bad_config(
    bad_config: tuple[Path, bytes],
    paths: Paths,
    sim: SimApiServer,
    make_app: Callable[..., PodtuiApp],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from podtui.core.config import save_api_key

    path, data = bad_config
    monkeypatch.setenv("RUNPOD_API_BASE_URL", sim.url)  # the key is checked against the simulator
    app = make_app(needs_key=True, save_key=lambda value: save_api_key(paths, value))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, WelcomeScreen))
        box = app.screen.query_one("#key", Input)
        box.value = sim.api_key
        await pilot.press("enter")
        await wait_until(pilot, lambda: "not saved" in screen_text(app))
        status = str(app.screen.query_one("#status").render())  # unwrapped: the long path breaks lines on screen
        assert status.startswith(f"not saved: {path} ") and status.endswith("podtui has not changed it"), status
        assert sim.api_key not in app.export_screenshot()
    assert path.read_bytes() == data
