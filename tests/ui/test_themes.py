"""Themes reach everything: pod statuses, GPU bars, the ticker, the status line and the transfer pane take the
theme's colours, an already drawn table is recoloured when the theme changes, and textual-dark (the default)
keeps podtui's own colours. A snapshot of the pod list in every built-in theme.

Update after reviewing the report: pytest tests/ui/test_themes.py --snapshot-update
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.color import Color
from rich.style import Style
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.theme import BUILTIN_THEMES

import podtui.ui.screens
from podtui.transfer.job import TransferJob
from podtui.ui import colours
from podtui.ui.app import PodtuiApp
from podtui.ui.pod_view import STATUS_STYLE
from podtui.ui.transfer_view import STATE_STYLES, cells
from podtui.ui.widgets.account_bar import AccountBar, runway_style
from podtui.ui.widgets.pod_table import PodTable
from tests.ui.conftest import loaded

THEMES = sorted(BUILTIN_THEMES)


def test_every_built_in_theme_is_tested() -> None:
    assert sorted(App().available_themes) == THEMES


@pytest.mark.parametrize("theme", THEMES)
def test_pod_list_in_each_theme(snap_compare: Any, make_app: Callable[..., PodtuiApp], theme: str) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await loaded(pilot, app)
        app.theme = theme
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=ready)


def test_textual_dark_keeps_podtuis_own_colours() -> None:
    classic = colours.CLASSIC
    assert [classic.spec(STATUS_STYLE[s]) for s in ("RUNNING", "STARTING", "EXITED", "DEAD", "TERMINATED", "UNKNOWN")
            ] == ["bold green", "bold yellow", "grey62", "bold red", "red", "bold magenta"]
    assert [classic.spec(STATE_STYLES[s]) for s in ("verified", "failed", "waiting_for_code", "transferring",
                                                     "verifying")] == ["bold green", "bold red", "yellow", "cyan",
                                                                       "magenta"]
    assert classic.spec("badge") == "bold black on yellow" and classic.spec("alarm") == "bold white on red"


@pytest.mark.parametrize("theme", THEMES)
def test_every_role_has_a_colour_in_every_theme(theme: str) -> None:
    app = App[None]()
    app.theme = theme
    palette = colours.themed(app.current_theme, app.get_css_variables())
    for role in colours.ROLES:
        style = palette.style(role)
        assert isinstance(style, Style) and palette.spec(role) != role
    if theme != "textual-dark" and not app.current_theme.ansi:
        assert palette.style("good").color.name == app.get_css_variables()["success"].lower()  # type: ignore[union-attr]
    assert runway_style(3600.0, 24, 4, palette) == palette.spec("alarm")


def test_a_transfer_in_a_theme() -> None:
    app = App[None]()
    app.theme = "nord"
    nord = colours.palette(app)
    job = TransferJob("pod1", "pull", "a.bin", ".", pod_name="p", state="verified", total_bytes=10, done_bytes=10)
    row = cells(job, None, nord)
    assert row[7].style == nord.style("bold good") and nord.style("bold good").color.name == "#a3be8c"  # type: ignore
    assert colours.palette(app) is nord  # made once per theme


def _colour(color: Color | None) -> str:
    assert color is not None
    return color.triplet.hex if color.triplet is not None else f"ansi {color.number}"


async def test_switching_theme_recolours_what_is_drawn(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(130, 30)) as pilot:
        await loaded(pilot, app)
        table = app.screen.query_one(PodTable)

        def running_colour() -> str:
            for y in range(2, 8):  # the first pod is under the cursor, in the cursor's colours
                for segment in table.render_line(y):
                    if segment.text == "RUNNING" and segment.style is not None:
                        return _colour(segment.style.color)
            raise AssertionError("no RUNNING pod drawn")

        def live_colour() -> str:
            segments = app.screen.query_one(AccountBar).render_line(0)
            return next(_colour(s.style.color) for s in segments if "live" in s.text and s.style)

        assert running_colour() == live_colour() == "ansi 2"  # green, as podtui always drew it
        app.theme = "nord"
        await pilot.pause()
        assert running_colour() == live_colour() == "#a3be8c"  # nord's success
        app.theme = "textual-dark"
        await pilot.pause()
        assert running_colour() == live_colour() == "ansi 2"


def test_every_css_path_is_beside_its_screen() -> None:
    for path in Path(podtui.ui.screens.__file__).parent.glob("*.py"):
        module = __import__(f"podtui.ui.screens.{path.stem}", fromlist=["_"])
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Screen) and value.__module__ == module.__name__:
                assert "DEFAULT_CSS" not in vars(value), value
                if "CSS_PATH" in vars(value):
                    css = Path(inspect.getfile(value)).parent / str(value.CSS_PATH)
                    assert css.is_file(), css
    for name in PodtuiApp.CSS_PATH or ():  # type: ignore[union-attr]
        assert (Path(inspect.getfile(PodtuiApp)).parent / str(name)).is_file()
