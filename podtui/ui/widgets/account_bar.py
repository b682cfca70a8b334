"""The line at the top, the cost ticker: burn (with a sparkline of this session), what this session has spent,
the balance and how long it lasts, the pods, and how fresh the data on screen is. It moves every second."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from podtui.core import units
from podtui.core.feed import PodFeed
from podtui.ui import colours
from podtui.ui.colours import CLASSIC, Palette

if TYPE_CHECKING:
    from podtui.core.ticker import Ticker

SPARK = "▁▂▃▄▅▆▇█"
SPARK_WIDTH = 8


def sparkline(values: tuple[float, ...], width: int = SPARK_WIDTH) -> str:
    """The burn over the session in `width` cells, each the mean of its share of the samples."""
    if not values:
        return ""
    n = min(width, len(values))
    buckets = [values[i * len(values) // n : (i + 1) * len(values) // n] for i in range(n)]
    means = [sum(b) / len(b) for b in buckets if b]
    lo, hi = min(means), max(means)
    if hi - lo < 1e-9:  # a steady burn is a flat line
        return SPARK[3] * len(means)
    return "".join(SPARK[round((m - lo) / (hi - lo) * (len(SPARK) - 1))] for m in means)


def runway_style(runway_s: float | None, warn_h: float, critical_h: float, palette: Palette = CLASSIC) -> str:
    if runway_s is None:
        return "bold"
    hours = runway_s / 3600
    return palette.spec("alarm" if hours < critical_h else "bold warn" if hours < warn_h else "bold good")


def account_text(
    feed: PodFeed, now: float, demo: bool, ticker: Ticker | None = None, palette: Palette = CLASSIC
) -> Text:
    st = palette.style
    t = Text()
    t.append(" podtui ", style="bold reverse")
    if demo:
        t.append(" DEMO ", style=st("badge"))
    snap = feed.snapshot
    if snap is None:
        t.append("  " + ("loading pods…" if feed.error is None else "no data yet"), style="italic")
    else:
        a = snap.account
        if ticker is None:
            t.append("  balance ", style=st("muted"))
            t.append(units.money(a.balance), style="bold")
            t.append("  burn ", style=st("muted"))
            t.append(units.rate(a.spend_per_hr), style="bold")
        else:
            _ticker(t, ticker, palette)
        counts = Counter("STARTING" if p.is_starting else p.state for p in snap.pods)
        parts = [f"{counts[k]} {k.lower()}" for k in ("RUNNING", "STARTING", "EXITED", "ERROR") if counts[k]]
        other = len(snap.pods) - sum(counts[k] for k in ("RUNNING", "STARTING", "EXITED", "ERROR"))
        if other:
            parts.append(f"{other} other")
        if ticker is None:
            t.append("  pods ", style=st("muted"))
            t.append(" · ".join(parts) if parts else "none")
        elif ticker.idle_pods:  # the list shows the counts; the ticker keeps its room for money
            t.append("  ")
            t.append(f" {ticker.idle_pods} idle ", style=st("badge"))
    t.append("   ")
    age = feed.age(now)
    if feed.stale:
        t.append(" STALE ", style=st("alarm"))
        t.append(f" data {units.duration(age)} old" if age is not None else "", style=st("bold bad"))
    elif snap is not None:
        t.append("● live", style=st("bold good"))
    return t


def _ticker(t: Text, k: Ticker, palette: Palette) -> None:
    st = palette.style
    v = k.view
    t.append("  burn ", style=st("muted"))
    t.append(units.rate(v.burn_per_hr), style="bold")
    if v.burn_disagrees:  # RunPod's figure and the pods' sum differ by more than rounding: show both
        t.append(f" (pods {units.rate(v.pods_burn_per_hr)})", style=st("warn"))
    spark = sparkline(k.burn_history)
    if spark:
        t.append(" " + spark, style=st("moving"))
    t.append("  spent ", style=st("muted"))
    t.append(units.money(k.session_spend), style="bold")
    if k.daily_budget:
        share = k.today_spend / k.daily_budget
        t.append("  today ", style=st("muted"))
        t.append(
            f"{units.money(k.today_spend)}/{units.money(k.daily_budget)}",
            style=st("bold bad" if share >= 1 else "bold warn" if share >= 0.8 else "bold"),
        )
    t.append("  balance ", style=st("muted"))
    t.append(units.money(v.balance), style="bold")
    t.append("  runway ", style=st("muted"))
    t.append(
        units.duration(v.runway_s) if v.runway_s is not None else "?" if v.balance is None else "∞",
        style=runway_style(v.runway_s, k.runway_warn_h, k.runway_critical_h, palette),
    )


class AccountBar(Static):
    """The ticker line, in the colours of the app's theme: redrawn when the theme changes."""

    _shown: tuple[PodFeed, float, bool, Ticker | None] | None = None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._recolour)

    def show(self, feed: PodFeed, now: float, demo: bool, ticker: Ticker | None = None) -> None:
        self._shown = (feed, now, demo, ticker)
        self.update(account_text(feed, now, demo, ticker, colours.palette(self.app)))

    def _recolour(self, _theme: object) -> None:
        if self._shown is not None:
            self.show(*self._shown)
