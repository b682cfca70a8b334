"""The footer fits any width: it drops the least useful keys whole instead of cutting one mid-word, keeps `?` (it
lists every key), lays itself out again on a resize and when the bindings change, and shows more at wider sizes."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from podtui.ui import keymap
from podtui.ui.app import PodtuiApp
from podtui.ui.widgets.fitted_footer import ALWAYS, FittedFooter, Slot, fit
from tests.helpers.pilot import loaded, wait_until

SIZES = [(80, 24), (120, 32), (200, 50)]


# --- checks ----------------------------------------------------------------------------------------------------


def footer_of(app: App[None]) -> FittedFooter:
    return app.screen.query_one(FittedFooter)


def shown(app: App[None]) -> list[str]:
    """The keys the footer shows, left to right (the palette's hint is docked on the right)."""
    keys = footer_of(app).query_children(FooterKey)
    return [k.key for k in sorted(keys, key=lambda k: k.region.x)]


def laid_out(footer: FittedFooter) -> bool:
    """The footer shows what fits its width and the bindings now (a resize or a bindings change lays it out
    again after the next refresh)."""
    kept, _ = fit(footer.slots(), footer.size.width)
    return footer.size.width > 0 and [k.key for k in footer.query_children(FooterKey)] == [s.binding.key for s in kept]


async def settled(pilot: Pilot[None], app: App[None]) -> None:
    await wait_until(pilot, lambda: laid_out(footer_of(app)) and bool(shown(app)))
    await pilot.pause()


def assert_fits(app: App[None]) -> None:
    """Every key lies whole inside the footer, none over another, and `?` is among them."""
    footer = footer_of(app)
    keys = list(footer.query_children(FooterKey))
    for key in keys:
        assert key.region.width > 0 and footer.region.contains_region(key.region), (key.key, key.region, footer.region)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            assert not a.region.overlaps(b.region), (a.key, b.key)
    assert "question_mark" in [k.key for k in keys]


# --- the choice of keys, without a screen --------------------------------------------------------------------


def slots(*ids: str) -> list[Slot]:
    out = []
    for order, key_id in enumerate(ids):
        key = keymap.BY_ID[key_id]
        binding = key.binding()
        display = keymap.key_label(binding.key.split(",")[0])
        out.append(Slot(binding, display, True, key.tooltip, key.rank, order, palette=key_id == "app.palette"))
    return out


POD_LIST = slots(
    "pods.filter",
    "pods.stop",
    "pods.resume",
    "pods.terminate",
    "pods.console",
    "pods.transfers",
    "pods.create",
    "pods.copy",
    "pods.zoom",
    "pods.sort",
    "app.quit",
    "app.help",
    "app.ssh-key",
    "app.palette",
)


def test_the_most_useful_keys_are_kept_and_help_always() -> None:
    assert keymap.BY_ID["app.help"].rank == ALWAYS
    everything = sum(s.width(False) for s in POD_LIST)
    previous: list[str] = []
    for width in range(0, everything + 1):
        kept, compact = fit(POD_LIST, width)
        names = [s.name for s in kept]
        assert "app.help" in names
        assert compact == (width < everything)  # roomy only while every key fits
        dropped = [s for s in POD_LIST if s not in kept]
        worst_kept = max(s.rank for s in kept)
        assert all(s.rank >= worst_kept for s in dropped), width  # never a key kept over a more useful one
        assert set(previous) <= set(names)  # a wider footer keeps what a narrower one showed
        previous = names
        assert sum(s.width(compact) for s in kept) <= width or names == ["app.help"], (width, names)
    assert len(previous) == len(POD_LIST)


def test_the_palette_hint_goes_before_the_pod_keys() -> None:
    kept, _ = fit(POD_LIST, 80)
    names = [s.name for s in kept]
    assert "app.palette" not in names and {"pods.stop", "pods.console", "pods.create", "app.help"} <= set(names)
    assert names[-1] == "app.help"  # beside the palette's place: the ways to every other key


# --- a tiny app on the key table -----------------------------------------------------------------------------


class PodsLike(Screen[None]):
    """The pod list's keys; `n` appears only once `can_create` is set (as a screen whose bindings change)."""

    BINDINGS = keymap.bindings("pods")
    can_create = True

    def compose(self) -> ComposeResult:
        yield Static("pods")
        yield FittedFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.can_create if action == "create_pod" else True


class Tiny(App[None]):
    BINDINGS = keymap.bindings("app")

    def __init__(self, screen: PodsLike) -> None:
        super().__init__()
        self.pods = screen

    def on_mount(self) -> None:
        self.push_screen(self.pods)


@pytest.mark.parametrize("width", [30, 60, 80, 100, 120, 160, 200])
async def test_keys_fit_any_width(width: int) -> None:
    app = Tiny(PodsLike())
    async with app.run_test(size=(width, 10)) as pilot:
        await settled(pilot, app)
        assert_fits(app)
        if width <= 120 or width >= 200:
            assert footer_of(app).compact == (width <= 120)  # compact once the roomy style would drop a key


async def test_a_resize_drops_keys_and_brings_them_back() -> None:
    app = Tiny(PodsLike())
    async with app.run_test(size=(200, 10)) as pilot:
        await settled(pilot, app)
        wide = shown(app)
        assert {"n", "y", "z", "ctrl+p"} <= set(wide)
        await pilot.resize_terminal(80, 10)
        await settled(pilot, app)
        assert_fits(app)
        narrow = shown(app)
        assert len(narrow) < len(wide) and set(narrow) < set(wide) and "ctrl+p" not in narrow
        await pilot.resize_terminal(200, 10)
        await settled(pilot, app)
        assert shown(app) == wide


async def test_a_bindings_change_lays_it_out_again() -> None:
    screen = PodsLike()
    screen.can_create = False
    app = Tiny(screen)
    async with app.run_test(size=(120, 10)) as pilot:
        await settled(pilot, app)
        assert "n" not in shown(app)
        before = len(shown(app))
        screen.can_create = True
        screen.refresh_bindings()
        await wait_until(pilot, lambda: "n" in shown(app))
        await settled(pilot, app)
        assert_fits(app)
        assert len(shown(app)) <= before + 1


# --- the demo app ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_pod_list_footer_fits(make_app: Callable[..., PodtuiApp], size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await settled(pilot, app)
        assert_fits(app)
        keys = shown(app)
        assert {"s", "r", "c", "n"} <= set(keys)  # stop, resume, console, new pod: room for them even at 80
        if size[0] >= 120:
            assert "ctrl+p" in keys


async def test_wider_shows_more(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZES[0]) as pilot:
        await loaded(pilot, app)
        counts = []
        for size in SIZES:
            await pilot.resize_terminal(*size)
            await settled(pilot, app)
            assert_fits(app)
            counts.append(len(shown(app)))
        assert counts == sorted(set(counts)), counts  # strictly more at each wider size


@pytest.mark.parametrize("key", ["enter", "t", "P"], ids=["details", "transfers", "gpus"])
async def test_other_screens_fit_80_columns(make_app: Callable[..., PodtuiApp], key: str) -> None:
    app = make_app()
    async with app.run_test(size=SIZES[0]) as pilot:
        await loaded(pilot, app)
        first = app.screen
        await pilot.press(key)
        await wait_until(pilot, lambda: app.screen is not first and bool(app.screen.query(FittedFooter)))
        await settled(pilot, app)
        assert_fits(app)
