"""Folders whose listing and checksums are larger than what a command's output may be (run_remote keeps a bounded
tail of it: 64 MiB, a few hundred thousand names): the pod writes them to files and they are read back in checked
chunks, so such a folder is verified like any other, both ways, on every way. A listing that cannot be understood
is said in words, and the bytes are not sent again for it."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.remote import RemoteShell
from podtui.sim.relay import install_runpodctl
from podtui.sim.simulator import Simulator
from podtui.transfer import manifest
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, needs_sshd, pod_id, pod_workspace
from tests.helpers.transfer import no_part_files, run_all, tree

CAP = 64 << 10  # what each command's output keeps here, as 64 MiB does for a real pod's shell
FILES = 700  # with their long names, a listing of ~150 kB and checksums of ~200 kB: past the cap several times
ROUTES = [
    pytest.param("console", GATEWAY_POD, id="console"),
    pytest.param("runpodctl", GATEWAY_POD, id="runpodctl"),
    pytest.param("sftp", DIRECT_POD, id="sftp", marks=needs_sshd),
]


@pytest.fixture(autouse=True)
def small_cap(context: TransferContext, full_sim: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("podtui.transfer.runner.RemoteShell", functools.partial(RemoteShell, max_output_bytes=CAP))
    monkeypatch.setattr("podtui.transfer.routes.runpodctl.JOIN_PAUSE_S", 0.1)
    context.runpodctl = str(install_runpodctl(tmp_path / "bin", full_sim.relay.address))


def many(root: Path) -> Path:
    for i in range(FILES):
        sub = root / f"shard-{i % 7}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / (f"{i:05d}-" + "n" * 180 + ".bin")).write_bytes(i.to_bytes(4, "big") * (i % 5))
    (root / "latest").symlink_to("shard-3")
    return root


@pytest.mark.parametrize(("via", "pod"), ROUTES)
def test_a_folder_listed_past_the_output_cap_is_verified(
    via: str, pod: str, make_queue: Callable[..., TransferQueue], full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, pod)
    there = many(ws / "dataset")
    here = many(tmp_path / "up" / "corpus")
    down = tmp_path / "down"
    down.mkdir()
    pid = pod_id(sim_api, pod)
    pull, push = run_all(
        make_queue(),
        TransferJob(pid, "pull", "dataset", str(down), route_choice=via),  # type: ignore[arg-type]
        TransferJob(pid, "push", str(here), "incoming/", route_choice=via),
        timeout_s=240,
    )  # type: ignore[arg-type]
    for job in (pull, push):
        assert (job.state, job.attempts) == ("verified", 1), job.log[-4:]
        assert any(f"{FILES} files" in line for line in job.log), job.log[-4:]
    assert tree(down / "dataset") == tree(there) and tree(ws / "incoming" / "corpus") == tree(here)
    assert no_part_files(ws, down)
    assert not list((ws.parent / "tmp").glob("podtui-list.*"))  # the pod's listing folders (its /tmp) are gone


def test_a_listing_that_cannot_be_understood_is_said_and_not_sent_again(
    make_queue: Callable[..., TransferQueue],
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As if the pod's find printed another format (its last entry cut short): a retry would send the folder again
    only to get the same listing, so the transfer fails at once, saying what is wrong with the listing."""
    read = manifest.read_remote

    def cut(*args: object, **kw: object) -> bytes:
        return read(*args, **kw)[:-1]  # type: ignore[arg-type]

    monkeypatch.setattr(manifest, "read_remote", cut)
    uploads: list[str] = []
    from podtui.transfer.routes import console

    upload = console.upload
    monkeypatch.setattr(console, "upload", lambda *a, **kw: uploads.append("sent") or upload(*a, **kw))
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    here = many(tmp_path / "up" / "corpus")
    (push,) = run_all(
        make_queue(),
        TransferJob(pod_id(sim_api, GATEWAY_POD), "push", str(here), "incoming/", route_choice="console"),
        timeout_s=120,
    )
    assert (push.state, push.attempts, push.retryable, uploads) == ("failed", 1, False, ["sent"]), push.log[-3:]
    assert "could not be understood (it ends in the middle of an entry" in (push.error or "")
    assert not (ws / "incoming" / "corpus").exists() and no_part_files(ws)


def test_listing_and_hashing_a_folder_with_odd_names(
    full_sim: Simulator, sim_api: V2Api, tmp_path: Path, context: TransferContext
) -> None:
    """Names with newlines, backslashes, spaces and bytes that are not UTF-8 come back as they are, with their
    sums, through the files and chunks."""
    from podtui.transfer.runner import reach

    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    top = ws / "odd"
    top.mkdir()
    names = [b"new\nline.bin", b"back\\slash.bin", b"sp ace.bin", b"\xff\xfe.bin", b"-dash.bin"]
    for i, n in enumerate(names):
        with open(os.path.join(os.fsencode(top), n), "wb") as f:
            f.write(bytes([i]) * 100)
    pod = sim_api.fetch_snapshot().find(GATEWAY_POD)
    assert pod is not None
    with reach(pod, context.ssh_settings()) as remote:
        listed = manifest.scan_remote(remote.shell, "odd")
        summed = manifest.hash_remote(remote.shell, "odd", listed, "sha256")
    here = manifest.hash_local(top, manifest.scan_local(top), "sha256")
    assert summed == here and len(summed) == len(names)
