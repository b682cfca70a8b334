"""Transfers through the queue against the simulator: both directions, each way, folders, verified by checksum
on both ends; existing files kept; cancel; a restart in the middle of the queue; terminate after download."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.keys import generate_dedicated_key
from podtui.sim.simulator import Simulator
from podtui.transfer.checksum import local_digest
from podtui.transfer.job import TransferJob
from podtui.transfer.runner import TransferContext
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, needs_sshd, pod_id, pod_workspace
from tests.helpers.transfer import MakeQueue, no_part_files, run_all


@pytest.mark.parametrize(
    ("pod", "via"),
    [
        (GATEWAY_POD, "console"),
        pytest.param(DIRECT_POD, "sftp", marks=needs_sshd),
    ],
)
def test_push_and_pull_verified(
    pod: str, via: str, make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, pod)
    local = tmp_path / "up" / "adapter.safetensors"
    local.parent.mkdir()
    local.write_bytes(os.urandom(900_000))
    (ws / "ckpt.pt").write_bytes(os.urandom(1_300_000))
    down = tmp_path / "down"
    down.mkdir()
    pid = pod_id(sim_api, pod)
    changes: list[TransferJob] = []
    q = make_queue(on_change=changes.append)
    push, pull = run_all(
        q,
        TransferJob(pid, "push", str(local), "", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "pull", "ckpt.pt", str(down), route_choice=via, algorithm="md5"),
    )  # type: ignore[arg-type]
    assert (push.state, push.route, push.error) == ("verified", via, None)
    assert (ws / "adapter.safetensors").read_bytes() == local.read_bytes()
    assert push.checksum == local_digest(local)
    assert (pull.state, pull.route) == ("verified", via)
    assert (down / "ckpt.pt").read_bytes() == (ws / "ckpt.pt").read_bytes()
    assert pull.checksum == local_digest(down / "ckpt.pt", "md5") and pull.final_path == str(down / "ckpt.pt")
    seen = [c.state for c in changes if c.id == pull.id]
    assert seen[0] == "queued" and "transferring" in seen and "verifying" in seen and seen[-1] == "verified"
    assert any(c.done_bytes == 1_300_000 for c in changes if c.id == pull.id)
    assert local.exists() and (ws / "ckpt.pt").exists()  # the source is never touched
    assert no_part_files(ws, down)


def test_folders_travel_as_one_archive(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    src = tmp_path / "dataset"
    (src / "shards").mkdir(parents=True)
    (src / "meta.json").write_text('{"rows": 3}')
    (src / "shards" / "0.bin").write_bytes(os.urandom(50_000))
    remote = ws / "outputs"
    (remote / "ckpt").mkdir(parents=True)
    (remote / "ckpt" / "adapter.bin").write_bytes(os.urandom(70_000))
    (remote / "log.txt").write_text("epoch 3 loss 0.41\n")
    down = tmp_path / "down"
    down.mkdir()
    pid = pod_id(sim_api, GATEWAY_POD)
    push, pull = run_all(
        make_queue(), TransferJob(pid, "push", str(src), "./"), TransferJob(pid, "pull", "outputs/", str(down))
    )
    assert push.state == "verified" and push.folder and push.final_path == "./dataset"
    assert (ws / "dataset" / "shards" / "0.bin").read_bytes() == (src / "shards" / "0.bin").read_bytes()
    assert (ws / "dataset" / "meta.json").read_text() == '{"rows": 3}'
    assert pull.state == "verified" and pull.folder, pull.log
    assert (down / "outputs" / "ckpt" / "adapter.bin").read_bytes() == (remote / "ckpt" / "adapter.bin").read_bytes()
    assert (down / "outputs" / "log.txt").read_text() == "epoch 3 loss 0.41\n"
    assert no_part_files(ws, down, tmp_path / "work")


def test_existing_files_are_never_replaced_unless_asked(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "model.bin").write_bytes(b"new weights")
    mine = tmp_path / "model.bin"
    mine.write_bytes(b"my weights")
    pid = pod_id(sim_api, GATEWAY_POD)
    q = make_queue()
    kept, missing = run_all(
        q, TransferJob(pid, "pull", "model.bin", str(tmp_path)), TransferJob(pid, "pull", "no-such.bin", str(tmp_path))
    )
    assert kept.state == "failed" and "already exists" in (kept.error or "") and not kept.retryable
    assert mine.read_bytes() == b"my weights" and kept.attempts == 1
    assert missing.state == "failed" and "does not exist" in (missing.error or "") and missing.attempts == 1
    (replaced,) = run_all(q, TransferJob(pid, "pull", "model.bin", str(tmp_path), overwrite=True))
    assert replaced.state == "verified" and mine.read_bytes() == b"new weights"


def test_cancel_a_running_transfer(make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "big.bin").write_bytes(os.urandom(25_000_000))
    pid = pod_id(sim_api, GATEWAY_POD)
    q = make_queue().start()
    job = q.add(TransferJob(pid, "pull", "big.bin", str(tmp_path)))
    deadline = time.monotonic() + 30
    while (q.get(job.id) or job).done_bytes == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert q.cancel(job.id)
    assert q.wait([job.id], 30)
    done = q.get(job.id)
    assert done is not None and done.state == "cancelled" and done.done_bytes < 25_000_000
    assert not (tmp_path / "big.bin").exists() and no_part_files(tmp_path)
    assert q.retry(job.id) and q.wait([job.id], 60)
    assert (q.get(job.id) or job).state == "verified"


def test_a_restart_in_the_middle_of_the_queue(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path, history_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "big.bin").write_bytes(os.urandom(25_000_000))
    (ws / "small.txt").write_text("hello\n")
    pid = pod_id(sim_api, GATEWAY_POD)
    first = make_queue(concurrency=1).start()
    big = first.add(TransferJob(pid, "pull", "big.bin", str(tmp_path)))
    small = first.add(TransferJob(pid, "pull", "small.txt", str(tmp_path)))
    deadline = time.monotonic() + 30
    while (first.get(big.id) or big).done_bytes == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    first.close()  # podtui quits mid-transfer
    assert history_path.exists()

    second = make_queue(concurrency=1)
    jobs = {j.id: j for j in second.jobs()}
    assert jobs[big.id].state == "failed" and jobs[big.id].retryable and "stopped" in (jobs[big.id].error or "")
    assert jobs[small.id].state == "queued"
    assert not (tmp_path / "big.bin").exists()
    second.start()
    assert second.wait([small.id], 30) and (tmp_path / "small.txt").read_text() == "hello\n"
    assert second.retry(big.id) and second.wait([big.id], 60)
    assert (second.get(big.id) or big).state == "verified"
    assert local_digest(tmp_path / "big.bin") == local_digest(ws / "big.bin") and no_part_files(tmp_path)


def test_terminate_after_download_is_announced_once_all_are_verified(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "a.bin").write_bytes(b"a" * 1000)
    (ws / "b.bin").write_bytes(b"b" * 1000)
    pid = pod_id(sim_api, GATEWAY_POD)
    ready: list[tuple[str, str, bool]] = []
    q = make_queue(on_terminate_ready=lambda p, name, confirmed: ready.append((p, name, confirmed)))
    a, b = run_all(
        q,
        TransferJob(pid, "pull", "a.bin", str(tmp_path), terminate_after=True),
        TransferJob(pid, "pull", "b.bin", str(tmp_path), terminate_after=True),
    )
    assert a.state == b.state == "verified"
    deadline = time.monotonic() + 10
    while not ready and time.monotonic() < deadline:  # announced by the worker just after its last change
        time.sleep(0.02)
    assert ready == [(pid, GATEWAY_POD, False)]
    (failed,) = run_all(q, TransferJob(pid, "pull", "missing.bin", str(tmp_path), terminate_after=True))
    assert failed.state == "failed" and ready == [(pid, GATEWAY_POD, False)]  # a failed download never terminates


def test_two_transfers_to_one_name_never_mix(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    for run in ("run1", "run2"):
        (ws / run).mkdir()
        (ws / run / "adapter.bin").write_bytes(os.urandom(3_000_000))
    pid = pod_id(sim_api, GATEWAY_POD)
    a, b = run_all(
        make_queue(concurrency=2, backoff_s=(0.5, 0.5, 0.5)),
        TransferJob(pid, "pull", "run1/adapter.bin", str(tmp_path)),
        TransferJob(pid, "pull", "run2/adapter.bin", str(tmp_path)),
    )
    assert sorted([a.state, b.state]) == ["failed", "verified"]
    won, lost = (a, b) if a.state == "verified" else (b, a)
    assert local_digest(tmp_path / "adapter.bin") == won.checksum  # the bytes of the one called verified
    assert "already exists" in (lost.error or "") and no_part_files(tmp_path)


def test_odd_sources_and_targets(make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "model.bin").write_bytes(b"weights")
    (ws / "-dash name.bin").write_bytes(b"dash")
    (ws / "weights").mkdir()
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "precious.txt").write_text("mine")
    up = tmp_path / "weights"
    up.write_bytes(b"a file named like the pod's folder")
    pid = pod_id(sim_api, GATEWAY_POD)
    dot, dotdot, slash, dash, onto_folder = run_all(
        make_queue(),
        TransferJob(pid, "pull", ".", str(keep), overwrite=True),
        TransferJob(pid, "pull", "weights/..", str(keep), overwrite=True),
        TransferJob(pid, "pull", "model.bin", str(tmp_path / "ckpts") + "/"),
        TransferJob(pid, "pull", "-dash name.bin", str(tmp_path)),
        TransferJob(pid, "push", str(up), "", overwrite=True),
    )
    for j in (dot, dotdot):
        assert j.state == "failed" and "name the file or folder itself" in (j.error or "") and j.attempts == 1
    assert (keep / "precious.txt").read_text() == "mine"  # never replaced by the pod's folder
    assert slash.state == "verified" and (tmp_path / "ckpts" / "model.bin").read_bytes() == b"weights"
    assert dash.state == "verified" and (tmp_path / "-dash name.bin").read_bytes() == b"dash"
    assert onto_folder.state == "failed" and "is a folder on the pod" in (onto_folder.error or "")
    assert (ws / "weights").is_dir() and not list((ws / "weights").iterdir())


def test_a_refused_key_is_not_retried(
    context: TransferContext, make_queue: MakeQueue, sim_api: V2Api, tmp_path: Path, ssh_settings: SshSettings
) -> None:
    stranger = generate_dedicated_key(tmp_path / "stranger", comment="not registered")
    settings = dataclasses.replace(ssh_settings, key_path=stranger.path)
    context.ssh_settings = lambda: settings
    (job,) = run_all(make_queue(), TransferJob(pod_id(sim_api, GATEWAY_POD), "pull", "README-demo.txt", str(tmp_path)))
    assert (job.state, job.error_kind, job.attempts, job.retryable) == ("failed", "auth", 1, False)


def test_terminate_asks_when_a_marked_download_was_cancelled(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "a.bin").write_bytes(b"a")
    pid = pod_id(sim_api, GATEWAY_POD)
    ready: list[bool] = []
    q = make_queue(on_terminate_ready=lambda p, name, confirmed: ready.append(confirmed))
    cancelled = q.add(
        TransferJob(pid, "pull", "big.bin", str(tmp_path), terminate_after=True, terminate_confirmed=True)
    )
    q.cancel(cancelled.id)  # before it started
    (a,) = run_all(q, TransferJob(pid, "pull", "a.bin", str(tmp_path), terminate_after=True, terminate_confirmed=True))
    assert a.state == "verified" and ready == [False]  # asked, not done at once
