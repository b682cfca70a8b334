"""The main screen's pane's tabs, built once the first frame is out (PodPane.fill): the pane, the list's
neighbour, comes with the first frame; what it shows in tabs comes right after (docs/architecture.md#panes)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane

from podtui.ui.widgets.pod_details import PodDetails
from podtui.ui.widgets.transfer_table import TransferTable


class PaneTabs(Vertical):
    def compose(self) -> ComposeResult:
        with TabbedContent(id="pane-tabs"):
            with TabPane("Details", id="pane-details"), VerticalScroll():
                yield PodDetails(back_key="the list", id="pane-detail")
            with TabPane("Console", id="pane-console"):
                yield Static(id="pane-console-hint", markup=False)
            with TabPane("Transfers", id="pane-transfers"):
                yield TransferTable(id="pane-transfer-table")
