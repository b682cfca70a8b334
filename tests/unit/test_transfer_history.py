"""The transfer history file: what comes back after a restart, and what a damaged file does (nothing is lost)."""

from __future__ import annotations

import json
from pathlib import Path

from podtui.transfer.history import KEEP_FINISHED, TransferHistory
from podtui.transfer.job import TransferJob


def job(state: str, **kw: object) -> TransferJob:
    j = TransferJob("pod1", "pull", "outputs/a.bin", "/tmp/x", **kw)  # type: ignore[arg-type]
    j.state = state  # type: ignore[assignment]
    return j


def test_round_trip_and_interrupted_jobs(tmp_path: Path) -> None:
    h = TransferHistory(tmp_path / "transfers.json")
    jobs = [job("verified", checksum="ab" * 32), job("transferring", code="1234-a-b-c-1"), job("queued"),
            job("waiting_for_code"), job("failed", error="room not ready")]
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
    path.write_text(json.dumps({"version": 1, "jobs": [
        good, {"pod_id": "p"}, "garbage", {**good, "id": "x2", "state": "exploded"},
        {**good, "id": "x3", "direction": "sideways"}, {**good, "id": "x4", "log": "not a list", "future": 1}]}))
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
