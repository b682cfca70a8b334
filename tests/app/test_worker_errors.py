"""An exception a worker did not expect is handled once: the app logs it and says it in one notification, and the
screen whose status line the worker was to fill says there that it failed, instead of "loading…" for ever."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import pytest
from textual.widgets import Static

from podtui.core import actions
from podtui.ui.app import PodtuiApp
from tests.helpers.pilot import loaded, wait_until


class Boom(RuntimeError):
    pass


def shown(app: PodtuiApp, selector: str) -> str:
    """What the top screen's `selector` Static says ("" before the screen is composed)."""
    found = app.screen.query(selector).results(Static)
    return next((str(s.render()) for s in found), "")


async def test_the_gpu_advisor_says_it_failed_and_the_app_says_it_once(
    make_app: Callable[..., PodtuiApp], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app()

    def broken() -> object:
        raise Boom("the catalogue broke")

    async with app.run_test(size=(130, 44)) as pilot:
        await loaded(pilot, app)
        monkeypatch.setattr(app.services.api, "gpu_types", broken)
        app.clear_notifications()
        with caplog.at_level(logging.ERROR):
            app.navigator.open_gpus()
            await wait_until(pilot, lambda: "unexpected error" in shown(app, "#status"))
            await pilot.pause(0.2)  # time for a second notification, were there one
        status = shown(app, "#status")
        assert "loading" not in status
        assert status == "cannot load GPU types: unexpected error: Boom: the catalogue broke (details in the log)"
        notes = [n.message for n in app._notifications]
        assert notes == ["loading GPU types failed: unexpected error: Boom: the catalogue broke"]
        logged = [r for r in caplog.records if r.getMessage() == "loading GPU types failed"]
        assert len(logged) == 1 and logged[0].exc_info is not None  # the traceback, in the log only


async def test_a_worker_that_fails_after_its_screen_closed_is_still_logged(
    make_app: Callable[..., PodtuiApp], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Closing a screen cancels its workers, and Textual reports nothing of a cancelled one: the error is logged
    where it happened, and nobody is notified about a screen that is gone."""
    app = make_app()
    release = threading.Event()

    def slow_then_broken() -> object:
        release.wait(10)
        raise Boom("too late")

    async with app.run_test(size=(130, 44)) as pilot:
        await loaded(pilot, app)
        monkeypatch.setattr(app.services.api, "gpu_types", slow_then_broken)
        app.clear_notifications()
        with caplog.at_level(logging.ERROR):
            app.navigator.open_gpus()
            await wait_until(pilot, lambda: "loading" in shown(app, "#status"))
            await pilot.press("escape")
            await wait_until(pilot, lambda: "loading" not in shown(app, "#status"))
            release.set()
            await wait_until(
                pilot, lambda: any("failed after its screen closed" in r.getMessage() for r in caplog.records)
            )
        logged = [r for r in caplog.records if "failed after its screen closed" in r.getMessage()]
        assert len(logged) == 1 and logged[0].exc_info is not None
        assert all("too late" not in n.message for n in app._notifications)


@pytest.mark.parametrize("verb", ["stop", "terminate"])
async def test_an_action_that_fails_unexpectedly_names_the_pod_and_refreshes(
    verb: str, make_app: Callable[..., PodtuiApp], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app()

    def broken(*args: object, **kwargs: object) -> None:
        raise Boom("the SDK broke")

    async with app.run_test(size=(130, 44)) as pilot:
        await loaded(pilot, app)
        pod = next(p for p in app.pods() if p.status.value == "RUNNING")
        monkeypatch.setattr(actions, "perform", broken)
        polls = app.poller.done
        app.clear_notifications()
        app.pod_actions.start(verb, pod)  # type: ignore[arg-type]
        await wait_until(pilot, lambda: any("failed" in n.message for n in app._notifications))
        await wait_until(pilot, lambda: app.poller.done > polls)  # refreshed: the pod may have changed anyway
        failed = [n.message for n in app._notifications if "failed" in n.message]
        assert failed == [f"{verb} {pod.name} failed: unexpected error: Boom: the SDK broke"]
