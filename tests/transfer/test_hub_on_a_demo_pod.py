"""A Hugging Face download onto a demo pod that is not isolated from this machine (no mount namespaces, or
PODTUI_SIM_ISOLATION=off): a relative folder is under the pod's own workspace folder on this machine, as on a real
pod it is under its volume, so `podtui --demo hf download POD REPO` works there; a path out of the pod's folders is
still refused. Real `podtui` processes, each with its own demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from podtui.sim.hub_seed import PUBLIC_MODEL
from tests.helpers.repo import REPO


def demo_hf(temp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(temp), "PODTUI_SIM_ISOLATION": "off"}
    return subprocess.run(
        [sys.executable, "-m", "podtui", "--demo", "hf", "download", "eval-a100", PUBLIC_MODEL, "--json", *args],
        capture_output=True,
        text=True,
        timeout=110,
        env=env,
        cwd=REPO,
    )


@pytest.mark.parametrize("local_dir", [None, "llm", "~/models/x", "sub/../weights"])
def test_relative_folders_land_in_the_pods_own_folder(local_dir: str | None, tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    r = demo_hf(temp, *(["--local-dir", local_dir] if local_dir else []))
    assert r.returncode == 0, r.stderr
    last = json.loads(r.stdout.splitlines()[-1])
    assert last["event"] == "verified", last
    place = {
        None: "/workspace/models/tiny-gpt2",
        "llm": "/workspace/llm",
        "~/models/x": "/root/models/x",
        "sub/../weights": "/workspace/weights",
    }[local_dir]
    assert last["path"].startswith(str(temp)) and last["path"].endswith(place), last["path"]


@pytest.mark.parametrize("local_dir", ["/workspace/models", "../../models", "/tmp/../etc/models", "~/../../x"])
def test_folders_out_of_the_pods_own_are_still_refused(local_dir: str, tmp_path: Path) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    r = demo_hf(temp, "--local-dir", local_dir)
    assert r.returncode == 1 and "is outside this demo pod's folders" in r.stdout + r.stderr, r
