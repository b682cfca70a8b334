"""`podtui sync` as a user and a script run it: real processes against the simulator's gateway pod. The plan and
the result on stdout, one JSON object with --json, exit 0 only when everything verified, 2 for usage errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from tests.helpers.sim import GATEWAY_POD, pod_workspace
from tests.helpers.transfer import wait_for


def podtui(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "podtui", "sync", *args], capture_output=True, text=True, env=env, timeout=180
    )


def project(top: Path) -> Path:
    (top / "src").mkdir(parents=True)
    (top / "src" / "main.py").write_text("print('hi')\n")
    (top / "README.md").write_text("# proj\n")
    (top / "new\nline.txt").write_text("odd")
    (top / ".gitignore").write_text("*.log\n")
    (top / "train.log").write_text("ignored")
    return top


def test_plan_then_result_then_nothing_to_do(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    src = project(tmp_path / "proj")
    r = podtui(full_cli_env, GATEWAY_POD, str(src), "proj")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "4 new, 0 changed, 0 unchanged (1 ignored)"
    assert "  + new\\nline.txt" in lines and "  + src/main.py" in lines  # a line feed in a name is shown, never sent
    assert lines[-1] == f"verified 4 files (28 B) on both ends; {src} -> eval-a100:/workspace/proj via console"
    assert r.stderr == ""  # progress only on a terminal
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    assert (ws / "proj" / "src" / "main.py").read_text() == "print('hi')\n" and not (ws / "proj" / "train.log").exists()

    r = podtui(full_cli_env, GATEWAY_POD, str(src), "proj", "--dry-run", "--delete")
    assert r.returncode == 0 and r.stdout.splitlines()[0] == "0 new, 0 changed, 0 to delete, 4 unchanged (1 ignored)"
    assert r.stdout.splitlines()[-1].startswith("dry run (")


def test_json_for_scripts_and_exit_1_when_anything_failed(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    src = project(tmp_path / "proj")
    (pod_workspace(full_sim, sim_api, GATEWAY_POD) / "proj" / "README.md").mkdir(parents=True)  # a folder in the way
    r = podtui(full_cli_env, GATEWAY_POD, str(src), "proj", "--json", "--exclude", "src/")
    assert r.returncode == 1, r.stderr
    (line,) = r.stdout.splitlines()
    got = json.loads(line)
    assert (
        got["ok"] is False and got["error"] is None and got["route"] == "console" and got["remote"] == "/workspace/proj"
    )
    assert got["plan"]["new"] == [".gitignore", "new\nline.txt"] and got["plan"]["ignored"] == 2
    assert [v["path"] for v in got["verified"]] == [".gitignore", "new\nline.txt"]
    assert got["failed"] == [
        {"path": "README.md", "error": "the destination has a folder there, not a file; not replaced without --delete"}
    ]


def test_usage_errors_exit_2_before_runpod_is_asked(full_cli_env: dict[str, str], tmp_path: Path) -> None:
    for args, said in (
        ([str(tmp_path / "nope"), "proj"], "does not exist here; nothing to sync from"),
        ([str(tmp_path), "proj", "--watch", "--pull"], "--watch follows changes to the local folder"),
        ([str(tmp_path), "proj", "--exclude", "[z-a]"], "is not a gitignore pattern"),
    ):
        r = podtui(full_cli_env, GATEWAY_POD, *args)
        assert r.returncode == 2 and said in r.stderr, (args, r.stderr)
    r = podtui({**full_cli_env}, "--read-only", GATEWAY_POD, str(tmp_path), "proj")
    assert r.returncode == 1 and "read-only mode: syncing to a pod is switched off" in r.stderr
    r = podtui(full_cli_env, GATEWAY_POD, str(tmp_path), "/")
    assert r.returncode == 1 and "REMOTE_DIR / is the pod's whole filesystem" in r.stderr


def test_pull_makes_local_dir(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    project(pod_workspace(full_sim, sim_api, GATEWAY_POD) / "results")
    here = tmp_path / "results"
    r = podtui(full_cli_env, GATEWAY_POD, str(here), "results", "--pull")
    assert r.returncode == 0, r.stderr
    assert (here / "src" / "main.py").read_text() == "print('hi')\n" and not (here / "train.log").exists()
    assert r.stdout.splitlines()[-1].endswith(f"eval-a100:/workspace/results -> {here} via console")
    assert os.stat(here).st_mode & 0o777 != 0o700  # LOCAL_DIR is the user's folder, not podtui's private one


def test_watch_syncs_each_change_until_ctrl_c(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    src = project(tmp_path / "proj")
    remote = pod_workspace(full_sim, sim_api, GATEWAY_POD) / "proj"
    proc = subprocess.Popen(
        [sys.executable, "-m", "podtui", "sync", GATEWAY_POD, str(src), "proj", "--watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**full_cli_env, "PYTHONUNBUFFERED": "1"},
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True)
    reader.start()
    try:
        wait_for(lambda: len(lines) >= 1)
        assert json.loads(lines[0])["ok"] and (remote / "README.md").exists()
        (src / "later.txt").write_text("written while watching")
        wait_for(lambda: len(lines) >= 2)
        second = json.loads(lines[1])
        assert second["ok"] and second["plan"]["new"] == ["later.txt"]
        assert (remote / "later.txt").read_text() == "written while watching"
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(60)
    assert code == 0, proc.stderr.read() if proc.stderr else ""


def test_ctrl_c_mid_copy_cleans_up_and_exits_130(
    full_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    """SIGINT while bytes move: the sync is cancelled and cleans up before podtui exits (its working folder on the
    pod, its temporary folder there), the result says cancelled, and the status is 130."""
    src = tmp_path / "src"
    src.mkdir()
    for i in range(4):
        (src / f"f{i}.bin").write_bytes(os.urandom(4_000_000))
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    pod_tmp = ws.parent / "tmp"
    before = set(pod_tmp.iterdir()) if pod_tmp.exists() else set()
    proc = subprocess.Popen(
        [sys.executable, "-m", "podtui", "sync", GATEWAY_POD, str(src), "proj", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_cli_env,
    )
    try:
        wait_for(
            lambda: any(".podtui-part" in p.name for p in (ws / "proj").rglob("*")) if (ws / "proj").exists() else False
        )
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    got = json.loads(out)
    assert got["cancelled"] is True and got["verified"] == [], got
    assert "interrupted" in err and "unexpected error" not in err
    assert list((ws / "proj").iterdir()) == []  # no working folder, no file under a final name
    assert (set(pod_tmp.iterdir()) if pod_tmp.exists() else set()) == before
