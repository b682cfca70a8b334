"""Themes reach everything: pod statuses, GPU bars, the ticker, the status line, the transfer pane, the pod's
details, the GPU advisor, the doctor and the Hugging Face check take the theme's colours, what is already drawn is
recoloured when the theme changes, and textual-dark (the default) keeps podtui's own colours. In every theme the
states read on the theme's grounds and no two states look alike. A snapshot of the pod list in every built-in
theme, and of a pod's details in a light and a dark theme.

Update after reviewing the report: pytest tests/app/test_themes.py --snapshot-update
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
from textual.color import Color as RGB
from textual.pilot import Pilot
from textual.screen import Screen
from textual.theme import BUILTIN_THEMES
from textual.widgets import DataTable, Static

import podtui.ui.screens
from podtui.core.pod import PodStatus
from podtui.transfer.job import TransferJob
from podtui.ui import colours
from podtui.ui.app import PodtuiApp
from podtui.ui.pod_view import STATUS_STYLE
from podtui.ui.screens.gpus import GpusScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.transfer_view import STATE_STYLES, cells
from podtui.ui.widgets.account_bar import AccountBar, runway_style
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.pilot import loaded, wait_until

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
    assert [
        classic.spec(STATUS_STYLE[s])
        for s in ("RUNNING", "PROVISIONING", "STARTING", "EXITED", "ERROR", "TERMINATED", "UNKNOWN")
    ] == ["bold green", "bold yellow", "bold yellow", "grey62", "bold red", "red", "bold magenta"]
    assert [
        classic.spec(STATE_STYLES[s]) for s in ("verified", "failed", "waiting_for_code", "transferring", "verifying")
    ] == ["bold green", "bold red", "yellow", "cyan", "magenta"]
    assert classic.spec("badge") == "bold black on yellow" and classic.spec("alarm") == "bold white on red"


@pytest.mark.parametrize("theme", THEMES)
def test_every_role_has_a_colour_in_every_theme(theme: str) -> None:
    app = App[None]()
    app.theme = theme
    palette = colours.themed(app.current_theme, app.get_css_variables())
    for role in colours.ROLES:
        style = palette.style(role)
        assert isinstance(style, Style) and palette.spec(role) != role
    if theme != "textual-dark" and not app.current_theme.ansi:  # the theme's success, as text that reads
        variables = app.get_css_variables()
        success = colours.legible(RGB.parse(variables["text-success"]), _grounds(variables))
        assert palette.style("good").color.name == success.hex.lower()  # type: ignore[union-attr]
    assert runway_style(3600.0, 24, 4, palette) == palette.spec("alarm")


def _grounds(variables: dict[str, str]) -> list[RGB]:
    return [RGB.parse(variables["background"]), RGB.parse(variables["surface"])]


def _state_roles() -> set[str]:
    """The colour roles the states are written in: pod statuses, transfer states, the runway's."""
    styles = [*STATUS_STYLE.values(), *STATE_STYLES.values(), "bold good", "bold warn"]
    return {word for style in styles for word in style.split()} & set(colours.ROLES)


def test_contrast_is_wcags() -> None:
    black, white = RGB(0, 0, 0), RGB(255, 255, 255)
    assert colours.contrast(black, white) == pytest.approx(21) and colours.contrast(white, white) == 1
    assert colours.contrast(RGB.parse("#777777"), white) == pytest.approx(4.48, abs=0.01)
    grey = colours.legible(RGB.parse("#999999"), [white])
    assert colours.contrast(grey, white) >= colours.MIN_CONTRAST and grey.r < 0x99


@pytest.mark.parametrize("theme", [t for t in THEMES if not BUILTIN_THEMES[t].ansi])  # ANSI: the terminal's own
def test_the_states_read_on_the_themes_grounds(theme: str) -> None:
    app = App[None]()
    app.theme = theme
    variables = app.get_css_variables()
    palette = colours.palette(app)
    # textual-dark's classic colours, as Textual draws them (its ANSI theme), keep to the WCAG's 3:1 for large
    # or bold text; every other theme's to the 4.5:1 for any text
    least = 3.0 if theme == colours.CLASSIC_THEME else colours.MIN_CONTRAST
    for role in sorted(_state_roles()):
        colour = palette.style(role).color
        assert colour is not None, role
        rgb = RGB(*colour.get_truecolor(app.ansi_theme))
        for ground in _grounds(variables):
            assert colours.contrast(rgb, ground) >= least, (role, rgb.hex, ground.hex)


# RunPod's v2 statuses, grouped by the look they share: on the way up, stopped, gone wrong or gone
POD_STATES = (("RUNNING",), ("PROVISIONING", "STARTING"), ("EXITED",), ("ERROR", "TERMINATED"), ("UNKNOWN",))
TRANSFER_STATES = (
    ("verified",),
    ("failed",),
    ("verifying",),
    ("transferring",),
    ("waiting_for_code",),
    ("cancelled",),
    ("queued",),
)


def _alike(one: Style, two: Style) -> bool:
    """Whether two styles would be taken for one state: the same colour or near (an ANSI colour and its bright
    twin are one), dimmed alike; bold or not is no difference, and the terminal's default colour is no colour."""
    if bool(one.dim) != bool(two.dim):
        return False
    colour_one, colour_two = (None if s.color is None or s.color.is_default else s.color for s in (one, two))
    if colour_one is None or colour_two is None:
        return colour_one is colour_two
    if colour_one.number is not None and colour_one.number < 16:  # the terminal's own: by hue
        return colour_one.number % 8 == (colour_two.number or 0) % 8 and (colour_two.number or 0) < 16
    rgb_one, rgb_two = (RGB(*c.get_truecolor()) for c in (colour_one, colour_two))
    return colours.distance(rgb_one, rgb_two) < colours.MIN_DISTANCE


@pytest.mark.parametrize("theme", THEMES)
def test_no_two_states_look_alike(theme: str) -> None:
    # every status RunPod may send has its look, and is in one of the groups compared below
    assert {s for group in POD_STATES for s in group} == set(STATUS_STYLE) == {s.value for s in PodStatus}
    app = App[None]()
    app.theme = theme
    palette = colours.palette(app)
    for status, style in STATUS_STYLE.items():
        assert not _alike(palette.style(style), Style()), status  # not plain text either
    for groups, styles in ((POD_STATES, STATUS_STYLE), (TRANSFER_STATES, STATE_STYLES)):
        for i, group in enumerate(groups):
            for other in groups[i + 1 :]:
                for one in group:
                    for two in other:
                        assert not _alike(palette.style(styles[one]), palette.style(styles[two])), (one, two)


def test_the_ansi_themes_keep_the_terminals_colours_apart() -> None:
    for theme in ("ansi-dark", "ansi-light"):
        app = App[None]()
        app.theme = theme
        palette = colours.palette(app)
        assert [palette.spec(STATUS_STYLE[s]) for s in ("RUNNING", "STARTING", "EXITED", "ERROR", "UNKNOWN")] == [
            "bold green",
            "bold yellow",
            "dim",
            "bold red",
            "bold magenta",
        ]
        assert [palette.spec(STATE_STYLES[s]) for s in ("verified", "verifying", "failed")] == [
            "bold green",
            "magenta",
            "bold red",
        ]


def test_a_transfer_in_a_theme() -> None:
    app = App[None]()
    app.theme = "nord"
    nord = colours.palette(app)
    job = TransferJob("pod1", "pull", "a.bin", ".", pod_name="p", state="verified", total_bytes=10, done_bytes=10)
    row = cells(job, None, nord)
    assert row[7].style == nord.style("bold good") and nord.style("bold good").color.name == "#c2d4b3"  # type: ignore
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
        assert running_colour() == live_colour() == "#c2d4b3"  # nord's success, as text
        app.theme = "textual-dark"
        await pilot.pause()
        assert running_colour() == live_colour() == "ansi 2"


async def _open_running_pods_details(pilot: Pilot[None], app: PodtuiApp) -> PodDetailScreen:
    await loaded(pilot, app)
    table = app.screen.query_one(PodTable)
    assert table.selected_pod is not None and table.selected_pod.state == "RUNNING"  # the first row
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, PodDetailScreen))
    await pilot.pause()
    assert isinstance(app.screen, PodDetailScreen)
    return app.screen


@pytest.mark.parametrize("theme", ["textual-light", "nord"])
def test_pod_details_in_a_theme(snap_compare: Any, make_app: Callable[..., PodtuiApp], theme: str) -> None:
    app = make_app()

    async def ready(pilot: Pilot[None]) -> None:
        await _open_running_pods_details(pilot, app)
        app.theme = theme
        await pilot.pause()

    assert snap_compare(app, terminal_size=(96, 48), run_before=ready)  # under 100 columns: the details screen


def _segment_colour(widget: Static | DataTable[Any], text: str) -> str:
    """The colour of the first run of `text` the widget draws."""
    for y in range(widget.size.height):
        for segment in widget.render_line(y):
            if segment.text.strip() == text and segment.style is not None:
                return _colour(segment.style.color)
    raise AssertionError(f"{text!r} not drawn")


async def test_switching_theme_recolours_the_details_already_drawn(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(96, 48)) as pilot:  # the details screen, under 100 columns
        screen = await _open_running_pods_details(pilot, app)
        body = screen.query_one("#detail", Static)
        assert _segment_colour(body, "RUNNING") == "ansi 2"  # green, as podtui always drew it
        app.theme = "nord"
        await pilot.pause()
        assert _segment_colour(body, "RUNNING") == app.get_css_variables()["text-success"].lower() == "#c2d4b3"
        app.theme = "textual-light"
        await pilot.pause()
        assert _segment_colour(body, "RUNNING") == colours.palette(app).style("good").color.name  # type: ignore
        assert _segment_colour(body, "RUNNING") != app.get_css_variables()["success"].lower()  # 1.6:1, unreadable


async def test_switching_theme_recolours_the_advisors_stars(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(130, 40)) as pilot:
        await loaded(pilot, app)
        app.push_screen(GpusScreen("7b"))
        await wait_until(pilot, lambda: isinstance(app.screen, GpusScreen) and app.screen.advice is not None)
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        cursor = table.cursor_row
        assert _segment_colour(table, "★") == "ansi 2"
        app.theme = "nord"
        await pilot.pause()
        assert _segment_colour(table, "★") == "#c2d4b3" and table.cursor_row == cursor  # in place


def test_every_css_path_is_beside_its_screen() -> None:
    for path in Path(podtui.ui.screens.__file__).parent.glob("*.py"):
        module = __import__(f"podtui.ui.screens.{path.stem}", fromlist=["_"])
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Screen) and value.__module__ == module.__name__:
                assert "DEFAULT_CSS" not in vars(value), value
                if "CSS_PATH" in vars(value):
                    paths = value.CSS_PATH if isinstance(value.CSS_PATH, list) else [value.CSS_PATH]
                    for name in paths:  # a dialog's: the shared frame's, then its own
                        css = Path(inspect.getfile(value)).parent / str(name)
                        assert css.is_file(), css
    for name in PodtuiApp.CSS_PATH or ():  # type: ignore[union-attr]
        assert (Path(inspect.getfile(PodtuiApp)).parent / str(name)).is_file()
