"""One line under the table: why the data is stale, or what just happened."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from podtui.core.feed import PodFeed


def status_text(feed: PodFeed) -> Text:
    if feed.error:
        tries = f" ({feed.failures} failed polls in a row; retrying)" if feed.failures > 1 else " (retrying)"
        return Text.assemble(("✖ ", "bold red"), (feed.error, "red"), (tries, "grey62"))
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

    def show(self, feed: PodFeed) -> None:
        text = status_text(feed)
        self.display = bool(text.plain)
        self.update(text)
