"""The main screen: every pod, live, and the selected pod's pane (its details, console and transfers) under the
list or beside it; in a terminal too small for both, the list alone, one screen at a time
(docs/architecture.md#panes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from textual import events
from textual.app import ComposeResult
from textual.containers import Container
from textual.geometry import Size
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Static  # loaded by textual.app itself: the widget, not the module, is deferred

from podtui.core import actions
from podtui.core.pod import Pod
from podtui.ui import keymap
from podtui.ui.needs import (
    ActsOnPods,
    HasNavigator,
    HasPodActions,
    HasSshOut,
    Needs,
    OpensScreens,
    PodBroadcasts,
    PodData,
    Served,
    Transfers,
    in_sight,
    subscribe,
)
from podtui.ui.pod_view import PICKED_MARK, SORTABLE
from podtui.ui.widgets.account_bar import AccountBar
from podtui.ui.widgets.pod_pane import PodPane
from podtui.ui.widgets.pod_table import PodTable
from podtui.ui.widgets.prompt_line import PromptLine
from podtui.ui.widgets.status_line import StatusLine
from podtui.ui.widgets.transfer_strip import TransferStrip
from podtui.ui.worker_errors import in_thread

if TYPE_CHECKING:
    from podtui.console.link import ConsoleLink
    from podtui.console.registry import ConsoleRegistry
    from podtui.console.widget import TerminalView


class ActsOnMarkedPods(ActsOnPods, Protocol):
    def request_bulk(
        self,
        verb: str,
        pods: Sequence[Pod],
        on_sent: Callable[[Sequence[Pod]], None] | None = None,
        hidden: int = 0,
    ) -> None: ...


class EditsPods(OpensScreens, Protocol):
    def open_edit(self, pod: Pod) -> None: ...  # the pod's edit form
    def open_volumes(self) -> None: ...
    def open_spend(self) -> None: ...
    def open_templates(self) -> None: ...
    def open_recreate(self) -> None: ...


class PodListNeeds(PodBroadcasts, HasPodActions, HasNavigator, HasSshOut, Transfers, Served, Protocol):
    def poll_now(self) -> None: ...
    @property
    def consoles(self) -> ConsoleRegistry: ...
    @property
    def pod_actions(self) -> ActsOnMarkedPods: ...
    @property
    def navigator(self) -> EditsPods: ...


# the actions on the pod under the cursor
NEEDS_A_POD = frozenset(
    {"pod", "console", "doctor", "autostop", "copy", "logs", "services", "ssh", "editor", "edit", "mark"}
)
BULK_VERBS = ("stop", "terminate")  # with pods marked, these keys act on the marked pods
PANES_MIN = Size(100, 30)  # below this the pane leaves too little room for the list or a console
BESIDE_MIN_WIDTH = 160  # from here the pane sits beside the list (each still has 80 columns or so)


class PodListScreen(Screen[None]):
    CSS_PATH = "pod_list.tcss"
    BINDINGS = keymap.bindings("pods")

    needs = Needs[PodListNeeds]()

    def compose(self) -> ComposeResult:
        # the layout's classes before the children mount, so they are styled once (not again in on_mount)
        self._layout(self.app.size, update=False)
        yield AccountBar(id="account")
        with Container(id="body"):
            yield PodTable(id="pods")
            yield PodPane(
                lambda: self.needs.consoles.links,
                lambda: self.needs.services,
                id="pane",
            )
        yield StatusLine(id="status")
        yield TransferStrip(id="strip")

    def first_frame_out(self) -> None:
        """After the first frame (the App calls it): the footer, a widget per key, and the pane's tabs."""
        from podtui.ui.widgets.fitted_footer import FittedFooter

        if not self.query(FittedFooter):
            self.mount(FittedFooter())
        self.call_later(self.pane.fill)

    @property
    def table(self) -> PodTable:
        return self.query_one(PodTable)

    @property
    def pane(self) -> PodPane:
        return self.query_one(PodPane)

    def on_mount(self) -> None:
        self.table.focus()
        self._live_verbs: frozenset[str] | None = None
        self._data = self.needs.pod_data()
        self.watch(self.table, "cursor_row", self._cursor_moved, init=False)
        self.show_feed(self._data)
        subscribe(self, self.needs.pods_polled, self.show_feed)
        subscribe(self, self.needs.ticked, self.tick)

    def show_feed(self, data: PodData) -> None:
        if not self.query(AccountBar):  # a poll landing while the app shuts down finds no widgets left
            return
        self._data = data
        feed = data.feed
        # one cost view for both lines
        self.query_one(AccountBar).show(feed, data.now, data.demo, data.ticker, paused=data.paused)
        self.query_one(StatusLine).show(feed, data.ticker)
        if feed.snapshot is not None:
            self.table.set_marks(data.consoles, data.autostop)
            self.table.show(feed.snapshot.pods, data.rows)
            self._cursor_moved()  # the selected pod's `actions` may have changed
            # An unreadable record is skipped from the answer: its pod may still be there (docs/architecture.md#panes)
            if not feed.snapshot.skipped_records:
                for link in self.pane.forget_pods({p.id for p in feed.snapshot.pods}):
                    self.notify(
                        f"{link.label} is no longer on the account: its console is on the consoles' screen "
                        f"({keymap.key_for(self.app, 'pods.consoles')}), to read or save",
                        severity="warning",
                        markup=False,
                    )

    def tick(self, data: PodData) -> None:
        """Every second while the list is in sight, under a question too: the money moves from the last data
        while polls wait, and the ticker says so (docs/architecture.md#panes)."""
        if in_sight(self) and self.query(AccountBar):
            self._data = data
            self.query_one(AccountBar).show(data.feed, data.now, data.demo, data.ticker, paused=data.paused)
            self.table.set_marks(data.consoles, data.autostop)  # a console opened, autostop switched on

    async def on_screen_suspend(self) -> None:
        """A question opened over it: the ticker says paused at once, not at the next second's tick. A screen
        over it (the consoles' screen) draws the pane's console there: the pane lets go of it meanwhile."""
        self.tick(self.needs.pod_data())
        if not isinstance(self.app.screen, ModalScreen) and self.query(PodPane):
            await self.pane.release_console()
            self.pane.set_in_sight(False)

    async def on_screen_resume(self) -> None:
        self.tick(self.needs.pod_data())
        if self.query(PodPane):
            await self.pane.show_console()
            self._pane_in_sight()

    def _unzoom_list(self) -> None:
        self.remove_class("-zoom-list")
        self._pane_in_sight()

    def _pane_in_sight(self) -> None:
        """Tell the pane whether it is shown: its Logs tab streams only then."""
        if self.query(PodPane):
            self.pane.set_in_sight(self.panes_on and not self.has_class("-zoom-list"))

    # --- panes ---------------------------------------------------------------------------------------

    @property
    def panes_on(self) -> bool:
        """Whether the terminal is big enough for the list and the selected pod's pane together."""
        return self.has_class("-panes")

    def on_resize(self, event: events.Resize) -> None:
        self._layout(event.size)

    def _layout(self, size: Size, update: bool = True) -> None:
        panes = size.width >= PANES_MIN.width and size.height >= PANES_MIN.height
        self.set_class(panes, "-panes", update=update)
        self.set_class(panes and size.width >= BESIDE_MIN_WIDTH, "-beside", update=update)
        if not panes and update:
            self.remove_class("-zoom-pane", "-zoom-list")
            if self.focused is not None and self.pane in self.focused.ancestors:
                self.table.focus()
        if update:
            self._pane_in_sight()

    def _follow(self) -> None:
        """The pane shows the pod under the cursor (and the last data about it)."""
        pod = self.selected_pod
        self.call_later(self.pane.follow, pod.id if pod is not None else None, self._data.feed, self._data.now)

    def action_zoom(self) -> None:
        if not self.panes_on:
            self.notify(
                f"the panes need a terminal of {PANES_MIN.width}x{PANES_MIN.height} at least; "
                "here each opens on a screen of its own",
                markup=False,
            )
            return
        if self.has_class("-zoom-pane") or self.has_class("-zoom-list"):
            self.remove_class("-zoom-pane", "-zoom-list")
        else:
            focused = self.focused
            in_pane = focused is not None and self.pane in focused.ancestors
            self.add_class("-zoom-pane" if in_pane else "-zoom-list")
        self._pane_in_sight()

    async def open_console_here(self, pod: Pod, link_for: Callable[[], ConsoleLink]) -> TerminalView | None:
        """`c` with the panes on: the pod's console in the pane (the one already open, a fresh shell in it if its
        shell ended, else a new one), in sight and given the keys."""
        self._unzoom_list()  # a console typed into out of sight is typed blind
        pane = self.pane
        await pane.follow(pod.id, self._data.feed, self._data.now)  # `j c` in one read: the pane is on this pod now
        if pane.has_console(pod.id):
            link = pane.links[pod.id]
            if link.state == "closed":  # its shell ended (exit): a fresh one in the same tab
                link.reconnect_now()
            pane.focus_console()
            return pane.console_view()
        return await pane.open_console(pod.id, link_for())

    def on_terminal_view_released(self, message: object) -> None:
        """The release key in the pane's console: podtui's keys work again, on the pane's tabs."""
        self.pane.tabs.query_one("Tabs").focus()

    def on_terminal_view_paste_needs_confirmation(self, message: TerminalView.PasteNeedsConfirmation) -> None:
        from podtui.ui.console_questions import ask_to_paste  # loaded with the first paste

        ask_to_paste(self.needs, message)

    def action_close_console(self) -> None:
        from podtui.ui.console_questions import close_asking  # loaded when first asked

        pod = self.selected_pod
        pane = self.pane
        if pod is None or not pane.has_console(pod.id):  # not reached: check_action disables the key then
            return
        pod_id = pod.id
        close_asking(self.needs, pane.links[pod_id], lambda: self._close_console(pod_id), self.call_later)

    async def _close_console(self, pod_id: str) -> None:
        link = self.pane.take_console(pod_id)
        if link is not None:
            self.needs.consoles.forget(link)
            self._end_shells([link])
        await self.pane.show_console()

    @in_thread(group="console-close", description="closing the console")
    def _end_shells(self, links: list[ConsoleLink]) -> None:
        for link in links:
            link.close()

    @property
    def selected_pod(self) -> Pod | None:
        return self.table.selected_pod

    # --- filter --------------------------------------------------------------------------------------

    async def action_filter(self) -> None:
        box = await self._filter_box()
        box.add_class("-active")
        # at once, not queued behind them: the letters typed right after `/` (tmux sends them together) filter
        self.set_focus(box)

    async def _filter_box(self) -> Input:
        """The filter's line, made on the first `/` (the first frame does without it)."""
        for box in self.query("#filter").results(Input):
            return box
        box = PromptLine(
            lambda: self.table,
            back=("pods.clear-filter", self.action_clear_filter),
            placeholder=keymap.fill(
                self.app, "filter: words in name, id, status or GPU · enter keeps it · {pods.clear-filter} clears"
            ),
            id="filter",
        )
        await self.mount(box)
        return box

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.table.set_query(event.value)
            self._show_marks()  # marked pods may have come into view or gone out of it

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            if not event.value:
                event.input.remove_class("-active")
            self.table.focus()

    def action_clear_filter(self) -> None:
        """escape: the marks first, when there are any; then the filter."""
        if self.table.picked:
            n = len(self.table.picked)
            self.table.set_picked(())
            self._cursor_moved()
            self.notify(f"{n} mark{'s' if n != 1 else ''} cleared", timeout=3, markup=False)
            return
        for box in self.query("#filter").results(Input):
            box.value = ""
            box.remove_class("-active")
        self.table.set_query("")
        self._show_marks()
        self.set_focus(self.table)  # at once: a key typed right after escape acts on the list (PromptLine)

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
        if self.panes_on:  # the pane already shows it: its Details, to read and scroll
            self._unzoom_list()
            self.pane.show_tab("details")
            self.pane.query_one("#pane-details VerticalScroll").focus()
            return
        self.needs.navigator.open_details(event.pod.id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The selected pod's actions are greyed out in the footer, and their keys do nothing, without a pod."""
        if action in NEEDS_A_POD and not (self.query(PodTable) and self.selected_pod is not None):
            return None
        if action == "close_console":
            pod = self.selected_pod
            return (self.query(PodPane) and pod is not None and self.pane.has_console(pod.id)) or None
        pod = self.selected_pod
        if action == "pod" and parameters and self.table.picked and parameters[0] in BULK_VERBS:
            return True  # on the marked pods: the dialog says which of them it applies to
        if action == "pod" and parameters and pod is not None and not actions.offered(str(parameters[0]), pod):
            return None  # RunPod does not offer it for this pod now (its `actions`): greyed out
        return True

    def _cursor_moved(self, _row: int = 0) -> None:
        """Another pod, perhaps other actions: the footer is redrawn when the live verbs change."""
        pod = self.selected_pod
        live: frozenset[str] = frozenset(v for v in actions.VERBS if pod is not None and actions.offered(v, pod))
        if self.table.picked:
            live |= {f"marked-{v}" for v in BULK_VERBS}
        if live != self._live_verbs:
            self._live_verbs = live
            self.refresh_bindings()
        self._show_marks()
        self._follow()

    def action_pod(self, verb: str) -> None:
        table = self.table
        if table.picked and verb in BULK_VERBS:
            # only what the user sees is acted on: marked pods the filter hides are left out, and said to be
            pods, hidden = table.picked_shown(), table.picked_hidden
            if not pods:
                self.notify(
                    keymap.fill(
                        self.app,
                        f"every marked pod ({hidden}) is hidden by the filter: nothing to {verb}; "
                        "change the filter ({pods.filter}) to see them",
                    ),
                    severity="warning",
                    markup=False,
                )
                return
            self.needs.pod_actions.request_bulk(verb, pods, on_sent=self._unmark, hidden=hidden)
            return
        pod = self.selected_pod
        if pod is None:  # not reached: check_action disables these keys without a pod
            return
        self.needs.pod_actions.request(verb, pod)

    def _unmark(self, pods: Sequence[Pod]) -> None:
        """The pods the dialog listed are unmarked; those the filter hid keep their marks."""
        if self.query(PodTable):
            self.table.set_picked(self.table.picked - {p.id for p in pods})
            self._cursor_moved()

    def _show_marks(self) -> None:
        """A line over the status line while pods are marked: how many, how many of them the filter hides (a stop
        or terminate leaves those out), and the keys that act on them."""
        table = self.table
        n, hidden = len(table.picked), table.picked_hidden
        line = next(iter(self.query("#marked").results(Static)), None)
        if not n:
            if line is not None:
                line.display = False
            return
        text = f"{PICKED_MARK} {n} marked" + (f" ({hidden} hidden by the filter, left out)" if hidden else "")
        text += keymap.fill(self.app, " · {pods.stop} stop · {pods.terminate} terminate · {pods.clear-filter} unmark")
        if line is None:
            self.mount(Static(text, id="marked", markup=False), before=self.query_one(StatusLine))
            return
        if str(line.content) != text:
            line.update(text)
        line.display = True

    # --- marks: several pods at once -----------------------------------------------------------------

    def action_mark(self) -> None:
        """space: mark or unmark the highlighted pod, and move on to the next (as file managers do)."""
        pod = self.selected_pod
        if pod is None:  # not reached: check_action disables the key without a pod
            return
        self.table.set_picked(self.table.picked ^ {pod.id})
        self.table.action_cursor(1)
        self._cursor_moved()

    def action_mark_all(self) -> None:
        """a: every pod the filter shows, or none when they all are marked already."""
        shown = set(self.table.visible_ids)
        if shown and shown <= self.table.picked:
            self.table.set_picked(self.table.picked - shown)
        else:
            self.table.set_picked(self.table.picked | shown)
        self._cursor_moved()

    def action_edit(self) -> None:
        pod = self.selected_pod
        if pod is None:  # not reached: check_action disables the key without a pod
            return
        self.needs.navigator.open_edit(pod)

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

    async def action_logs(self) -> None:
        await self._in_pane_or_screen("logs", self.needs.navigator.open_logs)

    async def action_services(self) -> None:
        await self._in_pane_or_screen("services", self.needs.navigator.open_services)

    async def _in_pane_or_screen(self, tab: str, open_screen: Callable[[Pod], None]) -> None:
        """The selected pod's logs or services: the pane's tab with the panes on, else a screen of their own."""
        pod = self.selected_pod
        if pod is None:  # not reached: check_action disables these keys without a pod
            return
        if not self.panes_on:
            open_screen(pod)
            return
        self._unzoom_list()
        await self.pane.follow(pod.id, self._data.feed, self._data.now)
        if tab == "logs":
            self.pane.show_logs()
        else:
            self.pane.show_services()

    def action_ssh(self) -> None:
        pod = self.selected_pod
        if pod is not None:  # None: not reached, check_action disables these keys without a pod
            self.needs.ssh_out.ssh(pod)

    def action_editor(self) -> None:
        pod = self.selected_pod
        if pod is not None:  # None: not reached, check_action disables these keys without a pod
            self.needs.ssh_out.editor(pod)

    def on_log_panel_left(self, _message: object) -> None:
        """Back from the pane's logs: to the list."""
        self.table.focus()

    def on_services_panel_left(self, _message: object) -> None:
        """Back from the pane's services: to the list."""
        self.table.focus()

    def action_copy(self) -> None:
        pod = self.selected_pod
        if pod is None:  # not reached: check_action disables these keys without a pod
            return
        self.needs.navigator.open_copy(pod)

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

    def action_volumes(self) -> None:
        self.needs.navigator.open_volumes()

    def action_spend(self) -> None:
        self.needs.navigator.open_spend()

    def action_templates(self) -> None:
        self.needs.navigator.open_templates()

    def action_recreate(self) -> None:
        self.needs.navigator.open_recreate()

    def action_create_pod(self) -> None:
        self.needs.navigator.open_create_pod()

    def action_refresh(self) -> None:
        self.needs.poll_now()
