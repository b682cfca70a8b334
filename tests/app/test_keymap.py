"""Keys declared once: every binding comes from the key table with an id and a tooltip; the help screen, the
palette's hints and the keys named in the screens' words are made from it; config.toml's [keys] remaps any binding
by id; the selected pod's keys are off while no pod is under the cursor; the terminate question's y and n never
answer while the pod's name is asked for."""

from __future__ import annotations

import importlib
import io
import pkgutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import pytest
from textual.binding import Binding
from textual.command import CommandPalette
from textual.dom import DOMNode
from textual.widget import Widget
from textual.widgets import Input

import podtui.ui
from podtui.cli import config_cmd
from podtui.core.config import Config, ConfigError, load_config
from podtui.core.paths import Paths
from podtui.sim.server import SimApiServer
from podtui.ui import key_remaps, keymap
from podtui.ui.app import PodtuiApp
from podtui.ui.pod_actions import KEY_REFUSED
from podtui.ui.screens.add_transfer import AddTransferScreen
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.console import ConsoleScreen
from podtui.ui.screens.help import HelpScreen
from podtui.ui.screens.pod_detail import PodDetailScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.screens.terminate import TerminateScreen
from podtui.ui.screens.transfers import TransfersScreen
from podtui.ui.widgets.jobs_panel import JobsPanel
from podtui.ui.widgets.log_panel import LogPanel
from podtui.ui.widgets.pod_table import PodTable
from podtui.ui.widgets.services_panel import ServicesPanel
from podtui.ui.widgets.sync_panel import SyncPanel
from podtui.ui.widgets.transfer_table import TransferTable
from tests.helpers.pilot import loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS

SIZE = (130, 29)  # the one-screen flow: enter opens the details screen (docs/architecture.md#panes)


def _classes_with_bindings() -> Iterator[type[DOMNode]]:
    """Every App, screen and widget class in podtui.ui that declares BINDINGS."""
    for info in pkgutil.walk_packages(podtui.ui.__path__, "podtui.ui."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, DOMNode)
                and value.__module__ == info.name
                and "BINDINGS" in vars(value)
            ):
                yield value


def test_every_binding_comes_from_the_table_with_an_id_and_a_tooltip() -> None:
    bound: set[str] = set()
    classes = list(_classes_with_bindings())
    assert {c.__name__ for c in classes} >= {
        "PodtuiApp",
        "PodListScreen",
        "PodTable",
        "PodDetailScreen",
        "ConsoleScreen",
        "TransfersScreen",
        "HelpScreen",
    }
    for cls in classes:
        for binding in vars(cls)["BINDINGS"]:
            assert isinstance(binding, Binding), cls
            assert binding.id in keymap.BY_ID, (cls, binding)
            assert binding.tooltip and binding == keymap.BY_ID[binding.id].binding()
            bound.add(binding.id)
    assert bound == set(keymap.BY_ID)  # and every key of the table is bound somewhere


def test_the_table_is_consistent() -> None:
    assert len(keymap.BY_ID) == len(keymap.KEYS)  # ids are unique
    for key in keymap.KEYS:
        assert key.scopes and set(key.scopes) <= set(keymap.SCOPES), key.id
        assert key.id.split(".")[0] in keymap.SCOPES, key.id  # <where>.<what>
        assert key.tooltip[0].isupper(), key.id
    for scope in keymap.SCOPES:
        assert keymap.bindings(scope), scope
    for _, rows in keymap.HELP:
        for row in rows:
            assert all(i in keymap.BY_ID for i in row.ids)
            assert row.ids or (row.text is not None and row.keys is not None)
    with pytest.raises(ValueError):
        keymap.bindings("nowhere")


def test_help_rows_come_from_the_table() -> None:
    rows = dict(keymap.help_rows(None))
    pods = dict(rows["Pods"])
    assert pods["s"] == "stop the pod (asks first)"
    assert pods["o / O"] == "sort by the next column / reverse the order"
    assert pods["/"] == "filter by name, id, status or GPU (escape clears)"  # {pods.clear-filter} filled in
    assert dict(rows["Transfers"])["a"].endswith("ctrl+l lists the pod's folder")
    assert dict(rows["Console"])["x / R / S"] == "close / reconnect / save output to a text file"


def test_key_labels() -> None:
    assert keymap.key_label("question_mark") == "?"
    assert keymap.key_label("ctrl+right_square_bracket") == "ctrl+]"
    assert keymap.key_label("ctrl+r") == "ctrl+r"


# --- config.toml [keys] ------------------------------------------------------------------------------------


def _config(paths: Paths, text: str) -> Config:
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(text)
    return load_config(paths)


def test_keys_section_by_id_dotted_quoted_or_as_a_table(paths: Paths) -> None:
    config = _config(
        paths,
        '[keys]\npods.stop = "x"\n"pods.doctor" = "ctrl+d"\ntransfers.remove = "delete, d"\n'
        '[keys.console]\nsave = "ctrl+s"\n',
    )
    assert config.keys == {
        "pods.stop": "x",
        "pods.doctor": "ctrl+d",
        "transfers.remove": "delete,d",
        "console.save": "ctrl+s",
    }
    assert _config(paths, "poll_interval_s = 5\n").keys == {}


@pytest.mark.parametrize(
    "line",
    [
        'pods.stop = ""',
        'pods.stop = "ctrl+"',
        'pods.stop = "hyperspace+x"',
        'pods.stop = "a b"',
        "pods.stop = 3",
        'pods.stop = ["x"]',
    ],
)
def test_a_value_that_is_no_key_is_refused(paths: Paths, line: str) -> None:
    with pytest.raises(ConfigError, match=r"\[keys\] pods.stop must be a key or keys"):
        _config(paths, f"[keys]\n{line}\n")


def test_keys_must_be_a_table(paths: Paths) -> None:
    with pytest.raises(ConfigError, match="keys must be a table"):
        _config(paths, 'keys = "x"\n')


def test_config_keys_lists_every_id_and_the_remaps(paths: Paths) -> None:
    _config(paths, '[keys]\npods.stop = "x"\n')
    out = io.StringIO()
    assert config_cmd.cmd_keys(paths, out) == 0
    text = out.getvalue()
    assert all(key.id in text for key in keymap.KEYS)
    assert "x *" in next(line for line in text.splitlines() if line.startswith("pods.stop "))
    _config(paths, '[keys]\npods.stp = "x"\n')
    out = io.StringIO()
    assert config_cmd.cmd_keys(paths, out) == 1
    assert "pods.stp: no key has this id" in out.getvalue()
    out = io.StringIO()
    config_cmd.cmd_show(paths, out)
    assert "pods.stp = x   (no key has this id" in out.getvalue()


def test_the_table_has_no_clash_of_its_own() -> None:
    assert key_remaps.check({}).clashes == []
    checked = key_remaps.check({k.id: k.keys for k in keymap.KEYS})  # every binding "remapped" to its own keys
    assert checked.clashes == [] and set(checked.applied) == set(keymap.BY_ID)


def test_where_a_key_press_goes_matches_the_screens() -> None:
    """The clash check's picture of the screens (which are dialogs, which widgets sit in which) is theirs."""
    from textual.screen import ModalScreen, Screen

    screens = {
        cls: next(s for s in key_remaps.SCREENS if keymap.bindings(s) == vars(cls)["BINDINGS"])
        for cls in _classes_with_bindings()
        if issubclass(cls, Screen)
    }
    assert sorted(screens.values()) == sorted(key_remaps.SCREENS)  # one class for each
    for cls, scope in screens.items():
        assert (scope in key_remaps.MODAL) == issubclass(cls, ModalScreen), cls
    assert vars(PodTable)["BINDINGS"] == keymap.bindings("pod-table")
    assert vars(TransferTable)["BINDINGS"] == keymap.bindings("transfer-table")
    assert vars(LogPanel)["BINDINGS"] == keymap.bindings("logs")
    assert vars(ServicesPanel)["BINDINGS"] == keymap.bindings("services")
    assert vars(JobsPanel)["BINDINGS"] == keymap.bindings("jobs")
    assert vars(SyncPanel)["BINDINGS"] == keymap.bindings("sync")
    assert key_remaps.INSIDE == {
        "pods": ("pod-table",),
        "transfers": ("transfer-table",),
        "log-screen": ("logs",),
        "service-screen": ("services",),
        "jobs-screen": ("jobs",),
        "sync-screen": ("sync",),
    }
    inside = {"pod-table", "transfer-table", "logs", "services", "jobs", "sync"}
    assert set(keymap.SCOPES) == {*key_remaps.SCREENS, *inside, "app"}


def _refusals(remaps: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    checked = key_remaps.check(remaps)
    return checked.applied, checked.problems(remaps)


@pytest.mark.parametrize(
    ("remaps", "said"),
    [
        ({"pods.console": "s"}, ['pods.console = "s": s is taken by pods.stop; it keeps c']),
        ({"pods.filter": "q"}, ['pods.filter = "q": q is taken by app.quit; it keeps /']),
        # pods.stop is bound on the details screen too, where h goes back
        ({"pods.stop": "h"}, ['pods.stop = "h": h is taken by details.back; it keeps s']),
        ({"pods.filter": "tab"}, ['pods.filter = "tab": tab is taken by Textual\'s focus next; it keeps /']),
        ({"confirm.yes": "ctrl+p"}, ['confirm.yes = "ctrl+p": ctrl+p is taken by app.palette; it keeps y']),
        (
            {"pods.stop": "x", "pods.resume": "x"},
            [
                'pods.stop = "x": pods.resume is remapped to x too; it keeps s',
                'pods.resume = "x": pods.stop is remapped to x too; it keeps r',
            ],
        ),
        # resume cannot have t, so it keeps r, which stop then cannot have
        (
            {"pods.stop": "r", "pods.resume": "t"},
            [
                'pods.stop = "r": r is taken by pods.resume; it keeps s',
                'pods.resume = "t": t is taken by pods.transfers; it keeps r',
            ],
        ),
    ],
)
def test_a_remap_onto_a_key_in_use_is_refused(remaps: dict[str, str], said: list[str]) -> None:
    assert _refusals(remaps) == ({}, said)


@pytest.mark.parametrize(
    ("remaps", "widget"),
    [
        ({"gpus.create": "down"}, "DataTable"),  # the advisor's table has the focus and moves its cursor
        ({"transfers.cancel": "up"}, "DataTable"),
        ({"doctor.run": "down"}, "OptionList"),
        ({"welcome.later": "home"}, "Input"),
    ],
)
def test_a_remap_onto_a_focused_widgets_key_is_refused(remaps: dict[str, str], widget: str) -> None:
    """The focused widget's own bindings come first: the remapped key would never reach the screen."""
    [clash] = key_remaps.check(remaps).clashes
    assert clash.id in remaps and clash.other.startswith(f"the {widget}'s ")


@pytest.mark.parametrize(
    "remaps",
    [
        {"pods.stop": "r", "pods.resume": "s"},  # a swap
        {"pods.stop": "r", "pods.resume": "t", "pods.transfers": "s"},  # a round
        {"help.close": "escape,q"},  # q closes the help, over the App's q, as by default
        {"confirm.yes": "q"},  # the App's q does not reach a dialog
        {"transfers.add": "A"},  # the pod list's A is another screen's
    ],
)
def test_swaps_and_keys_free_where_they_are_pressed_apply(remaps: dict[str, str]) -> None:
    assert _refusals(remaps) == (remaps, [])


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("esc", 'no key named "esc" (escape?)'),
        ("enterr", 'no key named "enterr" (enter?)'),
        ("ctrl+X", 'no key named "ctrl+X" (ctrl+shift+x?)'),
        ("shift+x", 'no key named "shift+x" (X?)'),
        ("Escape", 'no key named "Escape" (escape?)'),
        ("x,solidus", 'no key named "solidus" (slash?)'),
    ],
)
def test_a_key_name_textual_never_sends_is_refused(value: str, said: str) -> None:
    assert _refusals({"pods.stop": value}) == ({}, [f'pods.stop = "{value}": {said}; it keeps s'])


@pytest.mark.parametrize(
    ("value", "applied"),
    [
        ("?", "question_mark"),
        ("ctrl+/", "ctrl+slash"),
        ("f25", "f25"),
        ("full_stop", "full_stop"),
        ("§", "section_sign"),
        ("ctrl+shift+x", "ctrl+shift+x"),
        ("X", "X"),
        ("Ctrl+x", "ctrl+x"),
        ("é", "é"),
    ],
)
def test_key_names_textual_sends_apply_as_it_matches_them(value: str, applied: str) -> None:
    assert _refusals({"confirm.yes": value}) == ({"confirm.yes": applied}, [])  # a dialog: the App's ? is not there


def test_a_modifiers_case_is_no_error(paths: Paths) -> None:
    assert _config(paths, '[keys]\npods.stop = "Ctrl+x, CTRL+Shift+y"\n').keys == {"pods.stop": "ctrl+x,ctrl+shift+y"}


def test_config_keys_marks_what_is_refused(paths: Paths) -> None:
    _config(paths, '[keys]\npods.console = "s"\npods.stop = "esc"\npods.doctor = "ctrl+d"\n')
    out = io.StringIO()
    assert config_cmd.cmd_keys(paths, out) == 1
    lines = out.getvalue().splitlines()
    assert "c !" in next(line for line in lines if line.startswith("pods.console "))
    assert "s !" in next(line for line in lines if line.startswith("pods.stop "))
    assert "ctrl+d *" in next(line for line in lines if line.startswith("pods.doctor "))
    assert '  pods.console = "s": s is taken by pods.stop; it keeps c' in lines
    assert '  pods.stop = "esc": no key named "esc" (escape?); it keeps s' in lines
    out = io.StringIO()
    config_cmd.cmd_show(paths, out)
    assert "pods.console = s   (s is taken by pods.stop: ignored" in out.getvalue()
    assert 'pods.stop = esc   (no key named "esc" (escape?): ignored' in out.getvalue()
    assert "pods.doctor = ctrl+d\n" in out.getvalue()


# --- the app -----------------------------------------------------------------------------------------------


async def test_a_remapped_key_acts_and_is_shown_everywhere(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app(config=Config(keys={"pods.stop": "x", "pods.doctor": "ctrl+d"}))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("s")  # no longer stop
        await pilot.pause()
        assert isinstance(app.screen, PodListScreen)
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))
        shown = {active.binding.id: key for key, active in app.active_bindings.items()}  # what the footer shows
        assert shown["pods.stop"] == "x" and shown["pods.doctor"] == "ctrl+d"
        rows = dict(dict(keymap.help_rows(app))["Pods"])
        assert rows["x"] == "stop the pod (asks first)" and "s" not in rows
        from podtui.ui.commands import PodCommands

        helps = [c[2] for c in PodCommands(app.screen)._commands()]
        assert any(h.endswith("with fixes (ctrl+d)") for h in helps)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))


async def test_an_unknown_id_is_said_and_the_rest_apply(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app(config=Config(keys={"pods.stp": "x", "pods.resume": "w"}))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        assert any("pods.stp" in n.message and n.severity == "error" for n in app._notifications)
        await pilot.press("j", "j", "j", "w")  # notebook-4090, the stopped one
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))


async def test_a_refused_remap_is_said_once_and_both_keep_their_keys(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app(
        config=Config(
            keys={
                "pods.console": "s",
                "pods.filter": "q",
                "pods.stop": "h",
                "pods.resume": "esc",
                "pods.doctor": "ctrl+d",
            }
        )
    )
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        said = [n for n in app._notifications if "[keys]" in n.message]
        assert len(said) == 1 and said[0].severity == "error"
        assert 'pods.console = "s": s is taken by pods.stop' in said[0].message
        assert 'pods.filter = "q": q is taken by app.quit' in said[0].message
        assert 'pods.stop = "h": h is taken by details.back' in said[0].message
        assert 'pods.resume = "esc": no key named "esc"' in said[0].message
        bound = {key: active.binding.id for key, active in app.active_bindings.items()}
        assert (bound["s"], bound["c"], bound["q"], bound["slash"], bound["r"], bound["ctrl+d"]) == (
            "pods.stop",
            "pods.console",
            "app.quit",
            "pods.filter",
            "pods.resume",
            "pods.doctor",
        )
        rows = dict(dict(keymap.help_rows(app))["Pods"])
        assert rows["s"] == "stop the pod (asks first)" and rows["c"].startswith("open a console")
        await pilot.press("enter")  # the details: h still goes back
        await wait_until(pilot, lambda: isinstance(app.screen, PodDetailScreen))
        await pilot.press("h")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))
        await pilot.press("s")  # and s still stops
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert str(app.screen.query_one("#title").render()).startswith("Stop ")


async def test_a_swap_applies(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app(config=Config(keys={"pods.stop": "r", "pods.resume": "s"}))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        assert not any("[keys]" in n.message for n in app._notifications)
        bound = {key: active.binding.id for key, active in app.active_bindings.items()}
        assert (bound["r"], bound["s"]) == ("pods.stop", "pods.resume")
        await pilot.press("r")  # the first pod runs: r stops it
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert str(app.screen.query_one("#title").render()).startswith("Stop ")


async def test_the_pod_keys_are_off_without_a_pod(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        screen = app.screen
        assert screen.check_action("pod", ("stop",)) is True
        await pilot.press("slash", *"nothing-matches-this", "enter")
        await pilot.pause()
        assert screen.query_one(PodTable).selected_pod is None
        for action in ("pod", "console", "doctor", "autostop"):
            assert screen.check_action(action, ()) is None  # greyed out in the footer
        assert screen.check_action("filter", ()) is True
        notes = len(app._notifications)
        await pilot.press("s", "T", "c", "D", "A")
        await pilot.pause()
        assert app.screen is screen and len(app._notifications) == notes  # nothing happens, nothing to say
        await pilot.press("escape")  # the filter cleared: every pod again
        await wait_until(pilot, lambda: screen.check_action("pod", ("stop",)) is True)


# --- keys named in words -----------------------------------------------------------------------------------


def test_the_key_a_sentence_names() -> None:
    assert keymap.key_for(None, "pods.console") == "c" and keymap.key_for(None, "details.back") == "escape"
    assert keymap.key_for(None, "transfers.remove") == "d"  # the table names d, not delete, its first key
    assert keymap.key_for(None, "pods.filter") == "/" and keymap.key_for(None, "app.palette") == "ctrl+p"
    assert keymap.fill(None, KEY_REFUSED).count("(ctrl+p, ") == 1


def _text(widget: Widget) -> str:
    return str(widget.render())


async def test_the_keys_named_in_words_follow_the_remaps(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, tmp_path: Path
) -> None:
    remaps = {
        "transfers.add": "A",
        "pods.console": "w",
        "pods.clear-filter": "ctrl+u",
        "details.back": "left",
        "transfers.remove": "f",
        "app.palette": "f2",
        "console.type": "i",
    }
    app = make_app(config=Config(keys=remaps), transfer_work_dir=tmp_path / "work")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        assert keymap.key_for(app, "transfers.remove") == "f" and keymap.key_for(app, "pods.console") == "w"
        await pilot.press("slash")  # the filter's line, made on the first `/`
        await wait_until(pilot, lambda: bool(app.screen.query("#filter")))
        assert str(app.screen.query_one("#filter", Input).placeholder).endswith("· ctrl+u clears")
        await pilot.press("enter")  # an empty filter: the line closes

        await pilot.press("C")  # the consoles, none open yet
        await wait_until(pilot, lambda: isinstance(app.screen, ConsoleScreen))
        assert _text(app.screen.query_one("#empty")) == "no console open: press w on a running pod"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))

        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        assert _text(app.screen.query_one("#empty")).startswith("No transfers yet. Press A to add one:")
        await pilot.press("A")  # and A adds one
        await wait_until(pilot, lambda: isinstance(app.screen, AddTransferScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, TransfersScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))

        await pilot.press("j", "enter")  # eval-a100's details; then it is terminated on runpod.io
        await wait_until(pilot, lambda: isinstance(app.screen, PodDetailScreen))
        assert isinstance(app.screen, PodDetailScreen) and app.screen.pod_id == DEMO_IDS["idle"]
        sim.world.terminate(DEMO_IDS["idle"])
        sim.world.clock.advance(5)
        await polled(pilot, app)
        assert "Press left to go back to the list." in _text(app.screen.query_one("#detail"))
        await pilot.press("left")
        await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))

        sim.faults.add("unauthorized")  # the key is revoked: an action says how to set another
        sim.world.clock.advance(30)
        await polled(pilot, app)
        await pilot.press("g", "s")
        await wait_until(pilot, lambda: any("not sent" in n.message for n in app._notifications))
        refusal = next(n.message for n in app._notifications if "not sent" in n.message)
        assert '(f2, "RunPod API key", or' in refusal
        await pilot.press("f2")  # and it opens the palette
        await wait_until(pilot, lambda: CommandPalette.is_open(app))
        assert app.COMMAND_PALETTE_BINDING == "f2"  # where the footer looks for it


@pytest.mark.parametrize("ask", ["name", "yn"])
async def test_a_remapped_yes_never_answers_while_the_name_is_asked(
    make_app: Callable[..., PodtuiApp], sim: SimApiServer, ask: Literal["name", "yn"]
) -> None:
    app = make_app(config=Config(confirm_terminate=ask, keys={"terminate.yes": "t", "terminate.no": "k"}))
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("j", "T")  # eval-a100
        await wait_until(pilot, lambda: isinstance(app.screen, TerminateScreen))
        screen = app.screen
        await pilot.press("k")  # no, unless the name is asked for
        await pilot.pause()
        if ask == "yn":
            await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen))
            await pilot.press("T", "y")  # y is no longer yes
            await pilot.pause(0.3)
            assert isinstance(app.screen, TerminateScreen) and sim.world.pods[DEMO_IDS["idle"]].status == "RUNNING"
            await pilot.press("t")  # t is
            await wait_until(pilot, lambda: sim.world.pods[DEMO_IDS["idle"]].status == "TERMINATED")
        else:
            await pilot.press("t", "y", "n")  # letters, every one typed into the name box
            await pilot.pause(0.3)
            assert app.screen is screen and screen.query_one("#name", Input).value == "ktyn"
            assert sim.world.pods[DEMO_IDS["idle"]].status == "RUNNING"
