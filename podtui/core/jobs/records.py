"""Jobs read back from what `pj_list` (job_tools.sh) printed on the pod: each job's record files, what of it is
alive, its log's chunks, and its spec.json base64-encoded (docs/jobs.md#reading-jobs-back). What cannot be read
becomes a problem in words, never an exception; the state follows docs/jobs.md#states."""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from podtui.core.jobs.job import JOB_ID, Job, JobState, Pull, Then
from podtui.core.visible import visible

STARTING_S = 30.0  # a folder younger than this whose runner has not written its pid yet is starting, not lost
DEFAULT_WORKDIR = "/workspace"
SPEC_MAX = 512 << 10  # of a spec.json, read back (job_tools.sh's pj_files); start_job writes none bigger
_RECORDS = ("created", "runner", "started", "pgid", "beat", "end", "cancel", "settings", "note")


@dataclass
class Listing:
    """One `pj_list`'s answer: the pod's clock and RUNPOD_POD_ID, each job's lines, the folders that are not jobs."""

    pod_now: float | None = None
    pod_id: str | None = None
    blocks: dict[str, dict[str, str]] = field(default_factory=dict)
    others: list[str] = field(default_factory=list)
    seen_header: bool = False


def parse_listing(output: str) -> Listing:
    """`pj_list`'s lines: the header, a block of records for each job, then each job's log chunks (`@log`), the size
    of each spec.json (`@spec`) and the specs themselves, one after the other in one base64 line (`@specs`)."""
    listing = Listing()
    block: dict[str, str] | None = None
    specs: list[tuple[str, int, bool]] = []  # (job, size, sent)
    blob: str | None = None
    for line in output.splitlines():
        word, _, rest = line.partition(" ")
        if word == "@now":
            listing.seen_header = True
            stamp, _, pod = rest.partition(" ")
            listing.pod_now = _number(stamp)
            listing.pod_id = pod.strip() or None
        elif word == "@job":
            block = listing.blocks.setdefault(rest.strip(), {})
        elif word == "@other":
            listing.others.append(_b64_text(rest.strip()))
            block = None
        elif word == "@log":
            _add_chunks(listing, rest)
            block = None
        elif word == "@spec":
            job_id, size, sent = [*rest.split(), "", "", ""][:3]
            if job_id in listing.blocks and size.isascii() and size.isdigit():
                specs.append((job_id, int(size), sent == "1"))
            block = None
        elif word == "@specs":
            blob = rest.strip()
            block = None
        elif block is not None and (word in _RECORDS or word == "alive"):
            block[word] = rest
    _add_specs(listing, specs, blob)
    return listing


def _add_chunks(listing: Listing, rest: str) -> None:
    """One `@log ID LAST SIZE COUNT BYTES` into the job's `log` line (lines of one job are added up)."""
    job_id, _, numbers = rest.strip().partition(" ")
    found = _ints(numbers, 4)
    block = listing.blocks.get(job_id)
    if block is None or found is None:
        return
    last, size, count, kept = found
    seen = _ints(block.get("log"), 4)
    if seen is not None:
        if seen[0] > last:
            last, size = seen[0], seen[1]
        count, kept = count + seen[2], kept + seen[3]
    block["log"] = f"{last} {size} {count} {kept}"


def _add_specs(listing: Listing, specs: list[tuple[str, int, bool]], blob: str | None) -> None:
    """Each spec.json sent, cut from the one base64 line that holds them all, as its block's `spec` (base64)."""
    try:
        data = base64.b64decode(blob or "", validate=True)
    except (binascii.Error, ValueError):
        data = None
    whole = data is not None and len(data) == sum(size for _, size, sent in specs if sent)
    at = 0
    for job_id, size, sent in specs:
        block = listing.blocks[job_id]
        if not sent:
            block["spec_size"] = str(size)
        elif whole and data is not None:
            block["spec"] = base64.b64encode(data[at : at + size]).decode()
            at += size
        else:
            block["spec_garbled"] = "1"


def jobs_from(listing: Listing, pod_id: str) -> tuple[list[Job], list[str]]:
    """The jobs the listing holds (oldest first, as ids sort) and the problems met, in words."""
    jobs: list[Job] = []
    problems: list[str] = []
    for name in listing.others:
        problems.append(f"a folder in the jobs' folder that is not a job: '{visible(name)}'")
    for job_id in sorted(listing.blocks):
        job, problem = job_from(job_id, listing.blocks[job_id], pod_id, listing.pod_now)
        if job is not None:
            jobs.append(job)
        if problem is not None:
            problems.append(problem)
    return jobs, problems


def one_job(listing: Listing, pod_id: str, job_id: str) -> tuple[Job | None, str | None]:
    """The job `job_id` of the listing (which holds its block) and what was wrong with its record."""
    return job_from(job_id, listing.blocks[job_id], pod_id, listing.pod_now)


def job_from(job_id: str, lines: dict[str, str], pod_id: str, pod_now: float | None) -> tuple[Job | None, str | None]:
    """The job of one block (None when podtui cannot say what it runs), and what was wrong with its record."""
    if not JOB_ID.fullmatch(job_id):
        return None, f"a folder in the jobs' folder that is not a job: '{visible(job_id)}'"
    if "spec_garbled" in lines:
        return None, f"job {job_id}: its spec.json did not arrive whole (it changed while it was read?); try again"
    if "spec_size" in lines:
        return None, (
            f"job {job_id}: its spec.json is {lines['spec_size']} bytes, more than podtui reads ({SPEC_MAX:,}), or "
            "cannot be read: podtui cannot say what it runs"
        )
    spec = _spec(job_id, lines.get("spec"))
    if isinstance(spec, str):
        return None, spec
    problem = None
    created = _ints(lines.get("created"), 1)
    runner = _ints(lines.get("runner"), 2)
    started_at = _ints(lines.get("started"), 1)
    beat = _ints(lines.get("beat"), 1)
    end = _ints(lines.get("end"), 2) if "end" in lines else None
    cancel = "cancel" in lines
    alive = _ints(lines.get("alive"), 2) or (0, 0)
    if "end" in lines and end is None:
        problem = f"job {job_id}: its record of how it ended is unreadable ('{visible(lines['end'])[:40]}')"
    started = float(started_at[0]) if started_at else None
    state: JobState
    exit_code: int | None = None
    ended: float | None = None
    note: str | None = None
    if end is not None:
        exit_code, ended = end[0], float(end[1])
        state = "cancelled" if cancel else "done" if exit_code == 0 else "failed"
        note = _first(lines.get("note"))
    elif alive[0]:
        state = "running"
    elif alive[1]:
        state = "running"
        note = "its runner is gone (killed?): its exit will not be recorded"
    elif cancel:
        state = "cancelled"
        ended = float(beat[0]) if beat else started
        note = "cancelled; its exit was not recorded"
    elif runner is None and created is not None and pod_now is not None and pod_now - created[0] < STARTING_S:
        state = "running"
        note = "starting"
    else:
        state = "lost"
        last = float(beat[0]) if beat else started
        ended = last
        heard = f"; last heard of at {_clock(last)} (pod's clock, UTC)" if last is not None else ""
        note = (
            "it stopped without an exit recorded: the pod stopped or restarted under it, or its runner was killed"
            + heard
        )
    log_bytes, log_dropped = _log(lines.get("log"), lines.get("settings"))
    job = Job(
        id=job_id,
        pod_id=pod_id,
        command=spec.command,
        name=spec.name,
        workdir=spec.workdir,
        state=state,
        exit_code=exit_code,
        started=started,
        ended=ended,
        then=spec.then,
        pulls=spec.pulls,
        log_bytes=log_bytes,
        log_dropped=log_dropped,
        note=note,
    )
    return job, problem


@dataclass(frozen=True)
class _Spec:
    command: str
    name: str | None
    workdir: str
    then: Then | None
    pulls: tuple[Pull, ...]


def _spec(job_id: str, encoded: str | None) -> _Spec | str:
    where = f"job {job_id}"
    if encoded is None:
        return f"{where} has no spec.json (podtui writes it first): podtui cannot say what it runs"
    try:
        raw = base64.b64decode(encoded.strip(), validate=True)
    except (binascii.Error, ValueError):
        return f"{where}: its spec.json did not arrive whole; try again"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return f"{where}: its spec.json is not UTF-8 text: podtui cannot say what it runs"
    try:
        data: Any = json.loads(text, strict=False)  # control characters in a string are kept, shown visible later
    except (ValueError, RecursionError) as e:
        short = isinstance(e, json.JSONDecodeError) and (e.msg.startswith("Unterminated") or e.pos >= len(text.strip()))
        cut = " (cut short?)" if short else ""
        return f"{where}: its spec.json is not JSON{cut} ({visible(str(e))[:80]}): podtui cannot say what it runs"
    if not isinstance(data, dict):
        return f"{where}: its spec.json is not a JSON object: podtui cannot say what it runs"
    command = data.get("command")
    if not isinstance(command, str):
        return f"{where}: its spec.json has no command"
    name, workdir, then = data.get("name"), data.get("workdir"), data.get("then")
    if name is not None and not isinstance(name, str):
        return f"{where}: its spec.json's name is not text"
    if workdir is not None and not isinstance(workdir, str):
        return f"{where}: its spec.json's workdir is not text"
    if then not in (None, "stop", "terminate"):
        return f"{where}: its spec.json's then is neither stop nor terminate: {visible(json.dumps(then))[:40]}"
    pulls = _pulls(data.get("pulls", []))
    if pulls is None:
        return f"{where}: its spec.json's pulls are not a list of remote (and local) paths"
    return _Spec(command, name or None, workdir or DEFAULT_WORKDIR, then, pulls)


def _pulls(value: Any) -> tuple[Pull, ...] | None:
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if not isinstance(item, dict):
            return None
        remote, local = item.get("remote"), item.get("local")
        if not isinstance(remote, str) or not remote or (local is not None and not isinstance(local, str)):
            return None
        out.append(Pull(remote, local or None))
    return tuple(out)


def _log(line: str | None, settings: str | None) -> tuple[int, int]:
    """(bytes printed, bytes dropped) from `LAST SIZE COUNT [BYTES]` (the last chunk's number and size, how many
    chunks there are and the bytes they hold) and the chunk size (docs/jobs.md#the-log-and-its-cap). Without BYTES
    every chunk gone is taken as whole; with it, a chunk the full volume cut short counts too."""
    geometry = _ints(settings, 3)
    numbers = _ints(line, 3)
    if geometry is None or numbers is None or geometry[0] == 0:
        return 0, 0
    last, size, count = numbers
    chunk = geometry[0]
    printed = last * chunk + size
    kept = _ints(line, 4)
    if kept is not None:
        return printed, max(0, printed - kept[3])
    return printed, max(0, last + 1 - count) * chunk


def _ints(text: str | None, n: int) -> tuple[int, ...] | None:
    """The first n whole numbers of a record line, or None when it does not start with them."""
    if text is None:
        return None
    words = text.split()
    if len(words) < n or not all(w.isascii() and w.isdigit() and len(w) < 20 for w in words[:n]):
        return None
    return tuple(int(w) for w in words[:n])


def _number(text: str) -> float | None:
    return float(text) if text.isascii() and text.isdigit() and len(text) < 20 else None


def _first(text: str | None) -> str | None:
    return text.strip() or None if text else None


def _b64_text(encoded: str) -> str:
    try:
        return base64.b64decode(encoded, validate=True).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return encoded


def _clock(t: float | None) -> str:
    return "?" if t is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


def newest_first(jobs: Iterable[Job], listing: Listing | None = None) -> tuple[Job, ...]:
    """By their ids (podtui's clock to the second, then random); jobs started in the same second by when their
    runners started (the pod's clock ticks, a hundredth of a second), as the listing has them."""

    def ticks(job: Job) -> int:
        runner = _ints(listing.blocks.get(job.id, {}).get("runner"), 2) if listing is not None else None
        return runner[1] if runner is not None else 0

    return tuple(sorted(jobs, key=lambda j: (j.id[:15], ticks(j), j.id), reverse=True))
