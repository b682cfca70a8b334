"""`podtui run POD [--name NAME] [--workdir DIR] [--then stop|terminate] [--pull REMOTE[:LOCAL]]... -- CMD`: start CMD
on the pod detached from every connection, print its job id (docs/jobs.md#the-cli)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import TextIO

from podtui.cli.job_pod import LogLines, failed, pod_shell, running_pod
from podtui.cli.session import UsageError, open_session
from podtui.core import actions
from podtui.core.jobs.command_text import in_background, register_command_secrets
from podtui.core.jobs.job import Job, JobError, JobSpec, Pull, spec_problem
from podtui.core.jobs.remote_jobs import read_log, start_job
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.ssh.errors import SshError
from podtui.core.ssh.remote import RemoteShell
from podtui.core.visible import visible

FIRST_LINES = 10  # of a job that failed at once, shown


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", help="a name for the job, shown in the lists (default: its id)")
    p.add_argument(
        "--workdir",
        metavar="DIR",
        help="where it runs on the pod (default /workspace; a relative path is under /workspace)",
    )
    p.add_argument(
        "--then",
        choices=["stop", "terminate"],
        help="once it ends (and every --pull is verified): stop or terminate the pod; done by podtui, the app or "
        "`podtui watch`",
    )
    p.add_argument(
        "--pull",
        action="append",
        default=[],
        metavar="REMOTE[:LOCAL]",
        help="once it ends, download REMOTE (relative to the workdir) to LOCAL (default: the current folder), "
        "verified; again for more",
    )


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui run`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "Start CMD on the pod detached from every connection: it goes on if the connection drops, podtui exits or "
        "this machine sleeps. Its output is kept in a log on the pod's volume (its head and its latest part, "
        "job_log_max_mb in config.toml), with its exit code and times. Prints the job's id; `podtui jobs POD` lists "
        "the jobs, `podtui job POD ID log --follow` follows one."
    )
    p.add_argument("pod", help="pod id or name")
    _options(p)
    p.add_argument("words", nargs=argparse.REMAINDER, metavar="-- CMD", help="the command, after --")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    spec = spec_from(args)
    spec = dataclasses.replace(spec, pulls=tuple(landing_here(p, Path.cwd()) for p in spec.pulls))
    with open_session(demo, paths) as session:
        actions.guard(read_only or session.config.read_only, "starting a job on a pod")
        if spec.log_max_mb is None:
            spec = dataclasses.replace(spec, log_max_mb=session.config.job_log_max_mb)
        return cmd_run(session, args.pod, spec)


def landing_here(pull: Pull, here: Path) -> Pull:
    """The pull with its LOCAL made absolute against the folder `podtui run` was typed in (none: that folder), where
    the user expects it, whichever podtui (the app, `podtui watch`) later downloads it from wherever it runs. A
    trailing slash (a folder to put it in) is kept."""
    local = os.path.expanduser(pull.local) if pull.local is not None else ""
    slash = local.endswith(("/", os.sep)) or not local
    landed = str(here / local) if local else str(here)
    return Pull(pull.remote, landed.rstrip("/" + os.sep) + os.sep if slash else landed)


def spec_from(args: argparse.Namespace) -> JobSpec:
    """The job the arguments ask for; UsageError for anything wrong with them. Options given after POD come with
    the command's words (argparse's REMAINDER): they are read here, up to the `--`."""
    words = list(args.words)
    if words and words[0] == "--":
        words = words[1:]
    elif words and words[0].startswith("-"):  # an option after POD: podtui's, up to the `--`, never the command's
        if "--" not in words:
            raise UsageError("give the command after --, e.g. podtui run mypod --name train -- python train.py")
        cut = words.index("--")
        late = argparse.ArgumentParser(prog="podtui run", add_help=False, exit_on_error=False)
        _options(late)
        try:
            extra, unknown = late.parse_known_args(words[:cut])
        except (argparse.ArgumentError, SystemExit) as e:
            said = f": {visible(str(e))}" if isinstance(e, argparse.ArgumentError) else ""
            raise UsageError(
                "podtui run POD [options] -- CMD: the options before -- were not understood" + said
            ) from None
        if unknown:
            raise UsageError(
                f"podtui run has no option {visible(unknown[0])!r}: podtui run POD [--name NAME] [--workdir DIR] "
                "[--then stop|terminate] [--pull REMOTE[:LOCAL]]... -- CMD"
            )
        for name in ("name", "workdir", "then"):
            if getattr(extra, name) is not None:
                setattr(args, name, getattr(extra, name))
        args.pull = [*args.pull, *extra.pull]
        words = words[cut + 1 :]
    command = " ".join(words)  # like ssh and `podtui exec`: the words are joined and the pod's shell parses them
    if not command.strip():
        raise UsageError("nothing to run: give the command after --, e.g. podtui run mypod -- python train.py")
    spec = JobSpec(command, args.name, args.workdir, args.then, tuple(_pull(p) for p in args.pull))
    problem = spec_problem(spec)
    if problem is not None:
        raise UsageError(problem)
    return spec


def _pull(text: str) -> Pull:
    remote, colon, local = text.partition(":")
    if not remote.strip():
        raise UsageError(f"--pull {visible(text)!r} names no path on the pod: --pull REMOTE[:LOCAL]")
    if colon and not local.strip():
        raise UsageError(
            f"--pull {visible(text)!r} names no local path after the colon (leave the colon out for the current folder)"
        )
    return Pull(remote, local if colon else None)


def home_paths(spec: JobSpec, home: str) -> list[str]:
    """The workdir and --pull paths that start with this machine's home folder `home`: a ~ the user's shell expanded
    here, meant for the pod (whose home is another folder, /root on RunPod's images)."""
    home = home.rstrip("/")
    if not home or home == "/root":
        return []
    paths = [spec.workdir or "", *(p.remote for p in spec.pulls)]
    return [p for p in paths if p == home or p.startswith(home + "/")]


def terminate_refusal(spec: JobSpec, pod: Pod) -> str | None:
    """Why --then terminate would lose what the job makes (docs/jobs.md#after-a-job); None when it would not."""
    if spec.then != "terminate" or spec.pulls or pod.network_volume:
        return None
    return (
        f"--then terminate with no --pull would delete {visible(pod.name)}'s volume and everything the job writes "
        "there: add --pull for what to keep, or use --then stop"
    )


def cmd_run(session: Services, ref: str, spec: JobSpec, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    register_command_secrets(spec.command)  # a job that fails at once shows its first lines, masked
    try:
        pod = running_pod(session, ref)
        refusal = terminate_refusal(spec, pod)
        if refusal is not None:
            raise UsageError(refusal)
        if in_background(spec.command):
            sys.stderr.write(
                "podtui: note: the command ends with &: the job ends as soon as its shell has started it in the "
                "background (what it started goes on, not waited for; --then and --pull act then): leave out the &, "
                "or end the command with `; wait`\n"
            )
        for path in home_paths(spec, str(Path.home())):
            sys.stderr.write(
                f"podtui: note: {visible(path)} is in this machine's home folder (your shell turned ~ into it); on "
                "the pod it stays as written: quote the ~ ('~/...') for the pod's home\n"
            )
        with pod_shell(session, pod) as shell:
            job = start_job(shell, pod.id, spec, now=session.clock())
            out.write(job.id + "\n")
            out.flush()
            _remember(session, job, pod)
            if job.state == "failed":
                return _failed_at_once(shell, job)
    except (JobError, SshError) as e:
        return failed(e)
    name = visible(pod.name)
    state = (
        "running"
        if job.state == "running"
        else f"{job.state} already"
        + (f" (exit code {job.exit_code})" if job.exit_code is not None else "")
        + (f" ({visible(job.note)})" if job.note else "")
    )
    sys.stderr.write(
        f"podtui: job {job.id} on {name}: {state}; its log: podtui job {name} {job.id} log --follow\n"
        f"podtui: {at_the_end(job, name)}\n"
    )
    return 0


def _remember(session: Services, job: Job, pod: Pod) -> None:
    """The job in podtui's memory of jobs, so the app or `podtui watch` follows it up when it ends
    (docs/jobs.md#after-a-job): `podtui run` itself ends once the job has started."""
    from podtui.core.jobs.follow import remember_started
    from podtui.core.jobs.job_memory import JobMemory

    try:
        remember_started(JobMemory.for_services(session), job, pod.name, session.clock())
    except OSError as e:
        sys.stderr.write(
            f"podtui: note: could not remember job {job.id} for its follow-up ({visible(str(e))}): the app follows it "
            "up once its pod's Jobs tab is opened\n"
        )


def at_the_end(job: Job, pod_name: str) -> str:
    """The one line that says what happens once the job ends."""
    if not job.pulls and job.then is None:
        return f"when it ends: nothing more (podtui jobs {pod_name} shows how it ended)"
    steps = []
    if job.pulls:
        names = ", ".join(visible(p.remote) for p in job.pulls)
        steps.append(f"downloads {names} and verifies {'it' if len(job.pulls) == 1 else 'them'}")
    if job.then is not None:
        verb = "stops" if job.then == "stop" else "terminates"
        steps.append(
            f"{'then ' if job.pulls else ''}{verb} {pod_name}" + (" once every pull verified" if job.pulls else "")
        )
    return (
        f"when it ends, podtui (the app, or `podtui watch`) {', '.join(steps)}: none of it happens while no podtui "
        "is running"
    )


def _failed_at_once(shell: RemoteShell, job: Job) -> int:
    code = f" (exit code {job.exit_code})" if job.exit_code is not None else ""
    sys.stderr.write(
        f"podtui: job {job.id} failed at once{code}" + (f": {visible(job.note)}" if job.note else "") + "\n"
    )
    chunk = read_log(shell, job.id, 0, 64 << 10)
    lines = chunk.text.splitlines()[:FIRST_LINES]
    if lines:
        sys.stderr.write("podtui: its log begins:\n")
        printer = LogLines(sys.stderr)
        printer.feed("\n".join(lines) + "\n")
    return 1
