"""A job's log read back when its chunks are not as the cap leaves them, by both routes: a chunk the full volume cut
short (its output thrown away, docs/jobs.md#the-log-and-its-cap) is read past and counted as dropped, however the log
is read; a chunk the cap deletes while it is being read is found dropped, never read as the next one's bytes. The
logs are written here by hand, into a job's folder as this machine keeps it."""

from __future__ import annotations

import time
from pathlib import Path

from podtui.core.jobs.job import JobSpec
from podtui.core.jobs.remote_jobs import list_jobs, read_log, start_job
from podtui.core.pod import Pod
from podtui.sim.simulator import Simulator
from tests.helpers.jobs import VALID_SPEC, jobs_dir, shim, volume, whole_log
from tests.jobs.conftest import OpenShell

CHUNK = 32768
JOB = "20260101-000000-logs"


def _job(folder: Path, chunks: list[bytes], head: int = 4) -> None:
    """A job that ended, with these chunks as its log (None: a chunk the cap deleted)."""
    (folder / "log").mkdir(parents=True)
    records = {
        "spec.json": VALID_SPEC,
        "created": b"1796226000\n",
        "started": b"1796226000\n",
        "runner": b"4194300 1\n",
        "end": b"0 1796226100\n",
        "settings": f"{CHUNK} {head} {32 - head}\n".encode(),
    }
    for name, data in records.items():
        (folder / name).write_bytes(data)
    for i, data in enumerate(chunks):
        (folder / "log" / f"c.{i:08d}").write_bytes(data)


def _line(char: str, size: int) -> bytes:
    return (char * (size - 1) + "\n").encode()


def test_a_chunk_cut_short_by_a_full_volume_is_read_past(
    pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator
) -> None:
    chunks = [_line("a", CHUNK), _line("b", 100), _line("c", 50)]  # the second could not be written whole
    _job(jobs_dir(full_sim, pod_key) / JOB, chunks)
    with open_shell() as sh:
        text, offset, dropped, reads = "", 0, 0, 0
        while reads < 10:  # three reads are enough: one that stops at the short chunk, one past it
            got = read_log(sh, JOB, offset)
            text, dropped, offset, reads = text + got.text, dropped + got.dropped, got.next_offset, reads + 1
            if got.ended:
                break
        assert got.ended and text == b"".join(chunks).decode() and dropped == CHUNK - 100
        assert offset == 2 * CHUNK + 50
        # the listing reads ls's columns: whatever the user's shell asks of ls (a .bashrc's exports) changes nothing
        sh.run("export TIME_STYLE=long-iso LS_BLOCK_SIZE=human-readable QUOTING_STYLE=c")
        (job,) = list_jobs(sh, pod.id).jobs
        assert (job.log_bytes, job.log_dropped) == (2 * CHUNK + 50, CHUNK - 100)


def test_a_chunk_deleted_while_it_is_read_is_found_dropped(
    pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator
) -> None:
    """The cap deletes the oldest chunk of the tail as the job prints on: here `tail` deletes chunk 2 just before it
    would read it, as a fast job's output would."""
    chunks = [_line(c, CHUNK) for c in "abcde"] + [_line("f", 10)]
    _job(jobs_dir(full_sim, pod_key) / JOB, chunks, head=1)
    with open_shell() as sh:
        shim(
            sh,
            "tail",
            """if [ -f "$J/../../armed" ]; then
  case $3 in *log/c.00000002) rm -f "$J/../../armed" "$3" ;; esac
fi""",
        )
        (volume(full_sim, pod_key) / "armed").touch()
        text, dropped = whole_log(sh, JOB)
        assert not (volume(full_sim, pod_key) / "armed").exists()  # the race was run
        assert dropped == CHUNK and text == b"".join(chunks[:2] + chunks[3:]).decode()


def test_a_log_read_while_the_cap_prunes_it_has_every_byte_in_its_place(pod: Pod, open_shell: OpenShell) -> None:
    """A job printing 14 MB over a few seconds into the smallest cap (1 MiB), read all along: every piece read is
    the bytes printed at its offset, and what was skipped is counted as dropped, so the pieces and the drops add up
    to all it printed; nothing twice, nothing out of place."""
    once = "".join(f"{i}\n" for i in range(1, 50_001)).encode()
    printed = once * 50
    command = "for r in $(seq 1 50); do seq 1 50000; sleep 0.05; done"
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec(command, log_max_mb=1), now=time.time())
        offset, reads = 0, 0
        while True:
            got = read_log(sh, job.id, offset)
            start = offset + got.dropped
            data = got.text.encode()
            assert got.next_offset == start + len(data)
            assert data == printed[start : got.next_offset], (start, len(data))
            offset, reads = got.next_offset, reads + 1
            if got.ended:
                break
        assert offset == len(printed) and reads > 1
