"""A detached job's log, full screen (docs/jobs.md): streamed while the job runs, then its end said. The screen keeps
the last LINES_KEPT lines; a log larger than TAIL_BYTES opens on its tail (the head is left out, and said), and what
the log's cap dropped on the pod is said where it was dropped. A line still being written (a progress bar) shows
under the log as it moves. Every line passes through `visible`, so nothing in it acts on the terminal."""

from __future__ import annotations

import threading
from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Log, Static

from podtui.core import units
from podtui.core.jobs.job import Job, dropped_line
from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.needs import Needs, Served
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.worker_errors import failures_shown, in_thread

LINES_KEPT = 10_000
TAIL_BYTES = 1 << 20  # a longer log opens this far from its end
READ_BYTES = 256 << 10  # read at a time
POLL_S = 1.0  # between two reads of a running job's log that had nothing new


class CancelsJobs(Protocol):
    def cancel(self, pod: Pod, job: Job) -> None: ...  # asks first


class JobLogNeeds(Served, Protocol):
    @property
    def jobs(self) -> CancelsJobs: ...


class JobLogScreen(Screen[None]):
    CSS_PATH = "job_log.tcss"
    BINDINGS = keymap.bindings("job-log")

    needs = Needs[JobLogNeeds]()
    on_worker_state_changed = failures_shown

    def __init__(self, pod: Pod, job: Job) -> None:
        super().__init__()
        self.pod, self.job = pod, job
        self.partial = ""  # the line being written, not ended yet
        self.lines = 0  # lines written (the view keeps the last LINES_KEPT)
        self.dropped = 0  # bytes the log's cap dropped, as said in the view
        self.ended = False
        self._stop = threading.Event()

    def compose(self) -> ComposeResult:
        yield Static(id="head", markup=False)
        yield Log(max_lines=LINES_KEPT, id="log")
        yield Static(id="partial", markup=False)
        yield Static(id="status", markup=False)
        yield FittedFooter()

    def on_mount(self) -> None:
        self._show_partial()
        self._head()
        self._status(f"reading the log on {visible(self.pod.name)}…")
        self.query_one(Log).focus()
        self._follow()

    def on_unmount(self) -> None:
        self._stop.set()

    def _head(self) -> None:
        job = self.job
        self.query_one("#head", Static).update(
            Text.assemble(
                ("Log · ", "bold"),
                (visible(job.label), "bold"),
                f" on {visible(self.pod.name)}  {job.id}  ",
                (job.state, "bold"),
            )
        )

    def _status(self, text: str) -> None:
        self.query_one("#status", Static).update(text)

    # --- reading, in a worker ------------------------------------------------------------------------------

    @in_thread(group="job-log", description="reading a job's log", exclusive=True)
    def _follow(self) -> None:
        from podtui.core.jobs.job import JobError
        from podtui.core.jobs.remote_jobs import find_job, read_log
        from podtui.core.ssh.errors import SshError
        from podtui.core.ssh.remote import open_remote

        job = self.job
        try:
            with open_remote(self.pod, self.needs.services.ssh_settings()) as shell:
                job = find_job(shell, self.pod.id, job.id)
                offset = max(0, job.log_bytes - TAIL_BYTES)
                if offset:
                    self._on_loop(self._skipped, offset)
                while not self._stop.is_set():
                    chunk = read_log(shell, job.id, offset, READ_BYTES)
                    if chunk.text or chunk.dropped:
                        self._on_loop(self._add, chunk.text, chunk.dropped)
                    offset = chunk.next_offset
                    if chunk.ended:
                        job = find_job(shell, self.pod.id, job.id)
                        break
                    if not chunk.text and self._stop.wait(POLL_S):
                        return
        except (SshError, JobError, OSError) as e:
            self._on_loop(self._status, visible(f"cannot read the log: {e}"))
            return
        self._on_loop(self._done, job)

    def _on_loop(self, callback: object, *args: object) -> None:
        if not self._stop.is_set():
            self.app.call_from_thread(callback, *args)  # type: ignore[arg-type]

    def show_failure(self, line: str) -> None:
        self._status(f"reading the log failed: unexpected error: {line}")

    # --- on the event loop --------------------------------------------------------------------------------

    def _skipped(self, nbytes: int) -> None:
        self._write(
            [
                f"[podtui: the first {units.size(nbytes)} are not shown here; "
                f"`podtui job {self.pod.name} {self.job.id} log` prints the whole log]"
            ]
        )

    def _add(self, text: str, dropped: int) -> None:
        from podtui.core.logs import shown

        if dropped:
            self.dropped += dropped
            lines = [self.partial] if self.partial else []
            self.partial = ""
            said = dropped_line(dropped)
            self._write([*(shown(line) for line in lines), said])
        pieces = (self.partial + text).split("\n")
        self.partial = pieces.pop()
        self._write([shown(line) for line in pieces])
        self._show_partial()
        if not self.ended:
            self._status(self._following())

    def _show_partial(self) -> None:
        """The line being written (a progress bar's last state), under the log while there is one."""
        from podtui.core.logs import shown

        line = self.query_one("#partial", Static)
        line.update(shown(self.partial) if self.partial else "")
        line.display = bool(self.partial)

    def _write(self, lines: list[str]) -> None:
        if lines:
            self.query_one(Log).write_lines(lines)
            self.lines += len(lines)

    def _following(self) -> str:
        kept = f"; the last {LINES_KEPT:,} lines kept here" if self.lines > LINES_KEPT else ""
        dropped = f"; {units.size(self.dropped)} dropped by the log's cap" if self.dropped else ""
        return f"following: {self.job.state}{dropped}{kept}"

    def _done(self, job: Job) -> None:
        from podtui.core.logs import shown

        self.ended = True
        self.job = job
        self._head()
        self.refresh_bindings()
        if self.partial:
            self._write([shown(self.partial)])
            self.partial = ""
            self._show_partial()
        code = f", exit {job.exit_code}" if job.exit_code is not None else ""
        took = job.duration_s(job.ended or 0.0)
        after = f" after {units.duration(took)}" if took is not None and job.ended is not None else ""
        note = f": {visible(job.note)}" if job.note else ""
        dropped = f"; {units.size(job.log_dropped)} dropped by the log's cap" if job.log_dropped else ""
        self._status(f"the job ended: {job.state}{code}{after}{note}{dropped}")

    # --- keys ----------------------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.dismiss()

    def action_cancel(self) -> None:
        self.needs.jobs.cancel(self.pod, self.job)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Cancel is greyed out once the job has ended."""
        if action == "cancel" and (self.ended or self.job.ended_yet):
            return None
        return True
