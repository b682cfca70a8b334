"""The main screen's pane's tabs, built once the first frame is out (PodPane.fill): the pane, the list's
neighbour, comes with the first frame; what it shows in tabs comes right after (docs/architecture.md#panes)."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane

from podtui.core.services import Services
from podtui.ui.widgets.jobs_panel import JobsPanel
from podtui.ui.widgets.log_panel import LogPanel
from podtui.ui.widgets.pod_details import PodDetails
from podtui.ui.widgets.services_panel import ServicesPanel
from podtui.ui.widgets.sync_panel import SyncPanel
from podtui.ui.widgets.transfer_table import TransferTable


class PaneTabs(Vertical):
    def __init__(self, services: Callable[[], Services]) -> None:
        super().__init__()
        self._services = services

    def compose(self) -> ComposeResult:
        with TabbedContent(id="pane-tabs"):
            with TabPane("Details", id="pane-details"), VerticalScroll():
                yield PodDetails(back_key="the list", id="pane-detail")
            with TabPane("Console", id="pane-console"):
                yield Static(id="pane-console-hint", markup=False)
            with TabPane("Logs", id="pane-logs"):
                yield LogPanel(self._services, id="pane-log")
            with TabPane("Services", id="pane-services"):
                yield ServicesPanel(id="pane-service")
            with TabPane("Transfers", id="pane-transfers"):
                yield TransferTable(id="pane-transfer-table")
            with TabPane("Jobs", id="pane-jobs"):
                yield JobsPanel(id="pane-job")
            with TabPane("Sync", id="pane-sync"):
                yield SyncPanel(id="pane-sync-panel")
