"""The transfer history file: what comes back after a restart, and what a damaged file does (nothing is lost)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from podtui.transfer import leftovers, owner
from podtui.transfer.history import FULL_LOGS, KEEP_FAILED, KEEP_FINISHED, OLD_LOG_LINES, TransferHistory
from podtui.transfer.job import LOG_LINES, TransferJob
from tests.helpers.repo import REPO


def job(state: str, **kw: object) -> TransferJob:
    j = TransferJob("pod1", "pull", "outputs/a.bin", "/tmp/x", **kw)  # type: ignore[arg-type]
    j.state = state  # type: ignore[assignment]
    return j


def test_round_trip_and_interrupted_jobs(tmp_path: Path) -> None:
    h = TransferHistory(tmp_path / "transfers.json")
    jobs = [
        job("verified", checksum="ab" * 32),
        job("transferring", code="1234-a-b-c-1"),
        job("queued"),
        job("waiting_for_code"),
        job("failed", error="room not ready"),
    ]
    h.save(jobs)
    back = TransferHistory(tmp_path / "transfers.json").load()
    assert [j.id for j in back] == [j.id for j in jobs]
    assert [j.state for j in back] == ["verified", "failed", "queued", "failed", "failed"]
    interrupted = back[1]
    assert interrupted.retryable and "podtui stopped" in (interrupted.error or "") and interrupted.code is None
    assert back[0].checksum == "ab" * 32 and back[4].error == "room not ready"


def test_a_push_into_the_pods_start_folder_survives_a_restart(tmp_path: Path) -> None:
    """Its target is "" (such a job was dropped as invalid when loaded, until the killed-while-waiting test)."""
    h = TransferHistory(tmp_path / "transfers.json")
    push = TransferJob("pod1", "push", "/home/me/data.jsonl", "")
    push.state = "transferring"
    h.save([push])
    (back,) = TransferHistory(tmp_path / "transfers.json").load()
    assert (back.id, back.target, back.state, back.retryable) == (push.id, "", "failed", True)


def test_a_damaged_file_is_set_aside_not_deleted(tmp_path: Path) -> None:
    path = tmp_path / "transfers.json"
    path.write_text('{"jobs": [{"pod_id": "p", "direc')  # cut off mid-write by a crash of some other tool
    h = TransferHistory(path)
    assert h.load() == []
    assert h.problem and "could not be read" in h.problem
    assert (tmp_path / "transfers.json.damaged").read_text().startswith('{"jobs"')


def test_bad_entries_are_skipped_good_ones_kept(tmp_path: Path) -> None:
    path = tmp_path / "transfers.json"
    good = job("verified").to_json()
    path.write_text(
        json.dumps(
            {
                "version": 1,
                "jobs": [
                    good,
                    {"pod_id": "p"},
                    "garbage",
                    {**good, "id": "x2", "state": "exploded"},
                    {**good, "id": "x3", "direction": "sideways"},
                    {**good, "id": "x4", "log": "not a list", "future": 1},
                ],
            }
        )
    )
    back = TransferHistory(path).load()
    assert [j.id for j in back] == [good["id"], "x4"] and back[1].log == []


def test_old_finished_jobs_are_pruned_unfinished_never(tmp_path: Path) -> None:
    h = TransferHistory(tmp_path / "t.json")
    jobs = [job("verified") for _ in range(KEEP_FINISHED + 20)] + [job("failed"), job("queued")]
    h.save(jobs)
    back = h.load()
    assert len(back) == KEEP_FINISHED + 2
    assert back[-2].state == "failed" and back[-1].state == "queued"
    assert back[0].id == jobs[20].id  # the oldest went first


def test_unwritable_history_does_not_raise(tmp_path: Path, caplog: object) -> None:
    (tmp_path / "data").write_text("a file where the data folder should be")
    TransferHistory(tmp_path / "data" / "t.json").save([job("queued")])  # logged, not raised: the queue goes on
    assert "could not save the transfer history" in str(getattr(caplog, "text", ""))


def test_one_time_codes_never_reach_the_disk_or_the_log(tmp_path: Path) -> None:
    j = job("waiting_for_code", code="8338-galileo-collect-fidel-3")
    j.note('runpodctl here: malformed code "8338-galileo-collect-fidel-3": try again')
    h = TransferHistory(tmp_path / "t.json")
    h.save([j])
    text = (tmp_path / "t.json").read_text()
    assert "galileo" not in text and '"8338-…"' in json.loads(text)["jobs"][0]["log"][0]
    assert (tmp_path / "t.json").stat().st_mode & 0o777 == 0o600


def test_saves_from_many_threads_never_tear_the_file(tmp_path: Path) -> None:
    import threading

    h = TransferHistory(tmp_path / "t.json")
    jobs = [job("queued") for _ in range(50)]
    threads = [threading.Thread(target=lambda: [h.save(jobs) for _ in range(20)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(TransferHistory(tmp_path / "t.json").load()) == 50
    assert not list(tmp_path.glob(".t.json.*"))  # no temporary files left behind


def test_a_save_never_hides_what_another_podtui_wrote(tmp_path: Path) -> None:
    """A save merges in what another podtui wrote since this one last read the file, but those changes are not in
    this podtui's own list: changed() must go on saying so until it loads them, however its writes interleave."""
    path = tmp_path / "t.json"
    a, b = TransferHistory(path), TransferHistory(path)
    mine, theirs = job("queued"), job("queued")
    a.save([mine])
    a.load()
    for step in ("theirs added", "theirs cancelled", "theirs verified"):
        b.save([theirs])
        assert a.changed(), step
        a.save([mine])  # this podtui writes before it looks: the file has theirs, its own list does not
        assert a.changed(), step
        seen = {j.id: j.state for j in a.load()}
        assert seen[theirs.id] == theirs.state and not a.changed(), step
        a.save([mine])  # nothing new from anyone since the load: nothing to look at
        assert not a.changed(), step
        theirs.state = {"theirs added": "cancelled", "theirs cancelled": "verified"}.get(step, "failed")  # type: ignore[assignment]


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_history_that_is_not_a_file_is_refused_not_read(kind: str, tmp_path: Path) -> None:
    """A FIFO at transfers.json would block a plain read forever (a device would never end): refused with one
    line naming it, in another process so that a hang fails the test instead of stopping it."""
    path = tmp_path / "transfers.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    code = (
        "import json, sys; from pathlib import Path; from podtui.transfer.history import TransferHistory; "
        "from podtui.transfer.job import TransferJob; h = TransferHistory(Path(sys.argv[1])); "
        "jobs = h.load(); h.save([TransferJob('p', 'pull', 'a', '/tmp')]); print(json.dumps([len(jobs), "
        "h.problem]))"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=30, cwd=REPO)
    assert out.returncode == 0, out.stderr
    count, problem = json.loads(out.stdout)
    what = {"fifo": "a FIFO (named pipe)", "directory": "a directory", "device": "a character device"}[kind]
    assert count == 0 and f"{path} is {what}, not a regular file" in problem and "\n" not in problem
    assert not path.with_name("transfers.json.damaged").exists()  # not podtui's to move, nor to replace
    assert (
        path.is_symlink()
        if kind == "device"
        else (stat.S_ISFIFO(path.lstat().st_mode) if kind == "fifo" else path.is_dir())
    )


def test_an_absurdly_large_history_is_set_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("podtui.transfer.history.MAX_BYTES", 1000)
    path = tmp_path / "transfers.json"
    path.write_text(json.dumps({"version": 1, "jobs": [job("verified").to_json() for _ in range(10)]}))
    h = TransferHistory(path)
    assert h.load() == [] and h.problem and "larger than" in h.problem
    assert (tmp_path / "transfers.json.damaged").exists()


def test_the_history_stays_bounded(tmp_path: Path) -> None:
    """Finished jobs past a count go, oldest first, and all but the newest keep only the end of their log; jobs of a
    podtui that still runs are left as it wrote them."""
    other = subprocess.Popen(["sleep", "60"])
    try:
        theirs = {"pid": other.pid, "started": leftovers.start_time(other.pid), "boot": owner.boot_id(), "token": "x"}
        jobs = []
        for i, state in enumerate(
            ["verified"] * (KEEP_FINISHED + 50) + ["cancelled"] * 10 + ["failed"] * (KEEP_FAILED + 30) + ["queued"] * 5
        ):
            j = job(state, finished_at=1000.0 + i if state != "queued" else None)
            for k in range(LOG_LINES):
                j.note(f"line {k} " + "x" * 60)
            jobs.append(j)
        live = job("verified", owner=theirs, finished_at=1.0)
        for k in range(LOG_LINES):
            live.note(f"line {k}")
        TransferHistory(tmp_path / "t.json").save([live])
        h = TransferHistory(tmp_path / "t.json")
        h.save(jobs)
        back = {j.id: j for j in h.load()}
        states = [j.state for j in back.values()]
        assert states.count("verified") + states.count("cancelled") == KEEP_FINISHED and live.id in back
        assert states.count("failed") == KEEP_FAILED and states.count("queued") == 5
        assert jobs[0].id not in back and jobs[-1].id in back  # the oldest went
        newest = sorted((j for j in back.values() if j.finished and j.id != live.id), key=lambda j: j.finished_at or 0)[
            -FULL_LOGS:
        ]
        assert all(len(j.log) == LOG_LINES for j in newest)
        trimmed = [j for j in back.values() if j.finished and j.id != live.id and j not in newest]
        assert trimmed and all(len(j.log) == OLD_LOG_LINES for j in trimmed)
        assert len(back[live.id].log) == LOG_LINES and all(
            len(j.log) == LOG_LINES for j in back.values() if j.state == "queued"
        )
        assert (tmp_path / "t.json").stat().st_size < 2 << 20
    finally:
        other.kill()
        other.wait()


def test_saves_are_written_off_the_callers_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """add, cancel, retry and remove are called from the TUI's event loop: none of them reads or writes the file on
    the thread that calls it (a save reads, merges and writes the whole history under a lock)."""
    from podtui.transfer.queue import TransferQueue
    from podtui.transfer.runner import TransferContext

    threads: list[str] = []
    save = TransferHistory.save

    def recording(self: TransferHistory, *args: object, **kw: object) -> None:
        threads.append(threading.current_thread().name)
        save(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(TransferHistory, "save", recording)
    ctx = TransferContext(
        lambda ref: (_ for _ in ()).throw(RuntimeError("no pods here")),
        lambda: None,  # type: ignore[arg-type, return-value]
        tmp_path / "work",
    )
    q = TransferQueue(ctx, TransferHistory(tmp_path / "t.json"), watch_s=None)
    try:
        a = q.add(TransferJob("pod1", "push", "/nonexistent/a", "x"))  # not started: stays queued
        b = q.add(TransferJob("pod1", "push", "/nonexistent/b", "x"))
        assert q.cancel(a.id) and q.retry(a.id) and q.cancel(a.id) and q.remove(a.id) and q.cancel(b.id)
        q.flush()
        assert threads and threading.current_thread().name not in threads, threads
        assert {j.id: j.state for j in TransferHistory(tmp_path / "t.json").load()} == {b.id: "cancelled"}
    finally:
        q.close()
