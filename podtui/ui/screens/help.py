"""The key reference, opened with `?`: made from the key table (podtui/ui/keymap.py), remaps included.

Each section is a title and a two-column grid. The keys column is as wide as the widest key in effect, the same in
every section so they line up; the words wrap in the rest, and the whole scrolls inside the dialogs' frame, so it
reads at 80x24 as well as on a wide terminal."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.widgets import Static

from podtui.ui import colours, keymap
from podtui.ui.screens.dialog import Dialog, Frame


def section_grid(rows: list[tuple[str, str]], keys_width: int, key_style: str) -> Table:
    """One section's lines: its keys, unwrapped in a column of `keys_width`, and what they do, wrapped."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style=key_style, no_wrap=True, width=keys_width)
    grid.add_column(ratio=1)
    for key, what in rows:
        grid.add_row(Text(key), Text(what))  # a remapped key is the user's text, not markup
    return grid


class HelpScreen(Dialog[None]):
    CSS_PATH = ["dialog.tcss", "help.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("help")
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]  # a short terminal gives the frame every line

    def compose(self) -> ComposeResult:
        sections = keymap.help_rows(self.app)
        keys_width = max((len(key) for _, rows in sections for key, _ in rows), default=1)
        key_style = colours.palette(self.app).spec("bold key")
        close = keymap.shown(self.app, "help.close")
        with Frame(id="dialog"):  # the dialogs' frame (dialog.py): the title stays while the keys scroll
            yield Static(
                Text.assemble(("podtui keys", "bold"), (f"   {close} closes · ↑ ↓ PgUp PgDn scroll", "dim")),
                id="title",
            )
            for title, rows in sections:
                yield Static(Text(title, "bold underline"), classes="section")
                yield Static(section_grid(rows, keys_width, key_style), classes="keys")
            yield Static(
                "[dim]Data refreshes every few seconds; when RunPod cannot be reached the last "
                "good data stays, marked STALE with its age.[/]",
                id="help-note",
            )

    def on_mount(self) -> None:
        self.call_after_refresh(self._focus_frame)

    def on_resize(self, _event: events.Resize) -> None:
        self.call_after_refresh(self._focus_frame)

    def _focus_frame(self) -> None:
        """The frame takes the keys once laid out, when its text is taller than it (Frame.allow_focus): before
        that nothing in the help could, and the arrows would scroll nothing."""
        if self.focused is None:
            self.query_one(Frame).focus()

    def action_close(self) -> None:
        self.dismiss(None)
