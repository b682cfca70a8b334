"""An exception a worker did not expect is handled once: the app logs it and says it in one notification, and the
screen whose status line the worker was to fill says there that it failed, instead of "loading…" for ever."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from textual.widgets import Static

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
