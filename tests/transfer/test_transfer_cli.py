"""`podtui push` and `podtui pull` as a script runs them: real processes against the simulator, JSON events,
and an exit status of 0 only when the file is verified on both ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.transfer.checksum import local_digest
from tests.helpers.sim import GATEWAY_POD, pod_workspace


def podtui(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "podtui", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120
    )


def events(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_push_then_pull_with_json_events(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    local = tmp_path / "lora.safetensors"
    local.write_bytes(os.urandom(400_000))
    r = podtui(full_cli_env, "push", GATEWAY_POD, str(local), "--via", "console", "--verify", "md5", "--json")
    assert r.returncode == 0, r.stderr
    evs = events(r.stdout)
    assert [e["state"] for e in evs if e["event"] == "state"] == ["queued", "transferring", "verifying", "verified"]
    last = evs[-1]
    assert last["event"] == "verified" and last["algorithm"] == "md5" and last["checksum"] == local_digest(local, "md5")
    assert (ws / "lora.safetensors").read_bytes() == local.read_bytes()

    down = tmp_path / "down"
    down.mkdir()
    r = podtui(full_cli_env, "pull", GATEWAY_POD, "lora.safetensors", cwd=down)
    assert r.returncode == 0, r.stderr
    assert (down / "lora.safetensors").read_bytes() == local.read_bytes()
    assert "verified on both ends" in r.stdout and local_digest(local) in r.stdout


def test_failures_exit_non_zero_with_one_line(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    r = podtui(full_cli_env, "pull", GATEWAY_POD, "no-such-file.bin", str(tmp_path), "--json")
    assert r.returncode == 1
    last = events(r.stdout)[-1]
    assert last["event"] == "failed" and "does not exist" in str(last["error"])
    (ws / "weights.bin").write_bytes(b"theirs")
    (tmp_path / "weights.bin").write_bytes(b"mine")
    r = podtui(full_cli_env, "pull", GATEWAY_POD, "weights.bin", str(tmp_path))
    assert r.returncode == 1 and "already exists" in r.stderr and "Traceback" not in r.stderr
    assert (tmp_path / "weights.bin").read_bytes() == b"mine"
    r = podtui(full_cli_env, "pull", GATEWAY_POD, "weights.bin", str(tmp_path), "--overwrite")
    assert r.returncode == 0 and (tmp_path / "weights.bin").read_bytes() == b"theirs"
    r = podtui(full_cli_env, "push", GATEWAY_POD, str(tmp_path / "weights.bin"), "--via", "sftp")
    assert r.returncode == 1 and "SFTP needs direct SSH" in r.stderr
    r = podtui(full_cli_env, "pull", "no-such-pod", "x")
    assert r.returncode == 1 and "no pod" in r.stderr


def test_pull_then_terminate_needs_yes_without_a_terminal(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "final.ckpt").write_bytes(os.urandom(10_000))
    r = podtui(full_cli_env, "pull", GATEWAY_POD, "final.ckpt", str(tmp_path), "--then-terminate")
    assert r.returncode == 1 and "without --yes" in r.stderr and (tmp_path / "final.ckpt").exists()
    (tmp_path / "final.ckpt").unlink()
    r = podtui(full_cli_env, "pull", GATEWAY_POD, "final.ckpt", str(tmp_path), "--then-terminate", "--yes")
    assert r.returncode == 0, r.stderr
    assert "terminating" in r.stderr
    pid = next(p.id for p in full_sim.world.pods.values() if p.name == GATEWAY_POD)
    assert full_sim.world.pods[pid].status == "TERMINATED"


def test_runpodctl_both_ways_from_the_command_line(
    runpodctl_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "adapter.bin").write_bytes(os.urandom(200_000))
    r = podtui(runpodctl_cli_env, "pull", GATEWAY_POD, "adapter.bin", str(tmp_path), "--via", "runpodctl", "--json")
    assert r.returncode == 0, r.stderr
    states = [e["state"] for e in events(r.stdout) if e["event"] == "state"]
    assert states == ["queued", "waiting_for_code", "transferring", "verifying", "verified"]
    assert (tmp_path / "adapter.bin").read_bytes() == (ws / "adapter.bin").read_bytes()
    (tmp_path / "cfg.yaml").write_text("lr: 2e-4\n")
    r = podtui(runpodctl_cli_env, "push", GATEWAY_POD, str(tmp_path / "cfg.yaml"), "configs/", "--via", "runpodctl")
    assert r.returncode == 0, r.stderr  # configs/ is made on the way
    assert (ws / "configs" / "cfg.yaml").read_text() == "lr: 2e-4\n"
    r = podtui(runpodctl_cli_env, "push", GATEWAY_POD, str(tmp_path / "cfg.yaml"), "configs/", "--via", "runpodctl")
    assert r.returncode == 1 and "already exists on the pod" in r.stderr


def test_demo_pull_needs_no_account(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "podtui", "--demo", "pull", "eval-a100", "README-demo.txt", "--via", "runpodctl"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert "simulated RunPod pod" in (tmp_path / "README-demo.txt").read_text()
