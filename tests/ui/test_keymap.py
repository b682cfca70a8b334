"""Keys declared once: every binding comes from the key table with an id and a tooltip; the help screen and the
palette's hints are made from it; config.toml's [keys] remaps any binding by id; the selected pod's keys are off
while no pod is under the cursor."""

from __future__ import annotations

import importlib
import io
import pkgutil
from collections.abc import Callable, Iterator

import pytest
from textual.binding import Binding
from textual.dom import DOMNode

import podtui.ui
from podtui.cli import config_cmd
from podtui.core.config import Config, ConfigError, load_config
from podtui.core.paths import Paths
from podtui.ui import keymap
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.confirm import ConfirmScreen
from podtui.ui.screens.help import HelpScreen
from podtui.ui.screens.pod_list import PodListScreen
from podtui.ui.widgets.pod_table import PodTable
from tests.ui.conftest import loaded, wait_until

SIZE = (130, 30)


def _classes_with_bindings() -> Iterator[type[DOMNode]]:
    """Every App, screen and widget class in podtui.ui that declares BINDINGS."""
    for info in pkgutil.walk_packages(podtui.ui.__path__, "podtui.ui."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, DOMNode) and value.__module__ == info.name
                    and "BINDINGS" in vars(value)):
                yield value


def test_every_binding_comes_from_the_table_with_an_id_and_a_tooltip() -> None:
    bound: set[str] = set()
    classes = list(_classes_with_bindings())
    assert {c.__name__ for c in classes} >= {"PodtuiApp", "PodListScreen", "PodTable", "PodDetailScreen",
                                             "ConsoleScreen", "TransfersScreen", "HelpScreen"}
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
    config = _config(paths, '[keys]\npods.stop = "x"\n"pods.doctor" = "ctrl+d"\ntransfers.remove = "delete, d"\n'
                            '[keys.console]\nsave = "ctrl+s"\n')
    assert config.keys == {"pods.stop": "x", "pods.doctor": "ctrl+d", "transfers.remove": "delete,d",
                           "console.save": "ctrl+s"}
    assert _config(paths, 'poll_interval_s = 5\n').keys == {}


@pytest.mark.parametrize("line", ['pods.stop = ""', 'pods.stop = "ctrl+"', 'pods.stop = "hyperspace+x"',
                                  'pods.stop = "a b"', "pods.stop = 3", 'pods.stop = ["x"]'])
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
    app = make_app(config=Config(keys={"pods.stp": "x", "pods.resume": "e"}))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await loaded(pilot, app)
        assert any("pods.stp" in n.message and n.severity == "error" for n in app._notifications)
        await pilot.press("j", "j", "j", "e")  # notebook-4090, the stopped one
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))


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
