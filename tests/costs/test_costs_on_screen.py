"""The cost side of the UI over simulated time: the ticker moves, an idle pod is marked and announced once, the
in-app autostop counts down (any key keeps the pod), a daily budget notifies at 80% and 100%."""

from __future__ import annotations

from collections.abc import Callable

from podtui.core.config import Config
from podtui.core.ticker import utc_day
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.countdown import CountdownScreen
from podtui.ui.screens.help import HelpScreen
from podtui.ui.widgets.account_bar import AccountBar
from tests.helpers.pilot import loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (130, 32)


async def idle_for(pilot: object, app: PodtuiApp, sim: SimApiServer, minutes: int) -> None:
    for _ in range(minutes // 5):
        sim.world.clock.advance(300)
        await polled(pilot, app)  # type: ignore[arg-type]


async def test_ticker_spend_and_idle_marks(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        app.cost_tick()
        sim.world.clock.advance(3600)
        app.cost_tick()  # an hour at the burn the last poll reported
        bar = str(app.screen.query_one(AccountBar).render())
        ticker = app.ticker()
        assert ticker is not None and abs(app.costs.session_spend.total - ticker.view.burn_per_hr) < 0.01
        await polled(pilot, app)
        bar = str(app.screen.query_one(AccountBar).render())
        assert "spent $2.17" in bar and "runway" in bar
        await idle_for(pilot, app, sim, 20)
        assert set(app.costs.idle_states) == {DEMO_IDS["idle"]}  # eval-a100 at 0% GPU
        idle = [n.message for n in app._notifications if "is idle" in n.message]
        assert len(idle) == 1 and "eval-a100" in idle[0]  # announced once, not at every poll
        assert "IDLE" in app.rows[DEMO_IDS["idle"]][4].plain  # type: ignore[index]


async def test_in_app_autostop_counts_down_and_any_key_keeps_the_pod(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    app.pod_actions.countdown_s = 1
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "A")  # eval-a100
        assert DEMO_IDS["idle"] in app.costs.autostop_pods
        await idle_for(pilot, app, sim, 15)
        await wait_until(pilot, lambda: isinstance(app.screen, CountdownScreen))
        await pilot.press("x")  # any key: keep it
        assert not isinstance(app.screen, CountdownScreen)
        assert sim.world.pods[DEMO_IDS["idle"]].status == "RUNNING"
        app.costs.idle.observe(DEMO_IDS["idle"], 90.0, app.now())  # busy for a moment, then idle again
        await idle_for(pilot, app, sim, 20)
        await wait_until(pilot, lambda: isinstance(app.screen, CountdownScreen))
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["idle"]].status == "EXITED", 10)  # nobody pressed


async def test_daily_budget_notifies_at_80_and_100_percent(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app(config=Config(daily_budget=2.0))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: app.costs.before_known)  # what the ledger knows ran today before
        assert app.costs.today_total > 2.0  # the pods ran since midnight (UTC): already past, and not said
        day = utc_day(app.now())
        app.costs.spent_before(day, 0.0, quiet=True)  # as on a day whose pods all started with this session
        app.cost_tick()
        for _ in range(9):  # 45 minutes at $2.17/hr: $1.63, over 80% of $2
            sim.world.clock.advance(300)
            app.cost_tick()
        await pilot.pause()  # notifications are delivered as messages
        said = [n.message for n in app._notifications if "budget" in n.message]
        assert len(said) == 1 and said[0].startswith("80% of today's budget")
        for _ in range(3):
            sim.world.clock.advance(300)
            app.cost_tick()
        await pilot.pause()
        said = [n.message for n in app._notifications if "budget" in n.message]
        assert len(said) == 2 and said[1].startswith("100% of today's budget")


async def test_a_covered_countdown_never_stops_the_pod(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    app.pod_actions.countdown_s = 2
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "A")  # eval-a100
        await idle_for(pilot, app, sim, 15)
        await wait_until(pilot, lambda: isinstance(app.screen, CountdownScreen))
        await pilot.press("ctrl+p")  # the palette opens over it (a priority key the countdown never sees)
        await pilot.pause(2.5)
        assert sim.world.pods[DEMO_IDS["idle"]].status == "RUNNING"
        await pilot.press("escape")  # back: the countdown was covered, so it is dropped, not resumed
        await pilot.pause(1.5)
        assert not isinstance(app.screen, CountdownScreen)
        assert sim.world.pods[DEMO_IDS["idle"]].status == "RUNNING"


async def test_a_countdown_answered_while_covered_still_closes(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    """An answer that comes while another screen covers the countdown (a timer, the unasked terminate question)
    is not lost: the dialog answers once it is on top again, instead of staying up and deaf to every key."""
    app = make_app()
    app.pod_actions.countdown_s = 30
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "A")  # eval-a100
        await idle_for(pilot, app, sim, 15)
        await wait_until(pilot, lambda: isinstance(app.screen, CountdownScreen))
        countdown = app.screen
        assert isinstance(countdown, CountdownScreen)
        app.push_screen(HelpScreen())
        await pilot.pause()
        countdown._answer(True)  # the answer arrives under the cover: nothing to dismiss from the top
        assert countdown in app.screen_stack
        app.pop_screen()  # uncovered: it answers now (covered counts as a key: the pod keeps running)
        await wait_until(pilot, lambda: countdown not in app.screen_stack)
        await pilot.pause(0.5)
        assert sim.world.pods[DEMO_IDS["idle"]].status == "RUNNING"
