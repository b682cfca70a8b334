"""`podtui push POD LOCAL [REMOTE]` and `podtui pull POD REMOTE [LOCAL]`: one verified transfer, for scripts.

Exit status 0 only when both ends' checksums matched and the file is under its final name. A push of a local path
that is not there is refused before anything is asked of RunPod or queued (exit status 2, as for any usage error).
--json prints one JSON object per line (states, progress at most twice a second, log lines, and a last `verified`
or `failed`).

The job is written into the shared history (transfers.json), so a TUI running meanwhile lists it; it belongs to
this process, and this process runs nothing else from that history. --then-terminate reads that history again
before terminating: a transfer another podtui still has queued or under way for the pod holds it back.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import TextIO

from podtui.cli.output import rewrite_line
from podtui.cli.session import UsageError
from podtui.core import actions, units
from podtui.core.api.client import find_pod
from podtui.core.services import Services
from podtui.core.visible import visible
from podtui.transfer import owner
from podtui.transfer.history import HistoryUnusable, TransferHistory
from podtui.transfer.job import Direction, RouteChoice, TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runners import runner_for

EXIT_FAILED, EXIT_INTERRUPTED = 1, 130
PROGRESS_EVERY_S = 0.5


class _Printer:
    """Turns the job's changes into lines: JSON events, or a short human account on stderr."""

    def __init__(self, as_json: bool, out: TextIO, err: TextIO) -> None:
        self.as_json, self.out, self.err = as_json, out, err
        self.lock = threading.Lock()
        self.state = ""
        self.logged = 0
        self.last_progress = 0.0

    def emit(self, event: dict[str, object]) -> None:
        self.out.write(json.dumps(event) + "\n")
        self.out.flush()

    def change(self, job: TransferJob) -> None:
        with self.lock:
            for line in job.log[self.logged :] if len(job.log) > self.logged else []:
                if self.as_json:
                    self.emit({"event": "log", "id": job.id, "line": line})
            self.logged = len(job.log)
            if job.state != self.state:
                self.state = job.state
                if self.as_json:
                    self.emit(
                        {"event": "state", "id": job.id, "state": job.state, "way": job.route, "error": job.error}
                    )
                else:
                    self.err.write(f"{job.label}: {job.state_label}{f' ({job.error})' if job.error else ''}\n")
            elif job.state == "transferring" and time.monotonic() - self.last_progress >= PROGRESS_EVERY_S:
                self.last_progress = time.monotonic()
                if self.as_json:
                    self.emit(
                        {
                            "event": "progress",
                            "id": job.id,
                            "done_bytes": job.done_bytes,
                            "total_bytes": job.total_bytes,
                            "percent": job.percent,
                            "rate_bytes_per_s": job.rate_bytes_per_s,
                            "eta_s": job.eta_s,
                        }
                    )
                elif self.err.isatty():
                    pct = f"{job.percent:5.1f}%" if job.percent is not None else "  ?  "
                    rate = f"{units.size(job.rate_bytes_per_s)}/s" if job.rate_bytes_per_s else ""
                    rewrite_line(self.err, f"{job.label}: {pct} {rate:<12}")

    def final(self, job: TransferJob) -> None:
        if self.as_json:
            event: dict[str, object] = {
                "event": job.state,
                "id": job.id,
                "way": job.route,
                "path": job.final_path,
                "algorithm": job.algorithm,
                "checksum": job.checksum,
                "bytes": job.total_bytes,
                "attempts": job.attempts,
            }
            if job.state != "verified":
                event.update(error=job.error, error_kind=job.error_kind)
            self.emit(event)
        elif job.state == "verified":
            self.out.write(
                f"{job.final_path}  {job.algorithm} {job.checksum} (verified on both ends, via {job.route})\n"
            )
        else:
            self.err.write(f"podtui: {job.direction} failed: {job.error or job.state}\n")


def cmd_transfer(
    session: Services,
    direction: Direction,
    ref: str,
    source: str,
    target: str | None,
    route_choice: RouteChoice,
    algorithm: str,
    overwrite: bool,
    as_json: bool,
    then_terminate: bool = False,
    yes: bool = False,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    if direction == "push" and not os.path.exists(os.path.expanduser(source)):
        raise UsageError(f"push: no such file or folder here: {visible(source)}; nothing was queued")
    pod = find_pod(session.api, ref)
    if then_terminate:
        actions.check("terminate", pod)
    ctx = session.transfer_context()
    printer = _Printer(as_json, out, err)
    history = TransferHistory(session.transfer_history) if session.transfer_history else None
    queue = TransferQueue(ctx, history, concurrency=1, on_change=printer.change, adopt=False)
    default_target = "." if direction == "pull" else ""  # a pull lands here; a push in the pod shell's folder
    job = TransferJob(
        pod.id,
        direction,
        source,
        target or default_target,
        pod_name=pod.name,
        route_choice=route_choice,
        algorithm=algorithm,  # type: ignore[arg-type]
        overwrite=overwrite,
    )
    try:
        queue.add(job)
        queue.start()
        queue.wait([job.id])
    except KeyboardInterrupt:
        queue.cancel(job.id)
        queue.wait([job.id], 15)
        err.write("podtui: interrupted; nothing was put under the final name\n")
        return EXIT_INTERRUPTED
    finally:
        queue.close()
    done = queue.get(job.id) or job
    printer.final(done)
    if done.state != "verified":
        return EXIT_FAILED
    if then_terminate:
        # verified, and still there as a file or folder: else the pod holds the only copy
        if not runner_for(done.direction).landed(done):
            err.write(f"podtui: not terminating {pod.name}: {done.final_path} is not there as it was verified\n")
            return EXIT_FAILED
        busy = _busy_elsewhere(history, pod.id, pod.name, queue)
        if busy is not None and (yes or not sys.stdin.isatty()):
            err.write(f"podtui: verified; not terminating {pod.name}: {busy}; terminate it once that is done\n")
            return EXIT_FAILED
        return _terminate(session, pod.id, yes, err, busy)
    return 0


def _busy_elsewhere(history: TransferHistory | None, pod_id: str, pod_name: str, queue: TransferQueue) -> str | None:
    """What another podtui still has queued or under way for the pod (read from the shared history now), in words;
    None when nothing."""
    if history is None:
        return None
    try:
        pending = history.pending(pod_id, queue.owner)
    except HistoryUnusable as e:
        return f"cannot tell whether another podtui is using it ({e})"
    if not pending:
        return None
    said = "; ".join(
        f"{owner.describe(j.owner)} is {runner_for(j.direction).activity.format(j.label)} {pod_name} ({j.state_label})"
        for j in pending[:3]
    )
    more = f" and {len(pending) - 3} more" if len(pending) > 3 else ""
    if any(owner.liveness(j.owner) == "unknown" for j in pending):  # else held back for ever: say how to let go
        more += " (if that podtui has stopped, forget its transfer in podtui's transfer pane: t, select it, press d)"
    return f"{said}{more}"


def _terminate(session: Services, pod_id: str, yes: bool, err: TextIO, busy: str | None = None) -> int:
    pod = find_pod(session.api, pod_id)
    if not yes:
        if not sys.stdin.isatty():
            err.write(f"podtui: verified; not terminating {pod.name} without --yes (no terminal to ask on)\n")
            return EXIT_FAILED
        warning = f"Careful: {busy}. " if busy else ""
        answer = input(
            f"Verified. {warning}Terminate {pod.name} ({pod.id}) now? Its container and volume data are deleted. [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            err.write(f"{pod.name} left running\n")
            return 0
    actions.perform(session.api, "terminate", pod)
    err.write(f"{pod.name}: terminating\n")
    return 0
