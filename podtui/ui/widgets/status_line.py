"""One line under the table (up to three when it has more to say): why the data is stale, or what just happened."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from podtui.core import units
from podtui.core.feed import STUCK_ADVICE, PodFeed
from podtui.core.visible import visible
from podtui.ui import colours, keymap
from podtui.ui.colours import CLASSIC, Palette

if TYPE_CHECKING:
    from podtui.core.ticker import Ticker


def status_text(
    feed: PodFeed,
    ticker: Ticker | None = None,
    now: float | None = None,
    palette: Palette = CLASSIC,
    logs_key: str = "L",
) -> Text:
    st = palette.style
    if feed.error:
        tries = f" ({feed.failures} failed polls in a row; retrying)" if feed.failures > 1 else " (retrying)"
        if feed.retry_after_s is not None:
            tries = f" (next try in {units.duration(feed.retry_after_s)})"
        return Text.assemble(("✖ ", st("bold bad")), (feed.error, st("bad")), (tries, st("muted")))
    runway = ticker.view.runway_s if ticker is not None else None
    if ticker is not None and runway is not None and runway < ticker.runway_critical_h * 3600:
        # at $0 RunPod stops every pod and terminates those without a network volume
        # (docs/runpod-facts.md#pricing-and-the-balance)
        return Text.assemble(
            ("⚠ ", st("bold bad")),
            (
                f"The balance lasts {units.duration(ticker.view.runway_s)} at "
                f"this burn. {ticker.view.at_zero_warning()}",
                st("bad"),
            ),
        )
    stuck = feed.stuck(now)
    if stuck:
        pod, for_s = stuck[0]
        more = f" (and {len(stuck) - 1} more)" if len(stuck) > 1 else ""
        return Text.assemble(
            ("⚠ ", st("bold warn")),
            (
                f"{pod.name}{more} has been starting for {units.duration(for_s)} and may be stuck: "
                + STUCK_ADVICE.format(logs=logs_key),
                st("warn"),
            ),
        )
    snap = feed.snapshot
    if snap is not None and snap.problems:
        return Text.assemble(
            ("⚠ ", st("bold warn")),
            (f"{len(snap.problems)} odd field(s) in RunPod's answer, shown as '—': {snap.problems[0]}", st("warn")),
            ("" if snap.account.balance is not None else "; balance unknown", st("muted")),
        )
    if snap is not None and snap.account.balance is None and snap.account.unknown_why:
        # the balance is GraphQL's alone; the pods, their costs and the burn still come from v2
        # (docs/runpod-facts.md#pricing-and-the-balance)
        return Text.assemble(
            ("ⓘ ", st("bold warn")),
            (f"balance and runway unknown: {visible(snap.account.unknown_why)}", st("warn")),
            ("; the burn is the pods' sum", st("muted")),
        )
    return Text("")


MAX_LINES = 3  # as many as the list can spare at 80x24; the stylesheet's max-height says the same


def fitted(text: Text, width: int, console: Console, lines: int = MAX_LINES) -> Text:
    """The text as it wraps at `width` cells; when that takes more than `lines` lines, the last one kept ends in
    "…" rather than the rest being cut off unseen."""
    wrapped = text.wrap(console, width)
    if len(wrapped) <= lines:
        return text
    kept = list(wrapped)[:lines]
    last = kept[-1]
    last.rstrip()
    last.truncate(max(0, width - 1))
    last.append("…", style=last.spans[-1].style if last.spans else "")
    return Text("\n").join(kept)


class StatusLine(Static):
    """Why the data is stale, or what just happened, in the colours of the app's theme, wrapped to its width."""

    _shown: tuple[PodFeed, Ticker | None, float | None] | None = None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._recolour)

    def show(self, feed: PodFeed, ticker: Ticker | None = None, now: float | None = None) -> None:
        self._shown = (feed, ticker, now)
        text = status_text(feed, ticker, now, colours.palette(self.app), keymap.key_for(self.app, "pods.logs"))
        self.display = bool(text.plain)
        width = self.content_size.width
        self.update(fitted(text, width, self.app.console) if width > 0 else text)

    def _recolour(self, _theme: object) -> None:
        if self._shown is not None:
            self.show(*self._shown)

    def on_resize(self, _event: Resize) -> None:
        if self._shown is not None:
            self.show(*self._shown)
