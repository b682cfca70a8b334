"""The main screen: every pod, live."""

from __future__ import annotations

from typing import Protocol

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Input

from podtui.core import actions
from podtui.core.pod import Pod
from podtui.ui import keymap
from podtui.ui.needs import HasNavigator, HasPodActions, Needs, PodBroadcasts, PodData, Transfers, subscribe
from podtui.ui.pod_view import SORTABLE
from podtui.ui.widgets.account_bar import AccountBar
from podtui.ui.widgets.pod_table import PodTable
from podtui.ui.widgets.status_line import StatusLine


class PodListNeeds(PodBroadcasts, HasPodActions, HasNavigator, Transfers, Protocol):
    def poll_now(self) -> None: ...


NEEDS_A_POD = frozenset({"pod", "console", "doctor", "autostop"})  # actions on the pod under the cursor


class PodListScreen(Screen[None]):
    CSS_PATH = "pod_list.tcss"
    BINDINGS = keymap.bindings("pods")

    needs = Needs[PodListNeeds]()

    def compose(self) -> ComposeResult:
        yield AccountBar(id="account")
        yield PodTable(id="pods")
        yield StatusLine(id="status")
        yield Input(
            placeholder=keymap.fill(
                self.app, "filter: words in name, id, status or GPU · enter keeps it · {pods.clear-filter} clears"
            ),
            id="filter",
        )
        yield Footer()

    @property
    def table(self) -> PodTable:
        return self.query_one(PodTable)

    def on_mount(self) -> None:
        self.table.focus()
        self._live_verbs: frozenset[str] | None = None
        self.watch(self.table, "cursor_row", self._cursor_moved, init=False)
        self.show_feed(self.needs.pod_data())
        subscribe(self, self.needs.pods_polled, self.show_feed)
        subscribe(self, self.needs.ticked, self.tick)

    def show_feed(self, data: PodData) -> None:
        if not self.query(AccountBar):  # a poll landing while the app shuts down finds no widgets left
            return
        feed = data.feed
        self.query_one(AccountBar).show(feed, data.now, data.demo, data.ticker)  # one cost view for both lines
        self.query_one(StatusLine).show(feed, data.ticker)
        if feed.snapshot is not None:
            self.table.show(feed.snapshot.pods, data.rows)
            self._cursor_moved()  # the selected pod's `actions` may have changed

    def tick(self, data: PodData) -> None:
        if self.is_active and self.query(AccountBar):  # only the screen on top moves with the clock
            self.query_one(AccountBar).show(data.feed, data.now, data.demo, data.ticker)

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
        self.needs.navigator.open_details(event.pod.id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The selected pod's actions are greyed out in the footer, and their keys do nothing, without a pod."""
        if action in NEEDS_A_POD and not (self.query(PodTable) and self.selected_pod is not None):
            return None
        pod = self.selected_pod
        if action == "pod" and parameters and pod is not None and not actions.offered(str(parameters[0]), pod):
            return None  # RunPod does not offer it for this pod now (its `actions`): greyed out
        return True

    def _cursor_moved(self, _row: int = 0) -> None:
        """Another pod, perhaps other actions: the footer is redrawn when the live verbs change."""
        pod = self.selected_pod
        live = frozenset(v for v in actions.VERBS if pod is not None and actions.offered(v, pod))
        if live != self._live_verbs:
            self._live_verbs = live
            self.refresh_bindings()

    def action_pod(self, verb: str) -> None:
        pod = self.selected_pod
        if pod is None:  # not reached: check_action disables these keys without a pod
            return
        self.needs.pod_actions.request(verb, pod)

    async def action_console(self) -> None:
        pod = self.selected_pod
        if pod is None:  # not reached: check_action disables these keys without a pod
            return
        await self.needs.navigator.open_console(pod)

    def action_doctor(self) -> None:
        pod = self.selected_pod
        if pod is None:  # not reached: check_action disables these keys without a pod
            return
        self.needs.navigator.open_doctor(pod)

    def action_consoles(self) -> None:
        self.needs.navigator.show_consoles()

    def action_autostop(self) -> None:
        pod = self.selected_pod
        if pod is None:  # not reached: check_action disables these keys without a pod
            return
        self.needs.pod_actions.toggle_autostop(pod)

    def action_transfers(self) -> None:
        self.needs.transfers.show()

    def action_add_transfer(self) -> None:
        self.needs.transfers.ask()

    def action_hf_check(self) -> None:
        self.needs.navigator.open_hf_check()

    def action_gpus(self) -> None:
        self.needs.navigator.open_gpus()

    def action_create_pod(self) -> None:
        self.needs.navigator.open_create_pod()

    def action_refresh(self) -> None:
        self.needs.poll_now()
