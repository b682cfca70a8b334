"""The line at the top, the cost ticker: whose account it is (the profile, when profiles are used), burn (with a
sparkline of this session), what this session has spent, the balance and how long it lasts, the pods, and how fresh
the data on screen is. It moves every second."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.text import Text
from textual.events import Resize
from textual.widgets import Static

from podtui.core import units
from podtui.core.feed import PodFeed
from podtui.core.visible import visible
from podtui.ui import colours
from podtui.ui.colours import CLASSIC, Palette
from podtui.ui.needs import Needs, Served

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


# How much the line leaves out, step by step, until it fits its width: the balance, the runway and how fresh the
# data is stay to the end.
TIGHT = 1  # one space between pieces
SHORT = 2  # shorter labels: "bal", "spent" without the session's
NO_SPARK = 3  # no sparkline
NO_SPENT = 4  # no session spend, no second burn figure
NO_TODAY = 5  # no daily budget
NO_NAME = 6  # no " podtui " badge (a profile's name stays: the money on the line is that account's)
TERSE = 7  # the burn without its label, freshness in a word or two
LEVELS = 8


def account_text(
    feed: PodFeed,
    now: float,
    demo: bool,
    ticker: Ticker | None = None,
    palette: Palette = CLASSIC,
    *,
    width: int | None = None,
    paused: bool = False,
    profile: str | None = None,
) -> Text:
    """The ticker line, as full as fits `width` cells (None: no limit). paused: polls are waiting (a question is
    open): the money still moves from the last data, and the line says how old that data is instead of "live".
    profile: the account's profile, named first in place of podtui's own badge
    (docs/profiles.md#where-the-profile-shows)."""
    for level in range(LEVELS):
        t = _line(feed, now, demo, ticker, palette, paused, level, profile)
        if width is None or t.cell_len <= width:
            break
    t.no_wrap, t.overflow = True, "ellipsis"
    return t


PROFILE_WIDTH = 16  # of a profile's name on the line; longer ones end in …


def _line(
    feed: PodFeed,
    now: float,
    demo: bool,
    ticker: Ticker | None,
    palette: Palette,
    paused: bool,
    level: int,
    profile: str | None = None,
) -> Text:
    st = palette.style
    gap = " " if level >= TIGHT else "  "
    t = Text()
    if profile is not None:
        name = visible(profile)
        name = name if len(name) <= PROFILE_WIDTH else name[: PROFILE_WIDTH - 1] + "…"
        t.append(f" {name} ", style="bold reverse")
    elif level < NO_NAME:
        t.append(" podtui ", style="bold reverse")
    if demo:
        t.append(" DEMO ", style=st("badge"))
    snap = feed.snapshot
    if snap is None:
        t.append(gap + ("loading pods…" if feed.error is None else "no data yet"), style="italic")
    else:
        a = snap.account
        if ticker is None:
            t.append(gap + ("bal " if level >= SHORT else "balance "), style=st("muted"))
            t.append(units.money(a.balance), style="bold")
            t.append(gap + "burn " if level < TERSE else gap, style=st("muted"))
            t.append(units.rate(a.spend_per_hr), style="bold")
        else:
            _ticker(t, ticker, palette, level, gap)
        counts = Counter("STARTING" if p.is_starting else p.state for p in snap.pods)
        parts = [f"{counts[k]} {k.lower()}" for k in ("RUNNING", "STARTING", "EXITED", "ERROR") if counts[k]]
        other = len(snap.pods) - sum(counts[k] for k in ("RUNNING", "STARTING", "EXITED", "ERROR"))
        if other:
            parts.append(f"{other} other")
        if ticker is None and level < NO_SPENT:
            t.append(gap + "pods ", style=st("muted"))
            t.append(" · ".join(parts) if parts else "none")
        elif ticker is not None and ticker.idle_pods:  # the list shows the counts; the ticker keeps its room for money
            t.append(gap)
            t.append(f" {ticker.idle_pods} idle ", style=st("badge"))
    t.append(gap + " " if level < TIGHT else gap)
    _freshness(t, feed, now, paused, level >= TERSE, palette)
    return t


def _freshness(t: Text, feed: PodFeed, now: float, paused: bool, terse: bool, palette: Palette) -> None:
    """STALE when the last poll failed; paused while polls wait (a question is open); else live."""
    st = palette.style
    age = feed.age(now)
    if feed.stale:
        t.append(" STALE ", style=st("alarm"))
        if age is not None:
            t.append(f" {units.duration(age)}" if terse else f" data {units.duration(age)} old", style=st("bold bad"))
    elif paused:
        if age is None:
            t.append("paused", style=st("bold warn"))
        else:
            t.append(
                f"paused {units.duration(age)}" if terse else f"paused · data {units.duration(age)} old",
                style=st("bold warn"),
            )
    elif feed.snapshot is not None:
        t.append("● live", style=st("bold good"))


def _ticker(t: Text, k: Ticker, palette: Palette, level: int, gap: str) -> None:
    st = palette.style
    v = k.view
    t.append(gap + "burn " if level < TERSE else gap, style=st("muted"))
    t.append(units.rate(v.burn_per_hr), style="bold")
    if v.burn_disagrees and level < NO_SPENT:  # RunPod's figure and the pods' sum differ beyond rounding: both
        t.append(f" (pods {units.rate(v.pods_burn_per_hr)})", style=st("warn"))
    spark = sparkline(k.burn_history) if level < NO_SPARK else ""
    if spark:
        t.append(" " + spark, style=st("moving"))
    if level < NO_SPENT:
        t.append(gap + "spent ", style=st("muted"))
        t.append(units.money(k.session_spend), style="bold")
    if k.daily_budget and level < NO_TODAY:
        share = k.today_spend / k.daily_budget
        t.append(gap + "today ", style=st("muted"))
        t.append(
            f"{units.money(k.today_spend)}/{units.money(k.daily_budget)}",
            style=st("bold bad" if share >= 1 else "bold warn" if share >= 0.8 else "bold"),
        )
    t.append(gap + ("bal " if level >= SHORT else "balance "), style=st("muted"))
    t.append(units.money(v.balance), style="bold")
    t.append(gap + ("left " if level >= SHORT else "runway "), style=st("muted"))
    t.append(
        units.duration(v.runway_s) if v.runway_s is not None else "?" if v.balance is None else "∞",
        style=runway_style(v.runway_s, k.runway_warn_h, k.runway_critical_h, palette),
    )
    lost = len(v.lose_data_at_zero)
    if lost and level < NO_SPARK and v.runway_s is not None and v.runway_s < k.runway_warn_h * 3600:
        # at $0 RunPod terminates the pods without a network volume (docs/runpod-facts.md#pricing-and-the-balance)
        critical = v.runway_s < k.runway_critical_h * 3600
        words = f"{lost} pod{'s' if lost != 1 else ''} lose data at $0" if level < SHORT else f"{lost} lose data at $0"
        t.append(gap)
        t.append(words, style=st("bold bad" if critical else "bold warn"))


class AccountBar(Static):
    """The ticker line, in the colours of the app's theme, as full as its width allows: redrawn when the theme
    changes or the line is resized."""

    needs = Needs[Served]()
    _shown: tuple[PodFeed, float, bool, Ticker | None, bool] | None = None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._recolour)

    def show(self, feed: PodFeed, now: float, demo: bool, ticker: Ticker | None = None, paused: bool = False) -> None:
        """paused: polls are waiting while a question is open; the line says how old the data is."""
        self._shown = (feed, now, demo, ticker, paused)
        width = self.content_size.width or None  # not laid out yet: in full, and again once it is
        profile = self.needs.services.profile  # one per app run: switching starts the app again
        self.update(
            account_text(
                feed, now, demo, ticker, colours.palette(self.app), width=width, paused=paused, profile=profile
            )
        )

    def _recolour(self, _theme: object) -> None:
        if self._shown is not None:
            self.show(*self._shown)

    def on_resize(self, _event: Resize) -> None:
        if self._shown is not None:
            self.show(*self._shown)
