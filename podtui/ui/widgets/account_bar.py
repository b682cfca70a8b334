"""The line at the top: the account's money and how fresh the data on screen is."""

from __future__ import annotations

from collections import Counter

from rich.text import Text
from textual.widgets import Static

from podtui.core import units
from podtui.core.feed import PodFeed


def account_text(feed: PodFeed, now: float, demo: bool) -> Text:
    t = Text()
    t.append(" podtui ", style="bold reverse")
    if demo:
        t.append(" DEMO ", style="bold black on yellow")
    snap = feed.snapshot
    if snap is None:
        t.append("  " + ("loading pods…" if feed.error is None else "no data yet"), style="italic")
    else:
        a = snap.account
        t.append("  balance ", style="grey62")
        t.append(units.money(a.balance), style="bold")
        t.append("  burn ", style="grey62")
        t.append(units.rate(a.spend_per_hr), style="bold")
        counts = Counter(p.state for p in snap.pods)
        parts = [f"{counts[k]} {k.lower()}" for k in ("RUNNING", "STARTING", "EXITED") if counts[k]]
        other = len(snap.pods) - sum(counts[k] for k in ("RUNNING", "STARTING", "EXITED"))
        if other:
            parts.append(f"{other} other")
        t.append("  pods ", style="grey62")
        t.append(" · ".join(parts) if parts else "none")
    t.append("   ")
    age = feed.age(now)
    if feed.stale:
        t.append(" STALE ", style="bold white on red")
        t.append(f" data {units.duration(age)} old" if age is not None else "", style="bold red")
    elif snap is not None:
        t.append("● live", style="bold green")
    return t


class AccountBar(Static):
    DEFAULT_CSS = """
    AccountBar { height: 1; background: $panel; }
    """

    def show(self, feed: PodFeed, now: float, demo: bool) -> None:
        self.update(account_text(feed, now, demo))
