"""Terminate after download, when the pulled source is a symlink: the pod ends terminated only once the folder the
link leads to is here, every file verified; a source that is refused never terminates it. By `podtui pull
--then-terminate --yes` (a real process) and by the TUI's "then terminate" (the app, driven in-process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.transfer.job import TransferJob
from tests.helpers.sim import GATEWAY_POD, pod_id, pod_workspace
from tests.helpers.transfer import run_all, tree

if TYPE_CHECKING:  # the UI loads only in the test that drives it
    from podtui.ui.app import PodtuiApp

REFUSED = ["dangling", "loop", "abs-inside", "out-inside", "pipe", "zero"]


def lay_out(ws: Path) -> Path:
    """The training layout: outputs -> runs/run-7; and, beside it, sources podtui refuses."""
    run = ws / "runs" / "run-7"
    (run / "ckpt").mkdir(parents=True)
    (run / "adapter_model.safetensors").write_bytes(os.urandom(400_000))
    (run / "ckpt" / "optimizer.pt").write_bytes(os.urandom(90_000))
    (ws / "outputs").symlink_to("runs/run-7")
    (ws / "dangling").symlink_to("runs/run-99")
    (ws / "loop").symlink_to("loop")
    (ws / "abs-inside").mkdir()
    (ws / "abs-inside" / "weights.bin").symlink_to(str(run / "adapter_model.safetensors"))  # absolute
    (ws / "out-inside").mkdir()
    (ws / "out-inside" / "weights.bin").symlink_to("../runs/run-7/adapter_model.safetensors")
    os.mkfifo(ws / "pipe")
    (ws / "zero").symlink_to("/dev/zero")
    return run


def pull(
    env: dict[str, str], source: str, down: Path
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, object]]]:
    r = subprocess.run(
        [sys.executable, "-m", "podtui", "pull", GATEWAY_POD, source, str(down), "--then-terminate", "--yes", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return r, [json.loads(line) for line in r.stdout.splitlines()]


def status(full_sim: Simulator, pid: str) -> str:
    return full_sim.world.pods[pid].status


def terminated(full_sim: Simulator, sim_api: V2Api, pid: str) -> bool:
    """Terminated in the simulated world, and so gone from GET /v2/pods at once: RunPod's DELETE is final
    (docs/runpod-facts.md#rest-v2)."""
    pod = full_sim.world.pods.get(pid)
    return (pod is None or pod.status == "TERMINATED") and all(p.id != pid for p in sim_api.fetch_snapshot().pods)


def test_cli_terminates_only_after_the_linked_folder_is_here(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    run = lay_out(pod_workspace(full_sim, sim_api, GATEWAY_POD))
    pid = pod_id(sim_api, GATEWAY_POD)
    down = tmp_path / "down"
    down.mkdir()
    for source in REFUSED:  # each refused at once, and the pod left running
        r, events = pull(full_cli_env, source, down)
        assert r.returncode == 1, (source, r.stderr)
        assert [e for e in events if e["event"] == "verified"] == [], (source, events)
        assert "terminating" not in r.stderr and status(full_sim, pid) == "RUNNING", source
        assert not list(down.iterdir()), (source, list(down.iterdir()))
    r, events = pull(full_cli_env, "outputs", down)
    assert r.returncode == 0, r.stderr
    assert events[-1]["event"] == "verified" and "terminating" in r.stderr
    assert not (down / "outputs").is_symlink() and tree(down / "outputs") == tree(run)
    assert terminated(full_sim, sim_api, pid)


async def test_the_tuis_then_terminate_follows_the_same_rule(
    sim_api: V2Api, full_sim: Simulator, tmp_path: Path, make_full_app: Callable[..., PodtuiApp]
) -> None:
    from tests.helpers.pilot import loaded, wait_until

    run = lay_out(pod_workspace(full_sim, sim_api, GATEWAY_POD))
    down = tmp_path / "down"
    down.mkdir()
    app = make_full_app(transfer_history=tmp_path / "data" / "transfers.json", transfer_work_dir=tmp_path / "work")
    pid = pod_id(sim_api, GATEWAY_POD)

    def job(source: str) -> TransferJob:
        return TransferJob(
            pid, "pull", source, str(down), pod_name=GATEWAY_POD, terminate_after=True, terminate_confirmed=True
        )

    async with app.run_test(size=(130, 34)) as pilot:
        await loaded(pilot, app)
        queue = app.transfers.queue()
        refused = [queue.add(job(source)) for source in REFUSED]
        await wait_until(pilot, lambda: queue.wait([j.id for j in refused], 0), 60)
        await pilot.pause()
        await pilot.pause()  # what the queue posted is handled: no terminate among it
        assert {(queue.get(j.id) or j).state for j in refused} == {"failed"}
        assert status(full_sim, pid) == "RUNNING"
        for j in refused:  # given up: they hold nothing back
            queue.remove(j.id)
        linked = queue.add(job("outputs"))
        await wait_until(pilot, lambda: status(full_sim, pid) == "TERMINATED", 60)
        assert terminated(full_sim, sim_api, pid)
        assert (queue.get(linked.id) or linked).state == "verified"
    assert not (down / "outputs").is_symlink() and tree(down / "outputs") == tree(run)


def test_a_verified_download_gone_since_holds_the_terminate_back(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., object], tmp_path: Path
) -> None:
    """The queue checks again that the download is here, as verified, before it says "terminate"."""
    from podtui.transfer.queue import TransferQueue

    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "a.bin").write_bytes(b"a" * 1000)
    (ws / "b.bin").write_bytes(b"b" * 1000)
    pid = pod_id(sim_api, GATEWAY_POD)
    ready: list[str] = []
    q = make_queue(on_terminate_ready=lambda p, name, confirmed: ready.append(p))
    assert isinstance(q, TransferQueue)
    (a,) = run_all(q, TransferJob(pid, "pull", "a.bin", str(tmp_path), terminate_after=True))
    assert ready == [pid]
    ready.clear()
    (tmp_path / "a.bin").unlink()  # the first download is gone
    (tmp_path / "a.bin").symlink_to(ws / "a.bin")  # and a link to the pod's copy stands in its place
    (b,) = run_all(q, TransferJob(pid, "pull", "b.bin", str(tmp_path), terminate_after=True))
    assert (a.state, b.state) == ("verified", "verified")
    assert q.wait(timeout_s=10) and ready == []
    assert any("no longer here" in line for line in (q.get(a.id) or a).log)
