"""The transfer strip (widgets/transfer_strip.py) with real transfers through the simulator: hidden while none is
under way, one line naming them (arrow, pod, name, percent, rate, "+N more") within 80 columns while they are,
hidden again once they end; a click opens the transfers screen."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.transfer.job import TransferJob
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.transfers import TransfersScreen
from podtui.ui.transfer_view import strip_line
from podtui.ui.widgets.transfer_strip import TransferStrip
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import GATEWAY_POD, pod_id, pod_workspace


class Holder(Screen[None]):
    """A screen with the strip at its foot, as the main screen has it."""

    def compose(self) -> ComposeResult:
        yield Static("the main screen", id="body")
        yield TransferStrip()


def line_of(strip: TransferStrip) -> str:
    return "".join(segment.text for segment in strip.render_line(0)).rstrip()


async def test_the_strip_shows_transfers_under_way_and_hides_after(
    runpodctl_app: Callable[[], PodtuiApp], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    names = ["adapter-model-final.safetensors", "optimizer-state-final.bin", "tokenizer.json"]
    for name in names:
        with (ws / name).open("wb") as f:
            f.truncate(4_000_000)  # sparse: nothing to store
    full_sim.relay.rate_bytes_per_s = 400_000  # ten seconds or so each; one runs at a time, the others wait
    app = runpodctl_app()
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await loaded(pilot, app)
            await app.push_screen(Holder())
            strip = app.screen.query_one(TransferStrip)
            await pilot.pause()
            assert not strip.display and strip.region.height == 0  # nothing under way: no line taken

            pid = pod_id(sim_api, GATEWAY_POD)
            queue = app.transfers.queue()
            jobs = [
                queue.add(TransferJob(pid, "pull", n, str(tmp_path), pod_name=GATEWAY_POD, route_choice="runpodctl"))
                for n in names
            ]
            await wait_until(pilot, lambda: strip.display and strip.region.height == 1)

            def moving() -> bool:
                line = line_of(strip)
                return "%" in line and "/s" in line

            await wait_until(pilot, moving, 30)
            line = line_of(strip)
            # the moving one first (one of the three: they run side by side), the others counted
            assert line.startswith(f"↓ {GATEWAY_POD} ") and any(f" {n} " in line for n in names)
            more = int(line.rsplit("  +", 1)[1].removesuffix(" more"))
            assert sum(f" {n} " in line for n in names) + more == len(names)
            assert cell_len(line) <= strip.content_region.width <= 80

            await pilot.click(TransferStrip)  # the whole list is a click away
            await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
            await pilot.press("escape")
            await wait_until(pilot, lambda: isinstance(app.screen, Holder))

            for job in jobs:
                queue.cancel(job.id)
            await wait_until(pilot, lambda: all((queue.get(j.id) or j).finished for j in jobs), 30)
            await wait_until(pilot, lambda: not strip.display)
            await pilot.pause()  # laid out again
            assert strip.region.height == 0
    finally:
        full_sim.relay.rate_bytes_per_s = None


def test_the_strip_line_fits_and_shows_names_as_they_are() -> None:
    """Names from outside are shown inert (their escapes visible), cut to leave room for the count; the finished
    transfers are not on it."""
    nasty = "run\x1b[2J\u202egpj.exe"
    jobs = [
        TransferJob("p1", "pull", f"outputs/{nasty}-{'x' * 40}", ".", pod_name="eval-a100", state="transferring"),
        TransferJob("p1", "push", "/data/train.jsonl", "data/", pod_name="eval-a100", state="queued"),
        TransferJob("p2", "hub", "meta-llama/Llama-3-8B", "/workspace", pod_name="data-prep", state="waiting_for_code"),
        TransferJob("p2", "pull", "done.bin", ".", pod_name="data-prep", state="verified"),
    ]
    jobs[0].total_bytes, jobs[0].done_bytes, jobs[0].rate_bytes_per_s = 100, 51, 2_000_000
    for width in (40, 78, 118, 198):
        line = strip_line(jobs, width).plain
        assert cell_len(line) <= width, (width, line)
        shown_name = "run\\x1b[2J<U+202E>gpj.exe" if width > 40 else "run\\x…"  # cut to leave room for the rest
        assert line.startswith(f"↓ eval-a100 {shown_name}") and "51% 2.0 MB/s" in line
        assert "\x1b" not in line and "done.bin" not in line
        shown = sum(name in line for name in ("train.jsonl", "Llama-3-8B")) + 1
        assert shown == 3 or line.endswith(f"+{3 - shown} more"), line
    assert strip_line(jobs[3:], 80).plain == ""
