"""The queue's "then terminate" with another podtui's transfer from the pod, and its saves, with the transfer itself
stood in for (each job verifies at once): a hold is said (the marked job's log, once through on_terminate_held,
terminate_hold()), one whose podtui cannot be looked up from here can be forgotten, landed() runs without the
queue's lock and a change meanwhile is decided again, and a runpodctl process is in the history before the
transfer goes on. Real processes stand for the other podtui."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from podtui.transfer import leftovers, owner
from podtui.transfer.history import TransferHistory
from podtui.transfer.job import TransferJob
from podtui.transfer.progress import Reporter
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext
from podtui.transfer.runners import RUNNERS

POD, POD_NAME = "pod1", "eval-a100"


@pytest.fixture
def verifies_at_once(monkeypatch: pytest.MonkeyPatch) -> list[Callable[[TransferJob, Reporter], None]]:
    """Every transfer verifies at once (what it does first can be added); every download is still there."""
    first: list[Callable[[TransferJob, Reporter], None]] = []

    def execute(job: TransferJob, reporter: Reporter, ctx: TransferContext) -> None:
        for step in first:
            step(job, reporter)
        with reporter.lock:
            job.final_path, job.checksum = f"/tmp/{job.label}", "ab" * 32

    for runner in RUNNERS.values():
        monkeypatch.setattr(runner, "run", execute)
        monkeypatch.setattr(runner, "landed", lambda job: True)
    return first


class Tui:
    """A queue as the TUI has it, with what it is told."""

    def __init__(self, tmp_path: Path) -> None:
        def nowhere(ref: str) -> Any:
            raise RuntimeError("no pods here")

        self.path = tmp_path / "transfers.json"
        ctx = TransferContext(nowhere, lambda: None, tmp_path / "work")  # type: ignore[arg-type, return-value]
        self.ready: list[tuple[str, bool]] = []
        self.held: list[tuple[str, str, str]] = []
        self.removed: list[str] = []
        self.q = TransferQueue(
            ctx,
            TransferHistory(self.path),
            watch_s=None,
            backoff_s=(),
            on_terminate_ready=lambda pod, name, confirmed: self.ready.append((pod, confirmed)),
            on_terminate_held=lambda *held: self.held.append(held),
            on_removed=self.removed.append,
        )

    def marked(self, name: str = "small.txt") -> TransferJob:
        job = self.q.add(
            TransferJob(
                POD, "pull", name, "/tmp/down/", pod_name=POD_NAME, terminate_after=True, terminate_confirmed=True
            )
        )
        self.q.start()
        assert self.q.wait([job.id], 30)
        done = self.q.get(job.id)
        assert done is not None and done.state == "verified", done
        return done

    def in_file(self) -> dict[str, dict[str, Any]]:
        return {j["id"]: j for j in json.loads(self.path.read_text())["jobs"]}


@pytest.fixture
def tui(tmp_path: Path) -> Iterator[Tui]:
    t = Tui(tmp_path)
    yield t
    t.q.close()


def theirs(who: dict[str, Any], state: str = "transferring", name: str = "model.safetensors") -> TransferJob:
    return TransferJob(
        POD,
        "pull",
        name,
        "/elsewhere",
        pod_name=POD_NAME,
        state=state,  # type: ignore[arg-type]
        owner=who,
    )


def owned_by(proc: subprocess.Popen[bytes], **kw: Any) -> dict[str, Any]:
    return {
        "host": owner.host(),
        "pidns": owner.pid_namespace(),
        "boot": owner.boot_id(),
        "pid": proc.pid,
        "started": leftovers.start_time(proc.pid),
        "token": "theirs",
        "adopts": True,
        **kw,
    }


def until(check: Callable[[], bool], timeout_s: float = 30) -> None:
    end = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < end, "never happened"
        time.sleep(0.02)


def test_a_held_terminate_is_said_once_then_decided_when_the_other_download_ends(
    tui: Tui, other_podtui: subprocess.Popen[bytes], verifies_at_once: list[Any]
) -> None:
    who = owned_by(other_podtui)
    other = theirs(who)
    TransferHistory(tui.path).save([other], me=who)
    mine = tui.marked()
    why = f"podtui pid {other_podtui.pid} is still pulling model.safetensors from {POD_NAME} (transferring)"
    assert tui.ready == [] and tui.held == [(POD, POD_NAME, why)]
    assert tui.q.terminate_hold(mine.id) == why
    assert any(line.endswith(f"then terminate held: {why}") for line in mine.log), mine.log
    assert "cannot be told" not in why  # this machine's podtui: it is adopted once gone, nothing to forget
    assert not tui.q.forgettable(other.id) and not tui.q.forget(other.id)
    second = tui.marked("second.txt")  # decided again: the same hold, not said again, but in this job's log too
    assert tui.held == [(POD, POD_NAME, why)] and tui.q.terminate_hold(second.id) == why
    assert sum("then terminate held" in line for line in second.log) == 1
    assert sum("then terminate held" in line for line in (tui.q.get(mine.id) or mine).log) == 1
    tui.q.flush()
    assert any("then terminate held" in line for line in tui.in_file()[mine.id]["log"])  # the note is saved
    other.state = "verified"
    TransferHistory(tui.path).save([other], me=who)
    tui.q.refresh()  # what the watcher does every second
    assert tui.ready == [(POD, True)] and tui.q.terminate_hold(mine.id) is None
    assert len(tui.held) == 1


def test_a_terminate_held_by_a_podtui_that_cannot_be_looked_up_is_released_by_forgetting_it(
    tui: Tui, verifies_at_once: list[Any]
) -> None:
    """Another machine's podtui (a home shared between machines): whether it still runs cannot be told, so its
    transfer would hold the terminate back for ever; the hold says so and how to let go, and forgetting it does."""
    far = {
        "host": "build-box-7",
        "pidns": "pid:[4026530000]",
        "boot": "their-boot",
        "pid": 4242,
        "started": "1",
        "token": "far",
        "adopts": True,
    }
    other = theirs(far)
    TransferHistory(tui.path).save([other], me=far)
    mine = tui.marked()
    ((_, _, why),) = tui.held
    assert why.startswith(f"podtui pid 4242 on host build-box-7 is still pulling model.safetensors from {POD_NAME}")
    assert "cannot be told from here" in why and "press d" in why
    assert tui.q.forgettable(other.id) and not tui.q.forgettable(mine.id) and not tui.q.forget(mine.id)
    assert tui.q.forget(other.id)
    until(lambda: tui.ready == [(POD, True)])  # decided again, on a thread of its own
    assert tui.removed == [other.id] and tui.q.get(other.id) is None and tui.q.terminate_hold(mine.id) is None
    tui.q.flush()
    assert other.id not in tui.in_file() and mine.id in tui.in_file()  # out of the shared history too
    TransferHistory(tui.path).save([other], me=far)  # that podtui saves its jobs again, this one unchanged
    tui.q.refresh()
    assert tui.q.get(other.id) is None
    other.state = "verifying"  # it still runs after all: its transfer shows again once it moves on
    TransferHistory(tui.path).save([other], me=far)
    tui.q.refresh()
    back = tui.q.get(other.id)
    assert back is not None and back.state == "verifying" and not tui.q.mine(back)


def test_forgetting_leaves_a_job_adopted_meanwhile_to_its_new_owner(
    tmp_path: Path, other_podtui: subprocess.Popen[bytes]
) -> None:
    """The history drops a forgotten job only while the owner it was forgotten with still has it."""
    path = tmp_path / "transfers.json"
    far = {"host": "build-box-7", "boot": "their-boot", "pid": 4242, "started": "1", "token": "far"}
    job = theirs(far)
    TransferHistory(path).save([job], me=far)
    adopter = owned_by(other_podtui)
    job.owner = adopter
    TransferHistory(path).save([job], me=adopter)
    TransferHistory(path).save([], forgotten={job.id: far})
    assert [j.owner for j in TransferHistory(path).load()] == [adopter]
    TransferHistory(path).save([], forgotten={job.id: adopter})
    assert TransferHistory(path).load() == []


def test_landed_runs_without_the_queues_lock_and_a_change_meanwhile_is_decided_again(
    tui: Tui, other_podtui: subprocess.Popen[bytes], verifies_at_once: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """landed() may list a big folder: the pane's every poll takes the queue's lock, so it must be free meanwhile
    (another thread takes it). Another podtui's download from the pod that appears meanwhile holds the terminate."""
    who = owned_by(other_podtui)
    other = theirs(who, state="queued")
    taken: list[bool] = []

    def landed(job: TransferJob) -> bool:
        def take() -> None:
            got = tui.q._lock.acquire(timeout=30)  # held by the caller: never, and this says False
            taken.append(got)
            if got:
                tui.q._lock.release()

        t = threading.Thread(target=take)
        t.start()
        t.join()
        if taken == [True]:  # while the first look runs: another podtui queues a download from the pod
            TransferHistory(tui.path).save([other], me=who)
            tui.q.refresh()
        return True

    for runner in RUNNERS.values():
        monkeypatch.setattr(runner, "landed", landed)
    mine = tui.marked()
    assert taken == [True]  # looked at once: the change sent it back to the start, where it is held
    assert tui.ready == [] and tui.q.terminate_hold(mine.id) is not None and len(tui.held) == 1
    other.state = "cancelled"
    TransferHistory(tui.path).save([other], me=who)
    tui.q.refresh()
    assert taken == [True, True] and tui.ready == [(POD, True)]


def test_a_runpodctl_started_is_in_the_history_before_the_transfer_goes_on(
    tui: Tui, other_podtui: subprocess.Popen[bytes], verifies_at_once: list[Any]
) -> None:
    """A podtui killed right after starting runpodctl leaves it running; the next podtui stops only what the
    history names, so the record is written before the transfer goes on, not a moment later."""
    seen: list[list[Any]] = []

    def starts_runpodctl(job: TransferJob, reporter: Reporter) -> None:
        reporter.remember(leftovers.here(other_podtui.pid))
        seen.append([e.get("pid") for e in tui.in_file()[job.id]["leftovers"]])  # as a killed podtui leaves it

    verifies_at_once.append(starts_runpodctl)
    for _ in range(5):
        tui.marked()
    assert seen == [[other_podtui.pid]] * 5
