"""Detached jobs on a pod, over an open RemoteShell (the gateway's PTY or direct SSH alike): start, list, find, read
the log, follow it, cancel (docs/jobs.md). Every call blocks: run it in a thread worker.

Each call is one command on the pod: job_tools.sh's helpers and a call of one of them, fed to `sh` through a pipe
from `printf` (a shell builtin), so neither the helpers nor what they carry (a job's command) is ever an argument
of a process. Raises JobError (JobNotFound) for what is wrong with a job or its input, and the SshError of
`RemoteShell.run` when the pod cannot be reached.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from podtui.core.jobs.job import JOB_ID, Job, JobError, JobNotFound, JobSpec, dropped_line, spec_problem
from podtui.core.jobs.layout import (
    check_job_id,
    check_job_prefix,
    log_geometry,
    log_max_bytes,
    new_job_id,
    runner_script,
    tools_script,
)
from podtui.core.jobs.records import SPEC_MAX, jobs_from, newest_first, one_job, parse_listing
from podtui.core.ssh.errors import RemoteTimeout, ShellClosed
from podtui.core.ssh.remote import RemoteShell
from podtui.core.visible import visible

__all__ = [
    "Job",
    "JobError",
    "JobList",
    "JobNotFound",
    "JobSpec",
    "LogChunk",
    "cancel_job",
    "find_job",
    "follow_log",
    "list_jobs",
    "read_log",
    "resolve_job_id",
    "start_job",
]

START_TIMEOUT_S = 90.0  # the runner has 20 s to start the command, then a second to fail at once
CALL_TIMEOUT_S = 120.0
READ_MAX = 16 << 20
MAX_GRACE_S = 3600.0
CANCEL_SLACK_S = 10.0  # past the grace, how long cancel_job waits for the job to end
POLL_S = 0.3


@dataclass(frozen=True)
class JobList:
    jobs: tuple[Job, ...]  # newest first
    problems: tuple[str, ...]  # records that could not be read, in words
    pod_now: float | None = None  # the pod's clock when it was listed (a running job's duration runs to it)


@dataclass(frozen=True)
class LogChunk:
    text: str  # raw: decoded as UTF-8, escape sequences and all; the caller makes it safe to show
    next_offset: int
    dropped: int  # bytes the cap dropped between the offset asked for and `text`
    ended: bool  # the job has ended and this is the end of its log


def _call(shell: RemoteShell, call: str, timeout_s: float = CALL_TIMEOUT_S, doing: str = "reading the jobs") -> str:
    """Run job_tools.sh's `call` on the pod with the files it makes private (umask 077); what it printed.

    The shell's own messages quote the command they ran: here that is the whole script, a job's command inside it
    (a token, maybe), base64-encoded. They are said again in podtui's words, `doing` naming what failed."""
    script = "(\numask 077\n" + tools_script() + "\n" + call + "\n)\n"
    encoded = base64.b64encode(script.encode("utf-8", "surrogateescape")).decode()
    try:
        return shell.run(f"printf %s {encoded} | base64 -d | sh", timeout_s=timeout_s).output
    except RemoteTimeout as e:
        raise RemoteTimeout(
            f"{doing} on {shell.label} did not finish within {timeout_s:g} s; "
            + ("it was interrupted and the shell is still usable" if e.session_usable else "the shell was closed"),
            session_usable=e.session_usable,
        ) from None
    except ShellClosed:
        raise ShellClosed(
            f"the connection to {shell.label} dropped while {doing}; it may not have finished on the pod"
        ) from None


def _said(output: str) -> str:
    """The last thing the pod's shell said that was not podtui's own, for a message."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not ln.startswith("@")]
    return visible(lines[-1][:200]) if lines else "nothing"


def _spec_json(job_id: str, pod_id: str, spec: JobSpec, now: float, log_max: int) -> bytes:
    data = {
        "podtui_job": 1,
        "id": job_id,
        "pod_id": pod_id,
        "command": spec.command,
        "name": spec.name,
        "workdir": spec.workdir,
        "then": spec.then,
        "pulls": [{"remote": p.remote, "local": p.local} for p in spec.pulls],
        "podtui_started": now,
        "log_max_bytes": log_max,
    }
    return (json.dumps(data, indent=1) + "\n").encode()  # ASCII: every other character escaped


def start_job(shell: RemoteShell, pod_id: str, spec: JobSpec, *, now: float) -> Job:
    """Write the job's files on the pod, start its runner detached, and return the job as it is a second after its
    command started: `failed` already when it failed at once (docs/jobs.md#starting-a-job)."""
    problem = spec_problem(spec)
    if problem is not None:
        raise JobError(problem)
    geometry = log_geometry(log_max_bytes(spec.log_max_mb))
    for _ in range(5):
        job_id = new_job_id(now)
        files = {
            "spec.json": _spec_json(job_id, pod_id, spec, now, geometry.max_bytes),
            # the command's bytes as typed: a word that is not UTF-8 (Python's surrogate escapes) goes as it came
            "cmd": spec.command.encode("utf-8", "surrogateescape") + b"\n",
            "workdir": (spec.workdir or "").encode("utf-8", "surrogateescape") + b"\n",
            "settings": geometry.line().encode() + b"\n",
            "runner.sh": runner_script().encode(),
        }
        if len(files["spec.json"]) > SPEC_MAX:
            raise JobError(
                f"the command is too long to keep with the job ({len(files['spec.json']):,} bytes as recorded, "
                f"at most {SPEC_MAX:,}): put it in a script on the pod and run that"
            )
        writes = [f"pj_write {job_id} {name} {base64.b64encode(data).decode()}" for name, data in files.items()]
        # a write that fails (a full or read-only volume) leaves no half-made job behind
        calls = ["pj_check", f"pj_new {job_id}", "{ " + " && ".join(writes) + f" || pj_drop {job_id}; }}"]
        calls += [f"pj_launch {job_id}", f"pj_list {job_id}"]
        output = _call(shell, " && ".join(calls), START_TIMEOUT_S, "starting the job")
        lines = output.splitlines()
        missing = next((ln for ln in lines if ln.startswith("@missing")), None)
        if missing is None:
            raise JobError(f"could not start the job: the pod's shell said {_said(output)}")
        lacks = missing.removeprefix("@missing").split()
        if lacks:
            raise JobError(
                f"the pod lacks {', '.join(visible(w) for w in lacks)}, which podtui's job runner needs "
                "(RunPod's images have them all)"
            )
        if "@taken" in lines:
            continue  # another job took this id in the same second
        listing = parse_listing(output)
        if job_id not in listing.blocks:
            kept = "" if "@dropped" in lines else f" (its folder may be left: {job_id})"
            raise JobError(f"could not start the job: the pod's shell said {_said(output)}{kept}")
        job, problem = one_job(listing, pod_id, job_id)
        if job is None:
            raise JobError(problem or f"job {job_id} started, but its record cannot be read")
        return job
    raise JobError("could not find a free job id on the pod; try again")


def list_jobs(shell: RemoteShell, pod_id: str) -> JobList:
    """Every job on the pod, newest first, and the records that could not be read, in words."""
    for _ in range(2):  # once more when a job's spec.json changed while it was read (a job made or removed then)
        output = _call(shell, "pj_list")
        listing = parse_listing(output)
        if not listing.seen_header:
            raise JobError(f"could not list the pod's jobs: its shell said {_said(output)}")
        if not any("spec_garbled" in block for block in listing.blocks.values()):
            break
    jobs, problems = jobs_from(listing, pod_id)
    return JobList(newest_first(jobs, listing), tuple(problems), listing.pod_now)


def resolve_job_id(shell: RemoteShell, text: str) -> str:
    """The id of the one job on the pod whose id is `text` or starts with it (as a user types `20261202-1553` or
    the whole id); JobNotFound when none does, JobError when several do (they are named) or `text` cannot start
    an id."""
    check_job_prefix(text)
    output = _call(shell, f"pj_ids {text}")
    ids = sorted(ln.split()[1] for ln in output.splitlines() if ln.startswith("@id ") and len(ln.split()) == 2)
    ids = [i for i in ids if i.startswith(text) and JOB_ID.fullmatch(i)]
    if text in ids or len(ids) == 1:
        return text if text in ids else ids[0]
    if not ids:
        raise JobNotFound(f"no job {text} on this pod (`podtui jobs POD` lists its jobs)")
    shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
    raise JobError(f"{len(ids)} jobs on this pod start with {text}: {shown}; type more of the id")


def find_job(shell: RemoteShell, pod_id: str, job_id: str) -> Job:
    """The job `job_id` as its record says now; JobNotFound when there is none, JobError when it cannot be read."""
    job, _now = _one(shell, pod_id, check_job_id(job_id))
    return job


def _one(shell: RemoteShell, pod_id: str | None, job_id: str) -> tuple[Job, float | None]:
    output = _call(shell, f"pj_list {job_id}")
    listing = parse_listing(output)
    if not listing.seen_header:
        raise JobError(f"could not read job {job_id}: the pod's shell said {_said(output)}")
    if job_id not in listing.blocks:
        raise JobNotFound(f"no job {job_id} on this pod (`podtui jobs POD` lists its jobs)")
    job, problem = one_job(listing, pod_id or listing.pod_id or "", job_id)
    if job is None:
        raise JobError(problem or f"job {job_id}'s record cannot be read")
    return job, listing.pod_now


def read_log(shell: RemoteShell, job_id: str, offset: int = 0, max_bytes: int = 1 << 20) -> LogChunk:
    """At most `max_bytes` of the job's log from `offset` (in what the job printed, dropped bytes included); a
    character cut by the end waits for the next read (docs/jobs.md#reading-jobs-back)."""
    check_job_id(job_id)
    if offset < 0 or not 0 < max_bytes <= READ_MAX:
        raise JobError(f"a log is read from an offset of 0 or more, 1 byte to {READ_MAX >> 20} MiB at a time")
    output = _call(shell, f"pj_read {job_id} {int(offset)} {int(max_bytes)}", doing=f"reading job {job_id}'s log")
    lines = output.splitlines()
    if "@none" in lines:
        raise JobNotFound(f"no job {job_id} on this pod (`podtui jobs POD` lists its jobs)")
    if "@unreadable" in lines:
        raise JobError(f"job {job_id}'s log settings are unreadable: its log cannot be read")
    at = next((i for i, ln in enumerate(lines) if ln.startswith("@at ")), None)
    words = lines[at].split()[1:] if at is not None else []
    if at is None or len(words) != 4 or not all(w.isascii() and w.isdigit() for w in words) or words[3] == "0":
        raise JobError(f"could not read job {job_id}'s log: the pod's shell said {_said(output)}")
    start, total, ended_flag, chunk_size = (int(w) for w in words)
    data = _chunks(lines[at + 1 :], start, chunk_size)
    if data is None:
        raise JobError(f"job {job_id}'s log did not arrive whole; try again")
    next_offset = start + len(data)
    ended = bool(ended_flag) and next_offset >= total
    if not ended:
        data = data[: _whole_characters(data)]
        next_offset = start + len(data)
    return LogChunk(data.decode("utf-8", errors="replace"), next_offset, max(0, start - offset), ended)


def _chunks(lines: list[str], start: int, chunk_size: int) -> bytes | None:
    """The bytes of the chunks `pj_read` sent (`@c N SKIP TAKE`, then TAKE bytes base64-encoded), from `start`, as far
    as they run on unbroken: a chunk that came short (deleted by the cap while it was read) ends them there, and the
    next read finds it dropped or whole. None when what came is no such thing."""
    data = bytearray()
    at = start
    for i in range(0, len(lines) - 1, 2):
        head = lines[i].split()
        if len(head) != 4 or head[0] != "@c" or not all(w.isascii() and w.isdigit() for w in head[1:]):
            return None if i == 0 and lines[i].strip() else bytes(data)
        n, skip, take = (int(w) for w in head[1:])
        if n * chunk_size + skip != at:
            break
        try:
            part = base64.b64decode(lines[i + 1].strip(), validate=True)
        except (binascii.Error, ValueError):
            return None
        data += part[:take]
        at += min(len(part), take)
        if len(part) < take or skip + take < chunk_size:
            break
    return bytes(data)


def _whole_characters(data: bytes) -> int:
    """How much of `data` ends on a UTF-8 character's boundary (a sequence cut at the end waits)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:
            continue  # a continuation byte: look further back for the lead
        if byte < 0x80:
            return len(data)
        need = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 1
        return len(data) if back >= need else len(data) - back
    return len(data)


def follow_log(
    shell: RemoteShell,
    job_id: str,
    on_text: Callable[[str], None],
    stop: threading.Event,
    poll_s: float = 1.0,
    *,
    offset: int = 0,
) -> Job:
    """Stream the job's log from `offset` to `on_text` (raw text, with a line of podtui's own where the cap dropped
    bytes) until the job has ended and its log is out, or `stop` is set; the job as last seen."""
    check_job_id(job_id)
    at_line_start = True
    while not stop.is_set():
        chunk = read_log(shell, job_id, offset)
        if chunk.dropped:
            on_text(("" if at_line_start else "\n") + dropped_line(chunk.dropped) + "\n")
            at_line_start = True
        if chunk.text:
            on_text(chunk.text)
            at_line_start = chunk.text.endswith("\n")
        offset = chunk.next_offset
        if chunk.ended:
            break
        if not chunk.text and not chunk.dropped:
            stop.wait(poll_s)
    job, _now = _one(shell, None, job_id)
    return job


def cancel_job(shell: RemoteShell, pod_id: str, job_id: str, grace_s: float = 10.0) -> Job:
    """Ask the job to end: SIGTERM to its process group, SIGKILL after `grace_s` if any of it is still there, done
    on the pod (docs/jobs.md#cancelling). Waits for it to end, up to the grace and 10 s more; the job as it is then.
    JobError when it has ended already."""
    check_job_id(job_id)
    if not 0 <= grace_s <= MAX_GRACE_S:
        raise JobError(f"the grace before SIGKILL is 0 to {MAX_GRACE_S:g} s")
    output = _call(shell, f"pj_cancel {job_id} {round(grace_s * 100)}", doing=f"cancelling job {job_id}")
    lines = output.splitlines()
    if "@none" in lines:
        raise JobNotFound(f"no job {job_id} on this pod (`podtui jobs POD` lists its jobs)")
    if "@ended" in lines:
        job = find_job(shell, pod_id, job_id)
        code = f", exit code {job.exit_code}" if job.exit_code is not None else ""
        raise JobError(f"job {job_id} has ended already ({job.state}{code}): nothing to cancel")
    if not any(word in lines for word in ("@asked", "@signalled", "@gone")):
        raise JobError(f"could not cancel job {job_id}: the pod's shell said {_said(output)}")
    deadline = time.monotonic() + grace_s + CANCEL_SLACK_S
    job = find_job(shell, pod_id, job_id)
    while not job.ended_yet and time.monotonic() < deadline:
        time.sleep(POLL_S)
        job = find_job(shell, pod_id, job_id)
    return job
