"""What the transfer code writes on this machine while the user's data passes through it is the owner's only,
whatever the umask: staging archives, work folders, part files, unpack and receive folders (0700 folders, 0600
files), and the history with its lock. Once verified and under its final name, a download gets the mode a new
file of the user's gets."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.sim.relay import install_runpodctl
from podtui.sim.simulator import Simulator
from podtui.transfer import manifest
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, needs_sshd, pod_id, pod_workspace
from tests.helpers.transfer import run_all

MARKS = (".podtui-part", ".podtui-unpack", ".podtui-receive", ".podtui-tar")


@pytest.fixture(params=[0o022, 0o000], ids=["umask-022", "umask-000"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    yield int(request.param)
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


class Watcher:
    """Every podtui-made path here seen while transfers run, with the mode it had then."""

    def __init__(self, roots: list[Path], work: Path) -> None:
        self.roots, self.work = roots, work
        self.seen: dict[str, tuple[bool, int]] = {}  # path -> (a folder?, its mode)

    def look(self) -> None:
        try:
            found = [self.work, *self.work.rglob("*")] if self.work.exists() else []
            for root in self.roots:
                found += [p for p in root.rglob("*") if any(m in p.name for m in MARKS)]
        except FileNotFoundError:  # a folder went while it was walked: the next look sees the rest
            return
        for p in found:
            try:
                st = p.lstat()
            except FileNotFoundError:
                continue
            self.seen[str(p)] = (stat.S_ISDIR(st.st_mode), stat.S_IMODE(st.st_mode))

    def wrong(self) -> list[str]:
        return [f"{path}: {m:o}" for path, (folder, m) in self.seen.items() if m != (0o700 if folder else 0o600)]


ROUTES = [
    pytest.param("console", GATEWAY_POD, id="console"),
    pytest.param("runpodctl", GATEWAY_POD, id="runpodctl"),
    pytest.param("sftp", DIRECT_POD, id="sftp", marks=needs_sshd),
    pytest.param("openssh", DIRECT_POD, id="openssh", marks=needs_sshd),
]


@pytest.mark.parametrize(("via", "pod"), ROUTES)
def test_what_passes_through_is_private_until_verified(
    via: str,
    pod: str,
    umask: int,
    make_queue: Callable[..., TransferQueue],
    context: TransferContext,
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
    history_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("podtui.transfer.routes.runpodctl.JOIN_PAUSE_S", 0.1)
    context.runpodctl = str(install_runpodctl(tmp_path / "bin", full_sim.relay.address))
    ws = pod_workspace(full_sim, sim_api, pod)
    (ws / "weights.bin").write_bytes(os.urandom(400_000))
    (ws / "outputs" / "ckpt").mkdir(parents=True)
    (ws / "outputs" / "ckpt" / "adapter.bin").write_bytes(os.urandom(90_000))
    up = tmp_path / "dataset"
    (up / "shards").mkdir(parents=True)
    (up / "shards" / "0.bin").write_bytes(os.urandom(120_000))
    down = tmp_path / "down"
    down.mkdir()
    watcher = Watcher([down], context.work_dir)
    hash_local = manifest.hash_local

    def hashing(top: Path, *args: object, **kw: object) -> manifest.Manifest:
        watcher.look()  # an unpacked download, before it is verified and renamed
        return hash_local(top, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(manifest, "hash_local", hashing)
    pid = pod_id(sim_api, pod)
    q = make_queue(concurrency=1, on_change=lambda job: watcher.look())
    done = run_all(
        q,
        TransferJob(pid, "pull", "weights.bin", str(down), route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "pull", "outputs", str(down), route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "push", str(up), "incoming/", route_choice=via),
    )  # type: ignore[arg-type]
    assert [j.state for j in done] == ["verified"] * 3, [j.log[-3:] for j in done]
    kinds = {Path(p).name.split(".podtui-")[-1].split("-")[0] if ".podtui-" in p else "work" for p in watcher.seen}
    assert {"part", "unpack", "tar", "work"} <= kinds, sorted(watcher.seen)  # each was seen while it existed
    if via == "runpodctl":
        assert "receive" in kinds, sorted(watcher.seen)
    assert not watcher.wrong(), watcher.wrong()
    assert mode(context.work_dir) == 0o700
    assert mode(history_path) == 0o600 and mode(history_path.with_name("transfers.json.lock")) == 0o600
    assert mode(history_path.parent) == 0o700
    # verified and in place: what `cp` would have made under this umask
    assert mode(down / "weights.bin") == 0o666 & ~umask
    assert mode(down / "outputs") == 0o777 & ~umask


@pytest.mark.parametrize(("via", "pod"), ROUTES)
def test_folders_made_for_a_download_get_the_umasks_mode(
    via: str,
    pod: str,
    umask: int,
    make_queue: Callable[..., TransferQueue],
    context: TransferContext,
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The folders the user asked for (`pull x.bin newdir/x.bin`, `pull outputs new/sub/`) are made as `mkdir -p`
    makes them, on every way; only podtui's own staging inside them is private."""
    monkeypatch.setattr("podtui.transfer.routes.runpodctl.JOIN_PAUSE_S", 0.1)
    context.runpodctl = str(install_runpodctl(tmp_path / "bin", full_sim.relay.address))
    ws = pod_workspace(full_sim, sim_api, pod)
    (ws / "x.bin").write_bytes(os.urandom(30_000))
    (ws / "outputs").mkdir()
    (ws / "outputs" / "a.bin").write_bytes(os.urandom(20_000))
    down = tmp_path / "down"
    down.mkdir()
    pid = pod_id(sim_api, pod)
    done = run_all(
        make_queue(concurrency=1),
        TransferJob(pid, "pull", "x.bin", str(down / "newdir" / "x.bin"), route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "pull", "x.bin", str(down / "a" / "b") + "/", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "pull", "outputs", str(down / "c" / "d") + "/", route_choice=via),
    )  # type: ignore[arg-type]
    assert [j.state for j in done] == ["verified"] * 3, [j.log[-3:] for j in done]
    for folder in ("newdir", "a", "a/b", "c", "c/d"):
        assert mode(down / folder) == 0o777 & ~umask, folder
    assert mode(down / "newdir" / "x.bin") == mode(down / "a" / "b" / "x.bin") == 0o666 & ~umask
    assert mode(down / "c" / "d" / "outputs") == 0o777 & ~umask
