"""The transfers table: every transfer (or one pod's, `set_pod`) with its progress bar, rate, ETA, state and
checksum; under it the highlighted one's detail line and, on `l`, its log. Add, cancel, retry and remove act on the
highlighted transfer wherever the table is: the transfers screen lists every pod's, the pod's pane one pod's. Each
table follows the transfer desk's `changed_signal`, so any number of them stay current, and one that lists the
transfer last added from the UI selects it.

Transfers another podtui runs (sharing the history) are listed read-only: cancel, retry and remove say to act on
them there; one whose podtui cannot be looked up from here (another machine or container), which nothing would ever
clear, `d` offers to forget."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from podtui.core.visible import visible
from podtui.transfer.job import TransferJob
from podtui.ui import colours, keymap
from podtui.ui.needs import Needs, Transfers, subscribe
from podtui.ui.transfer_view import (
    BAR_WIDTH,
    COLUMNS,
    PERCENT_WIDTH,
    PROGRESS,
    STATE,
    bar,
    cells,
    detail,
    fit_columns,
    state_text,
)

# {transfers.add}: that binding's key, remapped or not (keymap.fill)
EMPTY = (
    "No transfers yet. Press {transfers.add} to add one: a file or folder to or from a pod, verified by "
    "checksum on both ends."
)
EMPTY_FOR_POD = "No transfers with this pod. Press {transfers.add} to add one, verified by checksum on both ends."


class _Drawn:
    """A cell drawn when its row is: on the cursor row in the cursor's colours, elsewhere in the theme's (the grid
    lets a cell's own colours win on the cursor row, so the bar's two parts stay apart there); a bar fills its
    column. Its text (str) is what the row says, for whoever reads the table."""

    def __init__(self, grid: TransferGrid, key: str, draw: Callable[[int, Style | None], Text], width: int) -> None:
        self._grid, self._key, self._draw, self._width = grid, key, draw, width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self._draw(options.max_width, self._grid.cursor_style(self._key))

    def __str__(self) -> str:
        return self._draw(self._width, None).plain


class TransferGrid(DataTable[object]):
    """The rows. Its columns fit its width (transfer_view.fit_columns), so it never scrolls sideways and home and
    end go to the first and last transfer, as in the pod list."""

    def __init__(self) -> None:
        # the cells' own colours win on the cursor row: the bar and the state draw themselves for it (_Drawn)
        super().__init__(cursor_type="row", zebra_stripes=True, cursor_foreground_priority="renderable")
        self.shown: dict[str, tuple[TransferJob, str | None]] = {}  # each row's transfer and who runs it
        self.fitted: tuple[tuple[int, int], ...] = ()
        self.pod_column = True

    @property
    def current_key(self) -> str | None:
        if not self.row_count:
            return None
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)

    def cursor_style(self, key: str) -> Style | None:
        """The cursor's style when the row of `key` is under it, else None."""
        if not self.show_cursor or self.current_key != key:
            return None
        return self.get_component_rich_style("datatable--cursor")

    # --- rows ----------------------------------------------------------------------------------------

    def _cells(self, job: TransferJob, runner: str | None) -> list[object]:
        every: list[object] = list(cells(job, runner))

        def draw_bar(width: int, cursor: Style | None) -> Text:
            return bar(job, colours.palette(self.app), max(1, width - PERCENT_WIDTH), cursor)

        def draw_state(width: int, cursor: Style | None) -> Text:
            return state_text(job, runner, colours.palette(self.app), cursor is not None)

        every[PROGRESS] = _Drawn(self, job.id, draw_bar, BAR_WIDTH + PERCENT_WIDTH)
        every[STATE] = _Drawn(self, job.id, draw_state, COLUMNS[STATE].most)
        return [every[i] for i, _ in self.fitted]

    def put(self, job: TransferJob, runner: str | None) -> bool:
        """Show the transfer: its row updated, or added (True)."""
        self.shown[job.id] = (job, runner)
        row = self._cells(job, runner)
        if job.id not in self.rows:
            self.add_row(*row, key=job.id)
            return True
        for (i, _), value in zip(self.fitted, row, strict=True):
            self.update_cell(job.id, str(i), value)
        return False

    def drop(self, job_id: str) -> None:
        self.shown.pop(job_id, None)
        if job_id in self.rows:
            self.remove_row(job_id)

    def drop_all(self) -> None:
        self.shown.clear()
        self.clear()

    def pick(self, job_id: str) -> None:
        if job_id in self.rows:
            self.move_cursor(row=self.get_row_index(job_id))

    # --- columns -------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.refit()

    def on_resize(self) -> None:
        self.refit()

    def refit(self) -> None:
        """The columns that fit the width now, the vertical scrollbar's room kept; every row drawn again when they
        change."""
        width = self.size.width - self.styles.scrollbar_size_vertical
        fitted = fit_columns(width, self.pod_column)
        if fitted == self.fitted:
            return
        self.fitted = fitted
        key = self.current_key
        self.clear(columns=True)
        for i, w in fitted:
            self.add_column(COLUMNS[i].title, key=str(i), width=w)
        for job, runner in self.shown.values():
            self.add_row(*self._cells(job, runner), key=job.id)
        if key is not None:
            self.pick(key)

    def show_pod_column(self, shown: bool) -> None:
        if shown != self.pod_column:
            self.pod_column = shown
            self.refit()

    # --- keys: home and end move along the rows (the columns fit: nothing to scroll sideways) -------------

    def action_scroll_home(self) -> None:
        self.action_scroll_top()

    def action_scroll_end(self) -> None:
        self.action_scroll_bottom()


class TransferTable(Vertical):
    """The grid, a note when it is empty, the highlighted transfer's detail line and its log (`l`); with `titled`,
    a title line counting the transfers by state."""

    # read when the first one is mounted, after the first frame (not in the App's CSS_PATH)
    DEFAULT_CSS = """
    TransferTable { height: 1fr; }
    TransferTable #title {
        height: 1; background: $boost; padding: 0 1; text-style: bold; text-wrap: nowrap; text-overflow: ellipsis;
    }
    TransferTable TransferGrid { height: 1fr; overflow-x: hidden; scrollbar-size-vertical: 1; }
    TransferTable #detail { height: auto; max-height: 6; padding: 0 1; color: $text-muted; }
    TransferTable #log { display: none; height: 12; max-height: 50%; border-top: solid $accent; padding: 0 1; }
    TransferTable #log.-open { display: block; }
    TransferTable #empty { padding: 1 2; display: none; height: auto; }
    TransferTable #empty.-shown { display: block; }
    """

    BINDINGS = keymap.bindings("transfer-table")

    needs = Needs[Transfers]()

    def __init__(self, pod_id: str | None = None, *, titled: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pod_id = pod_id  # None: every pod's transfers
        self.titled = titled
        self.known: dict[str, TransferJob] = {}  # every transfer heard of, any pod's

    def compose(self) -> ComposeResult:
        if self.titled:
            yield Static("Transfers", id="title", markup=False)
        grid = TransferGrid()
        grid.pod_column = self.pod_id is None
        yield grid
        yield Static("", id="empty", markup=False)
        yield Static("", id="detail", markup=False)
        yield Static("", id="log", markup=False)

    @property
    def grid(self) -> TransferGrid:
        return self.query_one(TransferGrid)

    @property
    def jobs(self) -> dict[str, TransferJob]:
        """The transfers listed, in their rows' order."""
        return {key: job for key, (job, _) in self.grid.shown.items()}

    def on_mount(self) -> None:
        desk = self.needs.transfers
        subscribe(self, desk.changed_signal, self._heard)
        for job in desk.jobs():
            self.known.setdefault(job.id, job)
        self._list()

    def _heard(self, news: TransferJob | str) -> None:
        if isinstance(news, str):
            self.forget_job(news)
        else:
            self.show_job(news)

    def _wanted(self, job: TransferJob) -> bool:
        return self.pod_id is None or job.pod_id == self.pod_id

    def _list(self) -> None:
        """Every known transfer of the pod (or every one) in the grid again; the one last added from the UI
        selected."""
        grid = self.grid
        grid.drop_all()
        grid.show_pod_column(self.pod_id is None)
        for job in self.known.values():
            if self._wanted(job):
                grid.put(job, self._runner(job))
        picked = self.needs.transfers.picked
        if picked is not None:
            grid.pick(picked)
        self._refresh_side()

    def set_pod(self, pod_id: str | None) -> None:
        """List one pod's transfers, or (None) every pod's."""
        if pod_id != self.pod_id:
            self.pod_id = pod_id
            self._list()

    # --- showing --------------------------------------------------------------------------------------

    def show_job(self, job: TransferJob) -> None:
        self.known[job.id] = job
        if not self._wanted(job):
            return
        grid = self.grid
        if grid.put(job, self._runner(job)) and job.id == self.needs.transfers.picked:
            grid.pick(job.id)
        self._refresh_side()

    def forget_job(self, job_id: str) -> None:
        """The transfer is no longer listed (removed here, or by the podtui that ran it): its row goes."""
        self.known.pop(job_id, None)
        self.grid.drop(job_id)
        self._refresh_side()

    def _refresh_side(self) -> None:
        jobs = self.jobs
        if self.titled:
            counts: dict[str, int] = {}
            for j in jobs.values():
                counts[j.state_label] = counts.get(j.state_label, 0) + 1
            summary = " · ".join(f"{n} {state}" for state, n in counts.items())
            self.query_one("#title", Static).update(f"Transfers{'  ·  ' + summary if summary else ''}")
        empty = self.query_one("#empty", Static)
        empty.update(keymap.fill(self.app, EMPTY if self.pod_id is None else EMPTY_FOR_POD))
        empty.set_class(not jobs, "-shown")
        job = self.current
        line = ""
        if job is not None:
            queue = self.needs.transfers.queue()
            line = detail(
                job,
                self._runner(job),
                queue.terminate_hold(job.id),
                queue.forgettable(job.id),
                keymap.key_for(self.app, "transfers.remove"),
                {i for i, _ in self.grid.fitted},
            )
        self.query_one("#detail", Static).update(line)
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
        key = self.grid.current_key
        return self.grid.shown[key][0] if key in self.grid.shown else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._refresh_side()

    # --- keys -----------------------------------------------------------------------------------------

    def action_add(self) -> None:
        # from a pod's pane the new transfer is shown (and selected) here; from the transfers screen, there
        self.needs.transfers.ask(then_show=self.pod_id is None)

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
