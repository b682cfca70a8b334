"""The transfer pane: every transfer with its progress bar, rate, ETA, state and checksum; add, cancel, retry,
remove, and the log of the highlighted one. Transfers another podtui runs (sharing the history) are listed
read-only: cancel, retry and remove say to act on them there; one whose podtui cannot be looked up from here
(another machine or container), which nothing would ever clear, `d` offers to forget."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from podtui.core.visible import visible
from podtui.transfer.job import TransferJob
from podtui.ui import colours, keymap
from podtui.ui.needs import Needs, Transfers
from podtui.ui.transfer_view import COLUMNS, cells, detail

# {transfers.add}: that binding's key, remapped or not (keymap.fill)
EMPTY = (
    "No transfers yet. Press {transfers.add} to add one: a file or folder to or from a pod, verified by "
    "checksum on both ends."
)


class TransfersScreen(Screen[None]):
    CSS_PATH = "transfers.tcss"
    BINDINGS = keymap.bindings("transfers")

    def __init__(self) -> None:
        super().__init__()
        self.jobs: dict[str, TransferJob] = {}

    needs = Needs[Transfers]()

    def compose(self) -> ComposeResult:
        yield Static("Transfers", id="title")
        table: DataTable[object] = DataTable(cursor_type="row", zebra_stripes=True)
        for i, (name, width) in enumerate(COLUMNS):
            table.add_column(name, key=str(i), width=width)
        yield table
        yield Static(keymap.fill(self.app, EMPTY), id="empty", markup=False)
        yield Static("", id="detail", markup=False)
        yield Static("", id="log", markup=False)
        yield Footer()

    @property
    def table(self) -> DataTable[object]:
        return self.query_one(DataTable)

    def on_mount(self) -> None:
        self.table.focus()
        self.app.theme_changed_signal.subscribe(self, self._recolour)
        jobs = {**{j.id: j for j in self.needs.transfers.queue().jobs()}, **self.jobs}
        for job in jobs.values():
            self.show_job(job)
        self._refresh_side()

    # --- showing --------------------------------------------------------------------------------------

    def _recolour(self, _theme: object) -> None:
        """A new theme: every row again, its states and bars in the theme's colours."""
        for job in list(self.jobs.values()):
            self.show_job(job)

    def show_job(self, job: TransferJob) -> None:
        self.jobs[job.id] = job
        tables = self.query(DataTable)
        if not tables:  # not composed yet: on_mount shows what has arrived by then
            return
        table = tables.first()
        row = cells(job, self._runner(job), colours.palette(self.app))
        if job.id in table.rows:
            for i, value in enumerate(row):
                table.update_cell(job.id, str(i), value, update_width=COLUMNS[i][1] is None)
        else:
            table.add_row(*row, key=job.id)
        self._refresh_side()

    def forget_job(self, job_id: str) -> None:
        """The transfer is no longer listed (removed here, or by the podtui that ran it): its row goes."""
        self.jobs.pop(job_id, None)
        tables = self.query(DataTable)
        if not tables:
            return
        table = tables.first()
        if job_id in table.rows:
            table.remove_row(job_id)
        self._refresh_side()

    def _refresh_side(self) -> None:
        counts: dict[str, int] = {}
        for j in self.jobs.values():
            counts[j.state_label] = counts.get(j.state_label, 0) + 1
        summary = " · ".join(f"{n} {state}" for state, n in counts.items())
        self.query_one("#title", Static).update(f"Transfers{'  ·  ' + summary if summary else ''}")
        job = self.current
        self.query_one("#empty").set_class(not self.jobs, "-shown")
        queue = self.needs.transfers.queue()
        self.query_one("#detail", Static).update(
            detail(
                job,
                self._runner(job),
                queue.terminate_hold(job.id),
                queue.forgettable(job.id),
                keymap.key_for(self.app, "transfers.remove"),
            )
            if job
            else ""
        )
        log = self.query_one("#log", Static)
        if log.has_class("-open"):
            log.update("\n".join(visible(line) for line in job.log[-10:]) if job else "")

    def _runner(self, job: TransferJob) -> str | None:
        """Who runs the job when another podtui does; None when this one does."""
        return self.needs.transfers.queue().foreign(job.id)

    def _elsewhere(self, job: TransferJob | None) -> bool:
        runner = self._runner(job) if job is not None else None
        if runner is not None:
            assert job is not None
            also = ""
            if self.needs.transfers.queue().forgettable(job.id):
                also = f" (if it has stopped, {keymap.key_for(self.app, 'transfers.remove')} forgets it here)"
            self.notify(
                visible(f"this transfer is run by {runner}: cancel, retry or remove it there{also}"),
                severity="warning",
                markup=False,
            )
        return runner is not None

    @property
    def current(self) -> TransferJob | None:
        table = self.table
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.jobs.get(str(key))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._refresh_side()

    # --- keys -----------------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_add(self) -> None:
        self.needs.transfers.ask()

    def action_cancel(self) -> None:
        job = self.current
        if self._elsewhere(job):
            return
        if job is None or not self.needs.transfers.queue().cancel(job.id):
            self.notify("nothing to cancel here: the transfer has finished", severity="warning", markup=False)

    def action_retry(self) -> None:
        job = self.current
        if self._elsewhere(job):
            return
        if job is None or not self.needs.transfers.queue().retry(job.id):
            self.notify("only a failed or cancelled transfer can be retried", severity="warning", markup=False)

    def action_remove(self) -> None:
        job = self.current
        if job is not None and self.needs.transfers.queue().forgettable(job.id):
            self._ask_to_forget(job)
            return
        if self._elsewhere(job):
            return
        if job is None or not self.needs.transfers.queue().remove(job.id):
            self.notify(
                "only a finished transfer can be removed from the list (its files stay)",
                severity="warning",
                markup=False,
            )
            return
        self.forget_job(job.id)

    def _ask_to_forget(self, job: TransferJob) -> None:
        from podtui.ui.screens.confirm import ConfirmScreen

        queue = self.needs.transfers.queue()
        runner = queue.foreign(job.id) or "another podtui"
        body = visible(
            f"{job.label} ({job.pod_name or job.pod_id}) is run by {runner}. Whether that podtui still runs "
            "cannot be told from here. Forgetting takes the transfer off this list and out of the shared "
            "history only: nothing is stopped, cleaned or deleted, and if that podtui still runs, it goes "
            "on with the transfer (and it is listed again when that podtui next writes it)."
        )

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            if queue.forget(job.id):
                self.forget_job(job.id)
            else:  # adopted, or no longer another machine's, meanwhile
                self.notify("that transfer can no longer be forgotten from here", severity="warning", markup=False)

        self.needs.open_screen(
            ConfirmScreen("Forget this transfer?", body, "Forget"), ("forget-transfer", job.id), answered
        )

    def action_log(self) -> None:
        self.query_one("#log").toggle_class("-open")
        self._refresh_side()
