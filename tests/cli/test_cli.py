"""The command line as a user runs it: real processes, real exit codes, one-line errors, no leaked keys."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

KEY = "rpa_CLITESTCLITESTCLITESTCLITEST42"


def podtui(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "podtui", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def test_demo_pods_json() -> None:
    r = podtui("--demo", "pods", "--json")
    assert r.returncode == 0, r.stderr
    pods = json.loads(r.stdout)
    assert {p["id"] for p in pods} == set(DEMO_IDS.values())
    for p in pods:
        assert {"id", "name", "status", "gpu", "cost_per_hr", "uptime_s"} <= set(p)
    by = {p["id"]: p for p in pods}
    stopped = by[DEMO_IDS["stopped"]]
    assert stopped["status"] == "EXITED" and stopped["actions"] == ["start", "terminate"]
    starting = by[DEMO_IDS["starting"]]  # just created, and locked
    assert starting["status"] == "PROVISIONING" and starting["locked"] and starting["actions"] == ["terminate"]
    train = by[DEMO_IDS["train"]]
    assert train["gpu"] == "1 x NVIDIA GeForce RTX 3090" and train["uptime_s"] > 8000
    assert train["actions"] == ["restart", "stop", "terminate"] and not train["locked"]


def test_demo_flag_after_the_subcommand_and_table_output() -> None:
    r = podtui("pods", "--demo")
    assert r.returncode == 0, r.stderr
    assert "llama-lora-3090" in r.stdout and "NAME" in r.stdout and "balance $23.8" in r.stdout


def test_stop_with_yes() -> None:
    r = podtui("--demo", "stop", "llama-lora", "--yes")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f'pod "{DEMO_IDS["train"]}" (llama-lora-3090) stopping'


def test_action_without_yes_on_a_pipe_refuses() -> None:
    r = podtui("--demo", "terminate", DEMO_IDS["idle"], stdin="y\n")
    assert r.returncode == 2
    assert "--yes" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["stop", 'x"y', "--yes"], "no pod with id or name"),
        (["resume", DEMO_IDS["train"], "--yes"], "is RUNNING; only a stopped pod (EXITED or ERROR) can be resumed"),
        (["stop", DEMO_IDS["stopped"], "--yes"], "nothing to stop"),
        (["restart", DEMO_IDS["stopped"], "--yes"], "is EXITED; only a running pod can be restarted"),
        (["stop", DEMO_IDS["starting"], "--yes"], "sweep-h100x2 is locked: RunPod will not stop or restart it"),
        (["restart", DEMO_IDS["starting"], "--yes"], "is PROVISIONING; only a running pod can be restarted"),
    ],
)
def test_errors_are_one_line(args: list[str], message: str) -> None:
    r = podtui("--demo", *args)
    assert r.returncode == 1
    assert message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_no_key_explains_and_offers_demo() -> None:
    r = podtui("pods")
    assert r.returncode == 2
    assert "podtui config set-key" in r.stderr and "podtui --demo" in r.stderr


def test_against_a_running_simulator_with_env_key(sim: SimApiServer) -> None:
    r = podtui("pods", "--json", env={"RUNPOD_API_KEY": sim.api_key, "RUNPOD_API_BASE_URL": sim.url})
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) == 5


def test_wrong_key_is_a_clear_error_without_the_key(sim: SimApiServer) -> None:
    r = podtui("pods", env={"RUNPOD_API_KEY": KEY, "RUNPOD_API_BASE_URL": sim.url})
    assert r.returncode == 1
    assert "refused the API key (401)" in r.stderr and KEY not in r.stderr


def test_unreachable_api() -> None:
    r = podtui("pods", env={"RUNPOD_API_KEY": KEY, "RUNPOD_API_BASE_URL": "http://127.0.0.1:9"})
    assert r.returncode == 1 and "cannot reach" in r.stderr and KEY not in r.stderr


def test_server_error_page(sim: SimApiServer) -> None:
    sim.faults.add("status", 500)
    r = podtui("pods", env={"RUNPOD_API_KEY": sim.api_key, "RUNPOD_API_BASE_URL": sim.url})
    assert r.returncode == 1 and r.stderr == "podtui: error: RunPod's API had a server error (500)\n"


def test_bad_config_toml(isolated_home: Path) -> None:
    cfg = isolated_home / "config" / "podtui" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("poll_interval_s = = 3\n")
    r = podtui("--demo", "pods")
    assert r.returncode == 1 and "not valid TOML" in r.stderr
    assert cfg.read_text() == "poll_interval_s = = 3\n"


def test_set_key_from_stdin_and_show_masked(isolated_home: Path) -> None:
    r = podtui("config", "set-key", "--stdin", stdin=KEY + "\n")
    assert r.returncode == 0, r.stderr
    assert KEY not in r.stdout and "rpa_…ST42" in r.stdout
    cfg = isolated_home / "config" / "podtui" / "config.toml"
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600
    r = podtui("config", "show")
    assert r.returncode == 0 and KEY not in r.stdout
    assert "rpa_…ST42 from podtui config" in r.stdout


def test_key_never_reaches_the_log(sim: SimApiServer, isolated_home: Path) -> None:
    podtui("pods", env={"RUNPOD_API_KEY": sim.api_key, "RUNPOD_API_BASE_URL": sim.url})
    podtui("pods", env={"RUNPOD_API_KEY": KEY, "RUNPOD_API_BASE_URL": sim.url})
    logs = list((isolated_home / "state").rglob("*.log"))
    assert logs
    for log in logs:
        text = log.read_text()
        assert sim.api_key not in text and KEY not in text
        assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_screenshot(tmp_path: Path) -> None:
    out = tmp_path / "shot.svg"
    r = podtui("--demo", "--screenshot", str(out), "--size", "120x30")
    assert r.returncode == 0, r.stderr
    svg = out.read_text()
    assert svg.startswith("<svg") and "llama-lora-3090" in svg.replace("&#160;", " ")
    assert "hf_demo" not in svg


def test_version_and_help() -> None:
    assert podtui("--version").stdout.startswith("podtui ")
    h = podtui("--help").stdout
    for word in ("pods", "stop", "resume", "terminate", "config", "--demo", "--screenshot"):
        assert word in h


def test_demo_cost() -> None:
    r = podtui("--demo", "cost", "--json")
    assert r.returncode == 0, r.stderr
    c = json.loads(r.stdout)
    assert c["burn_per_hr"] > 0 and not c["burn_disagrees"]  # the simulator bills as the pods add up
    assert c["runway_s"] == pytest.approx(c["balance"] / c["burn_per_hr"] * 3600, rel=1e-3)
    by = {p["name"]: p for p in c["pods"]}
    assert by["eval-a100"]["gpu_low_now"] and not by["llama-lora-3090"]["gpu_low_now"]
    assert by["notebook-4090"]["accrued"] is None and by["notebook-4090"]["per_hr"] > 0  # its volume, stopped
    assert "llama-lora-3090" in c["lose_data_at_zero"]
    r = podtui("--demo", "cost")
    assert r.returncode == 0 and "runway" in r.stdout and "deleting their data" in r.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["stop", "llama-lora", "--yes"],
        ["terminate", "eval-a100", "--yes"],
        ["resume", "notebook", "--yes"],
        ["keys", "setup"],
        ["push", "eval-a100", "/etc/hostname"],
        ["pull", "eval-a100", "x", "--then-terminate"],
        ["autostop", "eval-a100", "install"],
    ],
)
def test_read_only_refuses_every_mutating_command(args: list[str], isolated_home: Path) -> None:
    r = podtui("--demo", "--read-only", *args)
    assert r.returncode == 1 and "read-only mode" in r.stderr and "Traceback" not in r.stderr
    cfg = isolated_home / "config" / "podtui"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "config.toml").write_text("read_only = true\n")
    r = podtui("--demo", *args)
    assert r.returncode == 1 and "read-only mode" in r.stderr


def test_read_only_still_reads(isolated_home: Path) -> None:
    r = podtui("--demo", "--read-only", "cost")
    assert r.returncode == 0 and "runway" in r.stdout


def test_terminate_needs_the_whole_name() -> None:
    r = podtui("--demo", "terminate", "ev", "--yes")
    assert r.returncode == 2 and "whole id or name" in r.stderr
    r = podtui("--demo", "stop", "ev", "--yes")  # a prefix still works where nothing is deleted
    assert r.returncode == 0
