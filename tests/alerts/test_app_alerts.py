"""The app's alerts: an idle pod, the daily budget and a pod that failed reach the toasts, the terminal (OSC 9
through Textual's driver) and the webhook, each once; a stop or terminate the user asked for is not an alert, one
RunPod refused is no excuse; a pod terminated elsewhere (gone from the list) is; what stands at start is on screen,
not alerted. No test here reaches the real desktop: the desks are given an empty environment and no notify-send."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from podtui.core.alert_rules import parse_alert_rules
from podtui.core.config import Config
from podtui.sim.server import SimApiServer
from podtui.ui.alert_desk import AlertDesk
from podtui.ui.app import PodtuiApp
from tests.alerts.conftest import Receiver
from tests.helpers.pilot import loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (130, 32)


def toasts(app: PodtuiApp, text: str) -> list[str]:
    return [n.message for n in app._notifications if text in n.message]


def off_the_desktop(app: PodtuiApp) -> PodtuiApp:
    """The app's desk, with no $TMUX and no notify-send whatever the machine running the test has."""
    app.alerts = AlertDesk(app, app.services, environ={}, which=lambda name: None)
    return app


async def test_idle_budget_and_a_failure_reach_toasts_terminal_and_webhook(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, receiver: Receiver
) -> None:
    rules = parse_alert_rules({"webhook": receiver.url, "quiet_min": 30})
    app = off_the_desktop(make_app(config=Config(daily_budget=1000.0, alerts=rules), demo=False))
    assert set(app.alerts.router.sinks) == {"app", "desktop", "webhook"}  # no notify-send: not a place
    written: list[str] = []
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app._driver.write = written.append  # type: ignore[method-assign,union-attr]  # the bytes for the terminal
        await loaded(pilot, app)
        await wait_until(pilot, lambda: app.costs.before_known)  # today before this session, from the ledger
        before = app.costs.today_total
        assert before > 0  # the pods running since before the session started, dated back by their uptime
        # a budget whose 80% the day has not reached yet
        app.costs.config = dataclasses.replace(app.costs.config, daily_budget=before / 0.8 + 0.5)
        assert not toasts(app, "runway")  # under 24 h from the start: the account bar says it
        for _ in range(4):  # eval-a100 at 0% GPU: idle after 15 simulated minutes
            sim.world.clock.advance(300)
            await polled(pilot, app)
            app.cost_tick()
        await pilot.pause()
        assert len(toasts(app, "eval-a100 is idle")) == 1
        [budget] = toasts(app, "of today's budget")
        assert budget.startswith("80% of today's budget") and "(the UTC day)" in budget
        assert not toasts(app, "runway under")  # the runway fell under 4 h: the status line says it, no toast
        sim.world.fail(DEMO_IDS["train"])
        await polled(pilot, app)
        await pilot.pause()
        assert len(toasts(app, "llama-lora-3090 failed (ERROR)")) == 1
        await polled(pilot, app)
        await pilot.pause()
        assert len(toasts(app, "failed (ERROR)")) == 1  # still failed: the same occurrence
        await wait_until(pilot, lambda: len(receiver.got) >= 4)
    got = sorted(r.json()["kind"] for r in receiver.got)
    assert got == ["budget", "exited", "idle", "runway"]  # each once
    osc = [w for w in written if w.startswith("\x1b]9;")]
    assert any("eval-a100 is idle" in w for w in osc) and any("failed (ERROR)" in w for w in osc)
    assert all(w.endswith("\x07") and "\x1b" not in w[1:] for w in osc)


async def test_a_budget_passed_before_the_app_started_stands_there(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app(config=Config(daily_budget=0.5))  # the pods ran since midnight (UTC): far past $0.50
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        await wait_until(pilot, lambda: app.costs.before_known)
        for _ in range(3):
            sim.world.clock.advance(300)
            app.cost_tick()
        await pilot.pause()
        assert app.costs.today_total > 0.5
        ticker = app.ticker()
        assert ticker is not None and ticker.today_spend == app.costs.today_total
        assert not toasts(app, "of today's budget")  # where the day stood at start: the ticker line shows it


async def test_a_stop_the_user_asked_for_is_no_alert(make_app: Callable[..., PodtuiApp], sim: SimApiServer) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        pod = next(p for p in app.pods() if p.id == DEMO_IDS["train"])
        app.pod_actions.start("stop", pod)
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["train"]].status == "EXITED")
        await polled(pilot, app)
        sim.world.stop(DEMO_IDS["idle"])  # not asked here: an alert
        await polled(pilot, app)
        await pilot.pause()
        assert not toasts(app, "llama-lora-3090 stopped (EXITED)")
        [said] = toasts(app, "eval-a100 stopped (EXITED) without this podtui asking")
        assert "autostop watchdog" in said and "another podtui" in said and "RunPod console" in said


async def test_a_pod_terminated_elsewhere_is_an_alert_one_asked_here_is_not(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        sim.world.terminate(DEMO_IDS["idle"])  # RunPod's console, another podtui, $0: the list leaves it out
        await polled(pilot, app)
        await pilot.pause()
        assert DEMO_IDS["idle"] not in {p.id for p in app.pods()}
        [said] = toasts(app, "eval-a100 is gone (terminated) without this podtui asking")
        assert "network volume" in said
        pod = next(p for p in app.pods() if p.id == DEMO_IDS["stopped"])
        app.pod_actions.start("terminate", pod)  # asked here: no alert when it is gone
        await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["stopped"]].status == "TERMINATED")
        await polled(pilot, app)
        await pilot.pause()
        assert DEMO_IDS["stopped"] not in {p.id for p in app.pods()}
        assert not toasts(app, "notebook-4090 is gone")


async def test_a_stop_runpod_refused_does_not_hide_a_later_exit(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer
) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        pod = next(p for p in app.pods() if p.id == DEMO_IDS["train"])
        sim.faults.add("conflict", "the pod is busy", times=1, only="/action")
        app.pod_actions.start("stop", pod)
        await wait_until(pilot, lambda: bool(toasts(app, "stop llama-lora-3090 failed")))
        await polled(pilot, app)
        sim.world.stop(DEMO_IDS["train"])  # then it stops by itself: nobody's ask explains it
        await polled(pilot, app)
        await pilot.pause()
        assert len(toasts(app, "llama-lora-3090 stopped (EXITED) without this podtui asking")) == 1


async def test_the_demo_keeps_its_alerts_in_the_app(make_app: Callable[..., PodtuiApp], receiver: Receiver) -> None:
    app = make_app(config=Config(alerts=parse_alert_rules({"webhook": receiver.url})))  # demo=True
    assert set(app.alerts.router.sinks) == {"app"} and app.alerts.webhook is None
