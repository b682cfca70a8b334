"""The OpenSSH route against a simulated pod's real sshd: files moved by OpenSSH's `ssh`, verified on both ends,
with progress, under part names until verified; odd names; what a failure of OpenSSH means (SFTP takes over) and
what a failure of the transfer means (said, and retried or not as for the other routes)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import Connection, SshSettings, connect, endpoints_for
from podtui.core.ssh.errors import HostKeyChanged
from podtui.sim.simulator import Simulator
from podtui.transfer.checksum import local_digest
from podtui.transfer.job import TransferJob
from podtui.transfer.routes import openssh
from tests.helpers.sim import DIRECT_POD, needs_sshd, pod_id, pod_workspace
from tests.helpers.transfer import MakeQueue, no_part_files, run_all, wait_for

pytestmark = needs_sshd


@pytest.fixture
def conn(sim_api: V2Api, ssh_settings: SshSettings) -> Iterator[Connection]:
    """podtui's own connection to the direct pod: its host key pinned, its key proved, as a transfer has it."""
    pod = sim_api.fetch_snapshot().find(DIRECT_POD)
    assert pod is not None
    c = connect(endpoints_for(pod, ssh_settings, "direct")[0], ssh_settings)
    yield c
    c.close()


@pytest.fixture
def workspace(full_sim: Simulator, sim_api: V2Api) -> Path:
    return pod_workspace(full_sim, sim_api, DIRECT_POD)


def ssh_processes_for(name: str) -> list[str]:
    """The route's ssh processes on this machine whose command names `name`."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                argv = (proc / "cmdline").read_bytes().rstrip(b"\0").split(b"\0")
            except OSError:
                continue
            if argv[0] == b"ssh" and openssh.STARTED.encode() in argv[-1] and name.encode() in argv[-1]:
                found.append(proc.name)
    return found


# --- the route itself ---------------------------------------------------------------------------------------


def test_upload_lands_under_a_part_name_with_progress_and_checksum(
    conn: Connection, ssh_settings: SshSettings, workspace: Path, tmp_path: Path
) -> None:
    local = tmp_path / "model.bin"
    local.write_bytes(os.urandom(5_000_000))
    seen: list[tuple[int, int]] = []
    moved = openssh.upload(conn, ssh_settings, local, "model.bin", lambda d, t: seen.append((d, t)), tag="t1")
    assert moved.part == ".model.bin.t1.podtui-part" and moved.size == 5_000_000
    assert (workspace / moved.part).read_bytes() == local.read_bytes()
    assert not (workspace / "model.bin").exists()
    assert moved.digest == local_digest(local)  # taken on the way: the file is not read again to verify it
    assert seen[-1] == (5_000_000, 5_000_000) and all(t == 5_000_000 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    md5 = openssh.upload(conn, ssh_settings, local, "model.bin", tag="t2", algorithm="md5")
    assert md5.digest == local_digest(local, "md5")


def test_download_lands_under_a_private_part_name_with_progress_and_checksum(
    conn: Connection, ssh_settings: SshSettings, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "ckpt.pt").write_bytes(os.urandom(6_000_000))
    target = tmp_path / "out" / "ckpt.pt"
    seen: list[tuple[int, int]] = []
    moved = openssh.download(conn, ssh_settings, "ckpt.pt", target, lambda d, t: seen.append((d, t)), tag="j")
    part = Path(moved.part)
    assert part == tmp_path / "out" / ".ckpt.pt.j.podtui-part" and not target.exists()
    assert part.read_bytes() == (workspace / "ckpt.pt").read_bytes()
    assert part.stat().st_mode & 0o777 == 0o600  # the user's data, the owner's only until verified
    assert (moved.size, moved.digest) == (6_000_000, local_digest(part))
    assert seen[-1] == (6_000_000, 6_000_000)  # the size came from the pod with the line saying ssh got there
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_progress_never_passes_the_bytes_in_all(
    conn: Connection, ssh_settings: SshSettings, workspace: Path, tmp_path: Path
) -> None:
    """The size the queue looked up earlier is stale (the file grew since, a checkpoint still being written): the
    total reported grows with what arrived, so progress never says more than 100%."""
    (workspace / "growing.bin").write_bytes(os.urandom(2_000_000))
    seen: list[tuple[int, int]] = []
    moved = openssh.download(
        conn, ssh_settings, "growing.bin", tmp_path / "g.bin", lambda d, t: seen.append((d, t)), total=1000
    )
    assert moved.size == 2_000_000 and seen[-1] == (2_000_000, 2_000_000)
    assert all(d <= t for d, t in seen), [s for s in seen if s[0] > s[1]]
    assert [t for _, t in seen] == sorted(t for _, t in seen)


def test_a_file_written_while_it_is_sent_is_not_verified(
    conn: Connection, ssh_settings: SshSettings, workspace: Path, tmp_path: Path
) -> None:
    """The local file is rewritten in place while ssh reads it (a script still writing it), where ssh and podtui
    have both read already: what arrived matches what podtui hashed, yet not the file as it is now. That is said,
    never passed on to be verified."""
    local = tmp_path / "data.bin"
    local.write_bytes(os.urandom(120_000_000))  # long enough for a report mid-way, on a fast machine too
    rewritten: list[int] = []

    def progress(done: int, total: int) -> None:
        if not rewritten and 0 < done < total:
            rewritten.append(done)
            with local.open("r+b") as f:
                f.write(b"rewritten")  # at the start: sent and hashed already

    with pytest.raises(openssh.OpensshError, match=r"data\.bin changed while it was being sent") as e:
        openssh.upload(conn, ssh_settings, local, "data.bin", progress)
    assert rewritten, "the upload ended before the file was written to"
    assert not isinstance(e.value, openssh.OpensshUnavailable)


def test_through_the_queue_a_file_written_while_sent_is_sent_again(
    make_queue: MakeQueue, sim_api: V2Api, workspace: Path, tmp_path: Path
) -> None:
    local = tmp_path / "data.bin"
    local.write_bytes(os.urandom(120_000_000))  # long enough for a report mid-way, on a fast machine too
    q = make_queue()
    rewritten: list[int] = []

    def changed(j: TransferJob) -> None:
        if not rewritten and j.state == "transferring" and 0 < j.done_bytes < (j.total_bytes or 0):
            rewritten.append(j.done_bytes)
            with local.open("r+b") as f:
                f.write(b"rewritten")

    q.on_change = changed
    (done,) = run_all(q, TransferJob(pod_id(sim_api, DIRECT_POD), "push", str(local), "up/"), timeout_s=120)
    assert rewritten, "the upload ended before the file was written to"
    assert (done.state, done.route) == ("verified", "openssh"), "\n".join(done.log)
    assert done.attempts == 2 and any("changed while it was being sent" in line for line in done.log), done.log
    assert (workspace / "up" / "data.bin").read_bytes() == local.read_bytes()
    assert done.checksum == local_digest(local)


def test_a_missing_file_or_folder_on_the_pod_is_the_transfers_failure(
    conn: Connection, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    """ssh reached the pod, so it is not OpenSSH that failed: no other route is tried, and nothing is left."""
    target = tmp_path / "downloads" / "nope.bin"
    with pytest.raises(openssh.OpensshError, match=r"^nope\.bin does not exist on the pod$") as e:
        openssh.download(conn, ssh_settings, "nope.bin", target)
    assert not isinstance(e.value, openssh.OpensshUnavailable)
    assert list(target.parent.iterdir()) == []  # no part file
    local = tmp_path / "a.bin"
    local.write_bytes(b"x" * 1000)
    with pytest.raises(openssh.OpensshError, match=r"the folder for no/such/a\.bin does not exist on the pod") as e:
        openssh.upload(conn, ssh_settings, local, "no/such/a.bin")
    assert not isinstance(e.value, openssh.OpensshUnavailable)
    with pytest.raises(openssh.OpensshError, match=r"absent\.bin does not exist"):
        openssh.upload(conn, ssh_settings, tmp_path / "absent.bin", "absent.bin")


ODD_NAMES = [
    "with space.bin",
    "it's.bin",
    'say "hi".bin',
    "-leading-dash.bin",
    "--help",
    "line\nfeed.bin",
    "tab\there.bin",
    "$(touch pwned).bin",
    "`touch pwned`.bin",
    "back\\slash.bin",
    "semi;colon&amp|pipe>gt<lt.bin",
    "glob*?[x].bin",
    "ünïcødé 模型.bin",
    "~tilde.bin",
    os.fsdecode(b"not-utf8-\xff\xfe.bin"),  # bytes a pod's file may have, as Python holds them
]


def test_odd_names_both_ways(conn: Connection, ssh_settings: SshSettings, workspace: Path, tmp_path: Path) -> None:
    """Names are quoted for the pod's shell: each is itself, never an option, a glob or a command."""
    for i, name in enumerate(ODD_NAMES):
        data = os.urandom(10_000 + i)
        local = tmp_path / "up" / name
        local.parent.mkdir(exist_ok=True)
        local.write_bytes(data)
        moved = openssh.upload(conn, ssh_settings, local, name, tag=f"u{i}")
        assert (workspace / moved.part).read_bytes() == data, name
        (workspace / name).write_bytes(data[::-1])
        got = openssh.download(conn, ssh_settings, name, tmp_path / "down" / name, tag=f"d{i}")
        assert Path(got.part).read_bytes() == data[::-1], name
    assert not (workspace / "pwned").exists() and not Path("pwned").exists()


# --- OpenSSH that cannot start, and a host key that changed ------------------------------------------------


def test_without_ssh_on_path_the_route_says_so(
    conn: Connection, ssh_settings: SshSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert not openssh.available()
    with pytest.raises(openssh.OpensshUnavailable, match="not installed"):
        openssh.download(conn, ssh_settings, "x.bin", tmp_path / "x.bin")
    assert list(tmp_path.glob("*.podtui-part")) == []


@pytest.mark.parametrize("direction", ["pull", "push"])
def test_an_ssh_that_never_gets_there_is_given_up_on(
    direction: str,
    conn: Connection,
    ssh_settings: SshSettings,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ssh on PATH that hangs before it runs anything on the pod (a wrapper waiting for something, a pod that
    stalls in the key exchange, where no ssh timeout applies): after a while it is OpenSSH that could not start,
    so SFTP can take over, and no ssh is left running."""
    bin_dir = tmp_path / "hanging-bin"
    bin_dir.mkdir()
    pids = tmp_path / "pids"
    real = shutil.which("ssh")  # what it knows (ssh -Q) it says at once
    (bin_dir / "ssh").write_text(f'#!/bin/sh\n[ "$1" = -Q ] && exec {real} "$@"\necho $$ >> {pids}\nexec sleep 300\n')
    (bin_dir / "ssh").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    quick = dataclasses.replace(ssh_settings, connect_timeout_s=0.5)
    (workspace / "w.bin").write_bytes(b"weights")
    (tmp_path / "w.bin").write_bytes(b"weights")
    with pytest.raises(openssh.OpensshUnavailable, match=r"did not run podtui's command on the pod within \d+ s"):
        if direction == "pull":
            openssh.download(conn, quick, "w.bin", tmp_path / "down" / "w.bin")
        else:
            openssh.upload(conn, quick, tmp_path / "w.bin", "w.bin")
    assert no_part_files(tmp_path)
    (pid,) = pids.read_text().split()
    assert not Path(f"/proc/{pid}").exists()  # killed, and waited for


def test_a_changed_host_key_is_refused(
    conn: Connection,
    ssh_settings: SshSettings,
    full_sim: Simulator,
    sim_api: V2Api,
    workspace: Path,
    tmp_path: Path,
) -> None:
    """The pod's sshd answers with another host key than the one podtui pinned (a new key during the same run):
    ssh refuses it as podtui's own client does, and it is not taken for OpenSSH failing to start."""
    (workspace / "w.bin").write_bytes(b"weights")
    sshd = full_sim.sshds[pod_id(sim_api, DIRECT_POD)]
    sshd.stop()
    for key in sshd.dir.glob("ssh_host_*"):
        key.unlink()
    sshd.start()  # a new host key, generated as it starts
    with pytest.raises(openssh.OpensshRefused, match="host key") as refused:
        openssh.download(conn, ssh_settings, "w.bin", tmp_path / "w.bin")
    assert "pinned" in str(refused.value)
    assert list(tmp_path.glob(".w.bin*")) == []
    with pytest.raises(HostKeyChanged):  # podtui's own client: the same pin, the same refusal
        connect(conn.endpoint, ssh_settings).close()


# --- through the queue -------------------------------------------------------------------------------------


def test_auto_takes_openssh_for_a_direct_pod_and_verifies(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, workspace: Path, tmp_path: Path
) -> None:
    local = tmp_path / "up" / "adapter.safetensors"
    local.parent.mkdir()
    local.write_bytes(os.urandom(3_000_000))
    (workspace / "ckpt.pt").write_bytes(os.urandom(4_000_000))
    down = tmp_path / "down"
    down.mkdir()
    pid = pod_id(sim_api, DIRECT_POD)
    changes: list[TransferJob] = []
    push, pull = run_all(
        make_queue(on_change=changes.append),
        TransferJob(pid, "push", str(local), "incoming/"),
        TransferJob(pid, "pull", "ckpt.pt", str(down), algorithm="sha1"),
    )
    assert (push.state, push.route, push.attempts) == ("verified", "openssh", 1), push.log
    assert (workspace / "incoming" / "adapter.safetensors").read_bytes() == local.read_bytes()
    assert push.checksum == local_digest(local)
    assert (pull.state, pull.route, pull.attempts) == ("verified", "openssh", 1), pull.log
    assert (down / "ckpt.pt").read_bytes() == (workspace / "ckpt.pt").read_bytes()
    assert pull.checksum == local_digest(down / "ckpt.pt", "sha1")
    for job, size in ((push, 3_000_000), (pull, 4_000_000)):
        mine = [c for c in changes if c.id == job.id]
        assert any(c.done_bytes == size and c.total_bytes == size for c in mine)
        assert "verifying" in [c.state for c in mine] and mine[-1].state == "verified"
        assert any("via openssh" in line for line in job.log)
    assert no_part_files(workspace, down)


def test_without_ssh_on_path_auto_falls_back_to_sftp(
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (workspace / "ckpt.pt").write_bytes(os.urandom(1_000_000))
    monkeypatch.setenv("PATH", str(tmp_path / "no-ssh-here"))
    pid = pod_id(sim_api, DIRECT_POD)
    auto, named = run_all(
        make_queue(),
        TransferJob(pid, "pull", "ckpt.pt", str(tmp_path / "a.pt")),
        TransferJob(pid, "pull", "ckpt.pt", str(tmp_path / "b.pt"), route_choice="openssh"),
    )
    assert (auto.state, auto.route) == ("verified", "sftp"), auto.log
    assert (tmp_path / "a.pt").read_bytes() == (workspace / "ckpt.pt").read_bytes()
    assert (named.state, named.error_kind, named.attempts) == ("failed", "no_openssh", 1), named.log
    assert "not installed" in (named.error or "") and "--via sftp" in (named.error or "")
    assert not (tmp_path / "b.pt").exists() and no_part_files(tmp_path)


def test_openssh_that_cannot_start_hands_over_to_sftp(
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    ssh_settings: SshSettings,
    workspace: Path,
    tmp_path: Path,
) -> None:
    """A key file others can read: podtui's own client uses it, OpenSSH refuses to. That is OpenSSH not starting,
    not the transfer failing: SFTP takes over and says why; asked for by name, the job fails and says why."""
    assert ssh_settings.key_path is not None
    ssh_settings.key_path.chmod(0o644)
    local = tmp_path / "data.bin"
    local.write_bytes(os.urandom(800_000))
    pid = pod_id(sim_api, DIRECT_POD)
    auto, named = run_all(
        make_queue(),
        TransferJob(pid, "push", str(local), "a/"),
        TransferJob(pid, "push", str(local), "b/", route_choice="openssh"),
    )
    assert (auto.state, auto.route, auto.attempts) == ("verified", "sftp", 1), auto.log
    assert any("OpenSSH could not start" in line and "chmod 600" in line for line in auto.log), auto.log
    assert (workspace / "a" / "data.bin").read_bytes() == local.read_bytes()
    assert (named.state, named.error_kind) == ("failed", "no_openssh"), named.log
    assert "chmod 600" in (named.error or "") and not (workspace / "b" / "data.bin").exists()
    assert no_part_files(workspace)


def test_gateway_pods_never_take_openssh(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, tmp_path: Path
) -> None:
    from tests.helpers.sim import GATEWAY_POD

    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "log.txt").write_text("epoch 1\n")
    pid = pod_id(sim_api, GATEWAY_POD)
    auto, named = run_all(
        make_queue(),
        TransferJob(pid, "pull", "log.txt", str(tmp_path / "a.txt")),
        TransferJob(pid, "pull", "log.txt", str(tmp_path / "b.txt"), route_choice="openssh"),
    )
    assert (auto.state, auto.route) == ("verified", "console"), auto.log  # no runpodctl on this machine's PATH
    assert (named.state, named.error_kind, named.attempts) == ("failed", "no_openssh", 1), named.log
    assert "needs direct SSH" in (named.error or "")
    assert not (tmp_path / "b.txt").exists()


def test_a_changed_host_key_fails_the_job_and_is_not_retried(
    make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, DIRECT_POD)
    (ws / "w.bin").write_bytes(b"weights")
    pid = pod_id(sim_api, DIRECT_POD)
    (first,) = run_all(make_queue(), TransferJob(pid, "pull", "w.bin", str(tmp_path / "first.bin")))
    assert (first.state, first.route) == ("verified", "openssh")  # the key is pinned now
    sshd = full_sim.sshds[pid]
    sshd.stop()
    for key in sshd.dir.glob("ssh_host_*"):
        key.unlink()
    sshd.start()
    (done,) = run_all(make_queue(), TransferJob(pid, "pull", "w.bin", str(tmp_path / "second.bin")))
    assert (done.state, done.error_kind, done.retryable, done.attempts) == ("failed", "auth", False, 1), done.log
    assert "host key" in (done.error or "").lower()
    assert not (tmp_path / "second.bin").exists() and no_part_files(tmp_path)


def test_a_missing_file_on_the_pod_is_not_retried(
    make_queue: MakeQueue, sim_api: V2Api, workspace: Path, tmp_path: Path
) -> None:
    pid = pod_id(sim_api, DIRECT_POD)
    (done,) = run_all(make_queue(), TransferJob(pid, "pull", "no-such.bin", str(tmp_path), route_choice="openssh"))
    assert (done.state, done.attempts, done.retryable) == ("failed", 1, False), done.log
    assert "does not exist" in (done.error or "")
    assert not (tmp_path / "no-such.bin").exists() and no_part_files(tmp_path)


@pytest.mark.parametrize("direction", ["pull", "push"])
def test_cancel_mid_transfer_kills_ssh_and_leaves_no_part_file(
    direction: str,
    make_queue: MakeQueue,
    sim_api: V2Api,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", "rpa_SECRETSECRETSECRET")  # never in ssh's environment
    size = 120_000_000
    pid = pod_id(sim_api, DIRECT_POD)
    if direction == "pull":
        (workspace / "big.bin").write_bytes(os.urandom(size))
        job = TransferJob(pid, "pull", "big.bin", str(tmp_path / "down") + "/")
    else:
        (tmp_path / "big.bin").write_bytes(os.urandom(size))
        job = TransferJob(pid, "push", str(tmp_path / "big.bin"), "up/")
    cancelled: list[int] = []
    q = make_queue()
    environ: list[bytes] = []

    def changed(j: TransferJob) -> None:  # on the transfer's own thread: the cancel lands mid-way for sure
        if not cancelled and j.state == "transferring" and 0 < j.done_bytes < size:
            cancelled.append(j.done_bytes)
            carriers = ssh_processes_for("big.bin")
            assert carriers, "no ssh carries it"
            environ.extend(Path(f"/proc/{pid}/environ").read_bytes() for pid in carriers)
            q.cancel(j.id)

    q.on_change = changed
    (done,) = run_all(q, job)
    assert cancelled, "the transfer ended before the cancel"
    assert (done.state, done.route) == ("cancelled", "openssh"), done.log
    assert ssh_processes_for("big.bin") == []  # ssh was killed, and waited for
    assert environ and not any(b"RUNPOD_API_KEY" in e or b"SECRET" in e for e in environ)  # ssh_env()
    assert no_part_files(tmp_path)
    wait_for(lambda: no_part_files(workspace), 10)  # the pod's part file is removed through podtui's shell
    assert not (workspace / "big.bin").exists() if direction == "push" else True
    assert not (workspace / "up" / "big.bin").exists()


@pytest.mark.parametrize("direction", ["pull", "push"])
def test_a_dropped_connection_is_retried(
    direction: str, make_queue: MakeQueue, full_sim: Simulator, sim_api: V2Api, workspace: Path, tmp_path: Path
) -> None:
    """The pod's sshd loses every connection mid-transfer (its connection processes killed): the attempt fails as
    a lost connection, and the queue's retry verifies."""
    size = 120_000_000  # big enough that a progress report comes while it moves, on a fast machine too
    pid = pod_id(sim_api, DIRECT_POD)
    data = os.urandom(size)
    down = tmp_path / "down"
    down.mkdir()
    if direction == "pull":
        (workspace / "drop.bin").write_bytes(data)
        job = TransferJob(pid, "pull", "drop.bin", str(down))
        target = down / "drop.bin"
    else:
        (tmp_path / "drop.bin").write_bytes(data)
        job = TransferJob(pid, "push", str(tmp_path / "drop.bin"), "incoming/")
        target = workspace / "incoming" / "drop.bin"
    dropped: list[int] = []

    def changed(j: TransferJob) -> None:
        if not dropped and j.state == "transferring" and 0 < j.done_bytes < size:
            dropped.append(j.done_bytes)
            assert full_sim.sshds[pid].drop_connections() >= 1

    (done,) = run_all(make_queue(on_change=changed), job, timeout_s=120)
    assert dropped, "the drop came after the transfer"
    assert (done.state, done.route) == ("verified", "openssh"), "\n".join(done.log)
    assert target.read_bytes() == data
    failed = [line for line in done.log if "attempt 1 failed" in line]
    assert done.attempts >= 2 and failed, "\n".join(done.log)
    assert no_part_files(workspace, down)


def test_ssh_is_given_no_secret_and_checks_the_pinned_key(
    conn: Connection, ssh_settings: SshSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the route runs: podtui's key as a file, its known_hosts under the pod's pin name, strict checking,
    no prompt; RunPod's API key is neither in the argv nor in ssh's environment."""
    from podtui.core.ssh.openssh import batch_argv, ssh_env

    monkeypatch.setenv("RUNPOD_API_KEY", "rpa_SECRETSECRETSECRET")
    argv = batch_argv(conn, ssh_settings, "echo done")
    assert "StrictHostKeyChecking=yes" in argv and "BatchMode=yes" in argv
    assert f"HostKeyAlias={conn.endpoint.pin}" in argv and "GlobalKnownHostsFile=/dev/null" in argv
    assert argv[argv.index("-F") + 1] == "none"  # no ssh_config of the user's changes what runs
    assert str(ssh_settings.key_path) in argv and "SECRET" not in "\0".join(argv)
    assert "RUNPOD_API_KEY" not in ssh_env()
    r = subprocess.run(argv, capture_output=True, text=True, env=ssh_env(), stdin=subprocess.DEVNULL, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (0, "done\n", "")  # no warning, banner or prompt on the way


@contextlib.contextmanager
def tiny_disk(where: Path) -> Iterator[Path]:
    """A 1 MB tmpfs at `where` (needs root; skipped where mounting is not allowed)."""
    where.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {r.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_disk_that_fills_is_the_transfers_failure(
    conn: Connection, ssh_settings: SshSettings, workspace: Path, tmp_path: Path
) -> None:
    """Below the queue's own free-space check (the disk may fill while the bytes move), on either end: said as a
    full disk, never taken for OpenSSH failing to start, and no part file left here."""
    local = tmp_path / "big.bin"
    local.write_bytes(os.urandom(3_000_000))
    with tiny_disk(workspace / "small"), pytest.raises(openssh.OpensshError, match="No space left") as up:
        openssh.upload(conn, ssh_settings, local, "small/big.bin")
    assert not isinstance(up.value, openssh.OpensshUnavailable)
    (workspace / "big.bin").write_bytes(os.urandom(3_000_000))
    with tiny_disk(tmp_path / "small") as small:
        with pytest.raises(openssh.OpensshError, match="No space left") as down:
            openssh.download(conn, ssh_settings, "big.bin", small / "big.bin")
        assert not isinstance(down.value, openssh.OpensshUnavailable)
        assert list(small.iterdir()) == []
