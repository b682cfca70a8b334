"""The job memory (docs/jobs.md#after-a-job): 0600 and replaced whole; a file that cannot be read is refused in
words and never written over, the session's jobs kept in memory meanwhile and joined to it once it is mended; an
entry that cannot be read stays in the file as it was; and what the follow-up decides from plain data."""

from __future__ import annotations

import json
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from podtui.core.jobs.follow import _next_step, local_path, remote_path
from podtui.core.jobs.job import Job, Pull
from podtui.core.jobs.job_memory import Followed, JobMemory, followed_from_json

JOB = Job(
    "20261130-090000-ab12",
    "pod1",
    "python train.py",
    "train",
    "/workspace/run",
    "running",
    None,
    1.0,
    None,
    "stop",
    (Pull("out/w.bin"), Pull("/root/log.txt", "logs/")),
    10,
    0,
)


def _remember(memory: JobMemory, job: Job = JOB) -> None:
    memory.change(lambda entries: entries.__setitem__((job.pod_id, job.id), Followed(job, "llama", 5.0)))


def test_written_whole_and_private_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "data" / "jobs.json"
    _remember(JobMemory(path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    again = JobMemory(path).get("pod1", JOB.id)
    assert again is not None and again.job == JOB and again.pod_name == "llama"
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"\xff\xfe", b'{"jobs": {"a": 1}}', b"[]", b""],
    ids=["broken", "bytes", "shape", "list", "empty"],
)
def test_a_file_that_cannot_be_read_is_refused_and_never_written_over(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "jobs.json"
    path.write_bytes(content)
    memory = JobMemory(path)
    _remember(memory)
    assert memory.refused is not None and "is not used" in memory.refused and "move it away" in memory.refused
    assert path.read_bytes() == content  # left exactly as it was
    assert memory.get("pod1", JOB.id) is not None  # the session's job, in memory
    path.write_text('{"version": 1, "jobs": []}\n')  # mended
    other = replace(JOB, id="20261130-100000-cd34")
    _remember(memory, other)
    assert memory.refused is None
    kept = json.loads(path.read_text())["jobs"]
    assert sorted(e["job_id"] for e in kept) == sorted([JOB.id, other.id])


def test_an_entry_that_cannot_be_read_stays_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "jobs.json"
    odd = {"pod_id": "p", "job_id": "x; rm -rf /", "job": {}}
    path.write_text(json.dumps({"version": 1, "jobs": [odd]}))
    memory = JobMemory(path)
    _remember(memory)
    entries = json.loads(path.read_text())["jobs"]
    assert odd in entries and len(entries) == 2
    assert followed_from_json(odd) is None


def test_what_a_job_pulls_and_where_it_lands(tmp_path: Path) -> None:
    assert remote_path(JOB, Pull("out/w.bin")) == "/workspace/run/out/w.bin"
    assert remote_path(JOB, Pull("/root/log.txt")) == "/root/log.txt"
    assert remote_path(JOB, Pull("~/cache")) == "~/cache"
    assert local_path(Pull("x"), tmp_path) == str(tmp_path)
    assert local_path(Pull("x", "logs/"), tmp_path) == str(tmp_path / "logs")
    assert (tmp_path / "logs").is_dir()  # a folder to put it in, made
    assert local_path(Pull("x", "w.bin"), tmp_path) == str(tmp_path / "w.bin") and not (tmp_path / "w.bin").exists()


def test_the_alert_says_what_comes_next() -> None:
    entry = Followed(replace(JOB, state="done"), "llama", 1.0)
    assert _next_step(entry, False) == "pulling 2 paths, then stopping llama once every pull is verified"
    assert _next_step(entry, True) == "its pulls and its pod's stop are not done (read-only mode)"
    lost = replace(entry, job=replace(JOB, state="lost"))
    assert _next_step(lost, False) == "its pulls and its pod's stop are not done (it was lost)"
    alone = replace(entry, job=replace(JOB, state="done", pulls=(), then="terminate"))
    assert _next_step(alone, False) == "terminating llama"
    assert _next_step(replace(entry, job=replace(JOB, pulls=(), then=None)), False) == ""
