""" "Then terminate" with another podtui sharing the history: a transfer another podtui still has queued or under way
for the pod holds the terminate back, in a TUI (decided again, with the history read again, when that transfer
ends however it ends) and in `podtui pull --then-terminate --yes`. Real processes stand for the other podtui; the
pod is the simulator's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from podtui.core.api import V2Api
from podtui.sim.simulator import Simulator
from podtui.transfer import leftovers, owner
from podtui.transfer.history import TransferHistory
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext
from tests.helpers.repo import REPO
from tests.helpers.sim import GATEWAY_POD, pod_id, pod_workspace
from tests.helpers.transfer import jobs_in, wait_for


def status(full_sim: Simulator, pid: str) -> str:
    return full_sim.world.pods[pid].status


def terminated(full_sim: Simulator, sim_api: V2Api, pid: str) -> bool:
    """Terminated in the simulated world, and so gone from GET /v2/pods at once: RunPod's DELETE is final
    (docs/runpod-facts.md#rest-v2)."""
    pod = full_sim.world.pods.get(pid)
    return (pod is None or pod.status == "TERMINATED") and all(p.id != pid for p in sim_api.fetch_snapshot().pods)


def owned_by(proc: subprocess.Popen[bytes], **kw: Any) -> dict[str, Any]:
    me = owner.claim()
    owner.release(me)
    return {**me, "pid": proc.pid, "started": leftovers.start_time(proc.pid), "token": "theirs", **kw}


def pull_and_terminate(env: dict[str, str], down: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "podtui",
            "pull",
            GATEWAY_POD,
            "small.txt",
            f"{down}/",
            "--then-terminate",
            "--yes",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=REPO,
    )


def test_the_cli_never_terminates_a_pod_another_podtui_still_uses(
    runpodctl_cli_env: dict[str, str],
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
    history_file: Path,
    other_podtui: subprocess.Popen[bytes],
) -> None:
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "small.txt").write_text("the script's own download\n")
    pid = pod_id(sim_api, GATEWAY_POD)
    alive = owned_by(other_podtui)
    far = owned_by(other_podtui, host="build-box-7", boot="another-machine", pid=4242, started="1")  # sharing the home
    pending = [
        ("pull", "queued", alive),
        ("pull", "waiting_for_code", alive),
        ("pull", "transferring", alive),
        ("pull", "verifying", alive),
        ("push", "transferring", alive),
        ("hub", "queued", alive),
        ("pull", "transferring", far),
    ]
    words = {
        "pull": "is pulling model.safetensors from",
        "push": "is pushing model.safetensors to",
        "hub": "is downloading model.safetensors onto",
    }
    for i, (direction, state, who) in enumerate(pending):
        history_file.unlink(missing_ok=True)
        theirs = TransferJob(
            pid,
            direction,
            "model.safetensors",
            str(tmp_path),
            state=state,  # type: ignore[arg-type]
            owner=who,
        )
        TransferHistory(history_file).save([theirs], me=who)
        down = tmp_path / f"down-{i}"
        r = pull_and_terminate(runpodctl_cli_env, down)
        case = (direction, state, who.get("host"))
        assert r.returncode == 1, (case, r.stderr)
        assert (down / "small.txt").read_text() == "the script's own download\n", case  # its own pull verified
        assert f"not terminating {GATEWAY_POD}: " in r.stderr and f"{words[direction]} {GATEWAY_POD}" in r.stderr, (
            case,
            r.stderr,
        )
        assert (
            "on host build-box-7 (pid 4242)" if who is far else f"another podtui (pid {other_podtui.pid})"
        ) in r.stderr, (case, r.stderr)
        assert status(full_sim, pid) == "RUNNING", case
        assert {j["id"]: j["state"] for j in jobs_in(history_file)}[theirs.id] == state, case  # left as it was
    # nothing holds it back: a gone podtui's transfer, a live one's finished one, a live one's for another pod
    gone = subprocess.Popen(["true"])
    gone.wait()
    history_file.unlink()
    TransferHistory(history_file).save(
        [
            TransferJob(
                pid,
                "pull",
                "model.safetensors",
                str(tmp_path),
                state="transferring",
                owner=owned_by(other_podtui, pid=gone.pid, started="1"),
            ),
            TransferJob(pid, "pull", "model.safetensors", str(tmp_path), state="verified", owner=alive),
            TransferJob("another-pod", "pull", "model.safetensors", str(tmp_path), state="transferring", owner=alive),
        ]
    )
    r = pull_and_terminate(runpodctl_cli_env, tmp_path / "down-last")
    assert r.returncode == 0 and f"{GATEWAY_POD}: terminating" in r.stderr, r.stderr
    assert terminated(full_sim, sim_api, pid)


@pytest.mark.parametrize("ending", ["verified", "cancelled", "killed"])
def test_a_tuis_terminate_waits_for_another_podtuis_download_from_the_pod(
    ending: str,
    runpodctl_cli_env: dict[str, str],
    full_sim: Simulator,
    sim_api: V2Api,
    context: TransferContext,
    tmp_path: Path,
    history_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The TUI (here a queue in this process) never looks at the file by itself in time (its watcher waits a minute):
    its own saves merge the other podtui's job in, and only reading the history again before deciding finds it.
    Once that download ends (verified, cancelled with ctrl-c, or its podtui killed), the next look decides again."""
    ws = pod_workspace(full_sim, sim_api, GATEWAY_POD)
    (ws / "big.bin").write_bytes(os.urandom(1_000_000))
    (ws / "small.txt").write_text("mine\n")
    pid = pod_id(sim_api, GATEWAY_POD)
    ready: list[tuple[str, bool]] = []
    tui = TransferQueue(
        context,
        TransferHistory(history_file),
        on_terminate_ready=lambda p, n, c: ready.append((p, c)),
        watch_s=60.0,
        backoff_s=(0.2,),
    ).start()
    full_sim.relay.rate_bytes_per_s = 200_000  # five seconds or so: the TUI's download fits well within
    other = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "podtui",
            "pull",
            GATEWAY_POD,
            "big.bin",
            str(tmp_path / "b"),
            "--via",
            "runpodctl",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=runpodctl_cli_env,
        cwd=REPO,
    )
    try:
        wait_for(lambda: any(j["state"] == "transferring" for j in jobs_in(history_file)))
        (theirs,) = jobs_in(history_file)
        mine = tui.add(
            TransferJob(
                pid,
                "pull",
                "small.txt",
                str(tmp_path / "a"),
                route_choice="console",
                terminate_after=True,
                terminate_confirmed=True,
            )
        )
        assert tui.wait([mine.id], 60) and (tui.get(mine.id) or mine).state == "verified"
        assert ready == []  # held back by the other podtui's download from the pod, which the TUI now lists
        listed = tui.get(theirs["id"])
        assert listed is not None and listed.state == "transferring" and not tui.mine(listed)
        if ending == "verified":
            assert other.wait(120) == 0
        elif ending == "cancelled":
            other.send_signal(signal.SIGINT)
            assert other.wait(60) == 130
        else:
            other.kill()
            other.wait()
        tui.refresh()  # what the TUI's watcher does every second
        assert ready == [(pid, True)], (ending, {j["id"]: j["state"] for j in jobs_in(history_file)})
        after = tui.get(theirs["id"])
        assert (
            after is not None
            and after.state == {"verified": "verified", "cancelled": "cancelled", "killed": "failed"}[ending]
        )
        tui.refresh()
        assert ready == [(pid, True)]  # said once
    finally:
        full_sim.relay.rate_bytes_per_s = None
        if other.poll() is None:
            other.kill()
        other.communicate()
        tui.close()


def test_a_tui_lists_what_another_podtui_wrote_whatever_it_saved_meanwhile(tmp_path: Path) -> None:
    """Another podtui's job changes (added, cancelled, retried and run to failure) while this one keeps saving its
    own: each change reaches this one's list at its next look."""

    def nowhere(ref: str) -> Any:
        raise RuntimeError("no pods here")

    ctx = TransferContext(nowhere, lambda: None, tmp_path / "work")  # type: ignore[arg-type, return-value]
    path = tmp_path / "transfers.json"
    tui = TransferQueue(ctx, TransferHistory(path), watch_s=None)
    cli = TransferQueue(ctx, TransferHistory(path), adopt=False, backoff_s=())
    try:
        own = tui.add(TransferJob("pod1", "push", "/nonexistent/mine", "x"))
        theirs = cli.add(TransferJob("pod1", "push", "/nonexistent/theirs", "x"))
        for step in ("added", "cancelled", "retried", "failed"):
            if step == "cancelled":
                cli.cancel(theirs.id)
            elif step == "retried":
                cli.retry(theirs.id)
            elif step == "failed":
                cli.start()
                assert cli.wait([theirs.id], 30)
            cli.flush()
            assert tui.cancel(own.id) and tui.retry(own.id)  # this one saves before it looks
            tui.flush()
            tui.refresh()
            seen = tui.get(theirs.id)
            assert seen is not None and seen.state == (cli.get(theirs.id) or theirs).state, step
    finally:
        cli.close()
        tui.close()
