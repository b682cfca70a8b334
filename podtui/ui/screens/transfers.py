"""The transfers screen: every pod's transfers in a transfer table (widgets/transfer_table.py: the keys, the detail
line and the log are the table's, as they are in a pod's pane), with a title counting them by state."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen

from podtui.transfer.job import TransferJob
from podtui.ui import keymap
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.transfer_table import TransferGrid, TransferTable


class TransfersScreen(Screen[None]):
    CSS_PATH = "transfers.tcss"  # the table brings its own (TransferTable.DEFAULT_CSS)
    BINDINGS = keymap.bindings("transfers")

    def compose(self) -> ComposeResult:
        yield TransferTable(titled=True)
        yield FittedFooter()

    @property
    def table(self) -> TransferTable:
        return self.query_one(TransferTable)

    @property
    def jobs(self) -> dict[str, TransferJob]:
        return self.table.jobs

    def on_mount(self) -> None:
        self.query_one(TransferGrid).focus()

    def show_job(self, job: TransferJob) -> None:
        """Show a transfer as the desk's signal would (the snapshot's transfers in every state are shown so)."""
        self.table.show_job(job)

    def action_back(self) -> None:
        self.app.pop_screen()
