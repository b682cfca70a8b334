"""Detached jobs on the simulated pods, by both routes (the gateway's PTY shell and direct SSH's exec channel): a job
starts, is listed running, ends done or failed with its exit code; it outlives its connection; one that fails at
once says so; cancelled, it ends by SIGTERM or, ignoring it, by SIGKILL after the grace; a pod stopped under it
leaves it lost; a flood is capped with its head and tail kept; its command never shows in a process list."""

from __future__ import annotations

import base64
import contextlib
import shlex
import threading
import time
from pathlib import Path

from podtui.core.api import V2Api
from podtui.core.jobs.job import JobSpec
from podtui.core.jobs.layout import log_geometry
from podtui.core.jobs.remote_jobs import (
    LogChunk,
    cancel_job,
    find_job,
    follow_log,
    list_jobs,
    read_log,
    start_job,
)
from podtui.core.pod import Pod, PodStatus
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import open_remote
from podtui.sim.simulator import Simulator
from tests.helpers.autostop import CommandLineWatch
from tests.helpers.jobs import ended, jobs_dir, wait_until, whole_log
from tests.helpers.processes import settle
from tests.jobs.conftest import OpenShell

WAIT_FOR_GO = "while [ ! -f go ]; do sleep 0.1; done; "  # in /workspace: the test lets the job go on


def test_a_job_is_listed_running_then_done_or_failed(
    pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator
) -> None:
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec(WAIT_FOR_GO + "echo finished", name="train"), now=time.time())
        assert (job.state, job.exit_code, job.name, job.workdir) == ("running", None, "train", "/workspace")
        listed = list_jobs(sh, pod.id)
        assert [(j.id, j.state) for j in listed.jobs] == [(job.id, "running")] and not listed.problems
        assert listed.pod_now is not None and job.started is not None
        took = job.duration_s(listed.pod_now)
        assert took is not None and took >= 0
        (jobs_dir(full_sim, pod_key).parent.parent / "go").touch()
        done = ended(sh, pod.id, job.id)
        assert (done.state, done.exit_code) == ("done", 0)
        assert done.ended is not None and done.started is not None and done.ended >= done.started
        assert whole_log(sh, job.id) == ("finished\n", 0) and done.log_bytes == len("finished\n")

        bad = start_job(sh, pod.id, JobSpec("sleep 2; echo oops >&2; exit 3"), now=time.time())
        assert bad.state == "running"
        failed = ended(sh, pod.id, bad.id)
        assert (failed.state, failed.exit_code) == ("failed", 3)
        assert read_log(sh, bad.id).text == "oops\n"
        assert [j.id for j in list_jobs(sh, pod.id).jobs] == sorted([job.id, bad.id], reverse=True)  # newest first


def test_a_job_outlives_its_connection(pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator) -> None:
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec(WAIT_FOR_GO + "seq 1 20000", workdir="/workspace"), now=time.time())
    # the connection is gone; the job waits on, then prints its lines with no one reading
    (jobs_dir(full_sim, pod_key).parent.parent / "go").touch()
    wait_until(lambda: (jobs_dir(full_sim, pod_key) / job.id / "end").exists())
    with open_shell() as sh:
        done = find_job(sh, pod.id, job.id)
        assert (done.state, done.exit_code) == ("done", 0)
        assert whole_log(sh, job.id) == ("".join(f"{i}\n" for i in range(1, 20001)), 0)


def test_a_command_that_fails_at_once_is_failed_when_started(pod: Pod, open_shell: OpenShell) -> None:
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec("no-such-command-podtui --flag"), now=time.time())
        assert (job.state, job.exit_code) == ("failed", 127)
        assert "no-such-command-podtui: command not found" in read_log(sh, job.id).text

        nowhere = start_job(sh, pod.id, JobSpec("echo never", workdir="/workspace/no/such/folder"), now=time.time())
        assert (nowhere.state, nowhere.exit_code) == ("failed", 1)
        assert nowhere.note is not None and "/workspace/no/such/folder is not there" in nowhere.note
        said = read_log(sh, nowhere.id)
        assert "/workspace/no/such/folder is not there" in said.text and "never" not in said.text and said.ended


def test_cancel_ends_a_job_by_sigterm_or_by_sigkill_after_the_grace(pod: Pod, open_shell: OpenShell) -> None:
    with open_shell() as sh:
        polite = start_job(
            sh, pod.id, JobSpec("trap 'echo got TERM; exit 5' TERM; echo ready; while :; do sleep 0.1; done"), now=0
        )
        wait_until(lambda: "ready" in read_log(sh, polite.id).text)
        gone = cancel_job(sh, pod.id, polite.id, grace_s=60)
        assert (gone.state, gone.exit_code) == ("cancelled", 5)  # it ended on the SIGTERM: no SIGKILL came
        assert "got TERM" in read_log(sh, polite.id).text

        deaf = start_job(sh, pod.id, JobSpec("trap '' TERM; echo ready; while :; do sleep 0.1; done"), now=0)
        wait_until(lambda: "ready" in read_log(sh, deaf.id).text)
        killed = cancel_job(sh, pod.id, deaf.id, grace_s=1)
        assert (killed.state, killed.exit_code) == ("cancelled", 128 + 9)
        assert settle(deaf.id) == []  # nothing of it is left, the runner included
        assert find_job(sh, pod.id, deaf.id).state == "cancelled"


def test_a_pod_stopped_mid_job_leaves_it_lost(
    pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec("echo working; while :; do sleep 0.2; done"), now=time.time())
        wait_until(lambda: "working" in read_log(sh, job.id).text)
    full_sim.stop_grace_s = 0.0
    full_sim.world.stop(pod.id)
    assert settle(job.id, 30) == []  # the container ended, and every process of the job with it
    full_sim.world.resume(pod.id, full_sim.world.pods[pod.id].gpu_count)
    full_sim.world.clock.advance(31)  # booted
    again: list[Pod] = []

    def up() -> bool:
        found = sim_api.fetch_snapshot().find(pod.id)
        again[:] = [found] if found is not None else []
        return (
            bool(again)
            and again[0].status is PodStatus.RUNNING
            and not again[0].is_starting
            and (pod_key != "train" or again[0].ssh_direct is not None)
        )

    wait_until(up)
    with open_remote(again[0], ssh_settings) as sh:
        lost = find_job(sh, pod.id, job.id)
        assert (lost.state, lost.exit_code) == ("lost", None)
        assert (
            lost.note is not None and "stopped without an exit recorded" in lost.note and "last heard of" in lost.note
        )
        assert lost.ended is not None and lost.started is not None and lost.ended >= lost.started
        assert read_log(sh, job.id) == LogChunk("working\n", len("working\n"), 0, True)  # its log grows no more
        streamed: list[str] = []
        assert follow_log(sh, job.id, streamed.append, threading.Event()).state == "lost"  # it ends, too
        assert streamed == ["working\n"]
        assert [j.state for j in list_jobs(sh, pod.id).jobs] == ["lost"]


def test_a_flood_is_capped_with_its_head_and_tail_kept(
    pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator
) -> None:
    geometry = log_geometry(1 << 20)  # the smallest cap: 32 chunks of 32 KiB, the first 4 the head
    printed = "".join(f"{i}\n" for i in range(1, 1_000_001))  # 6.9 MB
    logs = jobs_dir(full_sim, pod_key)
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec("seq 1 1000000", log_max_mb=1), now=time.time())
        most = 0
        while not (logs / job.id / "end").exists():  # what the log takes on disk, all along
            most = max(most, _on_disk(logs / job.id / "log"))
            time.sleep(0.01)
        most = max(most, _on_disk(logs / job.id / "log"))  # on a loaded machine the job may end before a look
        done = ended(sh, pod.id, job.id)
        assert (done.state, done.log_bytes) == ("done", len(printed))
        assert 0 < most <= geometry.max_bytes and _on_disk(logs / job.id / "log") <= geometry.max_bytes
        text, dropped = whole_log(sh, job.id)
        assert dropped == done.log_dropped > 0
        head = geometry.head * geometry.chunk
        assert text == printed[:head] + printed[head + dropped :]  # the head, then the latest output
        assert len(text) <= geometry.max_bytes
        streamed: list[str] = []
        follow_log(sh, job.id, streamed.append, threading.Event(), poll_s=0.1)
        cut = "" if printed[:head].endswith("\n") else "\n"
        said = f"{cut}[podtui: {dropped:,} bytes dropped here]\n"
        assert "".join(streamed) == printed[:head] + said + printed[head + dropped :]

        # a `yes` flood: the disk never holds more than the cap, and the job is none the worse for it
        yes = start_job(sh, pod.id, JobSpec("yes podtui | head -c 5000000; echo; echo end", log_max_mb=1), now=0)
        while not (logs / yes.id / "end").exists():
            assert _on_disk(logs / yes.id / "log") <= geometry.max_bytes
            time.sleep(0.01)
        flood = ended(sh, pod.id, yes.id)
        assert (flood.state, flood.log_bytes) == ("done", 5_000_005)
        tail = read_log(sh, yes.id, flood.log_bytes - 20)
        assert tail.text.endswith("\npodtui\npodtu\nend\n") and tail.ended  # 5,000,000 bytes end in "podtu"


def _on_disk(folder: Path) -> int:
    size = 0
    for chunk in folder.glob("c.*"):
        with contextlib.suppress(FileNotFoundError):  # pruned meanwhile
            size += chunk.stat().st_size
    return size


def test_the_command_never_shows_in_a_process_list(pod: Pod, open_shell: OpenShell) -> None:
    secret = "hf_podtuiSecretToken" + str(time.time_ns())
    command = f"TOKEN={secret}; echo ${{#TOKEN}}; sleep 1"
    encoded = base64.b64encode(command.encode()).decode()[:40]  # as the command travels to its file
    with CommandLineWatch(secret) as plain, CommandLineWatch(encoded) as coded, open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec(command, name="secret"), now=0)
        done = ended(sh, pod.id, job.id)
        assert done.state == "done" and read_log(sh, job.id).text == f"{len(secret)}\n"
    assert plain.scans > 10 and plain.hits == [] and coded.scans > 10 and coded.hits == []


def test_a_log_read_in_small_pieces_comes_out_whole(pod: Pod, open_shell: OpenShell) -> None:
    """A character cut by a read's end waits for the next read, so text from outside arrives as it was written."""
    printed = "".join(f"{i} ünïcødé ✓ 日本語 🙂\n" for i in range(8))
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec('for i in $(seq 0 7); do echo "$i ünïcødé ✓ 日本語 🙂"; done'), now=0)
        ended(sh, pod.id, job.id)
        text, offset = "", 0
        while True:
            chunk = read_log(sh, job.id, offset, max_bytes=11)  # cuts characters of 2, 3 and 4 bytes
            text += chunk.text
            offset = chunk.next_offset
            if chunk.ended:
                break
        assert text == printed and offset == len(printed.encode())


def test_without_split_filter_the_runner_prunes_the_log_itself(
    pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator
) -> None:
    """BusyBox's split has no --filter: the runner's keeper prunes the chunks instead
    (docs/jobs.md#the-log-and-its-cap)."""
    geometry = log_geometry(1 << 20)
    printed = "".join(f"{i}\n" for i in range(1, 1_000_001))
    shim = (
        "#!/bin/sh\n"
        'for a in "$@"; do case $a in --filter*) echo "split: unrecognized option" >&2; exit 1 ;; esac; done\n'
        'if [ "$1" = --help ]; then /usr/bin/split --help | grep -v -e --filter; exit 0; fi\n'
        'exec /usr/bin/split "$@"\n'
    )
    with open_shell() as sh:
        made = sh.run(
            f'mkdir -p "$HOME/plain" && printf %s {shlex.quote(shim)} > "$HOME/plain/split" && '
            'chmod 755 "$HOME/plain/split" && export PATH="$HOME/plain:$PATH" && split --help | grep -c -e --filter'
        )
        assert made.output.strip() == "0", made.output  # the job's runner starts with this PATH
        job = start_job(sh, pod.id, JobSpec("seq 1 1000000", log_max_mb=1), now=time.time())
        done = ended(sh, pod.id, job.id)
        assert (done.state, done.log_bytes) == ("done", len(printed)) and done.log_dropped > 0
        assert _on_disk(jobs_dir(full_sim, pod_key) / job.id / "log") <= geometry.max_bytes
        text, dropped = whole_log(sh, job.id)
        head = geometry.head * geometry.chunk
        assert dropped == done.log_dropped and text == printed[:head] + printed[head + dropped :]


def test_jobs_started_in_the_same_second_are_listed_newest_first(pod: Pod, open_shell: OpenShell) -> None:
    """Their ids share podtui's clock to the second; the random rest of them says nothing of which came first."""
    with open_shell() as sh:
        started = [start_job(sh, pod.id, JobSpec("sleep 600"), now=1_796_227_000.0).id for _ in range(5)]
        assert len({job_id[:15] for job_id in started}) == 1
        listed = list_jobs(sh, pod.id)
        assert [j.id for j in listed.jobs] == started[::-1]
        for job_id in started:
            cancel_job(sh, pod.id, job_id, grace_s=0)
