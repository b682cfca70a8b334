"""A console with a one-line mode bar above it, saying who gets the keys, as an editor says INSERT or NORMAL:

- TYPING INTO <pod>: the console has focus and every key goes to the pod, but the release key (ctrl+]);
- PODTUI KEYS: podtui's keys work, and the bar names the key that types into the console again;

and, on its right, how the shell's connection stands (connecting, connected, reconnecting, closed).

The box fits any container (a tab of the consoles' screen, a tab of the main screen's pane). It only shows: its
container gives the focus (the view's `Released` message bubbles up to it) and binds the key that types again,
whose id it names (`type_key_id`). The link's `on_change` belongs to the TerminalView; the bar follows the view's
messages instead (`TitleChanged` when the link's state changes)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from podtui.console.keys import RELEASE_KEY_LABEL
from podtui.ui import keymap

if TYPE_CHECKING:  # the console's code (paramiko under it) loads with the first console, not for the first frame
    from podtui.console.link import ConsoleLink
    from podtui.console.widget import TerminalView

_STATE_CLASSES = ("-connected", "-waiting", "-closed")


def console_focused(screen: Screen[Any]) -> bool:
    """Whether a console has the keys on `screen`: then every key but the release key goes to the pod, and podtui's
    own keys neither work nor show."""
    # No TerminalView can exist before its module is loaded, and asking must not load it (paramiko) for the first
    # frame: footers ask on every refresh.
    widget = sys.modules.get("podtui.console.widget")
    return widget is not None and isinstance(screen.focused, widget.TerminalView)


def type_keys(app: Any, key_id: str) -> str:
    """The keys of a binding in a sentence, as remapped: "enter or i"."""
    return " or ".join(keymap.key_label(k.strip()) for k in keymap.keys_of(app, key_id).split(","))


class ConsoleBox(Vertical):
    # read when the first one is mounted, after the first frame (not in the App's CSS_PATH)
    DEFAULT_CSS = """
    ConsoleBox { width: 1fr; height: 1fr; }
    ConsoleBox > .console-bar { height: 1; background: $panel; color: $text-muted; }
    ConsoleBox.-typing > .console-bar { background: $accent; color: $text; }
    ConsoleBox .console-mode { width: 1fr; height: 1; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    ConsoleBox .console-state { width: auto; height: 1; padding: 0 1; text-wrap: nowrap; }
    ConsoleBox .console-state.-connected { color: $text-success; }
    ConsoleBox .console-state.-waiting { color: $text-warning; }
    ConsoleBox .console-state.-closed { color: $text-error; }
    ConsoleBox.-typing .console-state { background: $panel; }
    """

    def __init__(
        self,
        link: ConsoleLink,
        *,
        type_key_id: str = "console.type",
        fresh_key_id: str = "console.reconnect",
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        from podtui.console.widget import TerminalView

        super().__init__(id=id, classes=classes)
        self.link = link
        self.type_key_id = type_key_id
        self.fresh_key_id = fresh_key_id  # the key that opens a fresh shell once this one ended
        self.view: TerminalView = TerminalView(link)
        self._mode = Static(classes="console-mode", markup=False)
        self._state = Static(classes="console-state", markup=False)

    def compose(self) -> ComposeResult:
        with Horizontal(classes="console-bar"):
            yield self._mode
            yield self._state
        yield self.view

    def on_mount(self) -> None:
        self.show_mode()
        self.show_state()

    # --- who gets the keys ---------------------------------------------------------------------------

    @property
    def typing(self) -> bool:
        return self.view.has_focus

    def mode_text(self) -> Content:
        if self.link.state == "closed":  # keys typed now go nowhere: say how to get a shell again
            fresh = type_keys(self.app, self.fresh_key_id)
            return Content.assemble(("SHELL ENDED", "bold"), f" · {fresh} opens a fresh shell here")
        if self.typing:
            return Content.assemble(
                ("TYPING", "bold"),
                f" INTO {self.link.label} · {RELEASE_KEY_LABEL} gives podtui its keys back · shift+PgUp scrolls back",
            )
        keys = type_keys(self.app, self.type_key_id)
        return Content.assemble(("PODTUI KEYS", "bold"), f" · {keys} types into the console")

    def show_mode(self) -> None:
        self.set_class(self.typing and self.link.state != "closed", "-typing")
        self._mode.update(self.mode_text())

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.show_mode()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        self.show_mode()

    # --- the connection ------------------------------------------------------------------------------

    def state_text(self) -> str:
        link = self.link
        if link.state == "connected":
            return "● connected"
        if link.state == "connecting":
            return "◌ connecting…"
        if link.state == "reconnecting":
            # the session's detail is the attempt's number
            return f"◌ reconnecting, try {link.detail} of {link.reconnect_attempts}"
        return "○ closed"

    def show_state(self) -> None:
        state = self.link.state
        kind = {"connected": "-connected", "closed": "-closed"}.get(state, "-waiting")
        self._state.remove_class(*_STATE_CLASSES).add_class(kind)
        self._state.update(self.state_text())

    def on_terminal_view_title_changed(self, message: TerminalView.TitleChanged) -> None:
        # not stopped: the tab that holds the box names the state too
        self.show_state()
        self.show_mode()
