"""`podtui job POD ID log [--follow]` and `podtui job POD ID cancel [--grace S]`: one detached job's log, or its end
(docs/jobs.md#the-cli)."""

from __future__ import annotations

import argparse
import sys
import threading
from typing import TextIO

from podtui.cli.job_pod import LogLines, failed, how_it_ended, pod_shell, running_pod
from podtui.cli.session import UsageError, open_session
from podtui.core import actions
from podtui.core.jobs.command_text import register_command_secrets
from podtui.core.jobs.job import JobError, dropped_line
from podtui.core.jobs.layout import check_job_prefix
from podtui.core.jobs.remote_jobs import MAX_GRACE_S, cancel_job, find_job, follow_log, read_log, resolve_job_id
from podtui.core.paths import Paths
from podtui.core.services import Services
from podtui.core.ssh.errors import SshError

GRACE_S = 10.0


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui job`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "log: the job's log as kept on the pod (its head and its latest output; what the cap dropped between is "
        "said where it was), each line made safe to show; --follow goes on with it until the job ends or ctrl+c. "
        "cancel: SIGTERM to the job's processes, SIGKILL to what is left after the grace, done on the pod."
    )
    p.add_argument("pod", help="pod id or name")
    p.add_argument("job_id", metavar="ID", help="the job's id, or its start (podtui jobs POD lists them)")
    p.add_argument("action", choices=["log", "cancel"])
    p.add_argument("--follow", "-f", action="store_true", help="log: go on with it until the job ends, or ctrl+c")
    p.add_argument(
        "--grace",
        type=float,
        default=GRACE_S,
        metavar="S",
        help=f"cancel: seconds between SIGTERM and SIGKILL (default {GRACE_S:g})",
    )


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    try:
        check_job_prefix(args.job_id)
    except JobError as e:
        raise UsageError(str(e)) from None
    if args.follow and args.action != "log":
        raise UsageError("--follow goes with log")
    if not 0 <= args.grace <= MAX_GRACE_S:
        raise UsageError(f"--grace is 0 to {MAX_GRACE_S:g} seconds")
    with open_session(demo, paths) as session:
        if args.action == "cancel":
            actions.guard(read_only or session.config.read_only, "cancelling a job")
            return cmd_cancel(session, args.pod, args.job_id, args.grace)
        return cmd_log(session, args.pod, args.job_id, args.follow)


def cmd_log(session: Services, ref: str, job_id: str, follow: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    printer = LogLines(out)
    try:
        pod = running_pod(session, ref)
        with pod_shell(session, pod) as shell:
            job_id = resolve_job_id(shell, job_id)
            job = find_job(shell, pod.id, job_id)
            register_command_secrets(job.command)  # a job that prints the token it was given shows it masked
            if follow:
                job = follow_log(shell, job_id, printer.feed, threading.Event())
                printer.finish()
                sys.stderr.write(f"podtui: {how_it_ended(job)}\n")
                return 0
            offset = 0
            while True:
                chunk = read_log(shell, job_id, offset)
                if chunk.dropped:
                    printer.finish()
                    printer.feed(dropped_line(chunk.dropped) + "\n")
                printer.feed(chunk.text)
                if chunk.ended or (chunk.next_offset == offset and not chunk.dropped):
                    break
                offset = chunk.next_offset
            printer.finish()
    except (JobError, SshError) as e:
        printer.finish()
        return failed(e)
    if not job.ended_yet:
        sys.stderr.write(f"podtui: job {job.id} is still running (--follow goes on with it)\n")
    return 0


def cmd_cancel(session: Services, ref: str, job_id: str, grace_s: float, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    try:
        pod = running_pod(session, ref)
        with pod_shell(session, pod) as shell:
            job = cancel_job(shell, pod.id, resolve_job_id(shell, job_id), grace_s)
    except (JobError, SshError) as e:
        return failed(e)
    if job.ended_yet:
        out.write(how_it_ended(job) + "\n")
        return 0
    out.write(
        f"job {job.id} was asked to end (SIGTERM) and is still running; the pod sends SIGKILL to what is left of it "
        f"{grace_s:g} s after the SIGTERM (podtui jobs shows when it has ended)\n"
    )
    return 1
