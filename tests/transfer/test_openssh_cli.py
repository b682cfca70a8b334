"""`podtui push` and `podtui pull` through the OpenSSH route as a script runs them: real `podtui` processes against
the simulator's direct pod, `--via openssh` and `auto`, and what is said when OpenSSH cannot be used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.transfer.checksum import local_digest
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, needs_sshd, pod_workspace
from tests.helpers.transfer import no_part_files

pytestmark = needs_sshd


def podtui(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podtui", *args], capture_output=True, text=True, env=env, timeout=180)


def test_push_and_pull_via_openssh(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, DIRECT_POD)
    local = tmp_path / "adapter model.safetensors"
    local.write_bytes(os.urandom(3_000_000))
    r = podtui(full_cli_env, "push", DIRECT_POD, str(local), "runs/", "--via", "openssh", "--json")
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in r.stdout.splitlines()]
    assert [e["state"] for e in events if e["event"] == "state"] == ["queued", "transferring", "verifying", "verified"]
    last = events[-1]
    assert (last["event"], last["way"], last["checksum"]) == ("verified", "openssh", local_digest(local))
    assert (ws / "runs" / local.name).read_bytes() == local.read_bytes()

    down = tmp_path / "down"
    r = podtui(full_cli_env, "pull", DIRECT_POD, f"runs/{local.name}", str(down) + "/", "--via", "openssh")
    assert r.returncode == 0, r.stderr
    assert "via openssh" in r.stdout and local_digest(local) in r.stdout
    assert (down / local.name).read_bytes() == local.read_bytes()
    r = podtui(full_cli_env, "pull", DIRECT_POD, f"runs/{local.name}", str(tmp_path / "auto.bin"))  # auto
    assert r.returncode == 0 and "via openssh" in r.stdout, r.stderr
    assert no_part_files(ws, tmp_path)


def test_via_openssh_says_why_it_cannot(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    (pod_workspace(full_sim, sim_api, GATEWAY_POD) / "log.txt").write_text("epoch 1\n")
    r = podtui(full_cli_env, "pull", GATEWAY_POD, "log.txt", str(tmp_path), "--via", "openssh")
    assert r.returncode == 1 and "needs direct SSH" in r.stderr and "Traceback" not in r.stderr
    (pod_workspace(full_sim, sim_api, DIRECT_POD) / "w.bin").write_bytes(b"weights")
    no_ssh = {**full_cli_env, "PATH": str(tmp_path / "no-ssh-here")}
    r = podtui(no_ssh, "pull", DIRECT_POD, "w.bin", str(tmp_path), "--via", "openssh")
    assert r.returncode == 1 and "not installed" in r.stderr and "--via sftp" in r.stderr, r.stderr
    r = podtui(no_ssh, "pull", DIRECT_POD, "w.bin", str(tmp_path), "--json")  # auto: podtui's own SFTP
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.splitlines()[-1])["way"] == "sftp"
    assert (tmp_path / "w.bin").read_bytes() == b"weights" and no_part_files(tmp_path)
