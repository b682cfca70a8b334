"""The main screen: every pod, live."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Input

from podtui.core.feed import PodFeed
from podtui.core.pod import Pod
from podtui.ui.pod_view import SORTABLE
from podtui.ui.widgets.account_bar import AccountBar
from podtui.ui.widgets.pod_table import PodTable
from podtui.ui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from podtui.ui.app import PodtuiApp


class PodListScreen(Screen[None]):
    DEFAULT_CSS = """
    PodListScreen PodTable { height: 1fr; }
    PodListScreen #filter { dock: bottom; display: none; margin-bottom: 1; border: tall $accent; }
    PodListScreen #filter.-active { display: block; }
    """
    BINDINGS = [
        Binding("slash", "filter", "Filter", id="filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("s", "pod('stop')", "Stop", id="stop"),
        Binding("r", "pod('resume')", "Resume", id="resume"),
        Binding("T", "pod('terminate')", "Terminate", id="terminate"),
        Binding("c", "console", "Console", id="console"),
        Binding("C", "consoles", "Consoles", show=False, id="consoles"),
        Binding("t", "transfers", "Transfers", id="transfers"),
        Binding("A", "autostop", "Autostop", show=False, id="autostop"),
        Binding("u", "add_transfer", "Transfer", show=False, id="add-transfer"),
        Binding("D", "doctor", "Doctor", id="doctor"),
        Binding("H", "app.hf_check", "Hugging Face", show=False, id="hf"),
        Binding("P", "app.gpus", "GPUs", id="gpus"),  # g is the list's jump to the top
        Binding("n", "app.create_pod", "New pod", show=False, id="create-pod"),
        Binding("o", "sort(False)", "Sort", id="sort"),
        Binding("O", "sort(True)", "Reverse sort", show=False),
        Binding("ctrl+r", "refresh", "Refresh", show=False),
    ]

    @property
    def podtui(self) -> PodtuiApp:
        return cast("PodtuiApp", self.app)

    def compose(self) -> ComposeResult:
        yield AccountBar(id="account")
        yield PodTable(id="pods")
        yield StatusLine(id="status")
        yield Input(placeholder="filter: words in name, id, status or GPU · enter keeps it · escape clears",
                    id="filter")
        yield Footer()

    @property
    def table(self) -> PodTable:
        return self.query_one(PodTable)

    def on_mount(self) -> None:
        self.table.focus()
        self.show_feed(self.podtui.feed)

    def show_feed(self, feed: PodFeed) -> None:
        if not self.query(AccountBar):  # a poll landing while the app shuts down finds no widgets left
            return
        ticker = self.podtui.ticker()  # one cost view for both lines
        self.query_one(AccountBar).show(feed, self.podtui.now(), self.podtui.demo, ticker)
        self.query_one(StatusLine).show(feed, ticker)
        if feed.snapshot is not None:
            self.table.show(feed.snapshot.pods, self.podtui.rows)

    def tick(self) -> None:
        if self.query(AccountBar):
            self.query_one(AccountBar).show(self.podtui.feed, self.podtui.now(), self.podtui.demo, self.podtui.ticker())

    @property
    def selected_pod(self) -> Pod | None:
        return self.table.selected_pod

    # --- filter --------------------------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-active")
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.table.set_query(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            if not event.value:
                event.input.remove_class("-active")
            self.table.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.remove_class("-active")
        self.table.set_query("")
        self.table.focus()

    # --- sort ----------------------------------------------------------------------------------------

    def action_sort(self, reverse_only: bool) -> None:
        t = self.table
        if reverse_only:
            t.set_sort(t.sort_key, not t.sort_reverse)
        else:
            i = SORTABLE.index(t.sort_key)
            t.set_sort(SORTABLE[(i + 1) % len(SORTABLE)], False)  # the header's ▲/▼ shows where

    def on_pod_table_sort_requested(self, event: PodTable.SortRequested) -> None:
        t = self.table
        t.set_sort(event.key, not t.sort_reverse if event.key == t.sort_key else False)

    # --- pods ----------------------------------------------------------------------------------------

    def on_pod_table_selected(self, event: PodTable.Selected) -> None:
        self.podtui.open_details(event.pod.id)

    def action_pod(self, verb: str) -> None:
        pod = self.selected_pod
        if pod is None:
            self.notify("no pod selected", severity="warning", markup=False)
            return
        self.podtui.request_action(verb, pod)

    async def action_console(self) -> None:
        pod = self.selected_pod
        if pod is None:
            self.notify("no pod selected", severity="warning", markup=False)
            return
        await self.podtui.open_console(pod)

    def action_doctor(self) -> None:
        pod = self.selected_pod
        if pod is None:
            self.notify("no pod selected", severity="warning", markup=False)
            return
        self.podtui.open_doctor(pod)

    def action_consoles(self) -> None:
        self.podtui.show_consoles()

    def action_autostop(self) -> None:
        pod = self.selected_pod
        if pod is None:
            self.notify("no pod selected", severity="warning", markup=False)
            return
        self.podtui.toggle_autostop(pod)

    def action_transfers(self) -> None:
        self.podtui.show_transfers()

    def action_add_transfer(self) -> None:
        self.podtui.ask_for_transfer()

    def action_refresh(self) -> None:
        self.podtui.poll_now()
