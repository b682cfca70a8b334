"""The app as the CLI builds it (services, then build_app), for tests anywhere in the suite."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from podtui.core.api import RunPodApi
from podtui.core.services import Services

if TYPE_CHECKING:
    from podtui.ui.app import PodtuiApp

RUN_OPTIONS = ("poll_interval_s", "read_only", "exit_when", "screenshot")


def build_test_app(api: RunPodApi, clock: Callable[[], float], **kw: Any) -> PodtuiApp:
    """The app on `api`, with the demo's defaults and a long poll interval (tests decide when to poll, so nothing
    moves under an assertion). `kw` names services (config, ssh_settings, key_path, ...) and run options
    (read_only, poll_interval_s, ...) alike."""
    from podtui.ui.build import build_app  # here, so tests that need no UI do not load Textual

    options = {"poll_interval_s": 600.0, **{k: kw.pop(k) for k in RUN_OPTIONS if k in kw}}
    return build_app(Services(api, **{"demo": True, "clock": clock, **kw}), **options)
