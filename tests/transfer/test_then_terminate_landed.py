"""Before a pod is terminated after its downloads, each is checked to be still here as it was verified: a file the
same one (not truncated, rewritten or replaced), a folder with the same entries and sizes. A change between the
verification and the terminate holds the terminate back; a change of mode or a read does not."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.transfer import pull
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runners import runner_for
from tests.helpers.sim import GATEWAY_POD, pod_id, pod_workspace
from tests.helpers.transfer import run_all


def truncate(p: Path) -> None:
    p.write_bytes(b"")


def rewrite_same_size(p: Path) -> None:
    data = p.read_bytes()
    p.write_bytes(bytes(255 - b for b in data))


def replace_with_copy(p: Path) -> None:
    """The same bytes, but another file (what a `cp other p` after a `rm p` leaves)."""
    data = p.read_bytes()
    p.unlink()
    p.write_bytes(data)
    os.utime(p, ns=(0, 0))


def symlink_instead(p: Path) -> None:
    data = p.read_bytes()
    p.unlink()
    (p.parent / f".{p.name}.real").write_bytes(data)
    p.symlink_to(f".{p.name}.real")


def chmod_only(p: Path) -> None:
    p.chmod(0o400)


def read_only(p: Path) -> None:
    p.read_bytes()


FILE_CHANGES: dict[str, tuple[Callable[[Path], None], bool]] = {  # name: (change, still landed)
    "truncated": (truncate, False),
    "rewritten": (rewrite_same_size, False),
    "replaced": (replace_with_copy, False),
    "symlink": (symlink_instead, False),
    "deleted": (Path.unlink, False),
    "chmod": (chmod_only, True),
    "read": (read_only, True),
}


def emptied(d: Path) -> None:
    for p in d.iterdir():
        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()


def one_less(d: Path) -> None:
    (d / "ckpt" / "optimizer.pt").unlink()


def one_more(d: Path) -> None:
    (d / "stray.txt").write_text("x")


def shorter(d: Path) -> None:
    (d / "adapter.bin").write_bytes(b"short")


def link_retargeted(d: Path) -> None:
    (d / "latest").unlink()
    (d / "latest").symlink_to("adapter.bin")


def file_instead(d: Path) -> None:
    shutil.rmtree(d)
    d.write_bytes(b"not a folder")


FOLDER_CHANGES: dict[str, tuple[Callable[[Path], None], bool]] = {
    "emptied": (emptied, False),
    "one less": (one_less, False),
    "one more": (one_more, False),
    "shorter": (shorter, False),
    "link retargeted": (link_retargeted, False),
    "a file": (file_instead, False),
    "chmod": (lambda d: d.chmod(0o700), True),
    "read": (lambda d: [p.read_bytes() for p in d.rglob("*.bin")], True),
}


@pytest.mark.parametrize(
    ("folder", "change"), [(False, name) for name in FILE_CHANGES] + [(True, name) for name in FOLDER_CHANGES]
)
def test_what_changed_since_it_was_verified_holds_the_terminate_back(
    folder: bool,
    change: str,
    make_queue: Callable[..., TransferQueue],
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "model.bin").write_bytes(os.urandom(3000))
    (ws / "outputs" / "ckpt").mkdir(parents=True)
    (ws / "outputs" / "adapter.bin").write_bytes(os.urandom(2000))
    (ws / "outputs" / "ckpt" / "optimizer.pt").write_bytes(os.urandom(1000))
    (ws / "outputs" / "latest").symlink_to("ckpt")
    name = "outputs" if folder else "model.bin"
    how, still = (FOLDER_CHANGES if folder else FILE_CHANGES)[change]
    real = pull.landed

    def changed_first(job: TransferJob) -> bool:  # between the verification and the decision to terminate
        how(Path(job.final_path or ""))
        return real(job)

    monkeypatch.setattr(runner_for("pull"), "landed", changed_first)
    ready: list[str] = []
    q = make_queue(on_terminate_ready=lambda pod, pod_name, confirmed: ready.append(pod))
    (done,) = run_all(
        q,
        TransferJob(
            pod_id(sim_api, GATEWAY_POD),
            "pull",
            name,
            str(tmp_path / "down") + "/",
            route_choice="console",
            terminate_after=True,
            terminate_confirmed=True,
        ),
    )
    assert done.state == "verified", done.log
    assert q.wait(timeout_s=10)
    assert ready == ([pod_id(sim_api, GATEWAY_POD)] if still else []), (change, done.landed_as)
    if not still:
        assert any("is no longer here as it was verified" in line for line in (q.get(done.id) or done).log)


def test_a_download_verified_by_an_older_podtui_is_not_taken_as_landed(tmp_path: Path) -> None:
    """Nothing recorded when it was put in place: podtui cannot tell it is still as verified."""
    (tmp_path / "model.bin").write_bytes(b"m")
    job = TransferJob("p", "pull", "model.bin", str(tmp_path), state="verified", final_path=str(tmp_path / "model.bin"))
    assert not runner_for("pull").landed(job)
    pushed = TransferJob("p", "push", "model.bin", "x", state="verified")
    assert runner_for("push").landed(pushed)  # only downloads are checked
