"""The Spend view driven by its keys against the simulator: $ opens it on today, t w m switch the range, p g v d
the breakdown, ctrl+r asks again, escape goes back; the ledger stands in (and says so) when RunPod's billing fails,
and an unexpected failure keeps what was shown."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static

from podtui.core.api.errors import ApiUnavailable
from podtui.core.billing import BillingQuery
from podtui.core.spend import Row, SpendReport, gather
from podtui.ui import keymap
from podtui.ui.app import PodtuiApp
from podtui.ui.screens import spend as spend_screen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.screens.spend import SpendScreen
from podtui.ui.widgets.spend_bars import SpendBars
from podtui.ui.widgets.spend_days import SpendDays
from tests.helpers.pilot import loaded, wait_until


async def _spend(pilot: Pilot[None], app: PodtuiApp) -> SpendScreen:
    await loaded(pilot, app)
    await pilot.press("dollar_sign")
    await wait_until(pilot, lambda: isinstance(app.screen, SpendScreen) and app.screen.report is not None)
    screen = app.screen
    assert isinstance(screen, SpendScreen)
    await wait_until(pilot, lambda: not screen.loading)
    return screen


def _text(screen: SpendScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def test_every_key(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 32)) as pilot:
        screen = await _spend(pilot, app)
        report = screen.report
        assert report is not None and report.window.days == 1 and report.source == "billing"
        assert "spent today" in _text(screen, "#summary") and "RunPod's billing" in _text(screen, "#summary")
        for key, days in (("w", 7), ("m", 30), ("t", 1)):
            await pilot.press(key)
            await wait_until(pilot, lambda d=days: screen.report is not None and screen.report.window.days == d)
            await wait_until(pilot, lambda: not screen.loading)
        bars = screen.query_one(SpendBars)
        for key, by in (("g", "gpu"), ("v", "volume"), ("d", "day"), ("p", "pod")):
            await pilot.press(key)
            assert screen.by == by and bars.rows == screen.report.rows(by)
            assert screen.query_one("#rows").border_title == f"by {'GPU' if by == 'gpu' else by}"
        assert any(r.label == "eval-a100" for r in bars.rows)
        before = screen.report
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: screen.report is not before and not screen.loading)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))
        await pilot.press("dollar_sign")
        await wait_until(pilot, lambda: isinstance(app.screen, SpendScreen))


async def test_the_ledger_stands_in_and_says_so(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _spend(pilot, app)

        def refused(query: BillingQuery, *args: object) -> None:
            raise ApiUnavailable("RunPod did not answer (connection refused)")

        app.services.api.billing = refused  # type: ignore[method-assign]
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: not screen.loading)
        assert screen.report is not None and screen.report.source == "ledger"
        assert "ledger only" in _text(screen, "#summary")
        assert "connection refused" in _text(screen, "#status")
        assert screen.query_one("#status").has_class("-error")
        assert any(r.label == "eval-a100" for r in screen.query_one(SpendBars).rows)  # the poll's runs
        await pilot.press("v")
        assert "need RunPod's billing" in str(screen.query_one(SpendBars).render())


async def test_an_unexpected_failure_keeps_what_was_shown(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _spend(pilot, app)
        shown = screen.report

        def broken(query: BillingQuery, *args: object) -> None:
            raise RuntimeError("boom")

        app.services.api.billing = broken  # type: ignore[method-assign]
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: "boom" in _text(screen, "#status"))
        assert screen.report is shown and "spent today" in _text(screen, "#summary")


async def test_the_hint_names_the_keys_in_effect_and_the_ledger_alone_its_notes(
    make_app: Callable[..., PodtuiApp],
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 32)) as pilot:
        screen = await _spend(pilot, app)
        keymap.remember(app, {"spend.by-pod": "o", "spend.by-day": "j"})
        before = screen.report
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: screen.report is not before and not screen.loading)
        assert "o g v j: by" in _text(screen, "#status")

        def refused(query: BillingQuery, *args: object) -> None:
            raise ApiUnavailable("RunPod did not answer (connection refused)")

        app.services.api.billing = refused  # type: ignore[method-assign]
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: screen.report is not None and screen.report.source == "ledger")
        await wait_until(pilot, lambda: not screen.loading)
        status = _text(screen, "#status")
        assert status.count("RunPod's billing could not be had") == 1
        assert "network volumes and disks are not in the ledger" in status  # the report's notes


async def test_leaving_while_it_loads_is_quiet(
    make_app: Callable[..., PodtuiApp], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    go = threading.Event()
    threads: list[int] = []

    def slow(*args: Any, **kw: Any) -> SpendReport:
        threads.append(threading.get_ident())
        go.wait(30)
        return gather(*args, **kw)

    def loading(ident: int) -> bool:
        """That worker thread is still within the screen's _load."""
        frame = sys._current_frames().get(ident)
        while frame is not None:
            if frame.f_code.co_name in ("_load", "logged"):
                return True
            frame = frame.f_back
        return False

    monkeypatch.setattr(spend_screen, "gather", slow)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await pilot.press("dollar_sign")
        await wait_until(pilot, lambda: bool(threads))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))
        with caplog.at_level(logging.WARNING):
            go.set()
            await wait_until(pilot, lambda: not loading(threads[0]))
            await pilot.pause()
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


async def test_a_million_fits_its_column() -> None:
    class Bars(App[None]):
        def compose(self) -> ComposeResult:
            yield SpendBars(id="bars")

    app = Bars()
    async with app.run_test(size=(80, 10)) as pilot:
        bars = app.query_one(SpendBars)
        bars.show([Row("p1", "trainer", 1_234_567.89), Row("p2", "notebook", 12.5)])
        await pilot.pause()
        lines = str(bars.render()).splitlines()
        assert "$1,234,567.89" in lines[0] and "$12.50" in lines[1]
        assert lines[0].index("$1,234,567.89") + len("$1,234,567.89") == lines[1].index("$12.50") + len("$12.50")


async def test_thirty_days_labels_never_run_together() -> None:
    class Days(App[None]):
        def compose(self) -> ComposeResult:
            yield SpendDays(id="days")

    start = datetime(2026, 5, 5, tzinfo=UTC)
    days = [Row(f"{start + timedelta(days=i):%Y-%m-%d}", "", float(i % 5)) for i in range(30)]
    for width in (80, 120, 200):
        app = Days()
        async with app.run_test(size=(width, 10)) as pilot:
            chart = app.query_one(SpendDays)
            chart.show(days)
            await pilot.pause()
            lines = str(chart.render()).splitlines()
            labels = lines[-1].split()
            assert all(1 <= int(x) <= 31 for x in labels) and labels[-1] == "3"  # today's is always there
            assert len(labels) >= 10
            # spread over the whole width: today's column (and label) at its right end
            width_in = chart.content_size.width
            assert len(lines[-1].rstrip()) >= width_in - width_in // 30 - 1
