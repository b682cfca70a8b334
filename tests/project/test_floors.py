"""podtui at the lowest versions of its dependencies that pyproject.toml allows, installed for real in a fresh
virtualenv: the floors are what the code needs, and an install below a floor says what to upgrade instead of
failing every call in words that blame RunPod or the Hub."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.repo import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


# uv resolves and installs as pip does (the same constraints, the same wheels) in seconds instead of the minute and
# a half pip takes for runpod's tree of dependencies
UV_PIP = [sys.executable, "-m", "uv", "pip"]


def floors() -> list[str]:
    """`name==X` for every `name>=X` among podtui's dependencies (markers dropped: pip skips what does not apply)."""
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    out = []
    for dep in deps:
        spec = dep.split(";")[0]
        at_least = re.search(r">=\s*([0-9][0-9.]*)", spec)
        name = re.match(r"\s*([A-Za-z0-9_.-]+)", spec)
        if at_least and name:
            out.append(f"{name.group(1)}=={at_least.group(1)}")
    return out


class FloorEnv:
    def __init__(self, path: Path, home: Path) -> None:
        self.path, self.home = path, home

    def pip(self, *args: str) -> None:
        r = subprocess.run(
            [*UV_PIP, "install", "-q", "--python", str(self.path / "bin" / "python"), *args],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode == 0, r.stdout + r.stderr

    def podtui(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(self.home), "LANG": "C.UTF-8"}
        return subprocess.run(
            [str(self.path / "bin" / "podtui"), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            cwd=self.home,
        )


@pytest.fixture(scope="module")
def floor_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FloorEnv]:
    where = tmp_path_factory.mktemp("floors")
    venv.create(where / "venv", with_pip=False)  # uv installs into it
    constraints = where / "constraints.txt"
    constraints.write_text("\n".join(floors()) + "\n")
    env = FloorEnv(where / "venv", where / "home")
    env.home.mkdir()
    env.pip("-c", str(constraints), str(REPO))
    yield env


def _key(pin: str) -> tuple[str, tuple[int, ...]]:
    name, version = pin.split("==")
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:3])
    return name.lower().replace("_", "-"), numbers + (0,) * (3 - len(numbers))


def test_the_floors_are_what_gets_installed(floor_env: FloorEnv) -> None:
    r = subprocess.run(
        [*UV_PIP, "freeze", "--python", str(floor_env.path / "bin" / "python")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    installed = dict(_key(line) for line in r.stdout.splitlines() if "==" in line)
    for pin in floors():
        name, version = _key(pin)
        if name in installed:  # platform-specific ones (a terminal engine) may not apply here
            assert installed[name] == version, (name, installed[name])
    assert installed["runpod"] == (1, 8, 1) and installed["huggingface-hub"] == (0, 25, 0)


def test_podtui_works_at_its_floors(floor_env: FloorEnv) -> None:
    r = floor_env.podtui("--demo", "pods")
    assert r.returncode == 0 and "llama-lora-3090" in r.stdout, r.stderr
    r = floor_env.podtui("--demo", "stop", "eval-a100", "--yes")
    assert r.returncode == 0 and "stopping" in r.stdout, r.stderr
    r = floor_env.podtui("--demo", "cost", "--json")
    assert r.returncode == 0, r.stderr
    r = floor_env.podtui("--demo", "hf", "check", "podtui-sim/tiny-gpt2")
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr and "tiny-gpt2" in r.stdout, r.stdout + r.stderr
    r = floor_env.podtui("--demo", "--exit-when", "data")
    assert r.returncode == 0, r.stderr


def test_below_the_floors_says_what_to_upgrade(floor_env: FloorEnv) -> None:
    floor_env.pip("--no-deps", "runpod==1.7.13")
    # the runpod SDK is GraphQL's, which podtui asks only for the balance: the pods come from REST v2 and work;
    # the balance alone is unknown, and the reason says what to upgrade instead of blaming RunPod
    advice = "runpod 1.7.13 is installed, but podtui needs 1.8.1 or newer: run `pip install -U 'runpod>=1.8.1'`"
    r = floor_env.podtui("--demo", "pods")
    assert r.returncode == 0 and "llama-lora-3090" in r.stdout, r.stderr
    assert "balance — ·" in r.stdout and f"balance unknown: {advice}" in r.stdout
    r = floor_env.podtui("--demo", "cost", "--json")
    assert r.returncode == 0, r.stderr
    cost = json.loads(r.stdout)
    assert cost["balance"] is None and cost["runway_s"] is None and advice in cost["balance_unknown_why"]
    assert cost["burn_per_hr"] and cost["burn_per_hr"] == cost["burn_per_hr_pods"]
    assert "RunPod" not in cost["balance_unknown_why"].replace("runpod", "")
    r = floor_env.podtui("--demo", "stop", "eval-a100", "--yes")
    assert r.returncode == 0 and "stopping" in r.stdout, r.stderr
    floor_env.pip("--no-deps", "huggingface_hub==0.24.7")
    r = floor_env.podtui("--demo", "hf", "check", "podtui-sim/tiny-gpt2")
    assert r.returncode == 1 and "huggingface_hub 0.24.7 is installed, but podtui needs 0.25 or newer" in r.stderr
    floor_env.pip("--no-deps", "runpod==1.8.1", "huggingface_hub==0.25.0")  # as it was, for any test after this
