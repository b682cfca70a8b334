"""Two podtuis at once on one data dir, as real processes against one simulator: two `podtui push`, a TUI started
while a `podtui push` runs, two queues loading the same history, and many processes saving at once.

Each job belongs to the process running it. Another process lists it and never touches it: no failure mark, no
run of it under its id, no runpodctl of it killed, no staging folder of it removed; and no save loses a job.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from podtui.core.api import V2Api
from podtui.core.paths import Paths
from podtui.core.ssh.connect import SshSettings
from podtui.sim.simulator import Simulator
from podtui.transfer import leftovers
from podtui.transfer.history import INTERRUPTED, NOT_RUN, TransferHistory
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext
from tests.helpers.repo import REPO
from tests.helpers.sim import GATEWAY_POD, pod_id, pod_workspace
from tests.helpers.transfer import jobs_in, wait_for

if TYPE_CHECKING:  # the UI loads only in the test that drives it
    from podtui.ui.app import PodtuiApp


def folder(root: Path, name: str, size: int) -> Path:
    (root / name / "shards").mkdir(parents=True)
    (root / name / "shards" / "0.bin").write_bytes(os.urandom(size))
    (root / name / "meta.json").write_text(json.dumps({"name": name}))
    return root / name


def push(env: dict[str, str], local: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "podtui", "push", GATEWAY_POD, str(local), "incoming/", "--via", "runpodctl", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def untouched(job: dict[str, Any]) -> list[str]:
    """What another podtui would have left in a job's log had it touched it."""
    marks = (INTERRUPTED, "left running", "stopped what an earlier attempt", "attempt 1 failed", "cancelled")
    return [line for line in job["log"] if any(m in line for m in marks)]


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def test_two_pushes_at_once_both_verified_neither_touched(
    runpodctl_cli_env: dict[str, str], full_sim: Simulator, sim_api: V2Api, tmp_path: Path, history_file: Path
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    full_sim.relay.rate_bytes_per_s = 400_000  # a few seconds each: they overlap for sure
    a, b = folder(tmp_path, "run-a", 700_000), folder(tmp_path, "run-b", 700_000)
    procs = [push(runpodctl_cli_env, a)]
    wait_for(lambda: any(j["state"] == "transferring" for j in jobs_in(history_file)))
    procs.append(push(runpodctl_cli_env, b))  # starts while the first one transfers
    results = [finish(p) for p in procs]
    full_sim.relay.rate_bytes_per_s = None
    for code, _, err in results:
        assert code == 0, err
    jobs = {Path(j["source"]).name: j for j in jobs_in(history_file)}
    assert sorted(jobs) == ["run-a", "run-b"]  # neither save dropped the other's job
    for name, proc in zip(("run-a", "run-b"), procs, strict=True):
        job = jobs[name]
        assert (job["state"], job["attempts"], job["owner"]["pid"]) == ("verified", 1, proc.pid), job["log"]
        assert not untouched(job), job["log"]
        assert (ws / "incoming" / name / "shards" / "0.bin").read_bytes() == (
            tmp_path / name / "shards" / "0.bin"
        ).read_bytes()
    assert sorted(p.name for p in (ws / "incoming").iterdir()) == ["run-a", "run-b"]  # no staging left over


async def test_a_tui_started_during_a_push_shows_it_and_never_touches_it(
    runpodctl_cli_env: dict[str, str],
    full_sim: Simulator,
    sim_api: V2Api,
    make_full_app: Callable[..., PodtuiApp],
    tmp_path: Path,
    history_file: Path,
) -> None:
    from tests.helpers.pilot import loaded, wait_until

    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "mine.txt").write_text("the TUI's own download\n")
    # twenty-five seconds or so: the TUI starts and looks well within them, on a loaded machine too
    full_sim.relay.rate_bytes_per_s = 100_000
    local = folder(tmp_path, "dataset", 2_500_000)
    proc = push(runpodctl_cli_env, local)
    wait_for(
        lambda: any(
            j["state"] == "transferring" and any(e.get("where") == "here" for e in j["leftovers"])
            for j in jobs_in(history_file)
        )
    )
    (running,) = jobs_in(history_file)
    senders = [e for e in running["leftovers"] if e.get("where") == "here"]
    work = Paths.default().data_dir / "transfer-work" / running["id"]
    assert work.is_dir()  # the push's staging folder, holding its archive
    app = make_full_app(transfer_history=history_file, transfer_work_dir=Paths.default().data_dir / "transfer-work")
    async with app.run_test(size=(130, 34)) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: app.transfers.started is not None, 10)  # resumed by itself at start-up
        queue = app.transfers.queue()
        theirs = queue.get(running["id"])
        assert theirs is not None and theirs.state == "transferring"  # shown, as its owner last wrote it
        assert queue.foreign(running["id"]) == f"another podtui (pid {proc.pid})"
        assert not queue.cancel(running["id"]) and not queue.retry(running["id"]) and not queue.remove(running["id"])
        assert all(leftovers.alive(e["pid"], e["started"]) for e in senders)  # its runpodctl still runs
        assert work.is_dir()
        pod = sim_api.fetch_snapshot().find(GATEWAY_POD)
        assert pod is not None
        own = queue.add(
            TransferJob(pod.id, "pull", "mine.txt", str(tmp_path), pod_name=pod.name, route_choice="console")
        )
        await wait_until(pilot, lambda: (queue.get(own.id) or own).state == "verified", 30)
        await wait_until(pilot, lambda: proc.poll() is not None, 90)  # its few JSON lines fit in the pipe
        code, _, err = finish(proc)
        assert code == 0, err
        await wait_until(pilot, lambda: (queue.get(running["id"]) or theirs).state == "verified", 10)  # refreshed
    full_sim.relay.rate_bytes_per_s = None
    jobs = {j["id"]: j for j in jobs_in(history_file)}
    assert set(jobs) == {running["id"], own.id}  # both kept, whoever wrote last
    pushed = jobs[running["id"]]
    assert (pushed["state"], pushed["attempts"]) == ("verified", 1) and not untouched(pushed), pushed["log"]
    assert (ws / "incoming" / "dataset" / "shards" / "0.bin").read_bytes() == (local / "shards" / "0.bin").read_bytes()


QUEUE = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from podtui.core.api import V2Api
    from podtui.core.ssh.connect import SshSettings
    from podtui.transfer.runner import TransferContext
    from podtui.transfer.history import TransferHistory
    from podtui.transfer.job import TransferJob
    from podtui.transfer.queue import TransferQueue

    a = json.loads(sys.argv[1])
    api = V2Api(a["key"], a["url"])
    settings = SshSettings(known_hosts=Path(a["known"]), gateway=(a["host"], a["port"]), key_path=Path(a["ssh_key"]),
                           use_agent=False, search_home=False)
    ctx = TransferContext(lambda ref: api.fetch_snapshot().find(ref), lambda: settings, Path(a["work"]),
                          a.get("runpodctl"))
    q = None

    def changed(job):
        print(json.dumps({"id": job.id, "state": job.state, "mine": q is not None and q.mine(job)}), flush=True)

    q = TransferQueue(ctx, TransferHistory(Path(a["history"])), on_change=changed, adopt=a["adopt"],
                      concurrency=a.get("concurrency", 2), watch_s=0.2)
    for i in range(a.get("add", 0)):
        job = q.add(TransferJob("pod-%d" % i, "pull", "never-%d.bin" % i, "/nonexistent"))
        if a.get("cancel"):
            q.cancel(job.id)
    if a.get("run"):
        q.start()
        print(json.dumps({"ready": [j.id for j in q.jobs() if q.mine(j)]}), flush=True)
        sys.stdin.readline()  # until the test says stop
    q.close()
    print(json.dumps({"mine": [j.id for j in q.jobs() if q.mine(j)]}), flush=True)
""")


@pytest.fixture
def queue_process(
    full_sim: Simulator, ssh_settings: SshSettings, tmp_path: Path, runpodctl: Path, history_file: Path
) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    host, port = full_sim.gateway.address

    def start(**kw: object) -> subprocess.Popen[str]:
        args = {
            "url": full_sim.api.url,
            "key": full_sim.api.api_key,
            "host": host,
            "port": port,
            "ssh_key": str(ssh_settings.key_path),
            "known": str(ssh_settings.known_hosts),
            "work": str(tmp_path / f"work-{len(started)}"),
            "history": str(history_file),
            "runpodctl": str(runpodctl),
            "adopt": True,
            **kw,
        }
        proc = subprocess.Popen(
            [sys.executable, "-c", QUEUE, json.dumps(args)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def lines(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    out, err = proc.communicate("\n", timeout=60)
    assert proc.returncode == 0, err
    return [json.loads(line) for line in out.splitlines()]


def test_a_second_tui_never_runs_fails_or_kills_the_firsts_jobs(
    queue_process: Callable[..., subprocess.Popen[str]],
    full_sim: Simulator,
    sim_api: V2Api,
    context: TransferContext,
    runpodctl: Path,
    tmp_path: Path,
    history_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first podtui runs one job (runpodctl, slow) and has one queued behind it; a second starts on the same
    history meanwhile and goes on watching until both are verified."""
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "big.bin").write_bytes(os.urandom(2_500_000))  # ten seconds or so: the second one starts within them
    (ws / "next.bin").write_bytes(os.urandom(10_000))
    monkeypatch.setattr("podtui.transfer.routes.runpodctl.JOIN_PAUSE_S", 0.1)
    context.runpodctl = str(runpodctl)
    full_sim.relay.rate_bytes_per_s = 250_000
    pid = pod_id(sim_api, GATEWAY_POD)
    down = tmp_path / "down"
    down.mkdir()
    first = TransferQueue(context, TransferHistory(history_file), concurrency=1, backoff_s=(0.2,))
    try:
        big = first.add(TransferJob(pid, "pull", "big.bin", str(down), route_choice="runpodctl"))
        queued = first.add(TransferJob(pid, "pull", "next.bin", str(down), route_choice="console"))
        first.start()
        wait_for(lambda: (first.get(big.id) or big).state == "transferring")
        second = queue_process(run=True)
        assert second.stdout is not None
        ready = json.loads(second.stdout.readline())
        assert ready == {"ready": []}  # it adopted nothing: their podtui runs
        assert first.wait([big.id, queued.id], 90)
    finally:
        first.close()
        full_sim.relay.rate_bytes_per_s = None
    seen = lines(second)
    assert not [e for e in seen if e.get("mine")], seen  # never ran either job
    assert {e["id"]: e["state"] for e in seen if "state" in e}.get(big.id) in ("verified", None)
    for job in (first.get(big.id), first.get(queued.id)):
        assert job is not None and (job.state, job.attempts) == ("verified", 1), job.log if job else None
        assert not untouched(job.to_json()), job.log
    assert (down / "big.bin").read_bytes() == (ws / "big.bin").read_bytes()
    written = {j["id"]: j for j in jobs_in(history_file)}  # and the file says so too: nobody wrote over it
    assert [(written[i]["state"], written[i]["attempts"]) for i in (big.id, queued.id)] == [("verified", 1)] * 2


def test_an_orphaned_job_is_adopted_by_one_podtui_only(
    queue_process: Callable[..., subprocess.Popen[str]],
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
    history_file: Path,
) -> None:
    """A job whose podtui is gone (here: no owner at all, as an older podtui wrote it), and two podtuis starting at
    once: one adopts and runs it, the other only lists it."""
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "left.bin").write_bytes(os.urandom(100_000))
    down = tmp_path / "down"
    down.mkdir()
    orphan = TransferJob(pod_id(sim_api, GATEWAY_POD), "pull", "left.bin", str(down), route_choice="console")
    running = TransferJob(pod_id(sim_api, GATEWAY_POD), "pull", "gone.bin", str(down), state="transferring")
    TransferHistory(history_file).save([orphan, running])
    procs = [queue_process(run=True) for _ in range(2)]
    readies = []
    for p in procs:
        assert p.stdout is not None
        readies.append(json.loads(p.stdout.readline())["ready"])
    assert sorted(map(len, readies)) == [0, 2]  # one took both, the other none
    wait_for(lambda: {j["id"]: j["state"] for j in jobs_in(history_file)}.get(orphan.id) == "verified")
    outs = [lines(p) for p in procs]
    ran = [out for out in outs if any(e.get("mine") and e.get("state") == "transferring" for e in out)]
    assert len(ran) == 1
    jobs = {j["id"]: j for j in jobs_in(history_file)}
    assert jobs[orphan.id]["attempts"] == 1 and (down / "left.bin").read_bytes() == (ws / "left.bin").read_bytes()
    assert (jobs[running.id]["state"], jobs[running.id]["error"]) == ("failed", INTERRUPTED)


def test_many_processes_saving_at_once_lose_no_job(
    queue_process: Callable[..., subprocess.Popen[str]], history_file: Path
) -> None:
    n, each = 6, 15
    procs = [queue_process(add=each, cancel=True, adopt=False) for _ in range(n)]
    mine = {p.pid: set(lines(p)[-1]["mine"]) for p in procs}
    jobs = jobs_in(history_file)
    assert len(jobs) == n * each and len({j["id"] for j in jobs}) == n * each
    for j in jobs:
        assert j["state"] == "cancelled" and j["id"] in mine[j["owner"]["pid"]]
    assert all(len(ids) == each for ids in mine.values())
    assert history_file.stat().st_mode & 0o777 == 0o600
    assert not list(history_file.parent.glob(".transfers.json.*"))  # no temporary file left behind


def test_a_cli_killed_while_it_waits_to_retry_is_never_run_by_a_tui(
    runpodctl_cli_env: dict[str, str], context: TransferContext, history_file: Path, tmp_path: Path
) -> None:
    """`podtui pull` waits out a backoff (its job "queued", the gateway unreachable) and is killed: its user saw it
    end. The next TUI lists the job failed and retryable, and never runs it by itself, hours later."""
    import socket

    with socket.socket() as s:  # a port nothing listens on: every attempt fails to connect, and is retried
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "podtui",
            "pull",
            GATEWAY_POD,
            "README-demo.txt",
            str(tmp_path),
            "--via",
            "console",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**runpodctl_cli_env, "PODTUI_SSH_GATEWAY": f"127.0.0.1:{closed}"},
        cwd=REPO,
    )
    try:
        assert proc.stdout is not None
        while "attempt 1 failed" not in (line := proc.stdout.readline()):  # the JSON log event of the backoff
            assert line, proc.stderr.read() if proc.stderr else ""
        wait_for(lambda: [j["state"] for j in jobs_in(history_file)] == ["queued"])
    finally:
        proc.kill()
        proc.communicate()
    (waiting,) = jobs_in(history_file)
    tui = TransferQueue(context, TransferHistory(history_file)).start()
    try:
        (job,) = tui.jobs()
        assert (job.id, job.state, job.retryable, job.error) == (waiting["id"], "failed", True, NOT_RUN)
        assert waiting["owner"].get("adopts") is False and waiting["owner"]["pid"] == proc.pid
        assert tui.mine(job) and tui.wait([job.id], 0)  # adopted as failed: nothing of it runs
        tui.flush()
        assert [(j["state"], j["attempts"]) for j in jobs_in(history_file)] == [("failed", waiting["attempts"])]
    finally:
        tui.close()
