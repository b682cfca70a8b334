"""`podtui jobs POD [--json]`: the pod's detached jobs, newest first: state, exit code, when each started, how long
it ran and what the pod cost meanwhile (docs/jobs.md#the-cli)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, TextIO

from podtui.cli.job_pod import cost_of, failed, pod_shell, running_pod, took_s, took_text
from podtui.cli.output import notes, write_table
from podtui.cli.session import open_session
from podtui.core import units
from podtui.core.jobs.command_text import masked_command
from podtui.core.jobs.job import Job, JobError
from podtui.core.jobs.remote_jobs import JobList, list_jobs
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.ssh.errors import SshError
from podtui.core.visible import visible

COMMAND_WIDTH = 40
MAX_PROBLEMS = 10


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui jobs`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "The pod's detached jobs (podtui run), newest first: id, name, command, state (running, done, failed, "
        "cancelled, lost), exit code, when it started (this machine's time), how long it ran and what the pod cost "
        "over that time (its $/hr now). Records on the pod that cannot be read are said on stderr."
    )
    p.add_argument("pod", help="pod id or name")
    p.add_argument("--json", action="store_true", help="every field as JSON on stdout")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    with open_session(demo, paths) as session:
        return cmd_jobs(session, args.pod, args.json)


def cmd_jobs(session: Services, ref: str, as_json: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    try:
        pod = running_pod(session, ref)
        with pod_shell(session, pod) as shell:
            listed = list_jobs(shell, pod.id)
    except (JobError, SshError) as e:
        return failed(e)
    if as_json:
        json.dump(listing_json(pod, listed), out, indent=2)
        out.write("\n")
        return 0
    notes(listed.problems, MAX_PROBLEMS)
    name = visible(pod.name)
    if not listed.jobs:
        out.write(f"no jobs on {name} (podtui run {name} -- CMD starts one)\n")
        return 0
    rows = [("ID", "NAME", "COMMAND", "STATE", "EXIT", "STARTED", "TOOK", "COST")]
    for job in listed.jobs:
        cost = cost_of(job, pod, listed.pod_now)
        rows.append(
            (
                job.id,
                job.name or "—",
                _short(masked_command(job.command)),
                job.state,
                "—" if job.exit_code is None else str(job.exit_code),
                _local(job.started),
                took_text(job, listed.pod_now),
                "—" if cost is None else units.money(cost),
            )
        )
    write_table(out, rows)
    for job in listed.jobs:
        if job.note and job.state in ("lost", "failed", "cancelled", "done"):
            out.write(f"{job.id}: {visible(job.note)}\n")
    return 0


def _short(command: str) -> str:
    one = " ".join(command.split())
    return one if len(one) <= COMMAND_WIDTH else one[: COMMAND_WIDTH - 1] + "…"


def _local(t: float | None) -> str:
    return "—" if t is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(t))


def job_json(job: Job, pod: Pod | None, pod_now: float | None) -> dict[str, Any]:
    cost = cost_of(job, pod, pod_now)
    return {
        "id": job.id,
        "pod_id": job.pod_id,
        "name": job.name,
        "command": masked_command(job.command),  # its credentials masked (docs/jobs.md#the-cli)
        "workdir": job.workdir,
        "state": job.state,
        "exit_code": job.exit_code,
        "started": job.started,
        "ended": job.ended,
        "duration_s": took_s(job, pod_now),
        "cost": None if cost is None else round(cost, 4),
        "then": job.then,
        "pulls": [{"remote": p.remote, "local": p.local} for p in job.pulls],
        "log_bytes": job.log_bytes,
        "log_dropped": job.log_dropped,
        "note": job.note,
    }


def listing_json(pod: Pod, listed: JobList) -> dict[str, Any]:
    return {
        "pod": {"id": pod.id, "name": pod.name, "cost_per_hr": pod.cost_per_hr},
        "pod_now": listed.pod_now,
        "jobs": [job_json(job, pod, listed.pod_now) for job in listed.jobs],
        "problems": list(listed.problems),
    }
