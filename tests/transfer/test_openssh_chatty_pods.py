"""The OpenSSH route against pods whose shell says things before podtui's command runs: a ~/.bashrc that prints a
welcome on stdout (bash reads it for every command sshd runs), a line on stderr without its newline, or that ends
the shell before the command runs (docs/bulk-transfers.md#what-the-pods-shell-says)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import Connection, SshSettings, connect, endpoints_for
from podtui.sim.simulator import Simulator
from podtui.transfer.checksum import local_digest
from podtui.transfer.job import TransferJob
from podtui.transfer.routes import openssh
from tests.helpers.sim import DIRECT_POD, find_pod, needs_sshd, pod_id, pod_workspace
from tests.helpers.transfer import MakeQueue, no_part_files, run_all

pytestmark = needs_sshd

# What RunPod images and users put in ~/.bashrc, before any "not interactive: return": a welcome on stdout (with
# bytes that look like podtui's own words), and on stderr a line that does not end
CHATTY = (
    "printf 'Welcome to your pod!\\npodtui-openssh-data\\n\\377\\376 binary too\\n'\n"
    ". /root/.venv/bin/activate\n"  # gone: bash says "No such file or directory" on stderr, every time
    "printf 'conda: no newline here' >&2\n"
)


def chatty(full_sim: Simulator, sim_api: V2Api, rc: str = CHATTY) -> None:
    home = full_sim.gateway.machine(full_sim.world.pods[pod_id(sim_api, DIRECT_POD)]).home
    (home / ".bashrc").write_text(rc + (home / ".bashrc").read_text())


@pytest.fixture
def conn(sim_api: V2Api, ssh_settings: SshSettings) -> Iterator[Connection]:
    c = connect(endpoints_for(find_pod(sim_api, DIRECT_POD), ssh_settings, "direct")[0], ssh_settings)
    yield c
    c.close()


def test_a_welcome_on_stdout_is_not_part_of_the_download(
    full_sim: Simulator, sim_api: V2Api, conn: Connection, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, DIRECT_POD)
    data = b"podtui-openssh-data\n" + os.urandom(3_000_000)  # the file itself may begin like podtui's words
    (ws / "ckpt.pt").write_bytes(data)
    chatty(full_sim, sim_api)
    seen: list[tuple[int, int]] = []
    moved = openssh.download(conn, ssh_settings, "ckpt.pt", tmp_path / "ckpt.pt", lambda d, t: seen.append((d, t)))
    assert Path(moved.part).read_bytes() == data
    assert (moved.size, moved.digest) == (len(data), local_digest(Path(moved.part)))
    assert seen[-1] == (len(data), len(data))  # the size still came from the pod, through the stderr noise
    local = tmp_path / "up.bin"
    local.write_bytes(os.urandom(2_000_000))
    up = openssh.upload(conn, ssh_settings, local, "up.bin")
    assert (ws / up.part).read_bytes() == local.read_bytes() and up.digest == local_digest(local)


def test_a_chatty_shell_does_not_hide_whose_failure_it_is(
    full_sim: Simulator, sim_api: V2Api, conn: Connection, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    """stderr that does not end its line before podtui's first one: ssh reached the pod all the same, so a missing
    file is the transfer's failure, never OpenSSH's (which SFTP would take over)."""
    chatty(full_sim, sim_api)
    with pytest.raises(openssh.OpensshError, match=r"^nope\.bin does not exist on the pod$") as e:
        openssh.download(conn, ssh_settings, "nope.bin", tmp_path / "nope.bin")
    assert not isinstance(e.value, openssh.OpensshUnavailable)
    local = tmp_path / "a.bin"
    local.write_bytes(b"x" * 1000)
    with pytest.raises(openssh.OpensshError, match=r"the folder for no/such/a\.bin does not exist") as e:
        openssh.upload(conn, ssh_settings, local, "no/such/a.bin")
    assert not isinstance(e.value, openssh.OpensshUnavailable)
    (pod_workspace(full_sim, sim_api, DIRECT_POD) / "outputs").mkdir()
    with pytest.raises(openssh.OpensshError, match=r"failed on the pod: cat: outputs: Is a directory$"):
        openssh.download(conn, ssh_settings, "outputs", tmp_path / "outputs")  # the shell's words are not its
    assert no_part_files(tmp_path)


def test_a_shell_that_ends_before_the_command_is_not_a_transfer(
    full_sim: Simulator, sim_api: V2Api, conn: Connection, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    """ssh ends with status 0 and podtui's command never ran: nothing moved, said as such (not an empty file that
    then fails its checksum), and nothing left here."""
    ws = pod_workspace(full_sim, sim_api, DIRECT_POD)
    (ws / "w.bin").write_bytes(b"weights")
    chatty(full_sim, sim_api, "exit 0\n")
    with pytest.raises(openssh.OpensshUnavailable, match="before podtui's command ran"):
        openssh.download(conn, ssh_settings, "w.bin", tmp_path / "down" / "w.bin")
    assert list((tmp_path / "down").iterdir()) == []
    local = tmp_path / "a.bin"
    local.write_bytes(b"x" * 1000)
    with pytest.raises(openssh.OpensshUnavailable, match="before podtui's command ran"):
        openssh.upload(conn, ssh_settings, local, "a.bin")
    assert no_part_files(ws)


@pytest.mark.parametrize("direction", ["pull", "push"])
def test_through_the_queue_a_chatty_pod_verifies_at_the_first_attempt(
    direction: str, make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, DIRECT_POD)
    data = os.urandom(4_000_000)
    chatty(full_sim, sim_api)
    pid = pod_id(sim_api, DIRECT_POD)
    if direction == "pull":
        (ws / "model.bin").write_bytes(data)
        job = TransferJob(pid, "pull", "model.bin", str(tmp_path / "down") + "/")
        target = tmp_path / "down" / "model.bin"
    else:
        (tmp_path / "model.bin").write_bytes(data)
        job = TransferJob(pid, "push", str(tmp_path / "model.bin"), "up/")
        target = ws / "up" / "model.bin"
    (done,) = run_all(make_queue(), job)
    assert (done.state, done.route, done.attempts) == ("verified", "openssh", 1), "\n".join(done.log)
    assert target.read_bytes() == data
    assert no_part_files(ws, tmp_path)
