"""The Spend view: what was spent today, over 7 or 30 days, per day and by pod, GPU type or network volume, drawn as
bars with the amounts beside them; where the figures come from (RunPod's billing, or podtui's ledger alone) and how
the two compare (docs/spend.md#the-spend-view).

The report is made in a thread worker (`podtui.core.spend.gather`, with the app's last poll: the pods' names and
GPUs, and which are gone); each range's last report is kept, so switching back shows it at once while it is asked for
again. What went wrong is said in the status line, and what was shown stays; a report that arrives after the view
was left is dropped."""

from __future__ import annotations

from typing import Any, Protocol

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from podtui.core.pod import Snapshot
from podtui.core.services import Services
from podtui.core.spend import RANGES, By, SpendReport, gather
from podtui.core.visible import visible, visible_fields
from podtui.ui import keymap
from podtui.ui.needs import Needs, PodBroadcasts, Served
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.spend_bars import SpendBars
from podtui.ui.widgets.spend_days import SpendDays
from podtui.ui.worker_errors import failures_shown, in_thread

BREAKDOWNS: tuple[tuple[By, str], ...] = (("pod", "pod"), ("gpu", "GPU"), ("volume", "volume"), ("day", "day"))
SHORT_BELOW = 30  # rows: the day chart is shorter on a short terminal
HINT = (
    "{spend.today} {spend.week} {spend.month}: the range · "
    "{spend.by-pod} {spend.by-gpu} {spend.by-volume} {spend.by-day}: by"
)


class SpendNeeds(Served, PodBroadcasts, Protocol):
    """The API, the config and the clock (services), and the poll's last answer (`pod_data().feed.snapshot`: the
    pods' names and GPUs, and which pods are gone; None before the first)."""


class SpendScreen(Screen[None]):
    CSS_PATH = "spend.tcss"
    BINDINGS = keymap.bindings("spend")

    needs = Needs[SpendNeeds]()
    on_worker_state_changed = failures_shown

    def __init__(self, days: int = 1, by: By = "pod") -> None:
        super().__init__()
        self.days = days
        self.by: By = by
        self.reports: dict[int, SpendReport] = {}  # the last report of each range
        self.report: SpendReport | None = None  # the one on show
        self.loading = False

    def compose(self) -> ComposeResult:
        yield Static("", id="switches")
        yield Static("loading…", id="summary", markup=False)
        yield SpendDays(id="days")
        with VerticalScroll(id="rows"):
            yield SpendBars(id="bars")
        yield Static("", id="reconcile", markup=False)
        yield Static("", id="status", markup=False)
        yield FittedFooter()

    def on_mount(self) -> None:
        self.query_one("#days").border_title = "per day"
        self.query_one("#rows").focus()
        self.set_class(self.app.size.height < SHORT_BELOW, "-short")
        self._draw_switches()
        self._ask()

    def on_resize(self) -> None:
        self.set_class(self.app.size.height < SHORT_BELOW, "-short")

    # --- loading -----------------------------------------------------------------------------------------

    def _ask(self) -> None:
        label = dict(RANGES).get(self.days, f"{self.days} days")
        self.loading = True
        self._status(f"asking RunPod for the spend of {label}…")
        # the app and services are taken here, on the event loop: once the view is left, the worker's thread can
        # no longer find its app through the screen
        self._load(self.app, self.needs.services, self.days, self.needs.pod_data().feed.snapshot)

    @in_thread(group="spend", description="adding up the spend", exclusive=True)
    def _load(self, app: App[Any], services: Services, days: int, polled: Snapshot | None) -> None:
        made = gather(services, days, polled, ask=False)
        if app.is_running:
            app.call_from_thread(self._loaded, made)

    def show_failure(self, line: str) -> None:
        self.loading = False
        self._status(f"cannot add up the spend: {line}", True)

    def _loaded(self, made: SpendReport) -> None:
        if not self.is_attached:
            return  # the view was left meanwhile
        self.reports[made.window.days] = made
        if made.window.days != self.days:
            return  # the range was switched meanwhile: its own answer is on its way
        self.loading = False
        self._show(made)
        if made.source == "ledger":
            self._status("; ".join((made.source_why, *made.notes)), True)
        elif made.notes:
            self._status("; ".join(made.notes))
        else:
            self._status(keymap.fill(self.app, HINT))

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(visible(text))
        status.set_class(error, "-error")

    # --- drawing -----------------------------------------------------------------------------------------

    def _draw_switches(self) -> None:
        parts = ["[b]Spend[/b] "]
        for days, label in RANGES:
            on = days == self.days
            parts.append(
                f"[@click=screen.days({days})]{'[reverse] ' + label + ' [/reverse]' if on else ' ' + label + ' '}[/]"
            )
        parts.append("  by ")
        for by, label in BREAKDOWNS:
            on = by == self.by
            parts.append(
                f"[@click=screen.by('{by}')]{'[reverse] ' + label + ' [/reverse]' if on else ' ' + label + ' '}[/]"
            )
        self.query_one("#switches", Static).update("".join(parts))

    def _show(self, made: SpendReport) -> None:
        self.report = made = visible_fields(made)
        w = made.window
        span = "today" if w.days == 1 else f"the last {w.label}"
        self.query_one("#summary", Static).update(f"${made.total:,.2f} spent {span} ({w.dates}) · {made.source_line}")
        self.query_one(SpendDays).show(made.by_day)
        self._draw_rows()
        rec = made.reconciliation
        line = self.query_one("#reconcile", Static)
        if rec is None:
            line.update("ledger only: each pod's $/hr over the time podtui saw it running; no disks or volumes")
            line.set_class(False, "-differs")
        else:
            text = f"ledger vs RunPod: {rec.line()}"
            if rec.pods and not rec.unseen:
                worst = rec.pods[0]
                text += f"; most: {worst.label}, ledger ${worst.ledger:,.2f}, RunPod ${worst.billing:,.2f}"
            if not rec.agrees:
                text += "; disks and volumes billed besides"
            line.update(text)
            line.set_class(not rec.agrees, "-differs")

    def _draw_rows(self) -> None:
        made = self.report
        rows_box = self.query_one("#rows")
        rows_box.border_title = f"by {dict(BREAKDOWNS)[self.by]}"
        if made is None:
            return
        self.query_one(SpendBars).show(made.rows(self.by), made.empty_line(self.by))

    # --- actions -----------------------------------------------------------------------------------------

    def action_days(self, days: int) -> None:
        if days == self.days:
            return
        self.days = days
        self._draw_switches()
        if days in self.reports:
            self._show(self.reports[days])
        self._ask()

    def action_by(self, by: str) -> None:
        for known, _ in BREAKDOWNS:
            if known == by:
                self.by = known
        self._draw_switches()
        self._draw_rows()

    def action_today(self) -> None:
        self.action_days(1)

    def action_week(self) -> None:
        self.action_days(7)

    def action_month(self) -> None:
        self.action_days(30)

    def action_by_pod(self) -> None:
        self.action_by("pod")

    def action_by_gpu(self) -> None:
        self.action_by("gpu")

    def action_by_volume(self) -> None:
        self.action_by("volume")

    def action_by_day(self) -> None:
        self.action_by("day")

    def action_refresh(self) -> None:
        self._ask()

    def action_back(self) -> None:
        self.app.pop_screen()
