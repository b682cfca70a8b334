"""One line under the table: why the data is stale, or what just happened."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from podtui.core import units
from podtui.core.feed import STUCK_ADVICE, PodFeed

if TYPE_CHECKING:
    from podtui.ui.costs import Ticker


def status_text(feed: PodFeed, ticker: Ticker | None = None, now: float | None = None) -> Text:
    if feed.error:
        tries = f" ({feed.failures} failed polls in a row; retrying)" if feed.failures > 1 else " (retrying)"
        if feed.retry_after_s is not None:
            tries = f" (next try in {units.duration(feed.retry_after_s)})"
        return Text.assemble(("✖ ", "bold red"), (feed.error, "red"), (tries, "grey62"))
    runway = ticker.view.runway_s if ticker is not None else None
    if ticker is not None and runway is not None and runway < ticker.runway_critical_h * 3600:
        # facts: at $0 RunPod stops every pod and terminates those without a network volume
        return Text.assemble(("⚠ ", "bold red"), (f"The balance lasts {units.duration(ticker.view.runway_s)} at this "
                                                  f"burn. {ticker.view.at_zero_warning()}", "red"))
    stuck = feed.stuck(now)
    if stuck:
        pod, for_s = stuck[0]
        more = f" (and {len(stuck) - 1} more)" if len(stuck) > 1 else ""
        return Text.assemble(("⚠ ", "bold yellow"), (
            f"{pod.name}{more} has been starting for {units.duration(for_s)} and may be stuck: {STUCK_ADVICE}",
            "yellow"))
    snap = feed.snapshot
    if snap is not None and snap.problems:
        return Text.assemble(
            ("⚠ ", "bold yellow"),
            (f"{len(snap.problems)} odd field(s) in RunPod's answer, shown as '—': {snap.problems[0]}", "yellow"),
        )
    return Text("")


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { height: auto; max-height: 2; padding: 0 1; }
    """

    def show(self, feed: PodFeed, ticker: Ticker | None = None, now: float | None = None) -> None:
        text = status_text(feed, ticker, now)
        self.display = bool(text.plain)
        self.update(text)
