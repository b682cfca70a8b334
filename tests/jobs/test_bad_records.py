"""What podtui meets on a pod that is not as it wrote it: a job id that is not there, one with shell characters in
it (refused before any shell sees it), and hand-written garbage in the jobs' folder (bad JSON, a truncated file,
control characters in a name, an unreadable end record, folders that are not jobs): each said as a problem in words,
beside the jobs that can be read, never a crash (docs/jobs.md#reading-jobs-back)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

import pytest

from podtui.core.jobs.job import JobError, JobNotFound
from podtui.core.jobs.remote_jobs import cancel_job, find_job, follow_log, list_jobs, read_log
from podtui.core.pod import Pod
from podtui.core.ssh.remote import RemoteShell
from podtui.sim.simulator import Simulator
from tests.helpers.jobs import GARBAGE_JOBS, jobs_dir, write_garbage

UNKNOWN = "20260101-000000-zzzz"
NOT_IDS = [
    "x; touch /workspace/pwned",
    "$(touch /workspace/pwned)",
    "`touch /workspace/pwned`",
    "../../../workspace",
    "*",
    "",
    "-rf",
    "UPPER-case-1",
    "a" * 41,
    "20260101-000000-zzzz\n",
]


def _calls(shell: RemoteShell, pod: Pod, job_id: str) -> list[Callable[[], object]]:
    return [
        functools.partial(find_job, shell, pod.id, job_id),
        functools.partial(read_log, shell, job_id),
        functools.partial(cancel_job, shell, pod.id, job_id),
        functools.partial(follow_log, shell, job_id, print, threading.Event()),
    ]


def test_a_job_that_is_not_there_is_said_so(pod: Pod, shell: RemoteShell) -> None:
    for call in _calls(shell, pod, UNKNOWN):
        with pytest.raises(JobNotFound, match=f"no job {UNKNOWN} on this pod"):
            call()
    assert list_jobs(shell, pod.id).jobs == ()


def test_a_job_id_with_shell_characters_never_reaches_a_shell(
    shell: RemoteShell, pod: Pod, pod_key: str, full_sim: Simulator
) -> None:
    for job_id in NOT_IDS:
        for call in _calls(shell, pod, job_id):
            with pytest.raises(JobError, match="is not a job id") as refused:
                call()
            assert not isinstance(refused.value, JobNotFound) and "\n" not in str(refused.value)
    assert not (jobs_dir(full_sim, pod_key).parent.parent / "pwned").exists()


def test_garbage_in_the_records_is_listed_as_problems(
    pod: Pod, pod_key: str, shell: RemoteShell, full_sim: Simulator
) -> None:
    write_garbage(jobs_dir(full_sim, pod_key))
    listed = list_jobs(shell, pod.id)
    assert {j.id for j in listed.jobs} == GARBAGE_JOBS
    ctrl = next(j for j in listed.jobs if j.id.endswith("ctrl"))
    # read exactly as written (the record travels base64-encoded); whoever shows it makes it visible
    assert ctrl.name == "evil\x1b[2J\x1b]0;title\x07\r\nforged" and ctrl.command == "echo \x1b]52;c;aGk=\x07"
    assert (ctrl.state, ctrl.exit_code) == ("done", 0)
    endx = next(j for j in listed.jobs if j.id.endswith("endx"))
    assert endx.state == "lost" and endx.exit_code is None  # no end it can read, and no runner alive
    problems = "\n".join(listed.problems)
    assert len(listed.problems) == 9, problems
    for said in (
        "job 20260101-000000-badj: its spec.json is not JSON (Expecting property name",
        "job 20260101-000001-trun: its spec.json is not JSON (cut short?)",
        "job 20260101-000002-list: its spec.json is not a JSON object",
        'job 20260101-000003-then: its spec.json\'s then is neither stop nor terminate: "explode"',
        "job 20260101-000004-utf8: its spec.json is not UTF-8 text",
        "job 20260101-000005-none has no spec.json",
        "a folder in the jobs' folder that is not a job: 'not a job'",
        "a folder in the jobs' folder that is not a job: 'evil\\x1b[31mname'",
        "job 20260101-000007-endx: its record of how it ended is unreadable ('garbage\\x01')",
    ):
        assert said in problems, problems
    assert all(p.isprintable() for p in listed.problems)  # the problems quote what they met made visible

    with pytest.raises(JobError, match=r"its spec\.json is not JSON") as refused:
        find_job(shell, pod.id, "20260101-000000-badj")
    assert not isinstance(refused.value, JobNotFound)
    with pytest.raises(JobError, match="log settings are unreadable"):
        read_log(shell, "20260101-000000-badj")
