"""The one way the App is made, for the CLI, the tests, the benchmarks and the screenshot script alike: the services,
plus the run's options merged with the config (a flag on the command line, or its setting in config.toml)."""

from __future__ import annotations

from pathlib import Path

from podtui.core.services import Services
from podtui.ui.app import PodtuiApp
from podtui.ui.options import ExitWhen, RunOptions


def build_app(
    services: Services,
    *,
    read_only: bool = False,
    poll_interval_s: float | None = None,
    exit_when: ExitWhen | None = None,
    screenshot: Path | None = None,
) -> PodtuiApp:
    """read_only: on if asked here or in the config. poll_interval_s: the config's unless given."""
    config = services.config
    app = PodtuiApp(
        services,
        RunOptions(
            poll_interval_s=config.poll_interval_s if poll_interval_s is None else poll_interval_s,
            read_only=read_only or config.read_only,
            exit_when=exit_when,
            screenshot=screenshot.resolve() if screenshot is not None else None,
        ),
    )
    return app
