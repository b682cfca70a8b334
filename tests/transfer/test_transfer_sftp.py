"""SFTP transfers against a real OpenSSH sshd (a simulated pod's direct SSH), verified by checksums on both ends."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import Connection, SshSettings, connect, endpoints_for
from podtui.core.ssh.remote import open_remote
from podtui.sim.simulator import Simulator
from podtui.transfer.checksum import ALGORITHMS, ChecksumError, local_digest, remote_digest
from podtui.transfer.routes import sftp
from tests.helpers.sim import needs_sshd, pod_workspace

pytestmark = needs_sshd
POD = "llama-lora-3090"  # has direct SSH


@pytest.fixture
def conn(sim_api: V2Api, ssh_settings: SshSettings) -> Iterator[Connection]:
    pod = sim_api.fetch_snapshot().find(POD)
    assert pod is not None
    c = connect(endpoints_for(pod, ssh_settings, "direct")[0], ssh_settings)
    yield c
    c.close()


@pytest.fixture
def workspace(full_sim: Simulator, sim_api: V2Api) -> Path:
    return pod_workspace(full_sim, sim_api, POD)


def test_upload_is_verified_then_renamed(
    conn: Connection, workspace: Path, tmp_path: Path, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    local = tmp_path / "model.bin"
    local.write_bytes(os.urandom(3_000_000))
    seen: list[tuple[int, int]] = []
    part = sftp.upload(conn, local, "model.bin", on_progress=lambda d, t: seen.append((d, t)))
    assert part == ".model.bin.podtui-part" and not (workspace / "model.bin").exists()
    assert seen[-1] == (3_000_000, 3_000_000)
    pod = sim_api.fetch_snapshot().find(POD)
    assert pod is not None
    with open_remote(pod, ssh_settings, "exec") as shell:
        for algorithm in ALGORITHMS:
            assert remote_digest(shell, part, algorithm) == local_digest(local, algorithm)
        with pytest.raises(ChecksumError, match="no-such-file"):
            remote_digest(shell, "no-such-file")
    sftp.finish_remote(conn, part, "model.bin", overwrite=False)
    assert (workspace / "model.bin").read_bytes() == local.read_bytes()
    assert local.exists()  # the source is never touched
    # a second upload may not replace it unless asked
    part = sftp.upload(conn, local, "model.bin")
    with pytest.raises(sftp.SftpError, match="already exists"):
        sftp.finish_remote(conn, part, "model.bin", overwrite=False)
    sftp.finish_remote(conn, part, "model.bin", overwrite=True)


def test_download_lands_under_a_part_name_until_verified(conn: Connection, workspace: Path, tmp_path: Path) -> None:
    (workspace / "ckpt.pt").write_bytes(os.urandom(2_500_000))
    target = tmp_path / "out" / "ckpt.pt"
    part = sftp.download(conn, "ckpt.pt", target)
    assert part.name == ".ckpt.pt.podtui-part" and not target.exists()
    assert local_digest(part) == local_digest(workspace / "ckpt.pt")
    assert sftp.finish_local(part, target, overwrite=False) == target
    assert target.read_bytes() == (workspace / "ckpt.pt").read_bytes()
    part = sftp.download(conn, "ckpt.pt", target)
    with pytest.raises(sftp.SftpError, match="already exists"):
        sftp.finish_local(part, target, overwrite=False)
    assert part.exists()  # the verified copy is kept, not thrown away


def test_missing_files_are_clear_errors(conn: Connection, tmp_path: Path) -> None:
    target = tmp_path / "downloads" / "nope.bin"
    with pytest.raises(sftp.SftpError, match="does not exist on the pod"):
        sftp.download(conn, "nope.bin", target)
    assert list(target.parent.iterdir()) == []  # no part file left behind
    with pytest.raises(sftp.SftpError, match="does not exist"):
        sftp.upload(conn, tmp_path / "absent.bin", "absent.bin")


def test_a_truncated_copy_fails_verification(conn: Connection, workspace: Path, tmp_path: Path) -> None:
    (workspace / "weights.bin").write_bytes(os.urandom(1_000_000))
    part = sftp.download(conn, "weights.bin", tmp_path / "weights.bin")
    with part.open("r+b") as f:  # what a dropped link leaves behind
        f.truncate(600_000)
    assert local_digest(part) != local_digest(workspace / "weights.bin")
