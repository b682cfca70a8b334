"""Files through the gateway's PTY shell (no SFTP there): chunked, each chunk checked, the whole verified."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import CommandResult, RemoteShell, open_remote
from podtui.sim.simulator import Simulator
from podtui.transfer.checksum import local_digest, remote_digest
from podtui.transfer.routes import console
from tests.helpers.sim import pod_workspace

POD = "eval-a100"  # gateway only


@pytest.fixture
def shell(sim_api: V2Api, ssh_settings: SshSettings) -> Iterator[RemoteShell]:
    pod = sim_api.fetch_snapshot().find(POD)
    assert pod is not None
    with open_remote(pod, ssh_settings, "gateway") as sh:
        yield sh


@pytest.fixture
def workspace(full_sim: Simulator, sim_api: V2Api) -> Path:
    return pod_workspace(full_sim, sim_api, POD)


def test_upload_through_the_console(shell: RemoteShell, workspace: Path, tmp_path: Path) -> None:
    local = tmp_path / "adapter.safetensors"
    local.write_bytes(os.urandom(700_000))  # four chunks, the last one short
    seen: list[int] = []
    part = console.upload(shell, local, "adapter.safetensors", on_progress=lambda d, t: seen.append(d))
    assert seen == [196_608, 393_216, 589_824, 700_000]
    assert remote_digest(shell, part) == local_digest(local)
    console.finish_remote(shell, part, "adapter.safetensors", overwrite=False)
    assert (workspace / "adapter.safetensors").read_bytes() == local.read_bytes()
    part = console.upload(shell, local, "adapter.safetensors")
    with pytest.raises(console.ConsoleTransferError, match="already exists"):
        console.finish_remote(shell, part, "adapter.safetensors", overwrite=False)


def test_download_through_the_console(shell: RemoteShell, workspace: Path, tmp_path: Path) -> None:
    (workspace / "ckpt.pt").write_bytes(os.urandom(2_500_000))
    part = console.download(shell, "ckpt.pt", tmp_path / "ckpt.pt", chunk_size=1 << 20)
    assert part.name == ".ckpt.pt.podtui-part"
    assert local_digest(part) == remote_digest(shell, "ckpt.pt")
    with pytest.raises(console.ConsoleTransferError, match="does not exist on the pod"):
        console.download(shell, "missing.bin", tmp_path / "missing.bin")


def test_a_damaged_chunk_is_sent_again(
    shell: RemoteShell, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a noisy terminal does to a chunk in flight: the hash does not match, so it goes again."""
    real_run = shell.run
    damaged: list[str] = []

    def flaky(command: str, timeout_s: float = 60.0, stdin: bytes | None = None) -> CommandResult:
        if not damaged and stdin is not None:  # a chunk on its way up: one base64 character changed
            damaged.append(command)
            before = stdin
            stdin = stdin.replace(b"A", b"B", 1) if b"A" in stdin else stdin.replace(b"B", b"A", 1)
            assert stdin != before
        elif not damaged and "base64 -w0" in command:  # a chunk on its way down: one character too many
            damaged.append(command)
            command = command.replace('base64 -w0 "$t"; echo;', 'base64 -w0 "$t"; echo X;', 1)
            assert command != damaged[-1]
        return real_run(command, timeout_s, stdin=stdin)

    monkeypatch.setattr(shell, "run", flaky)
    local = tmp_path / "x.bin"
    local.write_bytes(os.urandom(300_000))
    part = console.upload(shell, local, "x.bin")
    assert damaged and remote_digest(shell, part) == local_digest(local)
    damaged.clear()
    (workspace / "y.bin").write_bytes(os.urandom(300_000))
    down = console.download(shell, "y.bin", tmp_path / "y.bin")
    assert damaged and local_digest(down) == local_digest(workspace / "y.bin")
