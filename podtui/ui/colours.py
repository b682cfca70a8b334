"""The colours of states (a pod's status, a transfer's, the runway, the data's freshness), named by role and taken
from the current Textual theme, so that switching theme (ctrl+p, "Theme") recolours them too.

Widgets write their styles with role words ("bold good", "alarm") and look them up in the palette of the app's
theme when they draw. textual-dark, the default theme, keeps the ANSI colours podtui has always drawn with (its
screenshots show them); every other theme takes its colours from its own variables ($success, $warning...).
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

from rich.style import Style
from textual.app import App
from textual.color import Color
from textual.markup import parse_style
from textual.theme import Theme


class Role(NamedTuple):
    classic: str  # the Rich style textual-dark keeps
    themed: str  # the same, in the theme's variables


# Colour words, used in styles with Rich's own words: "bold good" is a running pod, "bold bad" a failed transfer.
ROLES: dict[str, Role] = {
    "good": Role("green", "$success"),  # running, verified, a busy GPU, a long runway, live data
    "warn": Role("yellow", "$warning"),  # starting, a half-busy GPU, waiting, a runway or budget nearly out
    "bad": Role("red", "$error"),  # dead, terminated, stuck, failed, stale, a budget spent
    "odd": Role("magenta", "$accent"),  # a status podtui does not know
    "moving": Role("cyan", "$primary"),  # a transfer under way, its bar, the burn's sparkline
    "checking": Role("magenta", "$accent"),  # a transfer being verified
    "muted": Role("grey62", "$text-muted"),  # a stopped pod; the ticker's words ("burn", "spent")
    "faint": Role("grey58", "$text-muted"),  # a pod's id, an idle GPU's figures
    "absent": Role("grey50", "$text-disabled"),  # no figure at all, a cancelled transfer's bar
    "track": Role("grey35", "$text-disabled"),  # the empty part of a progress bar
    "key": Role("cyan", "$accent"),  # a key on the help screen (the footer's keys are $accent too)
    # whole styles, text on a colour
    "badge": Role("bold black on yellow", "bold $text on $warning"),  # DEMO, an idle pod
    "alarm": Role("bold white on red", "bold $text on $error"),  # STALE, a runway about to end
}

CLASSIC_THEME = "textual-dark"


class Palette:
    """One theme's styles. A style is Rich's words with colour roles among them ("bold good"); words that are no
    role (bold, dim, italic) are Rich's own."""

    def __init__(self, name: str, roles: dict[str, str]) -> None:
        self.name = name
        self._roles = roles
        self._styles: dict[str, Style] = {}

    def spec(self, style: str) -> str:
        """The style as Rich reads it: "bold good" is "bold green" in textual-dark, "bold #a3be8c" in nord."""
        return " ".join(self._roles.get(word, word) for word in style.split())

    def style(self, style: str) -> Style:
        parsed = self._styles.get(style)
        if parsed is None:
            spec = self.spec(style)
            parsed = self._styles[style] = Style.parse(spec) if spec else Style()
        return parsed


CLASSIC = Palette(CLASSIC_THEME, {name: role.classic for name, role in ROLES.items()})


def _resolve(spec: str, variables: dict[str, str]) -> str:
    """A style in theme variables as a Rich style. A colour with alpha, or "auto" (the text colour that contrasts),
    is worked out over the style's own background, else over the theme's; an ANSI theme's colours stay ANSI (the
    terminal's own), a faded one dimmed."""
    parsed = parse_style(spec, variables)
    fg, bg = parsed.foreground, parsed.background
    ground = bg if bg is not None else Color.parse(variables.get("background", "black"))
    if bg is None and ground.ansi is None:
        # parse_style keeps no alpha on "auto N%" ($text-muted): the theme's background is what it fades into
        contrast = {name: (ground + ground.get_contrast_text(_alpha(value))).hex
                    for name, value in variables.items() if value.startswith("auto")}
        fg = parse_style(spec, {**variables, **contrast}).foreground
    dim = bool(parsed.dim)
    if fg is not None:
        if fg.ansi is not None or ground.ansi is not None:
            dim = dim or fg.a < 1
        else:
            fg = ground + fg
    style = Style(color=fg.rich_color if fg is not None else None, bgcolor=bg.rich_color if bg is not None else None,
                  bold=parsed.bold or None, dim=dim or None, italic=parsed.italic or None)
    return str(style)


def _alpha(value: str) -> float:
    """ "auto 60%" -> 0.6"""
    _, _, percent = value.partition(" ")
    return float(percent.strip().rstrip("%")) / 100 if percent.strip() else 1.0


def themed(theme: Theme, variables: dict[str, str]) -> Palette:
    """The palette of a theme, given its CSS variables (App.get_css_variables)."""
    if theme.name == CLASSIC_THEME:
        return CLASSIC
    return Palette(theme.name, {name: _resolve(role.themed, variables) for name, role in ROLES.items()})


# The palette of each app's current theme, made once per theme change.
_current: weakref.WeakKeyDictionary[App[Any], tuple[Theme, Palette]] = weakref.WeakKeyDictionary()


def palette(app: App[Any]) -> Palette:
    """The palette of the app's current theme."""
    theme = app.current_theme
    cached = _current.get(app)
    if cached is not None and cached[0] is theme:
        return cached[1]
    made = CLASSIC if theme.name == CLASSIC_THEME else themed(theme, app.get_css_variables())
    _current[app] = (theme, made)
    return made
