"""The main screen's pane: the selected pod's Details, Console, Logs, Services, Transfers, Jobs and Sync in tabs,
following the selection while the list and the ticker stay live beside it (docs/architecture.md#panes).

A console opened here belongs to the pane: its shell goes on while another pod is selected (its view is unmounted,
the link keeps the screen and scrollback) and it is shown again when its pod is selected again."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from textual.containers import Vertical
from textual.widgets import Static

from podtui.core.feed import PodFeed
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.ui import keymap
from podtui.ui.worker_errors import in_thread

if TYPE_CHECKING:  # the tabs and the console's code (paramiko under it) load after the first frame
    from textual.widgets import TabbedContent

    from podtui.console.link import ConsoleLink
    from podtui.console.widget import TerminalView
    from podtui.ui.widgets.jobs_panel import JobsPanel
    from podtui.ui.widgets.log_panel import LogPanel
    from podtui.ui.widgets.services_panel import ServicesPanel
    from podtui.ui.widgets.sync_panel import SyncPanel

TABS = ("details", "console", "logs", "services", "transfers", "jobs", "sync")


class PodPane(Vertical):
    def __init__(
        self,
        open_links: Callable[[], Sequence[ConsoleLink]],
        services: Callable[[], Services],
        *,
        id: str | None = None,
    ) -> None:
        """open_links: every console podtui has open (the console registry's), the pane's among them; services: what
        the Logs tab streams from."""
        super().__init__(id=id)
        self.open_links = open_links
        self._services = services
        self.pod_id: str | None = None
        self.pod: Pod | None = None  # the selected pod as last seen
        self.links: dict[str, ConsoleLink] = {}  # the pane's consoles, by pod id
        self.in_sight = True  # the main screen says: hidden (too small, the list zoomed, a screen over it) or not

    async def fill(self) -> None:
        """The tabs, once the first frame is out: TabbedContent and the transfer table (with the transfer code
        under it) are not needed for it."""
        from podtui.ui.widgets.pane_tabs import PaneTabs

        if not self.query(PaneTabs):
            await self.mount(PaneTabs(self._services))

    @property
    def tabs(self) -> TabbedContent:
        from textual.widgets import TabbedContent

        return self.query_one("#pane-tabs", TabbedContent)

    def show_tab(self, tab: str) -> None:
        self.tabs.active = f"pane-{tab}"

    @property
    def active_tab(self) -> str:
        return self.tabs.active.removeprefix("pane-")

    # --- the selected pod ------------------------------------------------------------------------------

    async def follow(self, pod_id: str | None, feed: PodFeed, now: float) -> None:
        """The selection moved, or a poll landed: the pane shows that pod."""
        await self.fill()
        moved = pod_id != self.pod_id
        self.pod_id = pod_id
        from podtui.ui.widgets.pod_details import PodDetails

        details = self.query_one(PodDetails)
        details.show(pod_id, feed, now)
        self.pod = details.last_seen if pod_id is not None else None
        self.services_panel.show_pod(self.pod)
        self.jobs_panel.show_pod(self.pod)
        self.sync_panel.show_pod(self.pod)
        if moved:
            from podtui.ui.widgets.transfer_table import TransferTable

            self.query_one(TransferTable).set_pod(pod_id)
            await self.show_console()
            self._follow_logs()
            self._follow_jobs()

    # --- logs --------------------------------------------------------------------------------------------

    @property
    def log_panel(self) -> LogPanel:
        from podtui.ui.widgets.log_panel import LogPanel

        return self.query_one("#pane-log", LogPanel)

    def _follow_logs(self) -> None:
        """The Logs tab streams the selected pod's log while it is the tab on show, and nothing otherwise (a
        stream per pod passed over would be wasted)."""
        if not self.query("#pane-log"):
            return
        if self.in_sight and self.active_tab == "logs" and self.pod is not None:
            self.log_panel.show_pod(self.pod)
        else:
            self.log_panel.stop()

    def on_tabbed_content_tab_activated(self, _event: object) -> None:
        self._follow_logs()
        self._follow_jobs()

    def set_in_sight(self, in_sight: bool) -> None:
        """Shown or hidden by the main screen: a hidden pane's Logs tab streams nothing, its Jobs tab reads none."""
        if in_sight != self.in_sight:
            self.in_sight = in_sight
            self._follow_logs()
            self._follow_jobs()

    # --- jobs --------------------------------------------------------------------------------------------

    @property
    def jobs_panel(self) -> JobsPanel:
        from podtui.ui.widgets.jobs_panel import JobsPanel

        return self.query_one("#pane-job", JobsPanel)

    def _follow_jobs(self) -> None:
        """The Jobs tab reads the pod's jobs while it is the tab on show (docs/jobs.md#after-a-job)."""
        if self.query("#pane-job"):
            self.jobs_panel.set_in_sight(self.in_sight and self.active_tab == "jobs")

    def show_jobs(self) -> None:
        """The Jobs tab, its table focused (the jobs key, or the palette's "Jobs of POD", with the panes on)."""
        self.in_sight = True
        self.show_tab("jobs")
        self._follow_jobs()
        self.jobs_panel.table.focus()

    def on_jobs_panel_left(self, event: JobsPanel.Left) -> None:
        """Back from the Jobs tab: to the list."""
        event.stop()
        from podtui.ui.widgets.pod_table import PodTable

        for table in self.screen.query(PodTable):
            table.focus()

    # --- sync -------------------------------------------------------------------------------------------

    @property
    def sync_panel(self) -> SyncPanel:
        from podtui.ui.widgets.sync_panel import SyncPanel

        return self.query_one("#pane-sync-panel", SyncPanel)

    def show_sync(self) -> None:
        """The Sync tab, focused (the sync key, or the palette, with the panes on; docs/sync.md)."""
        self.show_tab("sync")
        self.sync_panel.focus()

    def on_sync_panel_left(self, event: SyncPanel.Left) -> None:
        """Back from the Sync tab: to the list."""
        event.stop()
        from podtui.ui.widgets.pod_table import PodTable

        for table in self.screen.query(PodTable):
            table.focus()

    @property
    def services_panel(self) -> ServicesPanel:
        from podtui.ui.widgets.services_panel import ServicesPanel

        return self.query_one("#pane-service", ServicesPanel)

    def show_services(self) -> None:
        """The Services tab, its table focused (`S` with the panes on)."""
        self.show_tab("services")
        self.services_panel.table.focus()

    def show_logs(self) -> None:
        """The Logs tab, its lines focused (`L` with the panes on)."""
        self.in_sight = True
        self.show_tab("logs")
        self._follow_logs()
        self.log_panel.view.focus()

    # --- consoles ----------------------------------------------------------------------------------------

    def console_view(self) -> TerminalView | None:
        from podtui.ui.widgets.console_box import ConsoleBox

        found = self.query("#pane-console ConsoleBox")
        box = found.first() if found else None
        return box.view if isinstance(box, ConsoleBox) else None

    def has_console(self, pod_id: str | None) -> bool:
        return pod_id is not None and pod_id in self.links

    async def open_console(self, pod_id: str, link: ConsoleLink) -> TerminalView | None:
        """A new console on the pod, in the Console tab, connected in a thread and given the keys."""
        self.links[pod_id] = link
        self.show_tab("console")
        view = await self.show_console()
        if view is not None:
            view.focus()
        self._connect(link)
        return view

    async def show_console(self) -> TerminalView | None:
        """The Console tab shows the selected pod's console, or says how to open one."""
        if not self.query("#pane-console"):  # the tabs come after the first frame
            return None
        from textual.widgets import TabPane

        from podtui.ui.widgets.console_box import ConsoleBox

        tab = self.query_one("#pane-console", TabPane)
        for pod_id in [pid for pid, kept in self.links.items() if kept not in self.open_links()]:
            del self.links[pod_id]  # closed on the consoles' screen
        link = self.links.get(self.pod_id) if self.pod_id is not None else None
        current = self.console_view()
        if current is not None and current.link is link:
            return current
        if current is not None:
            await self.query_one("#pane-console ConsoleBox").remove()  # the shell goes on: only its view goes
        hint = self.query_one("#pane-console-hint", Static)
        hint.display = link is None
        if link is None:
            hint.update(
                keymap.fill(self.app, "no console on this pod: press {pods.console} to open one here")
                if self.pod_id is not None
                else "no pod selected"
            )
            return None
        # c types into the pane's console, or opens a fresh shell in it once its shell ended
        box = ConsoleBox(link, type_key_id="pods.console", fresh_key_id="pods.console")
        await tab.mount(box)
        return box.view

    async def release_console(self) -> None:
        """Another screen draws the console for now (the consoles' screen): the pane's view goes, the shell stays."""
        found = self.query("#pane-console ConsoleBox")
        if found:
            await found.first().remove()

    def focus_console(self) -> bool:
        view = self.console_view()
        if view is None:
            return False
        self.show_tab("console")
        view.focus()
        return True

    def take_console(self, pod_id: str) -> ConsoleLink | None:
        """The pod's console leaves the pane (it is being closed)."""
        return self.links.pop(pod_id, None)

    def forget_pods(self, alive: set[str]) -> list[ConsoleLink]:
        """Consoles of pods no longer on the account: taken out, to be closed."""
        gone = [pid for pid in self.links if pid not in alive]
        return [self.links.pop(pid) for pid in gone]

    @in_thread(group="console-connect", description="connecting the console")
    def _connect(self, link: ConsoleLink) -> None:
        from podtui.ui.console_questions import open_shell

        open_shell(self.app, link)
