"""`podtui sync POD LOCAL_DIR REMOTE_DIR`: copy what changed between a local folder and a pod's, verified per file
(docs/sync.md).

stdout: the plan (new, changed, to delete, unchanged), then the result; with --json, one JSON object per sync on
one line (`--watch`: one per sync). Progress goes to stderr, only when it is a terminal. Exit status 0 when
everything verified, 1 when anything failed, 2 for a usage error, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from podtui.cli.output import rewrite_line
from podtui.cli.session import UsageError, open_session
from podtui.core import actions, units
from podtui.core.api.client import find_pod
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.visible import visible
from podtui.transfer.sync.plan import Plan
from podtui.transfer.sync.run import SyncError, SyncRun, check_local
from podtui.transfer.sync.state import SyncListener, SyncResult, SyncSpec
from podtui.transfer.sync.watch import DEBOUNCE_MS, watch_sync

EXIT_FAILED, EXIT_INTERRUPTED = 1, 130
SHOWN = 20  # names listed per kind in the text output; --json lists all
PROGRESS_EVERY_S = 0.2
DEMO_SSH_WAIT_S = 5.0  # the demo's sshds are up within a second or two of its start


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui sync`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "Copy what changed from LOCAL_DIR to the pod's REMOTE_DIR (or back with --pull): a file whose size "
        "differs, or whose time differs and whose sha256 does too. Every file copied is verified by sha256 on both "
        "ends before it is under its final name. .gitignore files are honoured as git reads them. The route follows "
        "the pod: rsync over direct SSH when both ends have it, else SFTP; the console through RunPod's gateway."
    )
    p.add_argument("pod", help="pod id or name")
    p.add_argument("local", metavar="LOCAL_DIR", help="the folder here")
    p.add_argument(
        "remote",
        metavar="REMOTE_DIR",
        help="the pod's folder: absolute, ~/..., or relative to the pod's volume (/workspace)",
    )
    p.add_argument("--pull", action="store_true", help="the pod's folder is the source: copy from it to LOCAL_DIR")
    p.add_argument("--delete", action="store_true", help="remove what the source does not have (never what is ignored)")
    p.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="PATTERN",
        help="leave out what matches (gitignore syntax, from the top of the folder; wins over .gitignore); repeatable",
    )
    p.add_argument("--no-gitignore", action="store_true", help="do not read .gitignore files (and copy .git too)")
    p.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    p.add_argument("--watch", action="store_true", help="sync again whenever a local file changes, until ctrl+c")
    p.add_argument(
        "--via",
        choices=["auto", "rsync", "sftp", "console"],
        default="auto",
        help="auto: rsync over direct SSH when both ends have it, SFTP over direct SSH, else the console",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per sync on stdout")
    p.add_argument("--debounce-ms", type=int, default=DEBOUNCE_MS, help=argparse.SUPPRESS)


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    if args.watch and args.pull:
        raise UsageError("--watch follows changes to the local folder; with --pull there are none to follow")
    spec = SyncSpec(
        "",
        Path(args.local).expanduser(),
        args.remote,
        pull=args.pull,
        delete=args.delete,
        excludes=tuple(args.exclude),
        gitignore=not args.no_gitignore,
        via=args.via,
        dry_run=args.dry_run,
    )
    try:
        check_local(spec)  # before RunPod is asked anything
    except SyncError as e:
        raise UsageError(str(e)) from None
    with open_session(demo, paths) as session:
        if not spec.pull and not spec.dry_run:
            actions.guard(read_only or session.config.read_only, "syncing to a pod")
        return cmd_sync(session, args.pod, spec, as_json=args.json, watch=args.watch, debounce_ms=args.debounce_ms)


def cmd_sync(
    session: Services,
    ref: str,
    spec: SyncSpec,
    as_json: bool = False,
    watch: bool = False,
    debounce_ms: int = DEBOUNCE_MS,
    out: TextIO | None = None,
    err: TextIO | None = None,
    stop: threading.Event | None = None,
) -> int:
    """One sync (or, with watch, one per change until `stop` is set or ctrl+c)."""
    out = out or sys.stdout  # looked up now: the CLI wraps them (podtui.cli.output)
    err = err or sys.stderr
    pod = _find(session, ref)
    spec = dataclasses.replace(spec, pod_id=pod.id)
    printer = _Printer(out, err, as_json, pod)

    def make_run() -> SyncRun:
        return SyncRun(spec, lambda pod_id: find_pod(session.api, pod_id), session.ssh_settings, printer)

    stop = stop or threading.Event()
    if watch:
        err.write(f"podtui: watching {visible(str(spec.local))} for changes (ctrl+c ends)\n")
        _wait(_Worker(lambda: watch_sync(make_run, spec, stop, printer.result, debounce_ms)), stop, lambda: None)
        return 0 if all(printer.oks) else EXIT_FAILED
    run = make_run()
    worker = _Worker(run.run)
    interrupted = _wait(worker, stop, run.cancel)
    result = worker.result
    assert result is not None  # run() returns whatever happened; _wait raised what it did not expect
    printer.result(result)
    if interrupted or result.cancelled:
        left = (
            "rsync may have put whole files in place that podtui did not verify"
            if result.route == "rsync"
            else "nothing else was put under a final name"
        )
        err.write(f"podtui: interrupted; what verified is in place, {left}\n")
        return EXIT_INTERRUPTED
    return 0 if result.ok else EXIT_FAILED


class _Worker(threading.Thread):
    """A sync (or --watch) on a thread of its own, so that ctrl+c reaches the main thread; what it returns, or the
    exception that ended it (raised again by _wait, for the CLI's own handler to report)."""

    def __init__(self, work: Callable[[], SyncResult | None]) -> None:
        super().__init__(name="podtui-sync")
        self.work = work
        self.result: SyncResult | None = None
        self.error: BaseException | None = None
        # waited on instead of join(): a ctrl+c that lands inside Thread.join can leave is_alive() False while the
        # thread still runs (CPython's bpo-45274 handling releases the running thread's own lock), and podtui would
        # then exit before the sync had cleaned up after itself
        self.finished = threading.Event()

    def run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as e:  # handed to the main thread: a thread's own report would be lost in the output
            self.error = e
        finally:
            self.finished.set()


def _wait(worker: _Worker, stop: threading.Event, cancel: Any) -> bool:
    """Run `worker` to its end; ctrl+c (or `stop`) cancels what it does. Whether it was interrupted; what the worker
    raised is raised here."""
    worker.start()
    interrupted = False
    while not worker.finished.is_set():
        try:
            worker.finished.wait(0.2)
            if stop.is_set() and not interrupted:
                interrupted = True
                cancel()
        except KeyboardInterrupt:
            interrupted = True
            stop.set()
            cancel()
    if worker.error is not None:
        raise worker.error
    return interrupted


def _find(session: Services, ref: str) -> Pod:
    """The pod; in the demo, once its direct SSH is up (the simulator's sshds start a moment after its API)."""
    pod = find_pod(session.api, ref)
    if not session.demo or pod.ssh_direct is not None or pod.state != "RUNNING":
        return pod
    session.ssh_settings()  # starts the simulator's SSH side if nothing has yet
    deadline = time.monotonic() + DEMO_SSH_WAIT_S
    while pod.ssh_direct is None and time.monotonic() < deadline:
        time.sleep(0.25)
        pod = find_pod(session.api, pod.id)
    return pod


class _Printer(SyncListener):
    """The plan as soon as it is made, progress on a terminal, the result at the end; or one JSON object."""

    def __init__(self, out: TextIO, err: TextIO, as_json: bool, pod: Pod) -> None:
        self.out, self.err, self.as_json, self.pod = out, err, as_json, pod
        self.lock = threading.Lock()
        self.last_progress = 0.0
        self.drawn = False
        self.oks: list[bool] = []

    def plan_ready(self, plan: Plan) -> None:
        if self.as_json:
            return
        with self.lock:
            self.out.write(_plan_line(plan) + "\n")
            for sign, paths in (
                ("+", [c.path for c in plan.new]),
                ("~", [c.path for c in plan.changed]),
                ("-", plan.deletes + plan.rmdirs),
                ("@", [p for p, _ in plan.links]),
            ):
                for path in paths[:SHOWN]:
                    self.out.write(f"  {sign} {visible(path)}\n")
                if len(paths) > SHOWN:
                    self.out.write(f"  {sign} … and {len(paths) - SHOWN} more\n")
            for path, why in plan.skipped[:SHOWN]:
                self.out.write(f"  skipped {visible(path)}: {visible(why)}\n")
            self.out.flush()

    def progress(self, done: int, total: int) -> None:
        if self.as_json or not self.err.isatty():
            return
        with self.lock:
            now = time.monotonic()
            if now - self.last_progress < PROGRESS_EVERY_S and done < total:
                return
            self.last_progress = now
            pct = f"{done / total * 100:5.1f}%" if total else "     "
            rewrite_line(self.err, f"{pct} {units.size(done)} of {units.size(total)}".ljust(40))
            self.drawn = True

    def note(self, text: str) -> None:
        if not self.as_json:
            with self.lock:
                self._end_progress()
                self.err.write(f"podtui: {visible(text)}\n")

    def _end_progress(self) -> None:
        if self.drawn:
            self.err.write("\n")
            self.drawn = False

    def result(self, result: SyncResult) -> None:
        self.oks.append(result.ok)
        with self.lock:
            self._end_progress()
            if self.as_json:
                self.out.write(json.dumps(result_json(result, self.pod)) + "\n")
            else:
                self._text(result)
            self.out.flush()

    def _text(self, r: SyncResult) -> None:
        if r.error is not None:
            self.err.write(f"podtui: sync failed: {visible(r.error)}\n")
        if r.plan is None:
            return
        where = f"{visible(self.pod.name)}:{visible(r.remote_root)}"
        arrow = (
            f"{where} -> {visible(str(r.spec.local))}" if r.spec.pull else f"{visible(str(r.spec.local))} -> {where}"
        )
        if r.spec.dry_run:
            self.out.write(f"dry run ({arrow}, via {r.route}): nothing was changed\n")
            return
        files = "file" if len(r.verified) == 1 else "files"
        parts = [f"verified {len(r.verified)} {files} ({units.size(r.copied_bytes)}) on both ends"]
        if r.deleted:
            parts.append(f"deleted {len(r.deleted)}")
        if r.linked:
            parts.append(f"{len(r.linked)} symlinks")
        if r.touched:
            parts.append(f"{r.touched} times set (same bytes)")
        self.out.write(f"{', '.join(parts)}; {arrow} via {r.route}\n")
        if r.failed:
            self.out.write(f"{len(r.failed)} failed:\n")
            for path, why in r.failed:
                self.out.write(f"  {visible(path)}: {visible(why)}\n")


def _plan_line(plan: Plan) -> str:
    counts = [f"{len(plan.new)} new", f"{len(plan.changed)} changed"]
    gone = len(plan.deletes) + len(plan.rmdirs)
    if plan.delete or gone:
        counts.append(f"{gone} to delete")
    counts.append(f"{plan.unchanged} unchanged")
    extra = []
    if plan.settled:
        extra.append(f"{plan.settled} of them only touched (same sha256)")
    if plan.ignored:
        extra.append(f"{plan.ignored} ignored")
    if plan.skipped:
        extra.append(f"{len(plan.skipped)} skipped")
    if plan.extra:
        extra.append(f"{plan.extra} only at the destination (kept: no --delete)")
    if plan.protected:
        extra.append(f"{plan.protected} kept by the destination's .gitignore")
    return ", ".join(counts) + (f" ({'; '.join(extra)})" if extra else "")


def result_json(r: SyncResult, pod: Pod) -> dict[str, Any]:
    plan = r.plan
    return {
        "pod": pod.id,
        "pod_name": pod.name,
        "direction": r.spec.direction,
        "local": str(r.spec.local),
        "remote": r.remote_root,
        "route": r.route,
        "dry_run": r.spec.dry_run,
        "ok": r.ok,
        "error": r.error,
        "cancelled": r.cancelled,
        "attempts": r.attempts,
        "plan": None
        if plan is None
        else {
            "new": [c.path for c in plan.new],
            "changed": [c.path for c in plan.changed],
            "delete": plan.deletes + plan.rmdirs,
            "links": [p for p, _ in plan.links],
            "unchanged": plan.unchanged,
            "settled": plan.settled,
            "ignored": plan.ignored,
            "skipped": [{"path": p, "why": w} for p, w in plan.skipped],
            "extra": plan.extra,
            "protected": plan.protected,
        },
        "verified": [{"path": p, "sha256": d} for p, d in r.verified],
        "bytes": r.copied_bytes,
        "deleted": r.deleted,
        "linked": r.linked,
        "touched": r.touched,
        "failed": [{"path": p, "error": w} for p, w in r.failed],
        "kept": r.kept,
        "notes": r.notes,
    }
