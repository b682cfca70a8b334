"""Push and pull over each route against the simulator (docs/sync.md#routes): the tree arrives exactly (bytes, times,
executable bits, symlinks, odd names), ignored paths stay where they are, a second sync copies nothing, a file with
new bytes is copied and one with only a new time is only touched, --delete removes what the source lacks."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from podtui.core.ssh.remote import open_remote
from podtui.transfer.sync.state import SyncState
from tests.helpers.sync import RSYNC, SFTP, Syncer, listing, no_leftovers

T0 = 1_700_000_000_123_456_789
ODD = [
    "with space.txt",
    "quote'\"s.txt",
    "new\nline.txt",
    "ünïcødé ✓.txt",
    os.fsdecode(b"bad\xffbyte.txt"),
    "-starts-with-dash",
    "tab\there",
]


def tree(top: Path) -> Path:
    """A project: plain files, an executable, a file past the console's batch size, an empty folder, odd names,
    a symlink inside and one out, and what .gitignore and .git keep out."""
    files = {
        ".gitignore": b"*.log\nbuild/\n",
        "a.txt": b"hello",
        "run.sh": b"#!/bin/sh\necho hi\n",
        "sub/deep/x.bin": os.urandom(300_000),
        "model.safetensors": os.urandom(2_500_000),
        "debug.log": b"ignored",
        "build/out.o": b"ignored",
        ".git/HEAD": b"ref: refs/heads/main\n",
        **{f"odd/{name}": name.encode("utf-8", "surrogateescape") for name in ODD},
    }
    for i, (rel, data) in enumerate(files.items()):
        path = top / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, ns=(T0 + i, T0 + i))
    (top / "run.sh").chmod(0o755)
    (top / "empty").mkdir()
    (top / "latest").symlink_to("sub/deep/x.bin")
    (top / "out").symlink_to("/etc/passwd")
    return top


def expected(top: Path) -> dict[str, object]:
    left_out = {"debug.log", "build", "build/out.o", ".git", ".git/HEAD", "out"}
    return {k: v for k, v in listing(top).items() if k not in left_out}


def test_push_exactly_then_nothing_then_only_what_changed(syncer: Syncer, tmp_path: Path) -> None:
    src = tree(tmp_path / "src")
    state = SyncState()
    r = syncer.sync(src, listener=state)
    assert r.ok, (r.error, r.failed)
    assert r.route == syncer.route and r.remote_root == "/workspace/proj"
    remote = syncer.workspace / "proj"
    assert listing(remote) == expected(src)
    assert no_leftovers(remote)
    assert r.plan is not None and r.plan.skipped == [("out", "a symlink out of the folder (/etc/passwd): not followed")]
    assert len(r.verified) == 5 + len(ODD) and r.linked == ["latest"]
    seen = state.snapshot()
    assert not seen.running and seen.last is r and seen.verified == len(r.verified) and seen.in_flight == ()

    again = syncer.sync(src)
    assert again.ok and again.plan is not None
    assert (again.plan.copies, again.plan.settled, again.plan.links, again.plan.mkdirs) == ([], 0, [], [])
    assert again.verified == [] and again.plan.unchanged == len(expected(src)) - 4  # folders are not counted

    (src / "a.txt").write_bytes(b"HELLO")  # same size, new bytes, a new time
    os.utime(src / "sub/deep/x.bin", ns=(T0 + 99, T0 + 99))  # only a new time
    (src / "odd" / ODD[0]).unlink()
    (remote / "pod-only.txt").write_text("only there")
    (remote / "made-there.log").write_text("ignored: kept")
    r = syncer.sync(src, delete=True)
    assert r.ok, (r.error, r.failed)
    assert r.plan is not None
    assert [c.path for c in r.plan.changed] == ["a.txt"] and r.plan.settled == 1 and r.touched == 1
    assert sorted(r.deleted) == [f"odd/{ODD[0]}", "pod-only.txt"]
    assert [p for p, _ in r.verified] == ["a.txt"]
    assert {k: v for k, v in listing(remote).items() if k != "made-there.log"} == expected(src)
    assert (remote / "made-there.log").exists()


def test_pull_exactly_then_nothing_then_delete_here(syncer: Syncer, tmp_path: Path) -> None:
    data = tree(syncer.workspace / "data")
    local = tmp_path / "here"  # made by the pull: its parent is there
    r = syncer.sync(local, "data", pull=True)
    assert r.ok, (r.error, r.failed)
    assert r.route == syncer.route
    assert listing(local) == expected(data)
    assert no_leftovers(local)

    again = syncer.sync(local, "data", pull=True)
    assert again.ok and again.plan is not None and again.plan.copies == [] and again.verified == []

    (local / "mine.txt").write_text("only here")
    (local / "notes.log").write_text("ignored here: kept")
    (local / "keep").mkdir()
    (local / "keep" / "x").write_text("kept by this side's own .gitignore")
    (local / ".gitignore").write_text("*.log\nbuild/\nkeep/\n")  # this side's: the pod's is the source's
    (data / "a.txt").write_bytes(b"newer bytes")
    r = syncer.sync(local, "data", pull=True, delete=True)
    assert r.ok, (r.error, r.failed)
    assert r.deleted == ["mine.txt"]
    assert (local / "notes.log").exists() and (local / "keep" / "x").exists()
    assert (local / "a.txt").read_bytes() == b"newer bytes"
    assert (local / ".gitignore").read_bytes() == b"*.log\nbuild/\n"  # the source's, copied over this side's


@pytest.mark.parametrize("route", [SFTP])
def test_a_pod_whose_image_lacks_rsync_has_none_to_run(syncer: Syncer, tmp_path: Path) -> None:
    """The simulator's slim image (sim/image.py NO_RSYNC_IMAGE) as a real one without rsync: nothing runs."""
    with open_remote(syncer.pod, syncer.settings, "exec") as shell:
        assert shell.run('p=$(command -v rsync) && [ -x "$p" ]').exit_code != 0
        assert shell.run("rsync --version").exit_code != 0
        assert shell.run("command -v tar && command -v sha256sum").exit_code == 0  # the rest of the machine is there
    (tmp_path / "src").mkdir()
    r = syncer.sync(tmp_path / "src", via="rsync")
    assert r.error == "--via rsync: the pod has no rsync, or one older than 3.0 (use --via sftp)"


def edge_files(top: Path) -> Path:
    """Hard links (small and past the console's batch size), empty files and folders, a file past the console's
    download chunk with a line feed in its name, one exactly the batch limit."""
    top.mkdir(parents=True)
    (top / "a.bin").write_bytes(b"hello")
    os.link(top / "a.bin", top / "same-as-a.bin")
    (top / "big.bin").write_bytes(os.urandom(1_500_000))
    os.link(top / "big.bin", top / "same-as-big.bin")
    (top / "zero").write_bytes(b"")
    (top / "deep" / "zero").mkdir(parents=True)
    (top / "deep" / "zero" / "0.txt").write_bytes(b"")
    (top / "empty" / "folders").mkdir(parents=True)
    (top / "huge\nname.bin").write_bytes(os.urandom(5_000_000))
    (top / "limit.bin").write_bytes(os.urandom(1 << 20))
    return top


def test_pull_hard_links_empty_files_and_large_odd_names(syncer: Syncer, tmp_path: Path) -> None:
    data = edge_files(syncer.workspace / "data")
    local = tmp_path / "here"
    r = syncer.sync(local, "data", pull=True)
    assert r.ok, (r.error, r.failed)
    assert len(r.verified) == 8
    assert listing(local) == listing(data)


def test_push_empty_files_and_large_odd_names(syncer: Syncer, tmp_path: Path) -> None:
    src = edge_files(tmp_path / "src")
    r = syncer.sync(src)
    assert r.ok, (r.error, r.failed)
    assert len(r.verified) == 8
    assert listing(syncer.workspace / "proj") == listing(src)


def modes(top: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in top.iterdir() if p.is_file()}


def test_a_private_file_stays_private_and_a_file_there_keeps_its_own_bits(syncer: Syncer, tmp_path: Path) -> None:
    """Permission bits as rsync keeps them without --perms, on every route (docs/sync.md#what-is-synced): a new
    file gets the source's (masked by the usual umask), one the destination has keeps its own but for the
    executable bit. A 0600 file is never made readable by all on the other end."""
    src = tmp_path / "src"
    src.mkdir()
    for name, data, mode in (
        ("secret.env", b"TOKEN=1", 0o600),
        ("big.secret", os.urandom(1_500_000), 0o600),  # past the console's batch size: the route for large files
        ("run.sh", b"#!/bin/sh\n", 0o755),
        ("shared.txt", b"shared", 0o664),
    ):
        (src / name).write_bytes(data)
        (src / name).chmod(mode)
    r = syncer.sync(src)
    assert r.ok, (r.error, r.failed)
    remote = syncer.workspace / "proj"
    assert modes(remote) == {"secret.env": 0o600, "big.secret": 0o600, "run.sh": 0o755, "shared.txt": 0o644}
    (remote / "shared.txt").chmod(0o640)
    (remote / "secret.env").chmod(0o400)
    (src / "shared.txt").write_bytes(b"shared, longer")
    (src / "secret.env").write_bytes(b"TOKEN=22")
    r = syncer.sync(src)
    assert r.ok and sorted(p for p, _ in r.verified) == ["secret.env", "shared.txt"], (r.error, r.failed)
    assert modes(remote) == {"secret.env": 0o400, "big.secret": 0o600, "run.sh": 0o755, "shared.txt": 0o640}
    here = tmp_path / "here"
    r = syncer.sync(here, pull=True)
    assert r.ok, (r.error, r.failed)
    assert modes(here) == {"secret.env": 0o400, "big.secret": 0o600, "run.sh": 0o755, "shared.txt": 0o640}


@pytest.mark.parametrize("route", [RSYNC])
def test_a_local_dir_named_like_host_colon_path(
    syncer: Syncer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rsync reads `data:v2/` (a colon before any slash) as a host's folder: podtui names LOCAL_DIR absolutely."""
    monkeypatch.chdir(tmp_path)
    src = Path("data:v2")
    src.mkdir()
    (src / "a.txt").write_text("a")
    r = syncer.sync(src)
    assert r.ok and r.route == "rsync" and [p for p, _ in r.verified] == ["a.txt"], (r.error, r.failed)
    r = syncer.sync(Path("back:v2"), pull=True)
    assert r.ok and (tmp_path / "back:v2" / "a.txt").read_text() == "a", (r.error, r.failed)
