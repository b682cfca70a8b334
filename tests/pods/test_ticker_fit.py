"""The ticker line fits its width: shorter labels, no sparkline, then the lesser pieces, never the balance, the
runway or how fresh the data is; it says when polls are paused. The status line under the list wraps to three
lines at most and says when it had more."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from podtui.core import units
from podtui.core.api import V2Api
from podtui.core.config import Config
from podtui.core.feed import PodFeed
from podtui.core.ticker import CostTicker, Ticker
from podtui.sim.clock import SimClock
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.widgets.account_bar import SPARK, AccountBar, account_text
from podtui.ui.widgets.status_line import MAX_LINES, StatusLine, fitted
from tests.helpers.pilot import loaded, polled, wait_until

WIDTHS = (60, 80, 100, 120, 200)


def demo_ticker(api: V2Api, clock: SimClock, config: Config | None = None) -> tuple[PodFeed, Ticker]:
    """The demo account after ten minutes of ticking: a burn history for the sparkline, a session's spend."""
    costs = CostTicker(config or Config(), clock.now)
    feed = PodFeed()
    snap = api.fetch_snapshot()
    feed.succeeded(snap)
    costs.after_poll(snap, ())
    for _ in range(10):
        clock.advance(60)
        costs.tick(snap)
    ticker = costs.ticker(snap)
    assert ticker is not None
    return feed, ticker


def money(line: str, ticker: Ticker) -> None:
    """The balance and the runway are there, whole."""
    assert f" {units.money(ticker.view.balance)} " in line and f" {units.duration(ticker.view.runway_s)} " in line


@pytest.mark.parametrize("width", WIDTHS)
def test_the_ticker_fits_each_width(api: V2Api, clock: SimClock, width: int) -> None:
    feed, ticker = demo_ticker(api, clock)
    line = account_text(feed, clock.now(), True, ticker, width=width)
    assert line.cell_len <= width and "\n" not in line.plain
    money(line.plain, ticker)
    assert line.plain.endswith("● live") and "DEMO" in line.plain
    full = account_text(feed, clock.now(), True, ticker)
    if full.cell_len <= width:
        assert line.plain == full.plain  # room enough: nothing left out
        assert "balance" in line.plain and "runway" in line.plain and any(c in line.plain for c in SPARK)
    if width == 80:
        assert "burn" in line.plain and "spent" in line.plain  # only the labels are shorter
    if width == 60:
        assert "spent" not in line.plain and "bal " in line.plain


def test_the_ticker_leaves_out_the_lesser_pieces_first(api: V2Api, clock: SimClock) -> None:
    """With a daily budget and a second burn figure the line is long: width by width, a piece goes before the
    balance, the runway and the freshness mark would be cut."""
    feed, ticker = demo_ticker(api, clock, Config(daily_budget=5.0))
    full = account_text(feed, clock.now(), True, ticker).plain
    assert "today" in full and "spent" in full and "podtui" in full
    seen = {full}
    for width in range(cell_len(full), 49, -1):
        line = account_text(feed, clock.now(), True, ticker, width=width)
        assert line.cell_len <= width, width
        money(line.plain, ticker)
        assert line.plain.endswith("● live")
        seen.add(line.plain)
    assert len(seen) >= 6  # step by step, not all at once


@pytest.mark.parametrize("width", WIDTHS)
def test_paused_says_how_old_the_data_is(api: V2Api, clock: SimClock, width: int) -> None:
    feed, ticker = demo_ticker(api, clock)  # ten minutes since the data was fetched
    line = account_text(feed, clock.now(), True, ticker, width=width, paused=True).plain
    assert "live" not in line and "paused" in line
    assert line.endswith("paused · data 10m 00s old") or (width < 100 and line.endswith("paused 10m 00s"))
    money(line, ticker)
    assert account_text(feed, clock.now(), True, ticker, width=width, paused=True).cell_len <= width


@pytest.mark.parametrize("width", WIDTHS)
def test_stale_stays_as_it_was_and_wins_over_paused(api: V2Api, clock: SimClock, width: int) -> None:
    feed, ticker = demo_ticker(api, clock)
    feed.failed("RunPod's API had a server error (502)", clock.now())
    for paused in (False, True):
        line = account_text(feed, clock.now(), True, ticker, width=width, paused=paused)
        assert line.cell_len <= width and "paused" not in line.plain and "live" not in line.plain
        assert " STALE " in line.plain and "10m 00s" in line.plain
        money(line.plain, ticker)
    assert account_text(feed, clock.now(), True, ticker).plain.endswith(" STALE  data 10m 00s old")


def test_without_a_ticker_the_line_fits_too(api: V2Api, clock: SimClock) -> None:
    feed, _ = demo_ticker(api, clock)
    for width in WIDTHS:
        line = account_text(feed, clock.now(), False, None, width=width)
        assert line.cell_len <= width and "$23.87" in line.plain and line.plain.endswith("● live")
    assert "pods 3 running" in account_text(feed, clock.now(), False, None).plain


def test_a_long_status_ends_in_an_ellipsis_after_three_lines() -> None:
    console = Console(width=200)
    short = Text("⚠ one line")
    assert fitted(short, 78, console) is short
    long = Text("⚠ " + " ".join(f"word{i}" for i in range(80)), style="bold")
    lines = fitted(long, 78, console).plain.split("\n")
    assert len(lines) == MAX_LINES and lines[-1].endswith("…") and all(cell_len(x) <= 78 for x in lines)


# --- on screen ----------------------------------------------------------------------------------------------


def bar(app: PodtuiApp) -> str:
    return str(app.screen.query_one(AccountBar).render())


async def test_the_ticker_refits_when_resized_and_shows_paused(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        app.cost_tick()
        await pilot.pause()
        line = bar(app)
        assert cell_len(line) <= 80 and line.endswith("● live") and "bal $23.87" in line
        await pilot.resize_terminal(200, 24)
        await wait_until(pilot, lambda: "balance $23.87" in bar(app))
        assert "runway" in bar(app)
        await pilot.resize_terminal(80, 24)
        await wait_until(pilot, lambda: "bal $23.87" in bar(app))
        account = app.screen.query_one(AccountBar)
        # what the screen shows while a question is open (the screen's own tick would draw it again each second,
        # so it is read at once)
        account.show(app.feed, app.now() + 42, True, app.ticker(), paused=True)
        assert bar(app).endswith("paused · data 42s old") and cell_len(bar(app)) <= 80 and "live" not in bar(app)
        await pilot.resize_terminal(60, 24)
        await wait_until(pilot, lambda: account.content_size.width == 60)
        account.show(app.feed, app.now() + 42, True, app.ticker(), paused=True)
        assert bar(app).endswith("paused 42s") and cell_len(bar(app)) <= 60


async def test_the_status_line_says_it_all_at_80_columns(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        sim.world.set_balance(3.10)  # a runway under 4 h: the line names every pod $0 would delete
        await polled(pilot, app)
        status = app.screen.query_one(StatusLine)
        assert str(status.render()).startswith("⚠ The balance lasts") and 1 < status.size.height <= MAX_LINES
        ticker = app.ticker()
        assert ticker is not None and len(ticker.view.lose_data_at_zero) >= 3
        rows = [strip.text.strip() for strip in app.screen._compositor.render_strips()]
        said = " ".join(rows[status.region.y : status.region.bottom])
        assert said.endswith(", ".join(ticker.view.lose_data_at_zero) + ".")  # to its last word, nothing cut
