"""The transfer pane, driven with keys against the simulator over real SSH: add a download and an upload through
the dialog, watch them verify, cancel and retry, open the log; plus snapshots of the pane and the dialog."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.transfer.job import TransferJob
from podtui.ui.app import PodtuiApp
from podtui.ui.path_completion import complete_local
from podtui.ui.screens.add_transfer import AddTransferScreen
from podtui.ui.screens.transfers import TransfersScreen
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import GATEWAY_POD, pod_workspace

SIZE = (130, 34)


@pytest.fixture
def transfer_app(make_full_app: Callable[..., PodtuiApp], tmp_path: Path) -> Callable[[], PodtuiApp]:
    return lambda: make_full_app(
        transfer_history=tmp_path / "data" / "transfers.json", transfer_work_dir=tmp_path / "work"
    )


async def select_pod(pilot: Pilot[None], app: PodtuiApp, name: str) -> None:
    await loaded(pilot, app)
    for _ in range(10):
        pod = app.navigator.selected_pod()
        if pod is not None and pod.name == name:
            return
        await pilot.press("j")
    raise AssertionError(f"{name} not in the list")


async def type_into(pilot: Pilot[None], app: PodtuiApp, selector: str, text: str) -> None:
    box = app.screen.query_one(selector, Input)
    box.value = ""
    box.focus()
    await pilot.press(*[{" ": "space", "/": "slash", ".": "full_stop"}.get(c, c) for c in text])


def state_of(app: PodtuiApp, label: str) -> str | None:
    jobs = [j for j in app.transfers.queue().jobs() if j.label == label]
    return jobs[-1].state if jobs else None


async def test_add_a_download_and_an_upload_through_the_dialog(
    transfer_app: Callable[[], PodtuiApp], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "adapter.safetensors").write_bytes(os.urandom(300_000))
    mine = tmp_path / "notes.txt"
    mine.write_text("hyperparameters\n")
    down = tmp_path / "down"
    down.mkdir()
    app = transfer_app()
    async with app.run_test(size=SIZE) as pilot:
        await select_pod(pilot, app, GATEWAY_POD)
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, AddTransferScreen))
        await type_into(pilot, app, "#remote", "adapter.safetensors")
        await type_into(pilot, app, "#local", str(down))
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        await wait_until(pilot, lambda: state_of(app, "adapter.safetensors") == "verified", 30)
        assert (down / "adapter.safetensors").read_bytes() == (ws / "adapter.safetensors").read_bytes()
        table = app.screen.query_one(DataTable)
        await wait_until(pilot, lambda: str(table.get_row_at(0)[7]) == "verified")  # the message follows the queue
        row = [str(c) for c in table.get_row_at(0)]
        assert row[0] == "adapter.safetensors" and row[2] == "↓" and "100%" in row[3] and row[7] == "verified"
        assert row[8].startswith("sha256 ") and "via console" in str(app.screen.query_one("#detail", Static).render())

        await pilot.press("a")  # an upload, from the pane
        await wait_until(pilot, lambda: isinstance(app.screen, AddTransferScreen))
        await pilot.press("shift+tab", "down", "enter")  # from the pod path back to the direction: upload
        await type_into(pilot, app, "#local", str(mine))
        await type_into(pilot, app, "#remote", "")
        await pilot.press("enter")
        await wait_until(pilot, lambda: state_of(app, "notes.txt") == "verified", 30)
        assert (ws / "notes.txt").read_text() == "hyperparameters\n"
        await pilot.press("l")  # the log of the highlighted transfer
        log = app.screen.query_one("#log", Static)
        assert log.has_class("-open") and "sha256" in str(log.render())


async def test_cancel_retry_and_remove_from_the_pane(
    transfer_app: Callable[[], PodtuiApp], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "big.bin").write_bytes(os.urandom(25_000_000))
    app = transfer_app()
    async with app.run_test(size=SIZE) as pilot:
        await select_pod(pilot, app, GATEWAY_POD)
        pod = app.navigator.selected_pod()
        assert pod is not None
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        assert app.screen.query_one("#empty").has_class("-shown")
        job = app.transfers.queue().add(TransferJob(pod.id, "pull", "big.bin", str(tmp_path), pod_name=pod.name))
        await wait_until(pilot, lambda: (app.transfers.queue().get(job.id) or job).done_bytes > 0, 30)
        await pilot.press("x")
        await wait_until(pilot, lambda: state_of(app, "big.bin") == "cancelled", 30)
        await pilot.press("d")  # a finished transfer leaves the list; nothing on disk changes
        await wait_until(pilot, lambda: app.screen.query_one(DataTable).row_count == 0)
        job = app.transfers.queue().add(TransferJob(pod.id, "pull", "missing.bin", str(tmp_path), pod_name=pod.name))
        await wait_until(pilot, lambda: "does not exist" in str(app.screen.query_one("#detail", Static).render()), 30)
        assert state_of(app, "missing.bin") == "failed"
        (ws / "missing.bin").write_text("found\n")
        await pilot.press("r")
        await wait_until(pilot, lambda: state_of(app, "missing.bin") == "verified", 30)
        assert (tmp_path / "missing.bin").read_text() == "found\n"


def test_local_path_completion(tmp_path: Path) -> None:
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "config.yaml").write_text("")
    (tmp_path / ".cache").mkdir()
    assert complete_local(str(tmp_path / "ch")) == str(tmp_path / "checkpoints") + "/"
    assert complete_local(str(tmp_path / "co")) == str(tmp_path / "config.yaml")
    assert complete_local(str(tmp_path / ".c")) == str(tmp_path / ".cache") + "/"
    assert complete_local(str(tmp_path / "zz")) is None
    assert complete_local(str(tmp_path / "nowhere" / "x")) is None


def showcase() -> list[TransferJob]:
    """One transfer in each state, as the pane shows them."""
    jobs = [
        TransferJob(
            "q7x2m9fk4r8t1a",
            "pull",
            "outputs/adapter.safetensors",
            "~/models",
            pod_name="llama-lora-3090",
            state="verified",
            route="sftp",
            total_bytes=335_544_320,
            done_bytes=335_544_320,
            checksum="9f2c4e1ab37d0c55e2a1",
            final_path="~/models/adapter.safetensors",
        ),
        TransferJob(
            "q7x2m9fk4r8t1a",
            "pull",
            "checkpoints/step-4000/",
            "~/models",
            pod_name="llama-lora-3090",
            state="transferring",
            route="runpodctl",
            folder=True,
            name="step-4000/",
            total_bytes=2_400_000_000,
            done_bytes=1_536_000_000,
            rate_bytes_per_s=48_000_000,
            eta_s=18,
            terminate_after=True,
        ),
        TransferJob(
            "b3n8v1c6z0p5we",
            "push",
            "~/data/eval.jsonl",
            "data/",
            pod_name="eval-a100",
            state="waiting_for_code",
            route="runpodctl",
            total_bytes=84_000_000,
            code="8338-galileo-collect",
        ),
        TransferJob(
            "b3n8v1c6z0p5we",
            "push",
            "~/data/train.jsonl",
            "data/",
            pod_name="eval-a100",
            state="verifying",
            route="console",
            total_bytes=12_500_000,
            done_bytes=12_500_000,
        ),
        TransferJob("w9e3r5t7y1u2io", "pull", "logs/run.log", ".", pod_name="data-prep-a5000", state="queued"),
        TransferJob(
            "w9e3r5t7y1u2io",
            "pull",
            "shards/part-7.parquet",
            ".",
            pod_name="data-prep-a5000",
            state="failed",
            route="runpodctl",
            error_kind="room_not_ready",
            error="runpodctl on this machine: croc: receive: room not ready (after 4 attempts)",
        ),
        TransferJob(
            "w9e3r5t7y1u2io",
            "push",
            "~/scripts/prep.py",
            ".",
            pod_name="data-prep-a5000",
            state="cancelled",
            route="console",
            total_bytes=9_800,
            done_bytes=4_096,
        ),
    ]
    for i, job in enumerate(jobs):
        job.id = f"job{i}"
    return jobs


def showcase_shown(app: PodtuiApp) -> Callable[[Pilot[None]], Awaitable[None]]:
    """The transfers screen with the showcase, the failed one highlighted."""

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        screen = app.screen
        assert isinstance(screen, TransfersScreen)
        for job in showcase():
            screen.show_job(job)
        await pilot.press("down", "down", "down", "down", "down")  # the failed one: its error shows under the table
        await pilot.pause()

    return ready


def test_transfer_pane_snapshot(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    assert snap_compare(app, terminal_size=SIZE, run_before=showcase_shown(app))


def test_transfer_pane_snapshot_at_80x24(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    """Within 80 columns: the columns that fit (no sideways scrolling), the size, rate, ETA and checksum that do not
    said under the table for the highlighted transfer."""
    app = make_app()
    assert snap_compare(app, terminal_size=(80, 24), run_before=showcase_shown(app))


def test_add_transfer_dialog_snapshot(snap_compare: Any, make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, AddTransferScreen))
        await pilot.press(*"outputs", "slash")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(130, 44), run_before=ready)


async def test_queued_transfers_from_an_earlier_run_go_on(
    transfer_app: Callable[[], PodtuiApp], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    from podtui.transfer.history import TransferHistory

    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "left.txt").write_text("from the last run\n")
    pod = sim_api.fetch_snapshot().find(GATEWAY_POD)
    assert pod is not None
    queued = TransferJob(pod.id, "pull", "left.txt", str(tmp_path), pod_name=pod.name)
    running = TransferJob(pod.id, "pull", "big.bin", str(tmp_path), pod_name=pod.name, state="transferring")
    TransferHistory(tmp_path / "data" / "transfers.json").save([queued, running])
    app = transfer_app()
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)  # nobody opens the pane: the queue resumes by itself
        await wait_until(pilot, lambda: state_of(app, "left.txt") == "verified", 30)
        assert (tmp_path / "left.txt").read_text() == "from the last run\n"
        assert state_of(app, "big.bin") == "failed"
        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        assert "1 verified · 1 failed" in str(app.screen.query_one("#title", Static).render())


async def test_pick_the_pod_path_from_a_listing(
    transfer_app: Callable[[], PodtuiApp], full_sim: Simulator, sim_api: V2Api
) -> None:
    from textual.widgets import OptionList

    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "outputs" / "ckpt").mkdir(parents=True)
    (ws / "outputs" / "ckpt" / "adapter.safetensors").write_bytes(b"w")
    (ws / "it's my file.bin").write_bytes(b"q")
    app = transfer_app()
    async with app.run_test(size=(130, 44)) as pilot:
        await select_pod(pilot, app, GATEWAY_POD)
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, AddTransferScreen))
        await pilot.press("ctrl+l")  # lists the folder the pod's shell starts in
        listing = app.screen.query_one("#listing", OptionList)
        await wait_until(pilot, lambda: listing.option_count > 1 and listing.has_focus, 15)
        names = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert "outputs/" in names and "README-demo.txt" in names and names[0] == "../"
        assert "it's my file.bin" in names  # as it is, not shell-quoted as ls writes to a terminal
        assert listing.highlighted == 1  # the first entry, not "../"
        for _ in range(names.index("outputs/") - 1):
            await pilot.press("down")
        await pilot.press("enter")  # a folder opens
        await wait_until(pilot, lambda: str(listing.get_option_at_index(1).prompt) == "ckpt/", 15)
        await pilot.press("enter")
        await wait_until(
            pilot,
            lambda: (
                [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
                == ["../", "adapter.safetensors"]
            ),
            15,
        )
        await pilot.press("enter")  # a file is picked
        remote = app.screen.query_one("#remote", Input)
        assert remote.value == "outputs/ckpt/adapter.safetensors" and remote.has_focus
        assert not listing.has_class("-shown")


async def test_then_terminate_asks_once_the_download_is_verified(
    transfer_app: Callable[[], PodtuiApp], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    from podtui.ui.screens.terminate import TerminateScreen

    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "final.ckpt").write_bytes(b"trained")
    app = transfer_app()
    async with app.run_test(size=SIZE) as pilot:
        await select_pod(pilot, app, GATEWAY_POD)
        pod = app.navigator.selected_pod()
        assert pod is not None
        app.transfers.queue().add(
            TransferJob(pod.id, "pull", "final.ckpt", str(tmp_path), pod_name=pod.name, terminate_after=True)
        )
        await wait_until(pilot, lambda: isinstance(app.screen, TerminateScreen), 30)
        assert (tmp_path / "final.ckpt").read_bytes() == b"trained"  # verified before anything is asked
        await pilot.press(*GATEWAY_POD.replace("-", " "))  # a wrong name: nothing happens
        assert app.screen.query_one("#confirm").disabled
        await pilot.press("escape")
        assert full_sim.world.pods[pod.id].status == "RUNNING"
        app.transfers.queue().add(
            TransferJob(
                pod.id,
                "pull",
                "final.ckpt",
                str(tmp_path / "again"),
                pod_name=pod.name,
                terminate_after=True,
                terminate_confirmed=True,
            )
        )
        await wait_until(pilot, lambda: full_sim.world.pods[pod.id].status == "TERMINATED", 30)  # as pre-agreed


async def test_read_only_refuses_uploads_but_not_downloads(
    make_full_app: Callable[..., PodtuiApp], tmp_path: Path
) -> None:
    app = make_full_app(transfer_work_dir=tmp_path / "work", read_only=True)
    async with app.run_test(size=(130, 44)) as pilot:
        await select_pod(pilot, app, GATEWAY_POD)
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, AddTransferScreen))
        await pilot.press("shift+tab", "down", "enter")  # upload
        await type_into(pilot, app, "#local", "/etc/hostname")
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, AddTransferScreen)
        assert "read-only mode" in str(app.screen.query_one("#error", Static).render())
        assert not app.transfers.queue().jobs()
