"""Symlinks, FIFOs and devices as the source of a transfer, and inside a folder, by every way (console, runpodctl,
SFTP) in both directions, against the simulator's pods (real bash, real OpenSSH for SFTP).

Followed: a symlink named as the source (to a folder or a file), as `cp -r src/` and rsync follow it; the copy
is the real thing, under the link's name. Kept as symlinks: relative links inside a folder that stay inside it
(also a loop among them, and one that dangles inside). Refused at once, with the reason, not retried, nothing
left behind: a dangling or looping symlink as the source, a FIFO or a device as the source (the FIFO would hang a
reader), and inside a folder a symlink to an absolute path or out of the folder, a FIFO, a device.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.transfer.job import TransferJob
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, needs_sshd, pod_id, pod_workspace
from tests.helpers.transfer import MakeQueue, no_part_files, run_all, tree

pytestmark = pytest.mark.usefixtures("local_runpodctl")
ROUTES = [
    pytest.param("console", GATEWAY_POD, id="console"),
    pytest.param("runpodctl", GATEWAY_POD, id="runpodctl"),
    pytest.param("sftp", DIRECT_POD, id="sftp", marks=needs_sshd),
]


@dataclass
class Case:
    name: str  # the source, in the sending side's folder
    refused: str | None = None  # a phrase of the error; None: it must arrive verified
    real: str | None = None  # what it is really (a symlink's folder or file), for the comparison


def make_device(path: Path) -> bool:
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # what /dev/zero is
    except (PermissionError, OSError):
        return False
    return True


def lay_out(side: Path) -> list[Case]:
    """The sending side's files, and what must become of each."""
    (side / "runs" / "run-7" / "ckpt").mkdir(parents=True)
    (side / "runs" / "run-7" / "empty").mkdir()
    (side / "runs" / "run-7" / "adapter.bin").write_bytes(os.urandom(300_000))
    (side / "runs" / "run-7" / "ckpt" / "step-100.pt").write_bytes(os.urandom(70_000))
    (side / "outputs").symlink_to("runs/run-7")  # the common layout: a link to the latest run
    (side / "model.bin").write_bytes(os.urandom(200_000))
    (side / "latest.bin").symlink_to("model.bin")
    inner = side / "inner"
    (inner / "sub").mkdir(parents=True)
    (inner / "data.bin").write_bytes(os.urandom(50_000))
    (inner / "same.bin").symlink_to("data.bin")
    (inner / "sub" / "up.bin").symlink_to("../data.bin")
    (inner / "subdir").symlink_to("sub")
    (inner / "loop-1").symlink_to("loop-2")  # a loop inside: harmless as links, kept
    (inner / "loop-2").symlink_to("loop-1")
    (inner / "later.bin").symlink_to("not-written-yet.bin")  # dangles, inside: kept as it is
    (side / "dangling").symlink_to("runs/run-99")
    (side / "loop-a").symlink_to("loop-b")
    (side / "loop-b").symlink_to("loop-a")
    (side / "abs-inside").mkdir()
    (side / "abs-inside" / "ok.txt").write_text("fine\n")
    (side / "abs-inside" / "hosts").symlink_to("/etc/hosts")
    (side / "out-inside").mkdir()
    (side / "out-inside" / "model.bin").symlink_to("../model.bin")
    (side / "sly-inside").mkdir()  # lexically inside, really out: self -> . then self/../model.bin
    (side / "sly-inside" / "self").symlink_to(".")
    (side / "sly-inside" / "model.bin").symlink_to("self/../model.bin")
    os.mkfifo(side / "pipe")
    (side / "zero").symlink_to("/dev/zero")
    (side / "fifo-inside").mkdir()
    (side / "fifo-inside" / "a.txt").write_text("a\n")
    os.mkfifo(side / "fifo-inside" / "queue")
    cases = [
        Case("outputs", real="runs/run-7"),
        Case("latest.bin", real="model.bin"),
        Case("inner", real="inner"),
        Case("dangling", refused="is a symlink to runs/run-99, which does not exist"),
        Case("loop-a", refused="is a symlink loop"),
        Case("abs-inside", refused="hosts is a symlink to an absolute path (/etc/hosts)"),
        Case("out-inside", refused="model.bin is a symlink out of the folder (../model.bin)"),
        Case("sly-inside", refused="model.bin is a symlink out of the folder (self/../model.bin)"),
        Case("pipe", refused="is a FIFO (named pipe)"),
        Case("zero", refused="is a symlink to /dev/zero, which is a device file"),
        Case("fifo-inside", refused="queue is a FIFO (named pipe)"),
    ]
    (side / "dev-inside").mkdir()
    (side / "dev-inside" / "b.txt").write_text("b\n")
    if make_device(side / "dev-inside" / "zero"):
        cases.append(Case("dev-inside", refused="zero is a device file"))
    return cases


@pytest.fixture
def sides(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    local_src, down = tmp_path / "src", tmp_path / "down"
    local_src.mkdir()
    down.mkdir()
    yield local_src, down


@pytest.mark.parametrize("direction", ["pull", "push"])
@pytest.mark.parametrize(("via", "pod"), ROUTES)
def test_links_fifos_and_devices(
    via: str,
    pod: str,
    direction: str,
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    sides: tuple[Path, Path],
    tmp_path: Path,
) -> None:
    ws = pod_workspace(full_sim, sim_api, pod)
    local_src, down = sides
    pid = pod_id(sim_api, pod)
    if direction == "pull":
        side = ws / "src"
        side.mkdir()
        cases = lay_out(side)
        jobs = [TransferJob(pid, "pull", f"src/{c.name}", str(down), route_choice=via) for c in cases]  # type: ignore[arg-type]
        arrived = down
    else:
        side = local_src
        cases = lay_out(side)
        jobs = [
            TransferJob(pid, "push", str(side / c.name), "incoming/", route_choice=via)  # type: ignore[arg-type]
            for c in cases
        ]
        arrived = ws / "incoming"
    before = tree(side)
    done = run_all(make_queue(), *jobs, timeout_s=240)
    wrong = []
    for case, job in zip(cases, done, strict=True):
        target = arrived / case.name
        said = f"{case.name}: {job.state} after {job.attempts} attempts: {job.error}"
        if case.refused is None:
            real = side / (case.real or case.name)
            if job.state != "verified":
                wrong.append(said + "\n  " + "\n  ".join(job.log[-6:]))
            elif target.is_symlink() or not target.exists():
                wrong.append(f"{case.name}: called verified, and what arrived is a symlink or nothing")
            elif real.is_dir() and tree(target) != tree(real):
                wrong.append(f"{case.name}: the folder that arrived differs from {case.real}")
            elif real.is_file() and target.read_bytes() != real.read_bytes():
                wrong.append(f"{case.name}: the file that arrived differs from {case.real}")
        else:
            if (job.state, job.attempts, job.retryable, job.checksum) != ("failed", 1, False, None):
                wrong.append(said + " (a refusal fails at once, not retried)")
            elif case.refused not in (job.error or ""):
                wrong.append(f"{case.name}: the error does not say why: {job.error}")
            if os.path.lexists(target):
                wrong.append(f"{case.name}: refused, yet {target} exists")
    assert not wrong, "\n".join(wrong)
    assert tree(side) == before  # the source is never touched
    assert no_part_files(ws, down, tmp_path / "work"), [p.name for p in (*ws.rglob("*"), *down.rglob("*"))]
    if direction == "push":
        assert sorted(p.name for p in arrived.iterdir()) == ["inner", "latest.bin", "outputs"]
    else:
        assert sorted(p.name for p in down.iterdir()) == ["inner", "latest.bin", "outputs"]


ODD_NAMES = [
    "new\nline.bin",
    "back\\slash.bin",
    "cr\rreturn.bin",
    "esc\x1b[31m.bin",
    "-dash.bin",
    "tab\tname",
    " lead space",
    "quote'\"$(echo x).bin",
    os.fsdecode(b"not-utf8-\xff.bin"),
    "ünï 🚀.bin",
]


@pytest.mark.parametrize("direction", ["pull", "push"])
@pytest.mark.parametrize(("via", "pod"), ROUTES)
def test_odd_names_inside_a_folder_arrive_and_compare(
    via: str,
    pod: str,
    direction: str,
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    sides: tuple[Path, Path],
) -> None:
    """Every byte a name may hold, in files, folders and links: each is listed, hashed and compared by name on both
    ends (the names travel as base64 from the pod, never through its terminal as text)."""
    ws = pod_workspace(full_sim, sim_api, pod)
    local_src, down = sides
    top = (ws if direction == "pull" else local_src) / "odd"
    (top / "sub\nfolder").mkdir(parents=True)
    for i, name in enumerate(ODD_NAMES):
        (top / name).write_bytes(os.urandom(1000 + i))
        (top / "sub\nfolder" / name).symlink_to(f"../{name}")
    pid = pod_id(sim_api, pod)
    job = (
        TransferJob(pid, "pull", "odd", str(down), route_choice=via)
        if direction == "pull"  # type: ignore[arg-type]
        else TransferJob(pid, "push", str(top), "incoming/", route_choice=via)
    )  # type: ignore[arg-type]
    (done,) = run_all(make_queue(), job, timeout_s=90)
    assert done.state == "verified", done.log
    arrived = (down if direction == "pull" else ws / "incoming") / "odd"
    assert tree(arrived) == tree(top) and len(tree(top)) == 2 * len(ODD_NAMES) + 1
