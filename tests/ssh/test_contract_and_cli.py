"""run_remote's contract (README.md#ssh-podtui-exec-and-run_remote), importable from podtui, and `podtui exec` as a
user runs it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.errors import RemoteTimeout
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS


@pytest.fixture
def env(full_sim: Simulator, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    # no PODTUI_SSH_GATEWAY: each pod's SSH endpoints come from the API, as RunPod's do
    values = {"RUNPOD_API_KEY": full_sim.api.api_key, "RUNPOD_API_BASE_URL": full_sim.api.url}
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    return values


def test_the_field_guide_contract(env: dict[str, str], ssh_settings: SshSettings) -> None:
    from podtui import run_remote

    output, exit_code = run_remote(
        pod_id=DEMO_IDS["idle"],
        key_path=str(ssh_settings.key_path),
        commands=[
            "mkdir -p /tmp/project/results/checkpoint && cd /tmp/project",
            "echo weights > results/checkpoint/model.bin",
            "tar -czf /tmp/bundle.tar.gz results/checkpoint",
            "ls /tmp/bundle.tar.gz",
        ],
        per_command_timeout=60,
    )
    assert exit_code == 0
    assert output == "/tmp/bundle.tar.gz\n"


def test_contract_stops_at_the_first_failure(env: dict[str, str], ssh_settings: SshSettings) -> None:
    from podtui import run_remote

    output, code = run_remote(DEMO_IDS["idle"], ssh_settings.key_path, ["echo a", "cd /nonexistent", "echo b"])
    assert code == 1 and output.startswith("a\n") and "b\n" not in output


def test_contract_timeout(env: dict[str, str], ssh_settings: SshSettings) -> None:
    from podtui import run_remote

    with pytest.raises(RemoteTimeout):
        run_remote(DEMO_IDS["idle"], ssh_settings.key_path, ["sleep 30"], per_command_timeout=0.5)


def podtui(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "podtui", *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=60
    )


def test_cli_exec_passes_output_and_exit_status(env: dict[str, str], ssh_settings: SshSettings) -> None:
    extra = {**env, "HOME": os.environ["HOME"]}
    key = str(ssh_settings.key_path)
    cfg = os.path.join(os.environ["XDG_CONFIG_HOME"], "podtui")
    os.makedirs(cfg, exist_ok=True)
    with open(os.path.join(cfg, "config.toml"), "w") as f:
        f.write(f'ssh_key = "{key}"\n')
    r = podtui(extra, "exec", "eval-a100", "--", "echo", "hi;", "exit", "3")
    assert r.stdout == "hi\n" and r.returncode == 3, r.stderr
    r = podtui(extra, "exec", "eval-a100", "--via", "pty", "--timeout", "1", "--", "sleep 20")
    assert r.returncode == 124 and "did not finish within 1 s" in r.stderr
    r = podtui(extra, "exec", "sweep-h100x2", "--", "ls")
    assert r.returncode == 255 and "Traceback" not in r.stderr
    assert "sweep-h100x2 is PROVISIONING: SSH works once it is RUNNING" in r.stderr


def test_cli_exec_in_demo_mode() -> None:
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "podtui",
            "--demo",
            "exec",
            "llama",
            "--",
            "nvidia-smi --query-gpu=name --format=csv,noheader",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "NVIDIA GeForce RTX 3090\n"


def test_cli_keys_setup_in_demo_mode(isolated_home: object) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "podtui", "--demo", "keys", "setup"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert "created" in r.stdout and "registered it on your RunPod account: 2 key(s)" in r.stdout
    restart = r.stdout.splitlines()[-1]
    assert "only after a restart" in restart and "llama-lora-3090" in restart and "notebook-4090" not in restart
