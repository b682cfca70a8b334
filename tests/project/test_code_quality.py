"""ruff and strict mypy, as part of the one test command; and screenshots that match the app."""

from __future__ import annotations

import asyncio
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.repo import REPO


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed (it is in the test extra)")
    return path


def test_ruff() -> None:
    r = subprocess.run(
        [_tool("ruff"), "check", "podtui", "tests", "bench", "scripts"], cwd=REPO, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format() -> None:
    """One layout for all the code: `ruff format podtui tests bench scripts` applies it."""
    r = subprocess.run(
        [_tool("ruff"), "format", "--check", "podtui", "tests", "bench", "scripts"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict() -> None:
    r = subprocess.run([_tool("mypy")], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_committed_screenshots_are_current(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("screenshots", REPO / "scripts" / "screenshots.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.OUT = tmp_path
    name, steps, size = mod.SHOTS[0]
    fresh = asyncio.run(mod.render(name, steps, size)).read_text()
    committed = (REPO / "screenshots" / f"{name}.svg").read_text()
    assert fresh == committed, "screenshots/ is stale: run python scripts/screenshots.py"
