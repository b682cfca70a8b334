"""The simulator's temporary folders: a start removes those of killed runs (and ends what their pods left running),
never one whose maker still runs, and never one that is not certainly a dead run's of this user on this machine:
no valid record (a user's own podtui-sim-notes), another machine's, container's or user's, or anything in it a
simulator does not make."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from podtui.sim import sim_folder
from podtui.sim.pod_container import start_time
from podtui.sim.sim_folder import OWNER, PREFIX, make_sim_folder, owner_alive, sweep

NOBODY = 65534


def folder_with(temp: Path, name: str, record: dict[str, object] | str | None, age_s: float = 0.0) -> Path:
    folder = temp / f"{PREFIX}{name}"
    (folder / "pods" / "p1" / "workspace").mkdir(parents=True)
    (folder / "demo_key").write_text("key")
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
    dead = {**mine, "pid": dead_pid()}
    keep = [
        folder_with(tmp_path, "live", mine),
        folder_with(tmp_path, "unrecorded-young", None),  # being made this instant
        folder_with(tmp_path, "notes", None, age_s=30 * 86400),  # a user's own folder of that name
        folder_with(tmp_path, "garbled", "{not json", age_s=2 * 3600),
        folder_with(tmp_path, "no-pid", {**dead, "pid": "12"}, age_s=2 * 3600),
        folder_with(tmp_path, "old-podtui", {k: dead[k] for k in ("pid", "start", "boot")}, age_s=2 * 3600),
        folder_with(tmp_path, "other-machine", {**dead, "boot": "another-boot", "machine": "another-machine"}),
        folder_with(tmp_path, "other-host", {**dead, "boot": "another-boot", "host": "elsewhere"}),
        folder_with(tmp_path, "other-container", {**dead, "pidns": 4026531999}),  # same kernel, other pids
        folder_with(tmp_path, "other-user-record", {**dead, "uid": NOBODY}),
    ]
    unexpected = folder_with(tmp_path, "unexpected", dead)
    (unexpected / "notes.txt").write_text("not the simulator's\n")
    keep.append(unexpected)
    remove = [
        folder_with(tmp_path, "dead", dead),
        folder_with(tmp_path, "reused-pid", {**mine, "start": int(str(mine["start"])) - 1}),  # same pid, other process
    ]
    if mine["machine"] is not None:  # this machine, before it last started
        remove.append(folder_with(tmp_path, "other-boot", {**dead, "boot": "another-boot"}))
    if os.geteuid() == 0:
        theirs = folder_with(tmp_path, "another-users", {**dead, "uid": NOBODY})
        for path in (theirs, *theirs.rglob("*")):
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        keep.append(theirs)
        planted = folder_with(tmp_path, "planted", dead)  # a record of ours in a folder another user made
        os.chown(planted, NOBODY, NOBODY)
        keep.append(planted)
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
    # a pod without a container names its folder; a container is known by its init, whatever its processes name
    left = subprocess.Popen(["sleep", "60"], env={"PODTUI_SIM_ROOT": f"{dead}/pods/p1"}, start_new_session=True)
    init = subprocess.Popen(["sleep", "61"], env={}, start_new_session=True)
    stranger = subprocess.Popen(["sleep", "62"], env={}, start_new_session=True)  # a pid that was reused
    using = subprocess.Popen(["sleep", "60"], env={"PODTUI_SIM_ROOT": f"{unrecorded}/pods/p1"}, start_new_session=True)
    try:
        for pod, proc, started in (("p1", init, start_time(init.pid)), ("p2", stranger, 1)):
            (dead / "pods" / pod).mkdir(exist_ok=True)
            (dead / "pods" / pod / "view.json").write_text(json.dumps({"init": {"pid": proc.pid, "start": started}}))
        assert sweep(tmp_path) == [dead]
        assert left.wait(10) == -signal.SIGKILL and init.wait(10) == -signal.SIGKILL
        assert stranger.poll() is None  # not the init it recorded: left alone
        assert unrecorded.exists() and using.poll() is None  # no record: never ours to judge
    finally:
        for p in (left, init, stranger, using):
            p.kill()
            p.wait()


def test_a_new_folder_records_its_maker_and_sweeps_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # tempfile reads TMPDIR again
    dead = folder_with(tmp_path, "dead", {**me(), "pid": dead_pid()})
    folder = make_sim_folder()
    assert folder.parent == tmp_path and folder.name.startswith(PREFIX)
    record = json.loads((folder / OWNER).read_text())
    assert record["pid"] == os.getpid() and owner_alive(folder) is True
    assert record["uid"] == os.geteuid() and record["pidns"] == os.stat("/proc/self/ns/pid").st_ino
    assert {"boot", "machine", "host", "start"} <= set(record)
    assert oct((folder / OWNER).stat().st_mode & 0o777) == oct(0o600)
    assert not dead.exists()
