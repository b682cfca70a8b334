"""Where a transfer's file or folder goes, on every way (console, runpodctl, SFTP, OpenSSH) against the simulator:
a source named `.` goes under its folder's own name and never replaces the target folder; names and folders
starting with `-` are names, not options; a transfer refused before it starts (no room, nothing readable) leaves
nothing behind; a pod whose answer about the source was lost is asked again."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.sim.relay import install_runpodctl
from podtui.sim.simulator import Simulator
from podtui.transfer import source
from podtui.transfer.files import refusals
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext, TransferFailed
from podtui.transfer.source import SourceRefused
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, needs_sshd, pod_id, pod_workspace
from tests.helpers.transfer import no_part_files, run_all, tree

MakeQueue = Callable[..., TransferQueue]
ROUTES = [
    pytest.param("console", GATEWAY_POD, id="console"),
    pytest.param("runpodctl", GATEWAY_POD, id="runpodctl"),
    pytest.param("sftp", DIRECT_POD, id="sftp", marks=needs_sshd),
    pytest.param("openssh", DIRECT_POD, id="openssh", marks=needs_sshd),
]


@pytest.fixture(autouse=True)
def runpodctl_here(
    context: TransferContext, full_sim: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("podtui.transfer.routes.runpodctl.JOIN_PAUSE_S", 0.1)
    context.runpodctl = str(install_runpodctl(tmp_path / "bin", full_sim.relay.address))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The folder podtui runs in: myproject, with a subfolder."""
    folder = tmp_path / "myproject"
    (folder / "sub").mkdir(parents=True)
    (folder / "train.py").write_text("print('train')\n")
    (folder / "sub" / "data.bin").write_bytes(os.urandom(3000))
    monkeypatch.chdir(folder)
    yield folder


def listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize(("via", "pod"), ROUTES)
def test_pushing_the_current_folder_goes_under_its_own_name(
    via: str, pod: str, project: Path, make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api
) -> None:
    """`.` and its spellings are the folder podtui runs in, named myproject: with --overwrite into `runs/`, it lands
    as runs/myproject beside what runs/ held, which is never replaced; `/` has no name and is refused."""
    ws = pod_workspace(full_sim, sim_api, pod)
    (ws / "runs" / "run-7").mkdir(parents=True)
    (ws / "runs" / "run-7" / "adapter.bin").write_bytes(b"weeks of training")
    pid = pod_id(sim_api, pod)
    spellings = [".", "./", "sub/..", "../myproject/."]
    for spelling in spellings:
        (done,) = run_all(
            make_queue(),
            TransferJob(
                pid,
                "push",
                spelling,
                "runs/",
                route_choice=via,  # type: ignore[arg-type]
                overwrite=True,
            ),
        )
        assert (done.state, done.final_path, done.name) == ("verified", "runs/myproject", "myproject/"), (
            spelling,
            done.error,
        )
        assert tree(ws / "runs" / "myproject") == tree(project), spelling
        assert (ws / "runs" / "run-7" / "adapter.bin").read_bytes() == b"weeks of training", spelling
    (root,) = run_all(make_queue(), TransferJob(pid, "push", "/", "runs/", route_choice=via, overwrite=True))  # type: ignore[arg-type]
    assert (root.state, root.error_kind, root.attempts) == ("failed", "bad_source", 1)
    assert "name the file or folder itself" in (root.error or "")
    assert listing(ws / "runs") == [
        "myproject",
        "myproject/sub",
        "myproject/sub/data.bin",
        "myproject/train.py",
        "run-7",
        "run-7/adapter.bin",
    ]
    assert no_part_files(ws)


@pytest.mark.parametrize(("via", "pod"), ROUTES)
def test_pulling_a_folder_without_a_name_is_refused(
    via: str, pod: str, make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, pod)
    (ws / "outputs").mkdir()
    (ws / "outputs" / "a.bin").write_bytes(b"a")
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "precious.txt").write_text("mine")
    pid = pod_id(sim_api, pod)
    done = run_all(
        make_queue(),
        *(
            TransferJob(pid, "pull", s, str(keep), route_choice=via, overwrite=True)  # type: ignore[arg-type]
            for s in (".", "./", "outputs/.", "outputs/..", "/", "//")
        ),
    )
    for j in done:
        assert (j.state, j.error_kind, j.attempts) == ("failed", "bad_source", 1), (j.source, j.error)
    assert listing(keep) == ["precious.txt"]


@pytest.mark.parametrize(("via", "pod"), ROUTES)
def test_names_that_start_with_a_dash(
    via: str,
    pod: str,
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sources and targets starting with `-`, as files and folders, both ways: every command given such a path
    takes it as a path (`--`), so each arrives verified and nothing is left beside it."""
    ws = pod_workspace(full_sim, sim_api, pod)
    here = tmp_path / "here"
    (here / "-run" / "-shards").mkdir(parents=True)
    (here / "-run" / "-shards" / "-0.bin").write_bytes(os.urandom(5000))
    (here / "-run" / "meta.json").write_text("{}")
    (here / "-one.bin").write_bytes(os.urandom(700))
    (ws / "-data" / "-x").mkdir(parents=True)
    (ws / "-data" / "-x" / "-y.bin").write_bytes(os.urandom(4000))
    (ws / "-f.bin").write_bytes(os.urandom(900))
    monkeypatch.chdir(here)  # relative names, as typed: "-run", not /tmp/.../-run
    pid = pod_id(sim_api, pod)
    jobs = [
        TransferJob(pid, "push", "-run", "-out/", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "push", "-one.bin", "-out/-deeper/", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "push", "-one.bin", "-renamed.bin", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "pull", "-data", "-down/", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "pull", "-f.bin", "-down/-deeper/", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "pull", "-data/-x/-y.bin", "-y-renamed.bin", route_choice=via),
    ]  # type: ignore[arg-type]
    done = run_all(make_queue(), *jobs)
    for j in done:
        assert (j.state, j.attempts) == ("verified", 1), (j.source, j.target, j.error)
    assert tree(ws / "-out" / "-run") == tree(here / "-run")
    assert (ws / "-out" / "-deeper" / "-one.bin").read_bytes() == (here / "-one.bin").read_bytes()
    assert (ws / "-renamed.bin").read_bytes() == (here / "-one.bin").read_bytes()
    assert tree(here / "-down" / "-data") == tree(ws / "-data")
    assert (here / "-down" / "-deeper" / "-f.bin").read_bytes() == (ws / "-f.bin").read_bytes()
    assert (here / "-y-renamed.bin").read_bytes() == (ws / "-data" / "-x" / "-y.bin").read_bytes()
    assert no_part_files(ws, here)


@pytest.mark.parametrize(("via", "pod"), ROUTES)
def test_a_transfer_refused_for_room_leaves_no_folder_behind(
    via: str,
    pod: str,
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The room is checked where the new folders would go (the nearest folder there), before they are made: a
    file or folder that does not fit leaves neither a folder on the pod nor one here."""
    ws = pod_workspace(full_sim, sim_api, pod)
    before = listing(ws)
    (ws / "big.bin").write_bytes(os.urandom(50_000))
    (ws / "big-dir").mkdir()
    (ws / "big-dir" / "a.bin").write_bytes(os.urandom(50_000))
    up = tmp_path / "up"
    (up / "folder").mkdir(parents=True)
    (up / "folder" / "a.bin").write_bytes(os.urandom(50_000))
    (up / "model.bin").write_bytes(os.urandom(50_000))
    down = tmp_path / "down"
    down.mkdir()
    monkeypatch.setattr("podtui.transfer.push.free_remote", lambda shell, folder: 10)
    monkeypatch.setattr("shutil.disk_usage", lambda folder: type("U", (), {"free": 10})())
    pid = pod_id(sim_api, pod)
    done = run_all(
        make_queue(),
        TransferJob(pid, "push", str(up / "model.bin"), "new/deep/", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "push", str(up / "folder"), "new2/deep/", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "pull", "big.bin", str(down / "new" / "deep") + "/", route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "pull", "big-dir", str(down / "new2" / "deep") + "/", route_choice=via),
    )  # type: ignore[arg-type]
    for j in done:
        assert (j.state, j.error_kind, j.attempts) == ("failed", "no_space", 1), (j.source, j.error)
    assert listing(ws) == sorted([*before, "big.bin", "big-dir", "big-dir/a.bin"])
    assert listing(down) == []


def test_an_unreadable_file_is_refused_before_the_pod_is_reached(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found while the source is looked at (root reads every file, so the test says which one it cannot read)."""
    up = tmp_path / "up"
    (up / "folder" / "sub").mkdir(parents=True)
    (up / "folder" / "sub" / "secret.bin").write_bytes(b"x")
    (up / "model.bin").write_bytes(b"m")
    unreadable = {str(up / "folder" / "sub" / "secret.bin"), str(up / "model.bin")}
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: str(p) not in unreadable and real_access(p, mode, **kw))
    reached: list[str] = []
    monkeypatch.setattr("podtui.transfer.files.reach", lambda *a: reached.append("pod") or 1 / 0)
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    before = listing(ws)
    pid = pod_id(sim_api, GATEWAY_POD)
    done = run_all(
        make_queue(),
        TransferJob(pid, "push", str(up / "folder"), "new/"),
        TransferJob(pid, "push", str(up / "model.bin"), "new/"),
    )
    for j, name in zip(done, ("secret.bin", "model.bin"), strict=True):
        assert (j.state, j.error_kind, j.attempts, j.retryable) == ("failed", "unreadable", 1, False), j.error
        assert "Permission denied" in (j.error or "") and name in (j.error or ""), j.error
    assert reached == [] and listing(ws) == before


@pytest.mark.parametrize("kind", ["not_found", "link_loop", "special", "unreadable", "probe"])
def test_only_a_lost_answer_about_the_source_is_worth_another_try(kind: str) -> None:
    with pytest.raises(TransferFailed) as failed, refusals():
        raise SourceRefused("what podtui says", kind)
    assert (failed.value.kind, failed.value.retryable) == (kind, kind == "probe")


def test_a_pull_whose_source_could_not_be_told_is_tried_again(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pod's answer to "what is X" did not arrive whole the first time (a dropped line): the retry asks again."""
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "model.bin").write_bytes(os.urandom(2000))
    real = source.remote
    asked: list[str] = []

    def flaky(shell: object, path: str) -> source.Source:
        asked.append(path)
        if len(asked) == 1:
            raise SourceRefused(f"cannot tell what {path} is on the pod: no answer", "probe")
        return real(shell, path)  # type: ignore[arg-type]

    monkeypatch.setattr(source, "remote", flaky)
    (done,) = run_all(make_queue(), TransferJob(pod_id(sim_api, GATEWAY_POD), "pull", "model.bin", str(tmp_path)))
    assert (done.state, done.attempts, asked) == ("verified", 2, ["model.bin", "model.bin"]), done.log
    assert (tmp_path / "model.bin").read_bytes() == (ws / "model.bin").read_bytes()
