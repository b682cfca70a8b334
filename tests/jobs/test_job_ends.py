"""How a job's end is read and made, against what a pod throws at it, by both routes: a job that ends while it is
being listed; a cancel that must reach what left the job's process group; a process group that outlived its leader
and is not the job's; a job that traps SIGINT; a volume too full for the end record, or for a new job's files; a
command that outgrew the old 64 kB read of spec.json; a start that times out (its message never quotes the command).
The pod is made to do a thing at the very moment it matters through a stand-in for one of its commands
(tests.helpers.jobs.shim): the race is then lost every time, not now and then."""

from __future__ import annotations

import time

import pytest

from podtui.core.jobs import remote_jobs
from podtui.core.jobs.job import JobError, JobSpec
from podtui.core.jobs.remote_jobs import cancel_job, find_job, list_jobs, read_log, start_job
from podtui.core.pod import Pod
from podtui.core.ssh.errors import SshError
from podtui.sim.simulator import Simulator
from tests.helpers.jobs import VALID_SPEC, ended, jobs_dir, shim, volume, wait_until
from tests.helpers.processes import processes_naming, settle
from tests.jobs.conftest import OpenShell

WAIT_FOR_GO = "while [ ! -f go ]; do sleep 0.1; done; "  # in /workspace: the test lets the job go on


def test_a_job_that_ends_while_it_is_listed_never_reads_lost(
    pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator
) -> None:
    """The listing reads what is alive before the records; a runner writes its end before it exits. Here `base64`,
    which the listing runs after both, lets the job end and waits until its runner is gone."""
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec(WAIT_FOR_GO + "exit 3"), now=time.time())
        shim(
            sh,
            "base64",
            f"""case $1 in -d) ;; *)
  if [ -f "$J/../../armed" ]; then
    rm -f "$J/../../armed"; touch "$J/../../go"; read -r p _ <"$J/{job.id}/runner"; i=0
    while kill -0 "$p" 2>/dev/null && [ "$i" -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  fi ;;
esac""",
        )
        (volume(full_sim, pod_key) / "armed").touch()
        seen = find_job(sh, pod.id, job.id)
        assert not (volume(full_sim, pod_key) / "armed").exists()  # the race was run
        assert (jobs_dir(full_sim, pod_key) / job.id / "end").exists()
        assert seen.state in ("running", "failed") and seen.note is None, seen
        done = ended(sh, pod.id, job.id)
        assert (done.state, done.exit_code) == ("failed", 3)


def test_cancel_ends_what_left_the_jobs_process_group(pod: Pod, open_shell: OpenShell) -> None:
    """A child that made a session of its own (setsid, a daemon) and ignores SIGTERM: the cancel finds it by the
    job's id in its environment, and SIGKILLs it after the grace."""
    mark = f"podtui-leftover-{time.time_ns()}"
    command = (
        f"setsid sh -c 'trap \"\" TERM; while :; do sleep 0.1; done' {mark} & echo ready; while :; do sleep 0.1; done"
    )
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec(command), now=time.time())
        wait_until(lambda: "ready" in read_log(sh, job.id).text and bool(processes_naming(mark)))
        gone = cancel_job(sh, pod.id, job.id, grace_s=1)
        assert gone.state == "cancelled", gone
        assert settle(mark) == [] and settle(job.id) == []  # nothing of it is left, its runner and log included


def test_a_group_without_its_leader_is_the_jobs_only_if_the_pod_did_not_restart_since(
    pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator
) -> None:
    """A job whose runner is gone, its record naming a process group that is alive but whose leader has exited. When
    the pod's container started after the job, that group is someone else's (pids are given again; a daemon's double
    fork leaves such groups): the job is lost, not running for ever. Else it is what the job left running."""
    jobs = jobs_dir(full_sim, pod_key)
    for job_id, started, state in (
        ("20260101-000000-stal", int(time.time()) - 3600, "lost"),  # before this container started
        ("20260101-000001-mine", int(time.time()), "running"),
    ):
        with open_shell() as sh:  # the group's leader writes its pid (the group's id) and exits; its sleep goes on
            sh.run(f"setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $$ >\"$1\"' sh /workspace/{job_id}")
        said = volume(full_sim, pod_key) / job_id
        wait_until(lambda: said.exists() and said.read_text().endswith("\n"))  # noqa: B023 (waited for here)
        group = said.read_text().strip()
        folder = jobs / job_id
        folder.mkdir(parents=True)
        records = {
            "spec.json": VALID_SPEC.decode(),
            "created": f"{started}\n",
            "started": f"{started}\n",
            "runner": "4194300 1\n",  # no such process
            "pgid": f"{group} 12345\n",  # its leader's start: it is gone anyway
            "settings": "32768 4 28\n",
        }
        for name, text in records.items():
            (folder / name).write_text(text)
        with open_shell() as sh:
            assert sh.run(f"kill -0 -{group} && echo alive").output.strip() == "alive"
            seen = find_job(sh, pod.id, job_id)
            assert seen.state == state, seen
            assert read_log(sh, job_id).ended is (state == "lost")


def test_a_job_can_trap_sigint(pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator) -> None:
    """What runs in the background of a shell without job control starts with SIGINT ignored, and no shell can undo
    that: the runner starts the job with it restored, so a program's SIGINT handler (Python's KeyboardInterrupt)
    works."""
    with open_shell() as sh:
        job = start_job(
            sh, pod.id, JobSpec("trap 'echo got INT; exit 7' INT; echo ready; while :; do sleep 0.1; done"), now=0
        )
        try:
            wait_until(lambda: "ready" in read_log(sh, job.id).text)
            group = (jobs_dir(full_sim, pod_key) / job.id / "pgid").read_text().split()[0]
            sh.run(f"kill -INT -{group}")
            done = ended(sh, pod.id, job.id, timeout_s=30)
            assert (done.state, done.exit_code) == ("failed", 7)
            assert read_log(sh, job.id).text == "ready\ngot INT\n"
        finally:
            if not find_job(sh, pod.id, job.id).ended_yet:
                cancel_job(sh, pod.id, job.id, grace_s=0)


def test_an_end_the_full_volume_cannot_take_is_recorded_all_the_same(
    pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator
) -> None:
    """The runner takes the end record's room when it starts: when the end cannot be written as a new file at the
    end (here: its temporary name is taken by a folder, as a full volume refuses it), it goes into that room."""
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec(WAIT_FOR_GO + "exit 4"), now=time.time())
        (jobs_dir(full_sim, pod_key) / job.id / "end.new").mkdir()
        (volume(full_sim, pod_key) / "go").touch()
        done = ended(sh, pod.id, job.id)
        assert (done.state, done.exit_code) == ("failed", 4), done


def test_a_start_that_cannot_write_its_files_leaves_nothing_behind(
    pod: Pod, pod_key: str, open_shell: OpenShell, full_sim: Simulator
) -> None:
    """A volume that fills up as a job is made: its spec.json cannot be written. podtui says so in the pod's words,
    and the half-made folder is gone, so no listing reports it as a problem for ever after."""
    with open_shell() as sh:
        shim(
            sh,
            "base64",
            """case $1 in -d)
  case $(readlink /proc/$$/fd/1) in *spec.json.new)
    cat >/dev/null; echo "base64: write error: No space left on device" >&2; exit 1 ;;
  esac ;;
esac""",
        )
        with pytest.raises(JobError, match="No space left on device") as refused:
            start_job(sh, pod.id, JobSpec("true"), now=time.time())
        assert "may be left" not in str(refused.value)
        listed = list_jobs(sh, pod.id)
        assert (listed.jobs, listed.problems) == ((), ())
        # a read-only volume: the jobs' folder cannot be made at all, and the message says so
        refuse = 'echo "mkdir: cannot create directory: Read-only file system" >&2; exit 1'
        shim(sh, "mkdir", f"case $* in *.podtui/jobs*) {refuse} ;; esac")
        with pytest.raises(JobError, match="Read-only file system") as refused:
            start_job(sh, pod.id, JobSpec("true"), now=time.time())
        assert "may be left" not in str(refused.value)
    assert not any(jobs_dir(full_sim, pod_key).iterdir())


def test_a_long_command_is_kept_and_read_back(pod: Pod, open_shell: OpenShell) -> None:
    """63 kB as typed (the new-job form takes up to 64 KiB), 126 kB once JSON escapes it in spec.json."""
    command = f": {'日本語' * 7000}; echo ok"
    with open_shell() as sh:
        job = start_job(sh, pod.id, JobSpec(command), now=time.time())
        assert job.command == command
        done = ended(sh, pod.id, job.id)
        assert (done.state, done.command) == ("done", command) and read_log(sh, job.id).text == "ok\n"
        with pytest.raises(JobError, match="too long to keep"):
            start_job(sh, pod.id, JobSpec(": " + "日" * 100_000), now=time.time())


def test_a_start_that_times_out_never_quotes_the_command(
    pod: Pod, open_shell: OpenShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shell's timeout message quotes what it ran: the whole script, the job's command (a token) inside it."""
    monkeypatch.setattr(remote_jobs, "START_TIMEOUT_S", 0.2)  # a start waits a second for a command failing at once
    token = "hf_" + "Zq7" * 12
    with open_shell() as sh, pytest.raises(SshError) as refused:
        start_job(sh, pod.id, JobSpec(f"HF_TOKEN={token} sleep 1"), now=time.time())
    said = str(refused.value)
    assert said.startswith("starting the job on ") and "did not finish within 0.2 s" in said, said
    assert len(said) < 300 and "printf" not in said


def test_a_split_that_gives_up_never_breaks_the_commands_pipe(pod: Pod, open_shell: OpenShell) -> None:
    """Without --filter (BusyBox), split writes the chunks itself, and stops at a full disk: what the command prints
    after that is thrown away, and the command goes on (it would die of SIGPIPE, and its job read failed)."""
    with open_shell() as sh:
        shim(
            sh,
            "split",
            """for a in "$@"; do case $a in --filter*) echo "split: unrecognized option" >&2; exit 1 ;; esac; done
if [ "$1" = --help ]; then "$REAL" --help | grep -v -e --filter; exit 0; fi
head -c 100000 | "$REAL" "$@"; echo "split: write error: No space left on device" >&2; exit 1""",
        )
        job = start_job(sh, pod.id, JobSpec("seq 1 1000000; echo finished >&2", log_max_mb=1), now=time.time())
        done = ended(sh, pod.id, job.id)
        assert (done.state, done.exit_code) == ("done", 0), done
        assert read_log(sh, job.id).text.startswith("1\n2\n3\n")
