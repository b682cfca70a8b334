"""The transfer strip: one line at the foot of the main screen naming the transfers under way (arrow, pod, name,
percent, rate; "+2 more" for those that do not fit), hidden while none is. It follows the transfer desk's
`changed_signal`; a click opens the transfers screen."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widget import Widget

from podtui.ui import colours
from podtui.ui.needs import Needs, Transfers, subscribe

if TYPE_CHECKING:  # the transfer code loads with the first transfer, not for the first frame
    from podtui.transfer.job import TransferJob


class TransferStrip(Widget):
    needs = Needs[Transfers]()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.jobs: dict[str, TransferJob] = {}
        self.display = False  # until a transfer is under way

    def on_mount(self) -> None:
        desk = self.needs.transfers
        subscribe(self, desk.changed_signal, self._heard)
        self.jobs = {job.id: job for job in desk.jobs()}  # none before the queue is started: it is not started here
        self._show()

    def _heard(self, news: TransferJob | str) -> None:
        if isinstance(news, str):
            self.jobs.pop(news, None)
        else:
            self.jobs[news.id] = news
        self._show()

    @property
    def under_way(self) -> list[TransferJob]:
        from podtui.ui.transfer_view import running

        return running(self.jobs.values())

    def _show(self) -> None:
        self.display = bool(self.jobs) and bool(self.under_way)
        self.refresh()

    def render(self) -> Text:
        width = self.content_region.width or self.size.width
        from podtui.ui.transfer_view import strip_line

        return strip_line(self.jobs.values(), width, colours.palette(self.app))

    def on_click(self) -> None:
        self.needs.transfers.show()
