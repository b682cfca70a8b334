"""Bad input and what goes wrong mid-sync (docs/sync.md#failures): folders that are not there or are files, paths
podtui refuses, a route the pod cannot take, a file that cannot be read or that changes while it is copied, a pod
that stops, a connection that drops once or twice. Each is said in words, and nothing half-written is left under a
final name."""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path
from typing import Any

import pytest

from podtui.core.ssh.connect import Connection, connect_pod
from podtui.transfer.sync.plan import Plan
from podtui.transfer.sync.run import SyncError, check_local
from podtui.transfer.sync.state import SyncListener, SyncResult, SyncSpec, SyncState
from tests.helpers.sync import CONSOLE, RSYNC, SFTP, Syncer, listing, no_leftovers


def small_tree(top: Path, n: int = 3, size: int = 10) -> Path:
    top.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (top / f"f{i}.bin").write_bytes(os.urandom(size))
    return top


@pytest.mark.parametrize("route", [CONSOLE])
def test_bad_folders_and_paths_are_refused_in_words(syncer: Syncer, tmp_path: Path) -> None:
    src = small_tree(tmp_path / "src")
    (syncer.workspace / "file.txt").write_text("a file, not a folder")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"local": tmp_path / "nope"}, "does not exist here; nothing to sync from"),
        ({"local": src / "f0.bin"}, "is not a folder; sync works on folders"),
        ({"local": tmp_path / "a" / "b", "pull": True}, "neither does the folder above it"),
        ({"remote": "file.txt"}, "/workspace/file.txt on the pod is a file, not a folder"),
        ({"remote": "missing", "pull": True}, "/workspace/missing does not exist on the pod; nothing to pull"),
        ({"remote": "/"}, "REMOTE_DIR / is the pod's whole filesystem"),
        ({"remote": "../.."}, "REMOTE_DIR / is the pod's whole filesystem"),
        ({"remote": "bad\nname"}, "holds control characters"),
        ({"via": "rsync"}, "--via rsync needs direct SSH"),
        ({"via": "sftp"}, "--via sftp needs direct SSH"),
        ({"excludes": ("[z-a]",)}, "--exclude '[z-a]' is not a gitignore pattern"),
    ]
    for kw, said in cases:
        local = kw.pop("local", src)
        r = syncer.sync(local, kw.pop("remote", "proj"), **kw)
        assert not r.ok and r.error is not None and said in r.error, (kw, r.error)
    assert not (syncer.workspace / "proj").exists()  # refused before anything was written


@pytest.mark.parametrize("route", [CONSOLE])
def test_remote_dir_forms(syncer: Syncer, tmp_path: Path) -> None:
    src = small_tree(tmp_path / "src", 1)
    for remote, where in (("proj", "/workspace/proj"), ("~/cfg", "/root/cfg"), ("/tmp/x/../y", "/tmp/y")):
        r = syncer.sync(src, remote)
        assert r.ok and r.remote_root == where, (remote, r.error)


@pytest.mark.parametrize("route", [CONSOLE])
def test_dry_run_changes_nothing_on_either_end(syncer: Syncer, tmp_path: Path) -> None:
    src = small_tree(tmp_path / "src")
    r = syncer.sync(src, dry_run=True)
    assert r.ok and r.plan is not None and len(r.plan.new) == 3 and r.verified == []
    assert not (syncer.workspace / "proj").exists()
    small_tree(syncer.workspace / "proj", 1)
    before = listing(src)
    r = syncer.sync(src, pull=True, delete=True, dry_run=True)
    assert r.ok and r.plan is not None and len(r.plan.deletes) == 2 and len(r.plan.changed) == 1
    assert listing(src) == before


@pytest.mark.parametrize("route", [CONSOLE, RSYNC])
def test_one_unreadable_file_fails_alone(syncer: Syncer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = small_tree(tmp_path / "src")
    secret = str(src / "f1.bin")
    real_access = os.access
    # root reads any file: the scan is told this one is not readable, as for another user
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: str(p) != secret and real_access(p, mode, **kw))
    r = syncer.sync(src)
    assert not r.ok and r.error is None
    assert r.failed == [("f1.bin", "cannot read it: Permission denied")]
    assert sorted(p for p, _ in r.verified) == ["f0.bin", "f2.bin"]
    assert sorted(os.listdir(syncer.workspace / "proj")) == ["f0.bin", "f2.bin"]


class ChangesTheFile(SyncListener):
    def __init__(self, path: Path) -> None:
        self.path = path

    def file_started(self, path: str, size: int) -> None:
        if path == self.path.name:
            with self.path.open("ab") as f:
                f.write(b"more")


@pytest.mark.parametrize("route", [CONSOLE])
def test_a_file_that_changes_while_it_is_copied_is_said_and_not_put_in_place(syncer: Syncer, tmp_path: Path) -> None:
    src = small_tree(tmp_path / "src", 1, 3_000_000)  # past the batch size: its bytes are read as it goes
    r = syncer.sync(src, listener=ChangesTheFile(src / "f0.bin"))
    assert r.failed == [("f0.bin", "it changed while it was copied; sync again to copy it as it is now")]
    remote = syncer.workspace / "proj"
    assert not (remote / "f0.bin").exists() and no_leftovers(remote)
    r = syncer.sync(src)
    assert r.ok and (remote / "f0.bin").read_bytes() == (src / "f0.bin").read_bytes()


class StopsThePod(SyncListener):
    def __init__(self, syncer: Syncer) -> None:
        self.syncer = syncer
        self.stopped = False

    def file_started(self, path: str, size: int) -> None:
        if not self.stopped:
            self.stopped = True
            sim = self.syncer.sim
            sim.world.stop(self.syncer.pod.id)
            # its container ends now, before the sync goes on (the simulator's own timer would end it a moment later)
            sim.gateway.stopped(sim.world.pods[self.syncer.pod.id])


@pytest.mark.parametrize("route", [CONSOLE, RSYNC])
def test_a_pod_that_stops_mid_sync_is_a_clear_error_with_nothing_half_written(
    syncer: Syncer, tmp_path: Path, route: str
) -> None:
    src = small_tree(tmp_path / "src", 4, 2_000_000)
    remote = syncer.workspace / "proj"
    r = syncer.sync(src, listener=StopsThePod(syncer))
    assert r.error is not None and "is EXITED: the sync stopped with it" in r.error, r.error
    assert r.attempts == 1
    finals = [p for p in remote.rglob("*") if p.is_file() and ".podtui-sync-" not in str(p)] if remote.exists() else []
    assert all(p.read_bytes() == (src / p.name).read_bytes() for p in finals), finals  # whole, or not there
    verified = {p for p, _ in r.verified}
    if route == CONSOLE:  # rsync renames each file once whole, before podtui verifies it (docs/sync.md#failures)
        assert all(p.name in verified for p in finals), finals


class DropsTheLink(SyncListener):
    """Closes podtui's connection to the pod when bytes start to move: on the first attempt only, or every time."""

    def __init__(self, connections: list[Connection], every_time: bool) -> None:
        self.connections, self.every_time = connections, every_time
        self.dropped = 0

    def file_started(self, path: str, size: int) -> None:
        if self.dropped < len(self.connections) and (self.every_time or not self.dropped):
            self.dropped = len(self.connections)
            self.connections[-1].transport.close()


@pytest.mark.parametrize("route", [CONSOLE, SFTP])
def test_a_dropped_connection_is_tried_once_more_then_said(
    syncer: Syncer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Connection] = []
    real = connect_pod

    def connect_and_keep(*args: Any, **kw: Any) -> Connection:
        conn = real(*args, **kw)
        made.append(conn)
        return conn

    monkeypatch.setattr("podtui.transfer.sync.run.connect_pod", connect_and_keep)
    src = small_tree(tmp_path / "src", 3, 1_500_000)
    r = syncer.sync(src, listener=DropsTheLink(made, every_time=False))
    assert r.ok, (r.error, r.failed)
    assert r.attempts == 2 and len(made) == 2
    assert any("trying once more" in n for n in r.notes)
    assert listing(syncer.workspace / "proj") == listing(src)

    for p in src.iterdir():
        p.write_bytes(os.urandom(1_500_000))
    made.clear()
    r = syncer.sync(src, listener=DropsTheLink(made, every_time=True))
    assert r.error is not None and "dropped again" in r.error and r.attempts == 2
    assert no_leftovers(syncer.workspace / "proj") or all(
        p.name.startswith(".podtui-sync-") for p in (syncer.workspace / "proj").iterdir() if p.is_dir()
    )
    finals = {p.name: p.read_bytes() for p in (syncer.workspace / "proj").iterdir() if p.is_file()}
    assert all(data != (src / name).read_bytes() for name, data in finals.items())  # the old bytes, whole


@pytest.mark.parametrize("route", [CONSOLE])
def test_podtuis_own_folders_on_the_pod_are_never_touched_and_delete_stays_out_of_home_and_volume(
    syncer: Syncer, tmp_path: Path
) -> None:
    """The pod's /workspace/.podtui (jobs) and ~/.podtui (autostop's watchdog, Hub downloads) are podtui's: a sync
    of the volume or the home folder neither lists, copies over nor deletes them; --delete on either is refused."""
    ws = syncer.workspace
    home = ws.parent / "root"
    for top in (ws, home):
        (top / ".podtui" / "jobs" / "j1").mkdir(parents=True)
        (top / ".podtui" / "jobs" / "j1" / "state").write_text("running")
    (ws / "dataset.bin").write_text("the pod's data")
    src = small_tree(tmp_path / "src", 2)
    (src / ".podtui" / "jobs" / "j1").mkdir(parents=True)
    (src / ".podtui" / "jobs" / "j1" / "state").write_text("a local folder of that name")
    for remote in ("/workspace", "~", "/root/", "proj/.."):
        r = syncer.sync(src, remote, delete=True)
        assert r.error is not None and "name a folder inside it" in r.error, (remote, r.error)
    for remote in ("/workspace/.podtui/jobs", ".podtui", "~/.podtui/x"):
        r = syncer.sync(src, remote)
        assert r.error is not None and "is podtui's own folder on the pod" in r.error, (remote, r.error)
    for remote, top in (("/workspace", ws), ("~", home)):
        r = syncer.sync(src, remote)
        assert r.ok, (r.error, r.failed)
        assert sorted(p for p, _ in r.verified) == ["f0.bin", "f1.bin"]
        assert (top / ".podtui" / "jobs" / "j1" / "state").read_text() == "running"
    assert (ws / "dataset.bin").exists()
    here = tmp_path / "here"
    r = syncer.sync(here, "~", pull=True)
    assert r.ok, (r.error, r.failed)
    assert not (here / ".podtui").exists() and (here / "f0.bin").exists()
    (here / ".podtui").mkdir()
    r = syncer.sync(here, "~", pull=True, delete=True)
    assert r.ok and (here / ".podtui").is_dir()  # kept: the pod's own is never listed, so neither is this one


def test_pull_delete_into_this_machines_home_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home" / "me"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for local in (home, home.parent, tmp_path):
        with pytest.raises(SyncError, match="would delete everything in your home folder"):
            check_local(SyncSpec("pod", local, "results", pull=True, delete=True))
        check_local(SyncSpec("pod", local, "results", pull=True))  # without --delete: a pull only adds and updates
    check_local(SyncSpec("pod", home / "results", "results", pull=True, delete=True))


class FillsTheDisk(SyncListener):
    """From the moment the plan is made, this process may write no file past 3 MB (as a disk that is full): the
    pod's shells, started before, are not limited. Python ignores SIGXFSZ, so a write past it fails with EFBIG."""

    def plan_ready(self, plan: object) -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (3_000_000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


@pytest.mark.parametrize("route", [CONSOLE, RSYNC, SFTP])
def test_a_write_that_fails_here_fails_that_file_and_never_escapes(syncer: Syncer, tmp_path: Path) -> None:
    data = syncer.workspace / "data"
    data.mkdir()
    (data / "huge.bin").write_bytes(os.urandom(5_000_000))
    (data / "a-small.txt").write_text("small")  # listed first: rsync copies it before it stops at huge.bin
    here = tmp_path / "here"
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    try:
        r = syncer.sync(here, "data", pull=True, listener=FillsTheDisk())
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limit)
    assert r.error is None and [p for p, _ in r.failed] == ["huge.bin"], (r.error, r.failed)
    assert "File too large" in r.failed[0][1]
    assert not (here / "huge.bin").exists() and no_leftovers(here)
    assert [p for p, _ in r.verified] == ["a-small.txt"] and (here / "a-small.txt").read_text() == "small"
    r = syncer.sync(here, "data", pull=True)
    assert r.ok and [p for p, _ in r.verified] == ["huge.bin"] and listing(here) == listing(data)


class DropsOnceThenClearsTheWay(DropsTheLink):
    """The first attempt finds a folder where a.bin goes (a failure it reports), then loses the link; the folder is
    gone before the second attempt, which copies everything."""

    def __init__(self, connections: list[Connection], in_the_way: Path) -> None:
        super().__init__(connections, every_time=False)
        self.in_the_way = in_the_way
        self.state = SyncState()

    def plan_ready(self, plan: Plan) -> None:
        self.state.plan_ready(plan)

    def file_failed(self, path: str, why: str) -> None:
        self.state.file_failed(path, why)

    def note(self, text: str) -> None:
        self.state.note(text)
        if "trying once more" in text:
            self.in_the_way.rmdir()

    def done(self, result: SyncResult) -> None:
        self.state.done(result)


@pytest.mark.parametrize("route", [CONSOLE])
def test_after_a_retry_the_state_shows_only_what_failed_in_the_end(
    syncer: Syncer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Connection] = []
    real = connect_pod

    def connect_and_keep(*args: Any, **kw: Any) -> Connection:
        conn = real(*args, **kw)
        made.append(conn)
        return conn

    monkeypatch.setattr("podtui.transfer.sync.run.connect_pod", connect_and_keep)
    src = small_tree(tmp_path / "src", 2, 1_500_000)
    (src / "a.bin").write_text("a")
    in_the_way = syncer.workspace / "proj" / "a.bin"
    in_the_way.mkdir(parents=True)
    listener = DropsOnceThenClearsTheWay(made, in_the_way)
    r = syncer.sync(src, listener=listener)
    assert r.ok and r.attempts == 2, (r.error, r.failed)
    seen = listener.state.snapshot()
    assert seen.failed == () and seen.last is r


def working_folders(top: Path) -> None:
    """An earlier sync's working folder where nothing changed for two hours, and one as old where a file is still
    being written (a long file arriving chunk by chunk, for another sync into the same folder)."""
    old = time.time() - 7200
    for name, inner in ((".podtui-sync-dead01", old), (".podtui-sync-live01", time.time())):
        (top / name / "u").mkdir(parents=True)
        (top / name / "u" / "0.podtui-part").write_bytes(b"partial")
        os.utime(top / name / "u" / "0.podtui-part", (inner, inner))
        os.utime(top / name / "u", (old, old))
        os.utime(top / name, (old, old))


@pytest.mark.parametrize("route", [CONSOLE])
def test_only_working_folders_nothing_writes_in_are_cleared(syncer: Syncer, tmp_path: Path) -> None:
    src = small_tree(tmp_path / "src", 1)
    remote = syncer.workspace / "proj"
    working_folders(remote)
    here = tmp_path / "here"
    working_folders(here)
    assert syncer.sync(src).ok and syncer.sync(here, pull=True).ok
    for top in (remote, here):
        assert sorted(p.name for p in top.iterdir() if p.name.startswith(".podtui-sync-")) == [".podtui-sync-live01"]
        assert (top / ".podtui-sync-live01" / "u" / "0.podtui-part").read_bytes() == b"partial"
