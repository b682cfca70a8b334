"""A pod's detached jobs (docs/jobs.md): a table of them (name or id, state, exit code, start, how long, what the pod
cost while it ran) with the highlighted one's command and follow-up under it. `n` starts a new job, `l` (or enter)
opens its log, `x` cancels it (asks first), ctrl+r lists them again.

The list is read over SSH by the job desk (ui/job_desk.py) when the panel comes into sight and every `job_poll_s`
while it stays there; nothing is read while it is hidden. The pane's Jobs tab and the jobs screen (below 100x30)
are both this panel."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import DataTable, Static

from podtui.core import units
from podtui.core.jobs.job import Job
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.visible import visible
from podtui.ui import colours, keymap
from podtui.ui.needs import Needs, subscribe

if TYPE_CHECKING:
    from textual.signal import Signal

    from podtui.core.jobs.job_memory import Followed
    from podtui.ui.job_view import PodJobs

STATE_ROLE = {"running": "moving", "done": "good", "failed": "bad", "cancelled": "muted", "lost": "bad"}
NARROW = 70  # below this many columns the id column is left out (the name, or the id, says which job)
KEYS_LINE = "{jobs.new} new job · {jobs.log} its log · {jobs.cancel} cancel · {jobs.refresh} list again"
EMPTY = "No jobs on this pod yet. Press {jobs.new} to start one: it runs detached, and survives podtui and SSH."


class RunsJobs(Protocol):
    """The job desk, as the panel uses it."""

    @property
    def changed_signal(self) -> Signal[PodJobs]: ...
    def listing(self, pod_id: str) -> PodJobs: ...
    def refresh(self, pod: Pod) -> None: ...
    def watch(self, pod: Pod | None) -> None: ...
    def ask_new(self, pod: Pod) -> None: ...
    def cancel(self, pod: Pod, job: Job) -> None: ...
    def open_log(self, pod: Pod, job: Job) -> None: ...
    def followed(self, pod_id: str) -> dict[str, Followed]: ...


class JobsPanelHost(Protocol):
    @property
    def services(self) -> Services: ...
    @property
    def jobs(self) -> RunsJobs: ...


class JobsPanel(Vertical):
    BINDINGS = keymap.bindings("jobs")

    needs = Needs[JobsPanelHost]()

    class Left(Message):
        """Back was pressed: whoever holds the panel decides."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pod: Pod | None = None
        self.jobs: tuple[Job, ...] = ()
        self.in_sight = False
        self._timer: Timer | None = None
        self._drawn: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        yield DataTable(id="jobs-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="jobs-detail", markup=False)
        yield Static(id="jobs-notes", markup=False)

    def on_mount(self) -> None:
        subscribe(self, self.needs.jobs.changed_signal, self._listed)
        self.set_interval(1.0, self._tick)
        self._draw()

    def on_unmount(self) -> None:
        if self.in_sight and self.pod is not None:
            self.needs.jobs.watch(None)

    @property
    def table(self) -> DataTable[Text | str]:
        return self.query_one("#jobs-table", DataTable)

    def on_resize(self) -> None:
        self._draw(force=True)

    # --- which pod, and whether it is on show ----------------------------------------------------------

    def show_pod(self, pod: Pod | None) -> None:
        """Show this pod's jobs (the same pod again, as polled: its cost and state redrawn)."""
        moved = (pod.id if pod else None) != (self.pod.id if self.pod else None)
        self.pod = pod
        if moved:
            self.jobs = ()
            self._look()
        if self.is_mounted:
            self._draw()

    def set_in_sight(self, in_sight: bool) -> None:
        """On show (the tab is active and the pane visible, or the jobs screen is up) or not: only on show is the
        list read, now and every job_poll_s."""
        if in_sight == self.in_sight:
            return
        self.in_sight = in_sight
        self._look()

    def _look(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        desk = self.needs.jobs
        if not self.in_sight or self.pod is None:
            desk.watch(None)
            return
        desk.watch(self.pod)
        listed = desk.listing(self.pod.id)
        self.jobs = listed.jobs
        desk.refresh(self.pod)
        every = self.needs.services.config.job_poll_s
        self._timer = self.set_interval(every, self.action_refresh)

    def _listed(self, listed: PodJobs) -> None:
        if self.pod is not None and listed.pod_id == self.pod.id:
            self.jobs = listed.jobs
            self._draw()

    def _tick(self) -> None:
        """A running job's duration and cost move every second (redrawn only where a job runs)."""
        if self.in_sight and any(j.state == "running" for j in self.jobs):
            self._draw()

    # --- drawing -----------------------------------------------------------------------------------------

    def _draw(self, force: bool = False) -> None:
        table = self.table
        wide = self.size.width >= NARROW
        columns: tuple[tuple[str, str], ...] = (("ID", "id"),) if wide else ()
        columns += (("Job", "name"), ("State", "state"), ("Exit", "exit"), ("Started UTC", "started"))
        columns += (("Took", "took"), ("Cost", "cost"))
        if force or tuple(str(c.key.value) for c in table.columns.values()) != tuple(k for _, k in columns):
            table.clear(columns=True)
            for label, key in columns:
                table.add_column(label, key=key)
            self._drawn = ()
        pod_now = self.needs.jobs.listing(self.pod.id).pod_time() if self.pod is not None else time.time()
        rows = [self._cells(job, wide, pod_now) for job in self.jobs]
        drawn = tuple((job.id, tuple(str(c) for c in row)) for job, row in zip(self.jobs, rows, strict=True))
        if drawn != self._drawn:
            key_before = self._current_id()
            row_before = table.cursor_row
            table.clear()
            for job, row in zip(self.jobs, rows, strict=True):
                table.add_row(*row, key=job.id)
            self._drawn = drawn
            if self.jobs:
                ids = [j.id for j in self.jobs]
                at = ids.index(key_before) if key_before in ids else min(max(row_before, 0), len(ids) - 1)
                table.move_cursor(row=at)
        self._notes()

    def _cells(self, job: Job, wide: bool, pod_now: float) -> tuple[Text | str, ...]:
        st = colours.palette(self.app).style
        took = job.duration_s(pod_now)  # the records are by the pod's clock
        per_hr = self.pod.cost_per_hr if self.pod is not None else None
        cost = units.money(per_hr * took / 3600.0) if per_hr is not None and took is not None else "?"
        started = time.strftime("%m-%d %H:%M", time.gmtime(job.started)) if job.started is not None else "—"
        cells: tuple[Text | str, ...] = (
            Text(visible(job.name or "—"), st("bold") if job.name else st("faint")),
            Text(job.state, st(STATE_ROLE.get(job.state, "odd"))),
            str(job.exit_code) if job.exit_code is not None else "",
            started,
            units.duration(took) if took is not None else "—",
            Text(cost, st("muted") if job.state != "running" else st("")),
        )
        return ((Text(visible(job.id), st("faint")),) if wide else ()) + cells

    def _current_id(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    def selected(self) -> Job | None:
        key = self._current_id()
        return next((j for j in self.jobs if j.id == key), None)

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._notes()

    def _notes(self) -> None:
        detail = self.query_one("#jobs-detail", Static)
        notes = self.query_one("#jobs-notes", Static)
        if self.pod is None:
            detail.update("")
            notes.update("no pod selected")
            return
        listed = self.needs.jobs.listing(self.pod.id)
        job = self.selected()
        detail.update(self._detail(job) if job is not None else "")
        lines: list[str] = []
        if listed.loading:
            lines.append("listing the jobs on the pod…")
        elif listed.error:
            lines.append(visible(listed.error))
        elif listed.at is not None and not self.jobs:
            lines.append(keymap.fill(self.app, EMPTY))
        lines += [visible(p) for p in listed.problems[:3]]
        if len(listed.problems) > 3:
            lines.append(f"and {len(listed.problems) - 3} more records that could not be read")
        if self.jobs or listed.at is not None:
            lines.append(keymap.fill(self.app, KEYS_LINE))
        notes.update("\n".join(lines))

    def _detail(self, job: Job) -> Text:
        st = colours.palette(self.app).style
        out = Text()
        out.append("$ ", st("muted"))
        out.append(visible(job.command), st("command"))
        out.append(f"  in {visible(job.workdir)}", st("muted"))
        after = []
        if job.pulls:
            after.append("pull " + ", ".join(visible(p.remote) for p in job.pulls))
        if job.then is not None:
            after.append(f"then {job.then}")
        if after:
            out.append("\nwhen it ends: " + "; ".join(after), st("muted"))
        following = self.needs.jobs.followed(job.pod_id).get(job.id)
        if following is not None and following.then_done:
            out.append(f" ({visible(following.then_done)})", st("warn"))
        if job.note:
            out.append(f"\n{visible(job.note)}", st("warn"))
        if job.log_dropped:
            out.append(f"\nits log passed the cap: {units.size(job.log_dropped)} dropped from the middle", st("muted"))
        return out

    # --- keys ----------------------------------------------------------------------------------------------

    def action_new(self) -> None:
        if self.pod is not None:
            self.needs.jobs.ask_new(self.pod)

    def action_log(self) -> None:
        job = self.selected()
        if self.pod is not None and job is not None:
            self.needs.jobs.open_log(self.pod, job)

    def action_cancel(self) -> None:
        job = self.selected()
        if self.pod is not None and job is not None:
            self.needs.jobs.cancel(self.pod, job)

    def action_refresh(self) -> None:
        if self.pod is not None and self.in_sight:
            self.needs.jobs.refresh(self.pod)

    def action_back(self) -> None:
        self.post_message(self.Left())

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_log()
