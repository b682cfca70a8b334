"""While a question is open the polls wait, but the money goes on ticking from the last data, and the ticker says
that the data is paused and how old it is (docs/architecture.md#panes)."""

from __future__ import annotations

from collections.abc import Callable

from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.help import HelpScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.widgets.account_bar import AccountBar
from tests.helpers.pilot import loaded, wait_until


def ticker_line(app: PodtuiApp) -> str:
    screen = next(s for s in app.screen_stack if isinstance(s, PodListScreen))
    return str(screen.query_one(AccountBar).render())


async def test_the_money_moves_under_a_dialog_and_the_data_says_paused(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        assert isinstance(app.screen, PodListScreen)
        await wait_until(pilot, lambda: "live" in ticker_line(app))
        polls = app.poller.done
        spent = app.costs.session_spend.total
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        sim.world.clock.advance(90)  # a minute and a half with the help open
        await wait_until(pilot, lambda: "paused" in ticker_line(app) and "1m 3" in ticker_line(app), 5)
        assert app.costs.session_spend.total > spent  # the money moved
        assert app.poller.done == polls  # the data did not
        await pilot.press("escape")
        await wait_until(pilot, lambda: "paused" not in ticker_line(app), 5)
