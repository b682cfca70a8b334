"""config.toml's [keys], checked and applied: a remap applies when its id is a binding's, Textual can send its
keys, and it gives no key to a second binding where the key is pressed (the screen's own, a widget in it, the
App's and Textual's underneath); the rest are refused and said, each binding keeping its key
(docs/architecture.md#where-a-new-feature-goes: the keys table is keymap.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from podtui.ui import key_names
from podtui.ui.keymap import BY_ID, KEYS, SCOPES, key_label, remember, shown

# --- what a key press meets on each screen -----------------------------------------------------------

# What a key press meets on each screen besides the screen's own bindings: the widgets in it, then the App's. A
# dialog (a ModalScreen) stops the chain at itself: only the App's priority keys reach through it.
# The widgets with keys of their own, by the screens they sit in. The logs and services panels are also the main
# screen's pane's Logs and Services tabs, where their keys shadow the list's while they have focus, as a console's
# do: they are checked on their own screens, where each key of theirs has to be free.
INSIDE: dict[str, tuple[str, ...]] = {
    "pods": ("pod-table",),
    "transfers": ("transfer-table",),
    "log-screen": ("logs",),
    "service-screen": ("services",),
    "jobs-screen": ("jobs",),  # the jobs panel: the pane's Jobs tab, and the jobs screen below 100x30
    "sync-screen": ("sync",),  # the sync panel: the pane's Sync tab, and the sync screen below 100x30
}
MODAL = frozenset(
    {
        "create",
        "add-transfer",
        "hf",
        "help",
        "ssh-key",
        "confirm",
        "terminate",
        "welcome",
        "save-as",
        "copy",
        "volume-form",
        "volume-edit",
        "volume-delete",
        "template-form",
        "bulk",
        "edit",
        "resume-offer",
        "new-job",
        "sync-form",
    }
)
SCREENS = tuple(s for s in SCOPES if s != "app" and not any(s in inside for inside in INSIDE.values()))


@dataclass(frozen=True)
class _Bound:
    """A binding as the clash check sees it: the table's, or one Textual binds itself (quit, focus, copy)."""

    name: str  # a table id, or "Textual's <action>"
    keys: frozenset[str]  # by default
    priority: bool = False


def _textual(bindings: list[BindingType]) -> tuple[_Bound, ...]:
    return tuple(
        _Bound(f"Textual's {b.action.split('.')[-1].replace('_', ' ')}", frozenset({b.key}), b.priority)
        for b in Binding.make_bindings(bindings)
    )


# Textual's own keys beside the table's: the App's (ctrl+q quits, ctrl+c says how) and every screen's (tab and
# shift+tab move the focus, ctrl+c copies). A remap onto one of them would take it away.
_TEXTUAL_APP = _textual(App.BINDINGS)
_TEXTUAL_SCREEN = _textual(Screen.BINDINGS)


def _split(keys: str) -> frozenset[str]:
    return frozenset(key_names.normal(k.strip()) for k in keys.split(","))


# The Textual widgets a screen's keys may meet first: a focused widget's own bindings come before the screen's, so
# a remap onto one of them would never fire while it has focus (the list's filter box is focused only to type in).
WIDGETS: dict[str, tuple[str, ...]] = {
    "service-screen": ("DataTable",),
    "gpus": ("DataTable", "Input", "Select"),
    "create": ("Button", "Checkbox", "Input", "Select", "TextArea"),
    "transfers": ("DataTable",),
    "add-transfer": ("Button", "Checkbox", "Input", "OptionList", "RadioSet", "Select"),
    "hf": ("Button", "DataTable", "Input", "Select"),
    "doctor": ("OptionList",),
    "ssh-key": ("Button",),
    "confirm": ("Button",),
    "terminate": ("Button", "Input"),
    "welcome": ("Button", "Input"),
    "save-as": ("Input",),
    "copy": ("OptionList",),
    "volumes": ("DataTable",),
    "templates": ("DataTable",),
    "recreate": ("DataTable",),
    "volume-form": ("Button", "Input", "Select"),
    "volume-edit": ("Button", "Input"),
    "volume-delete": ("Button", "Input"),
    "template-form": ("Button", "Checkbox", "Input", "Select"),
    "jobs-screen": ("DataTable",),
    "new-job": ("Button", "Input", "Select", "TextArea"),
    "sync-form": ("Button", "Checkbox", "Input", "RadioSet", "TextArea"),
}


def _widget_bindings(screen: str) -> list[_Bound]:
    import textual.widgets  # loaded only when there are remaps to check, not for the first frame

    met: list[_Bound] = []
    for name in WIDGETS.get(screen, ()):
        widget = getattr(textual.widgets, name)
        met += [
            _Bound(f"the {name}'s {b.action.split('.')[-1].replace('_', ' ')}", frozenset({b.key}), b.priority)
            for b in Binding.make_bindings(widget.BINDINGS)
        ]
    return met


def _met_on(screen: str) -> list[_Bound]:
    """Every binding a key press can meet on a screen."""
    scopes = {screen, *INSIDE.get(screen, ())}
    modal = screen in MODAL
    met = [
        _Bound(k.id, _split(k.keys), k.priority)
        for k in KEYS
        if scopes & set(k.scopes) or ("app" in k.scopes and (k.priority or not modal))
    ]
    return met + _widget_bindings(screen) + list(_TEXTUAL_SCREEN) + [b for b in _TEXTUAL_APP if b.priority or not modal]


@dataclass(frozen=True)
class Clash:
    """A remap onto a key another binding on the same screen has."""

    id: str  # the remapped binding
    other: str  # the binding that has the key too (an id, or one of Textual's own)
    key: str
    both: bool = False  # the other was remapped onto it too

    def __str__(self) -> str:
        key = key_label(self.key)
        return f"{self.other} is remapped to {key} too" if self.both else f"{key} is taken by {self.other}"


def _clashes(remaps: Mapping[str, frozenset[str]]) -> list[Clash]:
    """The remaps that give a key to a second binding on some screen; two bindings that share a key by default
    (q closes the help, under the App's q that quits) are as the table means them."""
    found: dict[tuple[str, str], Clash] = {}
    for screen in SCREENS:
        met = _met_on(screen)
        for i, one in enumerate(met):
            for two in met[i + 1 :]:
                if one.name == two.name:
                    continue
                for key in sorted(remaps.get(one.name, one.keys) & remaps.get(two.name, two.keys)):
                    if key in one.keys and key in two.keys:
                        continue
                    both = key not in one.keys and key not in two.keys  # then neither has it
                    if key not in one.keys:
                        found.setdefault((one.name, key), Clash(one.name, two.name, key, both))
                    if key not in two.keys:
                        found.setdefault((two.name, key), Clash(two.name, one.name, key, both))
    return list(found.values())


@dataclass
class Remaps:
    """config.toml's [keys], checked: what applies, and why the rest does not (each refused remap leaves its
    binding on its default key)."""

    applied: dict[str, str]  # id -> keys, in the form Textual matches
    unknown_ids: list[str]
    unknown_keys: dict[str, list[str]]  # id -> what to say about each key Textual never sends
    clashes: list[Clash]

    def refused(self, key_id: str) -> str | None:
        """Why this id's remap does not apply, or None when it does."""
        if key_id in self.unknown_ids:
            return "no key has this id"
        if key_id in self.unknown_keys:
            return "; ".join(self.unknown_keys[key_id])
        said = [str(c) for c in self.clashes if c.id == key_id]
        return "; ".join(said) if said else None

    def problems(self, remaps: Mapping[str, str]) -> list[str]:
        """One line for each remap that does not apply: 'pods.console = "s": s is taken by pods.stop; ...'."""
        lines: list[str] = []
        for key_id, keys in remaps.items():
            why = self.refused(key_id)
            if why is None:
                continue
            if key_id in self.unknown_ids:
                lines.append(f"{key_id}: no key has this id; ignored")
            else:
                lines.append(f'{key_id} = "{keys}": {why}; it keeps {shown(None, key_id)}')
        return lines


def check(remaps: Mapping[str, str]) -> Remaps:
    """Which of config.toml's [keys] remaps apply: those of a known id, whose keys Textual can send, that give no
    key to a second binding on any screen (swaps are fine: each binding takes the other's key)."""
    unknown_ids = [i for i in remaps if i not in BY_ID]
    unknown_keys: dict[str, list[str]] = {}
    for key_id, keys in remaps.items():
        said = [why for k in keys.split(",") if (why := key_names.unknown(k.strip())) is not None]
        if key_id in BY_ID and said:
            unknown_keys[key_id] = said
    moved = {i: _split(k) for i, k in remaps.items() if i in BY_ID and i not in unknown_keys}
    clashes: list[Clash] = []
    # no remap, no clash: the check (every screen's bindings, Textual's widgets') stays off the path to the first frame
    while moved and (found := _clashes(moved)):  # a refused remap gives its binding its key back: it may clash too
        clashes += found
        for clash in found:
            moved.pop(clash.id, None)
    applied = {i: ",".join(key_names.normal(k.strip()) for k in remaps[i].split(",")) for i in moved}
    return Remaps(applied, unknown_ids, unknown_keys, clashes)


def apply(app: App[Any], remaps: Mapping[str, str]) -> Remaps:
    """Remap bindings by id (config.toml's [keys]), those that pass `check`."""
    checked = check(remaps)
    remember(app, checked.applied)
    app.set_keymap(checked.applied)
    if "app.palette" in checked.applied:  # the footer finds the palette's key by this name
        vars(app)["COMMAND_PALETTE_BINDING"] = checked.applied["app.palette"].split(",")[0]
    return checked


def install(app: App[Any], remaps: Mapping[str, str]) -> None:
    """Apply config.toml's [keys] as the app starts. A remap that does not apply (an id no binding has, a key
    Textual never sends, a key another binding on the same screen has) is said, all in one notification, and its
    binding keeps its key; the others still apply."""
    problems = apply(app, remaps).problems(remaps)
    if problems:
        app.notify(
            "config.toml [keys]:\n" + "\n".join(problems) + "\n`podtui config keys` lists the ids and keys",
            severity="error",
            timeout=20,
            markup=False,
        )
