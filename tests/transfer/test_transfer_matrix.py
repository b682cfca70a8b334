"""Transfer faults through the queue and `podtui push/pull`: every runpodctl failure of
docs/runpod-facts.md#runpodctl-errors (the ones the rest of tests/transfer/ covers are not repeated), a checksum
mismatch, a disk that fills on either end, and the app killed mid-transfer. Nothing is ever called verified that is
not, nor left under its final name."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.errors import RemoteTimeout, ShellClosed
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.sim.simulator import Simulator
from podtui.transfer import manifest
from podtui.transfer.history import INTERRUPTED, TransferHistory
from podtui.transfer.job import TransferJob
from podtui.transfer.manifest import ManifestError
from podtui.transfer.progress import TransferCancelled
from podtui.transfer.queue import TransferQueue
from podtui.transfer.routes import console
from podtui.transfer.routes.console import ConsoleTransferError
from podtui.transfer.runner import TransferContext
from tests.helpers.repo import REPO
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, needs_sshd, pod_id, pod_workspace
from tests.helpers.transfer import MakeQueue, files_both_ways, no_part_files, run_all


@pytest.fixture
def files(full_sim: Simulator, sim_api: V2Api, tmp_path: Path) -> tuple[Path, Path, Path]:
    return files_both_ways(pod_workspace(full_sim, sim_api, GATEWAY_POD), tmp_path, 1_500_000, 1_000_000)


def job_for(direction: str, pid: str, local: Path, down: Path, via: str = "runpodctl") -> TransferJob:
    if direction == "pull":
        return TransferJob(pid, "pull", "model.safetensors", str(down), route_choice=via)  # type: ignore[arg-type]
    return TransferJob(pid, "push", str(local), "", route_choice=via)  # type: ignore[arg-type]


# --- runpodctl failures (docs/runpod-facts.md#runpodctl-errors) not met elsewhere in tests/transfer/ ------------


@pytest.mark.parametrize(
    ("fault", "direction", "said"),
    [
        ("crash", "push", "panic"),  # the sender here dies mid-transfer (exit 2)
        ("stale_code", "push", "room not ready"),
        ("relay_list", "pull", "relay"),  # the pod's send cannot fetch the relay list (exit 1)
        ("relay_list", "push", "relay"),
        ("room_full", "pull", "room full"),  # after the code: stdout, exit 0
        ("password_mismatch", "pull", "password mismatch"),
        ("password_mismatch", "push", "password mismatch"),
        ("secure_channel", "pull", "could not secure channel"),
        ("peer_error", "pull", "peer error: read"),  # the pod's send cannot read its file and says so
        ("peer_error", "push", "peer error: read"),
        ("decoding", "pull", "problem with decoding"),  # a garbled message reaches the receiver here
        ("decoding", "push", "problem with decoding"),
    ],
)
def test_runpodctl_failure_is_said_and_retried(
    fault: str,
    direction: str,
    said: str,
    local_runpodctl: Path,
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    files: tuple[Path, Path, Path],
) -> None:
    ws, local, down = files
    full_sim.relay.fail_next(fault, 4 if fault == "stale_code" else 1)  # a stale code outlasts the quick re-joins
    (done,) = run_all(make_queue(), job_for(direction, pod_id(sim_api, GATEWAY_POD), local, down), timeout_s=90)
    assert (done.state, done.attempts) == ("verified", 2), "\n".join(done.log)
    failed = [line for line in done.log if "attempt 1 failed" in line]
    assert failed and said in failed[0].lower(), "\n".join(done.log)
    target, source = (
        (down / "model.safetensors", ws / "model.safetensors") if direction == "pull" else (ws / "data.jsonl", local)
    )
    assert target.read_bytes() == source.read_bytes()
    assert no_part_files(ws, down)


def test_runpodctl_send_of_a_missing_file_is_not_retried(
    local_runpodctl: Path, make_queue: MakeQueue, sim_api: V2Api, files: tuple[Path, Path, Path]
) -> None:
    ws, _, down = files
    job = TransferJob(pod_id(sim_api, GATEWAY_POD), "pull", "no-such.bin", str(down), route_choice="runpodctl")
    (done,) = run_all(make_queue(), job)
    assert (done.state, done.attempts, done.retryable) == ("failed", 1, False), done.log
    assert "does not exist" in (done.error or "") or "No such file" in (done.error or ""), done.error
    assert not (down / "no-such.bin").exists() and no_part_files(ws, down)


# --- the connection dropped mid-transfer -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("via", "pod", "direction"),
    [
        ("console", GATEWAY_POD, "pull"),
        ("console", GATEWAY_POD, "push"),
        ("runpodctl", GATEWAY_POD, "pull"),  # the pod's runpodctl goes on by itself; the shell reading its log is cut
        pytest.param("sftp", DIRECT_POD, "pull", marks=needs_sshd),  # real OpenSSH: its connection process killed
        pytest.param("sftp", DIRECT_POD, "push", marks=needs_sshd),
    ],
)
def test_connection_dropped_mid_transfer(
    via: str,
    pod: str,
    direction: str,
    local_runpodctl: Path,
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
) -> None:
    pid = pod_id(sim_api, pod)
    ws = pod_workspace(full_sim, sim_api, pod)
    size = {"console": 6_000_000, "runpodctl": 4_000_000, "sftp": 40_000_000}[via]
    data = os.urandom(size)
    local, down = tmp_path / "up" / "drop.bin", tmp_path / "down"
    local.parent.mkdir()
    down.mkdir()
    if direction == "pull":
        (ws / "drop.bin").write_bytes(data)
        job = TransferJob(pid, "pull", "drop.bin", str(down), route_choice=via)  # type: ignore[arg-type]
        target = down / "drop.bin"
    else:
        local.write_bytes(data)
        job = TransferJob(pid, "push", str(local), "incoming/", route_choice=via)  # type: ignore[arg-type]
        target = ws / "incoming" / "drop.bin"
    full_sim.relay.rate_bytes_per_s = 2_000_000 if via == "runpodctl" else None
    dropped: list[int] = []

    def changed(j: TransferJob) -> None:  # on the transfer's own thread: the drop lands mid-way for sure
        if not dropped and j.state == "transferring" and 0 < j.done_bytes < size:
            dropped.append(j.done_bytes)
            if via == "sftp":
                assert full_sim.sshds[pid].drop_connections() >= 1
            else:
                full_sim.gateway.drop_connections()

    try:
        (done,) = run_all(make_queue(on_change=changed), job, timeout_s=120)
    finally:
        full_sim.relay.rate_bytes_per_s = None
    assert dropped, "the drop came after the transfer"
    assert done.state == "verified", "\n".join(done.log)
    assert target.read_bytes() == data
    failed = [line for line in done.log if "attempt 1 failed" in line]  # the cut attempt says so; a retry verifies
    assert done.attempts >= 2 and failed, "\n".join(done.log)
    assert no_part_files(ws, down)
    assert not runpodctl_senders(ws) and not runpodctl_senders(local.parent)


# --- a checksum mismatch, as `podtui pull` shows it -----------------------------------------------------------


@pytest.fixture
def cli_env(full_cli_env: dict[str, str], local_runpodctl: Path) -> dict[str, str]:
    """A `podtui` process's environment with the simulator's runpodctl first on its PATH."""
    return {**full_cli_env, "PATH": f"{local_runpodctl.parent}:{os.environ['PATH']}"}


def test_checksum_mismatch_in_pull_is_never_verified(
    full_sim: Simulator, cli_env: dict[str, str], files: tuple[Path, Path, Path]
) -> None:
    ws, _, down = files
    full_sim.relay.fail_next("truncate")  # runpodctl's silent truncation: 100%, exit 0, half the file
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "podtui",
            "pull",
            GATEWAY_POD,
            "model.safetensors",
            str(down),
            "--via",
            "runpodctl",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=cli_env,
        timeout=90,
    )
    events = [json.loads(line) for line in r.stdout.splitlines()]
    logged = [e["line"] for e in events if e["event"] == "log"]
    assert any("attempt 1 failed" in ln and "sha256 mismatch" in ln and "discarded" in ln for ln in logged), logged
    final = events[-1]
    assert r.returncode == 0 and final["event"] == "verified" and final["attempts"] == 2, r.stderr
    assert (down / "model.safetensors").read_bytes() == (ws / "model.safetensors").read_bytes()
    # the damaged copy was never verified, never under the final name
    assert [e["state"] for e in events if e["event"] == "state"].count("verified") == 1
    assert no_part_files(ws, down)


# --- a disk that fills ----------------------------------------------------------------------------------------


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


def assert_no_space(done: TransferJob, final: Path) -> None:
    assert (done.state, done.retryable, done.checksum) == ("failed", False, None), (done.error, done.log)
    assert "No space left" in (done.error or ""), done.error
    assert done.attempts == 1  # retrying cannot free the disk
    assert not final.exists()


@pytest.mark.parametrize(
    ("pod", "via"),
    [
        (GATEWAY_POD, "console"),
        (GATEWAY_POD, "runpodctl"),
        pytest.param(DIRECT_POD, "sftp", marks=needs_sshd),
    ],
)
def test_pod_disk_fills(
    pod: str,
    via: str,
    local_runpodctl: Path,
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
) -> None:
    ws = pod_workspace(full_sim, sim_api, pod)
    local = tmp_path / "big.bin"
    local.write_bytes(os.urandom(3_000_000))
    with tiny_disk(ws / "small") as small:
        (done,) = run_all(
            make_queue(),
            TransferJob(pod_id(sim_api, pod), "push", str(local), "small/", route_choice=via),
            timeout_s=90,
        )  # type: ignore[arg-type]
        assert_no_space(done, small / "big.bin")
        assert no_part_files(small) and not list(small.iterdir())  # the pod's disk is left as it was
    assert local.stat().st_size == 3_000_000  # the source is untouched


@pytest.mark.parametrize(
    ("pod", "via"),
    [
        (GATEWAY_POD, "console"),
        (GATEWAY_POD, "runpodctl"),
        pytest.param(DIRECT_POD, "sftp", marks=needs_sshd),
    ],
)
def test_local_disk_fills(
    pod: str,
    via: str,
    local_runpodctl: Path,
    make_queue: MakeQueue,
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
) -> None:
    ws = pod_workspace(full_sim, sim_api, pod)
    (ws / "big.bin").write_bytes(os.urandom(3_000_000))
    with tiny_disk(tmp_path / "small") as small:
        (done,) = run_all(
            make_queue(),
            TransferJob(pod_id(sim_api, pod), "pull", "big.bin", str(small), route_choice=via),
            timeout_s=90,
        )  # type: ignore[arg-type]
        assert_no_space(done, small / "big.bin")
        assert not list(small.iterdir())  # no part file, no staging folder
    assert (ws / "big.bin").stat().st_size == 3_000_000


def test_console_upload_onto_a_full_disk_says_so(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    """Below the queue's own free-space check (the disk may fill while the bytes move): a chunk that could not be
    written is not taken for a good one because its hash came through."""
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    local = tmp_path / "big.bin"
    local.write_bytes(os.urandom(3_000_000))
    pod = sim_api.fetch_snapshot().find(GATEWAY_POD)
    with tiny_disk(ws / "small") as small, open_remote(pod, ssh_settings) as shell:
        with pytest.raises(ConsoleTransferError, match=r"^No space left on the pod for small/big.bin after \d+ bytes"):
            console.upload(shell, local, "small/big.bin", tag="t1")
        assert not (small / "big.bin").exists()


# --- the pod's listing folder (manifest._staged) ------------------------------------------------------------------


def listing_folders(shell: RemoteShell) -> list[str]:
    return shell.run('ls -d "${TMPDIR:-/tmp}"/podtui-list.* 2>/dev/null; true').output.split()


@pytest.fixture
def folder_on_pod(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> Iterator[RemoteShell]:
    """A shell on the gateway pod, in whose workspace a folder `run` waits to be listed."""
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "run" / "sub").mkdir(parents=True)
    for i in range(3):
        (ws / "run" / "sub" / f"{i}.bin").write_bytes(os.urandom(1000))
    pod = sim_api.fetch_snapshot().find(GATEWAY_POD)
    assert pod is not None
    with open_remote(pod, ssh_settings) as shell:
        shell.run("cd ~/workspace 2>/dev/null || cd /workspace")
        assert listing_folders(shell) == []
        yield shell


# (what goes wrong, set up in the pod's shell: a function shadowing a tool, as another system's tools would)
FAILURES = {
    "find fails": ("find() { echo 'find: simulated failure' >&2; return 1; }", "cannot list run on the pod: find"),
    "no last line": ("stat() { return 1; }", "cannot list run on the pod: "),  # a stat without -c: no sizes said
    "too slow": ("find() { sleep 60; }", "did not finish within"),
}


@pytest.mark.parametrize("failure", [*FAILURES, "none"])
def test_the_listing_folder_on_the_pod_is_removed_whatever_happened(
    failure: str, folder_on_pod: RemoteShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made with mktemp -d for each listing: removed after a listing that worked, one that failed, one that never
    printed its last line and one interrupted for taking too long (the shell is still usable then)."""
    shell = folder_on_pod
    if failure == "none":
        assert set(manifest.scan_remote(shell, "run")) == {"sub", "sub/0.bin", "sub/1.bin", "sub/2.bin"}
    else:
        setup, said = FAILURES[failure]
        monkeypatch.setattr(manifest, "LIST_TIMEOUT_S", 3.0)
        shell.run(setup)
        with pytest.raises(RemoteTimeout if failure == "too slow" else ManifestError, match=said):
            manifest.scan_remote(shell, "run")
        shell.run("unset -f find stat")
    assert listing_folders(shell) == []


@pytest.mark.parametrize("first", ["a failed listing", "a cancel", "a dropped read"])
def test_a_connection_dropped_before_the_cleanup_leaves_the_first_error(
    first: str,
    folder_on_pod: RemoteShell,
    full_sim: Simulator,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What went wrong first is what is raised: the removal of the listing folder, which a dropped connection fails
    too, is logged, never raised in its place (a cancel would have become a connection failure, and retried)."""
    shell = folder_on_pod
    run = shell.run

    def cut_before_cleanup(command: str, *args: object, **kw: object) -> object:
        if command.startswith("rm -rf -- "):
            full_sim.gateway.drop_connections()  # the network goes just then
        return run(command, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(shell, "run", cut_before_cleanup)

    def read(_: object = None) -> None:  # between the chunks of the listing read back
        if first == "a cancel":
            raise TransferCancelled("cancelled")
        full_sim.gateway.drop_connections()

    if first == "a failed listing":
        run("find() { echo 'find: simulated failure' >&2; return 1; }")
        with pytest.raises(ManifestError, match="cannot list run on the pod: find: simulated failure"):
            manifest.scan_remote(shell, "run", read)
    elif first == "a cancel":
        with pytest.raises(TransferCancelled):
            manifest.scan_remote(shell, "run", read)
    else:
        with pytest.raises(ShellClosed, match=r"dropped while 't=\$\(mktemp\) && dd if="):
            manifest.scan_remote(shell, "run", read)
    assert any("could not remove" in r.getMessage() and "podtui-list." in r.getMessage() for r in caplog.records)


# --- the app killed mid-transfer, then started again -------------------------------------------------------------

QUEUE_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from podtui.core.api import V2Api
    from podtui.core.ssh.connect import SshSettings
    from podtui.transfer.runner import TransferContext
    from podtui.transfer.history import TransferHistory
    from podtui.transfer.job import TransferJob
    from podtui.transfer.queue import TransferQueue

    url, key, host, port, ssh_key, known, work, history, runpodctl, pod, down, direction, up = sys.argv[1:]
    api = V2Api(key, url)
    settings = SshSettings(known_hosts=Path(known), gateway=(host, int(port)), key_path=Path(ssh_key),
                           use_agent=False, search_home=False)
    ctx = TransferContext(lambda ref: api.fetch_snapshot().find(ref), lambda: settings, Path(work), runpodctl)

    def changed(job):
        print("state", job.state, flush=True)
        if job.done_bytes:
            print("progress", job.done_bytes, flush=True)

    q = TransferQueue(ctx, TransferHistory(Path(history)), on_change=changed)
    if direction == "pull":
        q.add(TransferJob(pod, "pull", "model.safetensors", down, route_choice="runpodctl"))
    else:
        q.add(TransferJob(pod, "push", up, "", route_choice="runpodctl"))  # "": the folder the pod's shell starts in
    q.start()
    q.wait()
    print("finished", flush=True)
""")


def start_and_kill(
    full_sim: Simulator,
    sim_api: V2Api,
    ssh_settings: SshSettings,
    runpodctl: Path,
    history: Path,
    files: tuple[Path, Path, Path],
    tmp_path: Path,
    direction: str,
    when: str,
) -> None:
    """podtui's queue in a process of its own, SIGKILLed (no chance to save or clean up) once it prints `when`."""
    _, local, down = files
    host, port = full_sim.gateway.address
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            QUEUE_SCRIPT,
            full_sim.api.url,
            full_sim.api.api_key,
            host,
            str(port),
            str(ssh_settings.key_path),
            str(ssh_settings.known_hosts),
            str(tmp_path / "work"),
            str(history),
            str(runpodctl),
            pod_id(sim_api, GATEWAY_POD),
            str(down),
            direction,
            str(local),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None
    try:
        seen = []
        while not (line := proc.stdout.readline()).startswith(when):
            assert line, (seen, proc.stderr.read() if proc.stderr else "")
            seen.append(line)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        proc.kill()


def test_killed_mid_transfer_comes_back_retryable(
    full_sim: Simulator,
    sim_api: V2Api,
    ssh_settings: SshSettings,
    local_runpodctl: Path,
    context: TransferContext,
    history_path: Path,
    files: tuple[Path, Path, Path],
    tmp_path: Path,
) -> None:
    ws, _, down = files
    full_sim.relay.rate_bytes_per_s = 300_000  # five seconds or so: time to be killed in the middle
    start_and_kill(full_sim, sim_api, ssh_settings, local_runpodctl, history_path, files, tmp_path, "pull", "progress")
    full_sim.relay.rate_bytes_per_s = None
    restarted = TransferQueue(context, TransferHistory(history_path), backoff_s=(0.2,))
    try:
        (job,) = restarted.jobs()
        assert (job.state, job.retryable, job.checksum) == ("failed", True, None), job.log
        assert job.error == INTERRUPTED and job.code is None
        assert not (down / "model.safetensors").exists()
        restarted.start()
        assert restarted.retry(job.id)
        assert restarted.wait([job.id], 60)
        again = restarted.get(job.id)
        assert again is not None and again.state == "verified", again.log if again else None
    finally:
        restarted.close()
    assert (down / "model.safetensors").read_bytes() == (ws / "model.safetensors").read_bytes()
    assert TransferHistory(history_path).load()[0].state == "verified"
    assert no_part_files(ws, down), sorted(p.name for p in down.rglob("*"))


def runpodctl_senders(cwd: Path) -> set[int]:
    """The (simulated) `runpodctl send` processes running in `cwd`: the pod's workspace, or a folder here. A pod's
    process in its own view of the filesystem sees its workspace as /workspace; its environment names its pod."""
    found = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            words = (proc / "cmdline").read_bytes().split(b"\0")
            if not (any(w.endswith(b"runpodctl_standin") for w in words) and b"send" in words):
                continue
            here = Path(os.readlink(proc / "cwd"))
            pod_root = f"PODTUI_SIM_ROOT={cwd.parent}".encode()
            if here == cwd or (here == Path("/workspace") and pod_root in (proc / "environ").read_bytes().split(b"\0")):
                found.add(int(proc.name))
    return found


def gone(pids: set[int], within_s: float = 10.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(
            Path(f"/proc/{p}").exists() and "Z" not in Path(f"/proc/{p}/stat").read_text().split()[2:3] for p in pids
        ):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("direction", ["pull", "push"])
def test_killed_while_runpodctl_waits_leaves_nothing_running(
    direction: str,
    full_sim: Simulator,
    sim_api: V2Api,
    ssh_settings: SshSettings,
    local_runpodctl: Path,
    context: TransferContext,
    history_path: Path,
    files: tuple[Path, Path, Path],
    tmp_path: Path,
) -> None:
    """A `runpodctl send` waiting for its receiver prints nothing, so it outlives a podtui killed meanwhile (on the
    pod for a pull, here for a push). The podtui that starts next stops it: here at once, on the pod before the
    job's next attempt."""
    ws, local, down = files
    full_sim.relay.fail_next("stale_code", 1000)  # no receiver ever finds the room: the sender just waits
    start_and_kill(
        full_sim, sim_api, ssh_settings, local_runpodctl, history_path, files, tmp_path, direction, "state transferring"
    )
    sender_cwd = ws if direction == "pull" else local.parent
    time.sleep(0.5)
    waiting = runpodctl_senders(sender_cwd)
    assert len(waiting) == 1, "the case itself: one runpodctl send outlived the podtui that started it"
    full_sim.relay.clear_faults()
    restarted = TransferQueue(context, TransferHistory(history_path), backoff_s=(0.2,))
    try:
        (job,) = restarted.jobs()
        assert job.state == "failed" and job.retryable
        if direction == "push":
            assert gone(waiting), "the sender here was left running"
            assert any("left running here" in line for line in job.log), job.log
        restarted.start()
        assert restarted.retry(job.id)
        assert restarted.wait([job.id], 60)
        again = restarted.get(job.id)
        assert again is not None and again.state == "verified", again.log if again else None
        assert gone(waiting), "the sender on the pod was left running:\n" + "\n".join(again.log)
        if direction == "pull":
            assert any("left running on the pod" in line for line in again.log), again.log
        assert again.leftovers == []
    finally:
        restarted.close()
    assert not runpodctl_senders(sender_cwd)
    assert no_part_files(ws, down)
