"""Transfers by runpodctl through the simulator's relay, in both directions: the sending side on the pod started
with nohup and its code read from the log, or the mirror image; verified by checksum on both ends. Each failure
of docs/runpod-facts.md#runpodctl-errors is met: a stale code, a relay lost after the code (exit 0), silent
truncation, a crash."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.transfer.checksum import local_digest
from podtui.transfer.job import TransferJob
from tests.helpers.sim import GATEWAY_POD, pod_id, pod_workspace
from tests.helpers.transfer import MakeQueue, files_both_ways, no_part_files, run_all


@pytest.fixture(autouse=True)
def fast_relay(local_runpodctl: Path, full_sim: Simulator) -> None:
    """Every transfer here is the simulator's runpodctl, through a relay that does not slow it down."""
    full_sim.relay.rate_bytes_per_s = None


@pytest.fixture
def files(full_sim: Simulator, sim_api: V2Api, tmp_path: Path) -> tuple[Path, Path, Path]:
    return files_both_ways(pod_workspace(full_sim, sim_api, GATEWAY_POD), tmp_path, 3_000_000, 2_000_000)


def test_both_directions_verified(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, files: tuple[Path, Path, Path]
) -> None:
    ws, local, down = files
    full_sim.relay.rate_bytes_per_s = 3_000_000  # a second or so each: the bar has frames to show
    pid = pod_id(sim_api, GATEWAY_POD)
    changes: list[TransferJob] = []
    pull, push = run_all(
        make_queue(on_change=changes.append),
        TransferJob(pid, "pull", "model.safetensors", str(down)),  # auto: gateway-only pod
        TransferJob(pid, "push", str(local), "", route_choice="runpodctl"),
    )
    assert (pull.state, pull.route, pull.attempts) == ("verified", "runpodctl", 1), pull.log
    assert local_digest(down / "model.safetensors") == local_digest(ws / "model.safetensors") == pull.checksum
    assert (push.state, push.route) == ("verified", "runpodctl"), push.log
    assert (ws / "data.jsonl").read_bytes() == local.read_bytes()
    states = [c.state for c in changes if c.id == pull.id]
    assert "waiting_for_code" in states and states.index("waiting_for_code") < states.index("transferring")
    assert any(c.code for c in changes if c.id == pull.id) and pull.code is None  # shown while it mattered
    moving = [c for c in changes if c.id == pull.id and c.percent and 0 < c.percent < 100]
    assert moving and all(c.total_bytes == 3_000_000 for c in moving) and any(c.rate_bytes_per_s for c in moving)
    assert [c.done_bytes for c in moving] == sorted(c.done_bytes for c in moving)
    assert any(c.percent and 0 < c.percent < 100 for c in changes if c.id == push.id)
    assert no_part_files(ws, down)
    # nothing left running, on the pod or here (this test's folders: other workers' tests run their own)
    assert not [
        p
        for p in Path("/proc").iterdir()
        if p.name.isdigit()
        and _cmdline(p).count("runpodctl_standin")
        and (_cwd(p).is_relative_to(ws) or _cwd(p).is_relative_to(local.parent.parent))
    ]


def _cmdline(p: Path) -> str:
    try:
        return (p / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _cwd(p: Path) -> Path:
    try:
        return Path(os.readlink(p / "cwd"))
    except OSError:
        return Path("/nonexistent")


@pytest.mark.parametrize(
    ("fault", "direction", "said"),
    [
        ("truncate", "pull", "sha256 mismatch"),  # silent truncation: exit 0, but the sums differ
        ("truncate", "push", "sha256 mismatch"),
        ("stale_code", "pull", "room not ready"),
        ("relay_unreachable", "pull", "could not connect to relay"),  # after the code, on stdout, exit 0
        ("relay_unreachable", "push", "could not connect to relay"),
        ("crash", "pull", "panic"),
    ],
)
def test_a_failure_is_detected_and_retried(
    fault: str,
    direction: str,
    said: str,
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    files: tuple[Path, Path, Path],
) -> None:
    ws, local, down = files
    times = 4 if fault == "stale_code" else 1  # a stale code outlasts the quick re-joins with the same code
    full_sim.relay.fail_next(fault, times)
    pid = pod_id(sim_api, GATEWAY_POD)
    job = (
        TransferJob(pid, "pull", "model.safetensors", str(down), route_choice="runpodctl")
        if direction == "pull"
        else TransferJob(pid, "push", str(local), "", route_choice="runpodctl")
    )
    (done,) = run_all(make_queue(), job, timeout_s=90)
    assert done.state == "verified" and done.attempts == 2, done.log
    assert any("attempt 1 failed" in line and said in line for line in done.log), "\n".join(done.log)
    target = down / "model.safetensors" if direction == "pull" else ws / "data.jsonl"
    source = ws / "model.safetensors" if direction == "pull" else local
    assert target.read_bytes() == source.read_bytes()
    assert no_part_files(ws, down)


def test_a_transfer_that_keeps_failing_ends_failed(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, files: tuple[Path, Path, Path]
) -> None:
    _, _, down = files
    full_sim.relay.fail_next("truncate", 10)
    pid = pod_id(sim_api, GATEWAY_POD)
    (done,) = run_all(
        make_queue(backoff_s=(0.1,)),
        TransferJob(pid, "pull", "model.safetensors", str(down), route_choice="runpodctl"),
        timeout_s=90,
    )
    assert done.state == "failed" and done.attempts == 2 and done.retryable
    assert "sha256 mismatch" in (done.error or "") and not (down / "model.safetensors").exists()
    full_sim.relay.clear_faults()


def test_names_with_dashes_and_spaces(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "-v final model.bin").write_bytes(b"weights")
    up = tmp_path / "--help me.txt"
    up.write_text("notes")
    pid = pod_id(sim_api, GATEWAY_POD)
    pull, push = run_all(
        make_queue(),
        TransferJob(pid, "pull", "-v final model.bin", str(tmp_path), route_choice="runpodctl"),
        TransferJob(pid, "push", str(up), "", route_choice="runpodctl"),
    )
    assert pull.state == "verified", pull.log
    assert (tmp_path / "-v final model.bin").read_bytes() == b"weights"
    assert push.state == "verified", push.log
    assert (ws / "--help me.txt").read_text() == "notes"
