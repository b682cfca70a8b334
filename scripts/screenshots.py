"""Render screenshots/*.svg from the demo, so the README's pictures always show the real app.

The demo world runs on a frozen clock at a fixed instant, so re-running this changes nothing unless
the UI did. Usage: python scripts/screenshots.py [NAME ...]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from podtui.console.widget import TerminalView
from podtui.core.api import V2Api
from podtui.core.hf.repo import DEFAULT_ENDPOINT
from podtui.core.hf.token import found
from podtui.core.services import Services
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.keys import generate_dedicated_key
from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, demo_world
from podtui.sim.demo_team import team_world
from podtui.sim.relay import install_runpodctl
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.build import build_app

OUT = Path(__file__).resolve().parent.parent / "screenshots"
SIZE = (120, 32)  # a tmux split: the list with the selected pod's pane under it
SMALL = (80, 24)  # the smallest supported: every dialog is shown here
WIDE = (200, 50)  # the pane beside the list

Steps = Callable[[Pilot[None], SimApiServer, "Simulator | None"], Awaitable[None]]


async def _nothing(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    pass


async def _sorted_filtered(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    await pilot.press("o", "o", "o", "o", "O", "slash", *"running", "enter")


async def _details(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    await pilot.press("j", "j", "enter")


async def _terminate(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    await pilot.press("j", "j", "T")


async def _stale(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    sim.faults.add("status", 502)
    sim.world.clock.advance(95)
    app = pilot.app
    assert isinstance(app, PodtuiApp)
    done = app.poller.done
    app.poll_now()
    while app.poller.done == done:
        await pilot.pause(0.05)


async def _idle(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """Twenty simulated minutes with eval-a100 at 0% GPU: the ticker has moved and the pod is marked idle."""
    app = pilot.app
    assert isinstance(app, PodtuiApp)
    for _ in range(4):
        sim.world.clock.advance(300)
        done = app.poller.done
        app.poll_now()
        while app.poller.done == done:
            await pilot.pause(0.05)
    await pilot.press("j")


async def _light(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    pilot.app.theme = "textual-light"  # what the palette's "Theme" does
    await pilot.pause()


async def _help(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    await pilot.press("question_mark")


async def _console(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """A console on a demo pod (real bash in the simulator's sandbox), running the demo's colour showcase: in the
    pod's pane from 100x30, on the consoles' own screen below."""
    view = await _console_prompt(pilot)
    await pilot.press(*"clear", "semicolon", "space", *"bash", "space", *"colors.sh", "enter")
    while not _prompt_at(view, 8):
        await pilot.pause(0.05)


async def _console_prompt(pilot: Pilot[None]) -> TerminalView:
    app = pilot.app
    await pilot.press("c")
    view = None
    while view is None or not _prompt_at(view, 0):
        await pilot.pause(0.05)
        view = app.focused if isinstance(app.focused, TerminalView) else None
    return view


def _prompt_at(view: TerminalView, first_row: int) -> bool:
    return any(line.endswith("/workspace#") for line in view.link.emulator.screen_lines()[first_row:])


async def _copy(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    await pilot.press("j", "y")


async def _confirm_stop(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    await pilot.press("j", "j", "s")


async def _countdown(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """In-app autostop's countdown on an idle pod, its second hand held still for the picture."""
    from podtui.ui.screens.countdown import CountdownScreen

    app = pilot.app
    assert isinstance(app, PodtuiApp) and app.feed.snapshot is not None
    app.pod_actions.count_down(app.feed.snapshot.find("eval-a100"), 1260.0, 1.64)
    while not isinstance(app.screen, CountdownScreen):
        await pilot.pause(0.05)
    if app.screen.ticking is not None:
        app.screen.ticking.stop()


async def _save_as(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """Saving a console's output: the console's screen (at 80x24, one screen at a time), then S."""
    await _console_prompt(pilot)
    await pilot.press("ctrl+right_square_bracket", "S")


async def _add_transfer(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    await pilot.press("j", "u")
    await pilot.pause(0.3)
    await pilot.press(*"outputs", "slash", *"adapter", "full_stop", *"safetensors")


async def _transfers(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """Real transfers in the demo: runpodctl through the simulator's relay (slowed to show a bar moving), the
    console path, a failure; each verified by checksum on both ends."""
    from podtui.transfer.job import TransferJob

    assert full is not None
    app = pilot.app
    assert isinstance(app, PodtuiApp)
    pods = {p.name: p for p in full.world.pods.values()}
    eval_ws = full.gateway.machine(pods["eval-a100"]).workspace
    (eval_ws / "outputs").mkdir(exist_ok=True)
    (eval_ws / "outputs" / "eval-results.json").write_text('{"accuracy": 0.874, "f1": 0.861}\n')
    with (eval_ws / "outputs" / "adapter.safetensors").open("wb") as f:
        f.truncate(400_000_000)  # sparse: big enough to watch, nothing to store
    local = Path(app.services.transfer_work_dir or ".").parent / "train.jsonl"
    local.write_text('{"prompt": "hi", "completion": "hello"}\n' * 2000)
    full.relay.rate_bytes_per_s = 25_000_000
    q = app.transfers.queue()
    eval_id = pods["eval-a100"].id
    down = str(local.parent)
    first = q.add(TransferJob(eval_id, "pull", "outputs/eval-results.json", down, pod_name="eval-a100"))
    q.wait([first.id], 60)
    failed = q.add(TransferJob(eval_id, "pull", "outputs/adapter-final.safetensors", down, pod_name="eval-a100"))
    q.wait([failed.id], 60)
    big = q.add(
        TransferJob(eval_id, "pull", "outputs/adapter.safetensors", down, pod_name="eval-a100", terminate_after=True)
    )
    q.add(TransferJob(eval_id, "push", str(local), "data/", pod_name="eval-a100", route_choice="console"))
    q.add(TransferJob(pods["data-prep-a5000"].id, "pull", "README-demo.txt", down, pod_name="data-prep-a5000"))
    await pilot.press("t")
    while (q.get(big.id) or big).percent is None or (q.get(big.id) or big).percent < 30:  # type: ignore[operator]
        await pilot.pause(0.05)
    await pilot.press("down", "down")


async def _jobs(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """Real detached jobs on the demo's training pod, started as the new-job form starts them: one done, one
    failed, one still running; then its Jobs tab."""
    from podtui.core.jobs.job import JobSpec, Pull

    assert full is not None
    app = pilot.app
    assert isinstance(app, PodtuiApp)
    pod = next(p for p in app.pods() if p.name == "llama-lora-3090")
    specs = [
        JobSpec("python -c 'print(\"tokenized 48,211 samples\")'", name="tokenize"),
        JobSpec("python -c 'import sys; sys.exit(\"CUDA out of memory at batch 64\")'", name="lora-r64"),
        JobSpec(
            "for e in 1 2 3; do echo epoch $e; sleep 600; done",
            name="lora-r16",
            then="stop",
            pulls=(Pull("outputs/adapter"),),
        ),
    ]
    for spec in specs:
        await asyncio.to_thread(app.jobs.start, pod, spec)
        await asyncio.sleep(1.1)  # one second apart: each its own start time
    await pilot.press("j", "j", "J")  # llama-lora-3090, the list's third pod
    while not app.jobs.listing(pod.id).jobs:
        await pilot.pause(0.1)
    await pilot.pause(0.3)


async def _sync(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """A real sync of a small project to the demo's training pod (rsync over its direct SSH), then its Sync tab."""
    from podtui.transfer.sync.state import SyncSpec

    assert full is not None
    app = pilot.app
    assert isinstance(app, PodtuiApp)
    project = Path(app.services.transfer_work_dir or ".").parent / "lora-project"
    (project / "configs").mkdir(parents=True, exist_ok=True)
    (project / ".gitignore").write_text("wandb/\n*.pyc\n")
    (project / "train.py").write_text("import torch\n" * 40)
    (project / "configs" / "lora.yaml").write_text("r: 16\nalpha: 32\nlr: 3.0e-4\n")
    (project / "wandb").mkdir(exist_ok=True)
    (project / "wandb" / "run.log").write_text("ignored\n")
    pod = next(p for p in app.pods() if p.name == "llama-lora-3090")
    assert app.syncs.start(pod, SyncSpec(pod.id, project, "lora-project")) is None
    while app.syncs.busy(pod.id):
        await pilot.pause(0.1)
    await pilot.press("j", "j", "Y")  # llama-lora-3090, the list's third pod
    await pilot.pause(0.5)


async def _sync_form(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """After that sync, the form filled in with it: a dry run over rsync chosen, and what it would do said."""
    from textual.widgets import Checkbox, Select

    from podtui.ui.screens.sync_form import SyncFormScreen

    await _sync(pilot, sim, full)
    await pilot.press("n")
    while not isinstance(pilot.app.screen, SyncFormScreen):
        await pilot.pause(0.05)
    form = pilot.app.screen
    form.query_one("#dry-run", Checkbox).value = True
    form.query_one("#via", Select).value = "rsync"
    await pilot.pause(0.5)


async def _keys(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    await pilot.press("K")
    await pilot.pause(0.5)


async def _doctor(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """The doctor on the demo's broken image: transformers 5 on torch 2.1, a nearly full volume."""
    from podtui.ui.screens.doctor import DoctorScreen

    app = pilot.app
    assert isinstance(app, PodtuiApp) and app.feed.snapshot is not None
    app.navigator.open_doctor(app.feed.snapshot.find("data-prep-a5000"))
    while not (isinstance(app.screen, DoctorScreen) and app.screen.report is not None):
        await pilot.pause(0.05)


async def _gpus(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """The GPU advisor for a 7B LoRA: the estimate, the cheapest fits, and why."""
    from podtui.ui.screens.gpus import GpusScreen

    await pilot.press("P")
    while not isinstance(pilot.app.screen, GpusScreen):
        await pilot.pause(0.05)
    await pilot.press("m", "ctrl+a", *"7B", "tab")
    await pilot.pause(0.8)


async def _create_pod(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """The create form with the cost shown before anything is created."""
    from podtui.ui.screens.create_pod import CreatePodScreen

    await pilot.press("n")
    while not isinstance(pilot.app.screen, CreatePodScreen):
        await pilot.pause(0.05)
    await pilot.pause(0.8)


async def _hf_check(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """A gated repo whose license the demo user has not accepted: which failure it is, and the fix."""
    from podtui.ui.screens.hf_check import HfCheckScreen

    app = pilot.app
    assert isinstance(app, PodtuiApp)
    await pilot.press("H")
    while not isinstance(app.screen, HfCheckScreen):
        await pilot.pause(0.05)
    await pilot.press(*"podtui-sim/gemma-mini", "enter")
    while app.screen.report is None:  # type: ignore[attr-defined]
        await pilot.pause(0.05)


async def _logs(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """L on the training pod: its log live, in the pane's Logs tab (or full screen below 100x30)."""
    app = pilot.app
    assert isinstance(app, PodtuiApp)
    await pilot.press("j", "j", "L")
    sim.world.clock.advance(10)  # two training steps stream in live
    for _ in range(100):
        await pilot.pause(0.05)
        if "live" in str(app.screen.query_one("#log-state").render()):
            break


async def _services(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """S on the training pod: its ports and links; with the whole simulator, 8888 forwarded here."""
    app = pilot.app
    assert isinstance(app, PodtuiApp)
    await pilot.press("j", "j", "S")
    if full is not None:
        await pilot.press("f")
        for _ in range(200):
            await pilot.pause(0.05)
            if any(f.state == "listening" for f in app.forwards.of(sim.world.pods["q7x2m9fk4r8t1a"].id)):
                break
        app.clear_notifications()


async def _volumes(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """v: the account's network volumes, what each costs a month, and the pods using them."""
    from podtui.ui.screens.volumes import VolumesScreen

    await pilot.press("v")
    while not (isinstance(pilot.app.screen, VolumesScreen) and pilot.app.screen.volumes is not None):
        await pilot.pause(0.05)
    await pilot.pause(0.3)


async def _spend(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """$: what was spent over the last 7 days, per day and by pod, from RunPod's billing, against the ledger."""
    from podtui.ui.screens.spend import SpendScreen

    await pilot.press("dollar_sign")
    while not (isinstance(pilot.app.screen, SpendScreen) and pilot.app.screen.report is not None):
        await pilot.pause(0.05)
    screen = pilot.app.screen
    await pilot.press("w")
    while screen.report is None or screen.report.window.days != 7 or screen.loading:
        await pilot.pause(0.05)
    await pilot.pause(0.3)


async def _accounts(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """The palette's "Accounts": every profile's pods, burn, balance and runway, each asked with its own key."""
    from podtui.ui.screens.accounts import AccountsScreen

    app = pilot.app
    assert isinstance(app, PodtuiApp)
    app.open_screen(AccountsScreen(), ("accounts",))
    while not (isinstance(app.screen, AccountsScreen) and all(r is not None for r in app.screen.rows.values())):
        await pilot.pause(0.05)
    await pilot.pause(0.3)


async def _templates(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """m: the account's templates (p for RunPod's public ones)."""
    from podtui.ui.screens.templates import TemplatesScreen

    await pilot.press("m")
    while not (isinstance(pilot.app.screen, TemplatesScreen) and pilot.app.screen.templates):
        await pilot.pause(0.05)
    await pilot.pause(0.3)


async def _create_scarce(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """The create form on a network volume: the GPUs free in its data centre, a second choice, stock, the cost."""
    from textual.widgets import Select

    from podtui.core.gpu.catalogue import Cloud
    from podtui.ui.screens.create_pod import CreatePodScreen

    await pilot.press("n")
    while not isinstance(pilot.app.screen, CreatePodScreen):
        await pilot.pause(0.05)
    app, form = pilot.app, pilot.app.screen
    assert isinstance(app, PodtuiApp) and isinstance(form, CreatePodScreen)
    while not (form.catalogue is not None and form.templates and form.volumes):
        await pilot.pause(0.05)
    volumes = list(form.volumes.values())
    volume = next((v for v in volumes if not v.users(app.pods())), volumes[0])  # one no pod uses
    form.query_one("#netvol", Select).value = volume.id
    await pilot.pause(0.3)
    free = [g.id for g in form.catalogue.types if g.stock_in(Cloud.COMMUNITY, 1, volume.data_centre).available]
    if len(free) > 1:
        form.query_one("#gpu", Select).value = free[0]
        await pilot.pause(0.1)
        form.query_one("#gpu2", Select).value = free[1]
    for _ in range(100):
        await pilot.pause(0.05)
        if "Tries in order" in str(form.query_one("#review").render()):
            break
    await pilot.pause(0.3)


async def _bulk_terminate(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    """a marks every pod shown, T terminates them: each one's cost, what survives, the number to type."""
    from podtui.ui.screens.bulk_action import BulkActionScreen

    await pilot.press("a", "T")
    while not isinstance(pilot.app.screen, BulkActionScreen):
        await pilot.pause(0.05)
    await pilot.pause(0.3)


async def _welcome(pilot: Pilot[None], sim: SimApiServer, full: Simulator | None) -> None:
    app = pilot.app
    assert isinstance(app, PodtuiApp)
    app.navigator.open_welcome()


SHOTS: list[tuple[str, Steps, tuple[int, int]]] = [
    ("pod-list", _nothing, SIZE),
    ("pod-list-80x24", _nothing, SMALL),
    ("pod-list-200x50", _nothing, WIDE),
    ("pod-list-sorted-filtered", _sorted_filtered, SIZE),
    ("pod-list-light", _light, SIZE),
    ("pane-console", _console, SIZE),
    ("pane-logs", _logs, SIZE),
    ("logs", _logs, SMALL),
    ("pane-services", _services, SIZE),
    ("services-forwarded", _services, WIDE),
    ("pod-detail", _details, (96, 44)),  # the details screen: a terminal under 100x30 wide or high
    ("terminate-confirm", _terminate, SMALL),
    ("stop-confirm", _confirm_stop, SMALL),
    ("stale-data", _stale, SIZE),
    ("idle-pod", _idle, SIZE),
    ("countdown", _countdown, SMALL),
    ("help", _help, SMALL),
    ("copy", _copy, SMALL),
    ("ssh-key", _keys, SMALL),
    ("console", _console, SMALL),
    ("save-as", _save_as, SMALL),
    ("transfers", _transfers, SIZE),
    ("jobs", _jobs, SIZE),
    ("sync", _sync, SIZE),
    ("sync-form", _sync_form, SIZE),
    ("add-transfer", _add_transfer, SMALL),
    ("doctor", _doctor, SMALL),
    ("gpus", _gpus, SMALL),
    ("create-pod", _create_pod, SMALL),
    ("create-pod-scarce", _create_scarce, WIDE),
    ("volumes", _volumes, SIZE),
    ("spend", _spend, SIZE),
    ("spend-narrow", _spend, SMALL),
    ("accounts", _accounts, SIZE),
    ("templates", _templates, SMALL),
    ("bulk-terminate", _bulk_terminate, SMALL),
    ("hf-check", _hf_check, SMALL),
    ("welcome", _welcome, SMALL),
]
PROFILED = {"accounts"}  # shot with the demo's two profiles
NEEDS_SSH = {
    "console",
    "pane-console",
    "save-as",
    "transfers",
    "jobs",
    "sync",
    "sync-form",
    "doctor",
    "hf-check",
    "services-forwarded",
}


async def render(name: str, steps: Steps, size: tuple[int, int]) -> Path:
    clock = SimClock(start=SCREENSHOT_EPOCH, frozen=True)
    world = demo_world(clock, boot_s=30.0)
    with tempfile.TemporaryDirectory(prefix="podtui-shots-") as tmp:
        root = Path(tmp)
        if name in NEEDS_SSH:  # the whole simulator: API, gateway, pods with real shells
            key = generate_dedicated_key(root / "demo_key", comment="podtui-demo")
            world.pub_key = key.public_line + " podtui-demo"
            full: Simulator | None = Simulator(world, root=root / "sim").start()
            assert full is not None
            sim, stop = full.api, full.stop
            runpodctl = str(install_runpodctl(root / "bin", full.relay.address))
            settings = SshSettings(
                known_hosts=root / "known_hosts",
                gateway=full.gateway.address,
                key_path=key.path,
                use_agent=False,
                search_home=False,
            )
        else:
            world.gateway_address = ("ssh.runpod.io", 22)  # the pods' ssh.proxy as RunPod's (nothing connects)
            sim = SimApiServer(world).start()
            full, stop, runpodctl = None, sim.stop, ""
            settings = SshSettings(known_hosts=root / "known_hosts")
        try:
            return await _shoot(name, steps, size, sim, settings, full, runpodctl, root)
        finally:
            stop()


async def _shoot(
    name: str,
    steps: Steps,
    size: tuple[int, int],
    sim: SimApiServer,
    settings: SshSettings,
    full: Simulator | None,
    runpodctl: str,
    root: Path,
) -> Path:
    clock = sim.world.clock
    api = V2Api(sim.api_key, sim.url, clock=clock.now)
    profiled: dict[str, Any] = {}
    if name in PROFILED:  # the demo's two accounts, main and team, on one address as in `podtui --demo`
        team = sim.serve_account(team_world(clock))
        keys = {"main": sim, "team": team}
        profiled = {
            "profile": "main",
            "profiles": dict.fromkeys(keys, "the demo's simulated account"),
            "profile_api": lambda p: V2Api(keys[p].api_key, keys[p].url, clock=clock.now),
        }
    hub = full.hub if full is not None else None
    services = Services(
        api,
        demo=True,
        clock=clock.now,
        key_path=lambda: Path("/home/you/.ssh/id_ed25519_runpod"),
        ssh_settings=lambda: settings,
        transfer_work_dir=root / "work",
        runpodctl=lambda: runpodctl or None,
        hf_endpoint=lambda: hub.endpoint if hub else DEFAULT_ENDPOINT,
        hf_token=lambda: found(hub.token("read"), "demo") if hub else None,
        save_key=lambda value: Path("/home/you/.config/podtui/config.toml"),
        **profiled,
    )  # nothing is saved
    app = build_app(services, poll_interval_s=3600)
    home = os.environ.get("HOME")
    os.environ["HOME"] = str(root)  # a folder made for the shot is shown as ~/…, the same in every run
    try:
        async with app.run_test(size=size) as pilot:
            while app.feed.snapshot is None:
                await pilot.pause(0.05)
            await pilot.pause()
            await steps(pilot, sim, full)
            await pilot.pause(0.2)
            path = OUT / f"{name}.svg"
            path.write_text(app.export_screenshot(title=f"podtui --demo · {name}"), encoding="utf-8")
            return path
    finally:
        if home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = home


async def main(only: list[str]) -> None:
    OUT.mkdir(exist_ok=True)
    unknown = set(only) - {name for name, _, _ in SHOTS}
    if unknown:
        raise SystemExit(f"no such screenshot: {', '.join(sorted(unknown))}")
    for name, steps, size in SHOTS:
        if not only or name in only:
            print(f"wrote {await render(name, steps, size)}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))  # names: render only those
