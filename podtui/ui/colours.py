"""The colours of states (a pod's status, a transfer's, the runway, the data's freshness), named by role and taken
from the current Textual theme, so that switching theme (ctrl+p, "Theme") recolours them too.

Widgets write their styles with role words ("bold good", "alarm") and look them up in the palette of the app's
theme when they draw. textual-dark, the default theme, keeps the ANSI colours podtui has always drawn with (its
screenshots show them), and the ANSI themes keep the same terminal colours, with dim for what is muted. Every other
theme takes its colours from its own variables: text from its text colours ($text-success, $text-warning...),
darkened or lightened until it reads on the theme's background and surface (MIN_CONTRAST), and a state's colour
never one that looks like another state's (MIN_DISTANCE).
"""

from __future__ import annotations

import math
import weakref
from typing import Any, NamedTuple

from rich.style import Style
from textual.app import App
from textual.color import Color, rgb_to_lab
from textual.markup import parse_style
from textual.theme import Theme


class Role(NamedTuple):
    classic: str  # the Rich style textual-dark keeps
    themed: str  # the same, in the theme's variables
    ansi: str = ""  # in an ANSI theme (the terminal's own colours), when not the classic style
    # other variables to try, in order, when `themed` looks like one of the STATES' colours
    or_else: tuple[str, ...] = ()


_APART = ("$text-secondary", "$text-primary")

# Colour words, used in styles with Rich's own words: "bold good" is a running pod, "bold bad" a failed transfer.
ROLES: dict[str, Role] = {
    "good": Role("green", "$text-success"),  # running, verified, a busy GPU, a long runway, live data
    "warn": Role("yellow", "$text-warning"),  # starting, a half-busy GPU, waiting, a runway or budget nearly out
    "bad": Role("red", "$text-error"),  # dead, terminated, stuck, failed, stale, a budget spent
    "odd": Role("magenta", "$text-accent", or_else=_APART),  # a status podtui does not know
    "moving": Role("cyan", "$text-primary"),  # a transfer under way, its bar, the burn's sparkline
    "checking": Role("magenta", "$text-accent", or_else=_APART),  # a transfer being verified
    "muted": Role("grey62", "$text-muted", "dim"),  # a stopped pod; the ticker's words ("burn", "spent")
    "faint": Role("grey58", "$text-muted", "dim"),  # a pod's id, an idle GPU's figures
    "absent": Role("grey50", "$text-disabled", "dim"),  # no figure at all, a cancelled transfer's bar
    "track": Role("grey35", "$text-disabled", "dim"),  # the empty part of a progress bar
    "key": Role("cyan", "$text-accent"),  # a key on the help screen
    "command": Role("cyan", "$text-accent"),  # a command to type: the doctor's fixes
    # whole styles, text on a colour
    "badge": Role("bold black on yellow", "bold $text on $warning"),  # DEMO, an idle pod
    "alarm": Role("bold white on red", "bold $text on $error"),  # STALE, a runway about to end
    "badge-pass": Role("black on green", "$text on $success"),  # the doctor's verdicts
    "badge-warn": Role("black on yellow", "$text on $warning"),
    "badge-fail": Role("white on red", "$text on $error"),
    "badge-skip": Role("black on grey50", "$text on $panel"),
}

STATES = ("good", "warn", "bad", "moving", "muted")  # the colours a role with `or_else` must not look like
FAINT = ("absent", "track")  # meant to recede: not made legible
MIN_CONTRAST = 4.5  # WCAG 2's least contrast for text (AA), against the theme's background and surface
MIN_DISTANCE = 10.0  # CIE76 distance in Lab: under it two colours read as one (2.3 is the least one can tell)

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


def luminance(colour: Color) -> float:
    """WCAG 2's relative luminance of an opaque colour."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = colour.rgb
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def contrast(one: Color, two: Color) -> float:
    """WCAG 2's contrast ratio of two opaque colours, from 1 (the same) to 21 (black on white)."""
    light, dark = sorted((luminance(one), luminance(two)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def distance(one: Color, two: Color) -> float:
    """How far apart two colours look: CIE76, the distance in Lab."""
    return math.dist(rgb_to_lab(one), rgb_to_lab(two))


def legible(colour: Color, grounds: list[Color]) -> Color:
    """The colour darkened on light grounds, lightened on dark ones (in Lab's lightness, so it keeps its hue), until
    it reads on each of them at MIN_CONTRAST."""
    light = grounds[0].brightness >= 0.5
    for _ in range(100):
        if min(contrast(colour, ground) for ground in grounds) >= MIN_CONTRAST:
            break
        colour = colour.darken(0.01) if light else colour.lighten(0.01)
    return colour


def _resolve(spec: str, variables: dict[str, str], legibly: bool = False) -> str:
    """A style in theme variables as a Rich style. A colour with alpha, or "auto" (the text colour that contrasts),
    is worked out over the style's own background, else over the theme's; an ANSI colour stays ANSI (the
    terminal's own), a faded one dimmed. legibly: text on the theme's grounds, made legible there."""
    parsed = parse_style(spec, variables)
    fg, bg = parsed.foreground, parsed.background
    ground = bg if bg is not None else Color.parse(variables.get("background", "black"))
    if bg is None and ground.ansi is None:
        # parse_style keeps no alpha on "auto N%" ($text-muted): the theme's background is what it fades into
        contrast = {
            name: (ground + ground.get_contrast_text(_alpha(value))).hex
            for name, value in variables.items()
            if value.startswith("auto")
        }
        fg = parse_style(spec, {**variables, **contrast}).foreground
    dim = bool(parsed.dim)
    if fg is not None:
        if fg.ansi is not None or ground.ansi is not None:
            dim = dim or fg.a < 1
        else:
            fg = ground + fg
            if legibly and bg is None:
                fg = legible(fg, [ground, Color.parse(variables.get("surface", ground.hex))])
    style = Style(
        color=fg.rich_color if fg is not None else None,
        bgcolor=bg.rich_color if bg is not None else None,
        bold=parsed.bold or None,
        dim=dim or None,
        italic=parsed.italic or None,
    )
    return str(style)


def _alpha(value: str) -> float:
    """ "auto 60%" -> 0.6"""
    _, _, percent = value.partition(" ")
    return float(percent.strip().rstrip("%")) / 100 if percent.strip() else 1.0


def _colour(style: str) -> Color | None:
    colour = Style.parse(style).color
    return Color.from_rich_color(colour) if colour is not None and colour.triplet is not None else None


def _apart(style: str, others: list[str]) -> bool:
    """Whether a style's colour looks like none of the others' (a colour that is not RGB is taken as apart)."""
    colour = _colour(style)
    return colour is None or all(
        other is None or distance(colour, other) >= MIN_DISTANCE for other in map(_colour, others)
    )


def themed(theme: Theme, variables: dict[str, str]) -> Palette:
    """The palette of a theme, given its CSS variables (App.get_css_variables)."""
    if theme.name == CLASSIC_THEME:
        return CLASSIC
    if theme.ansi:  # the theme's own variables give one colour to several states (ansi-dark's accent is green)
        return Palette(theme.name, {name: role.ansi or role.classic for name, role in ROLES.items()})
    roles: dict[str, str] = {}
    for name, role in sorted(ROLES.items(), key=lambda item: bool(item[1].or_else)):  # the STATES first
        styles = [_resolve(spec, variables, legibly=name not in FAINT) for spec in (role.themed, *role.or_else)]
        others = [roles[state] for state in STATES] if role.or_else else []
        roles[name] = next((style for style in styles if _apart(style, others)), styles[0])
    return Palette(theme.name, roles)


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
