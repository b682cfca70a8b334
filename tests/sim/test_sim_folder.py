"""The simulator's temporary folders: a start removes those of killed runs (and stops what their pods left running),
never one whose maker still runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from podtui.sim import sim_folder
from podtui.sim.sim_folder import OWNER, PREFIX, make_sim_folder, owner_alive, sweep


def folder_with(temp: Path, name: str, record: dict[str, object] | str | None, age_s: float = 0.0) -> Path:
    folder = temp / f"{PREFIX}{name}"
    (folder / "pods" / "p1" / "workspace").mkdir(parents=True)
    if record is not None:
        (folder / OWNER).write_text(record if isinstance(record, str) else json.dumps(record))
    if age_s:
        then = time.time() - age_s
        os.utime(folder, (then, then))
    return folder


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def me() -> dict[str, object]:
    return sim_folder._identity(os.getpid())


def test_which_folders_a_start_removes(tmp_path: Path) -> None:
    mine = me()
    keep = [
        folder_with(tmp_path, "live", mine),
        folder_with(tmp_path, "unrecorded-young", None),  # being made this instant, or by an older podtui
    ]
    remove = [
        folder_with(tmp_path, "dead", {**mine, "pid": dead_pid()}),
        folder_with(tmp_path, "reused-pid", {**mine, "start": int(str(mine["start"])) - 1}),  # same pid, other process
        folder_with(tmp_path, "other-boot", {**mine, "boot": "another-boot"}),
        folder_with(tmp_path, "unrecorded-old", None, age_s=2 * 3600),
        folder_with(tmp_path, "garbled", "{not json", age_s=2 * 3600),
    ]
    (tmp_path / "other").mkdir()
    (tmp_path / f"{PREFIX}link").symlink_to(tmp_path / "other")
    (tmp_path / f"{PREFIX}file").write_text("x")
    assert owner_alive(keep[0]) is True and owner_alive(remove[0]) is False and owner_alive(keep[1]) is None
    assert sorted(sweep(tmp_path)) == sorted(remove)
    assert all(f.exists() for f in keep) and not any(f.exists() for f in remove)
    assert (tmp_path / "other").is_dir() and (tmp_path / f"{PREFIX}link").is_symlink()
    assert (tmp_path / f"{PREFIX}file").exists()


def test_what_a_killed_runs_pods_left_running_is_stopped(tmp_path: Path) -> None:
    dead = folder_with(tmp_path, "dead", {**me(), "pid": dead_pid()})
    unrecorded = folder_with(tmp_path, "unrecorded-in-use", None, age_s=2 * 3600)
    left = subprocess.Popen(["sleep", "60"], env={"PODTUI_SIM_ROOT": f"{dead}/pods/p1"}, start_new_session=True)
    using = subprocess.Popen(["sleep", "60"], env={"PODTUI_SIM_ROOT": f"{unrecorded}/pods/p1"},
                             start_new_session=True)
    try:
        assert sweep(tmp_path) == [dead]
        assert left.wait(10) == -signal.SIGKILL
        assert unrecorded.exists() and using.poll() is None  # a process still refers to it: not left behind
    finally:
        for p in (left, using):
            p.kill()
            p.wait()


def test_a_new_folder_records_its_maker_and_sweeps_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # tempfile reads TMPDIR again
    dead = folder_with(tmp_path, "dead", {**me(), "pid": dead_pid()})
    folder = make_sim_folder()
    assert folder.parent == tmp_path and folder.name.startswith(PREFIX)
    assert json.loads((folder / OWNER).read_text())["pid"] == os.getpid() and owner_alive(folder) is True
    assert not dead.exists()
