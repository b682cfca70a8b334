"""The key reference, opened with `?`: made from the key table (podtui/ui/keymap.py), remaps included."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from podtui.ui import colours, keymap
from podtui.ui.screens.dialog import Dialog


class HelpScreen(Dialog[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = keymap.bindings("help")

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style=colours.palette(self.app).spec("bold key"), no_wrap=True)
        table.add_column()
        for section, rows in keymap.help_rows(self.app):
            table.add_row(f"[bold underline]{section}[/]", "")
            for key, what in rows:
                table.add_row(Text(key), Text(what))  # a remapped key is the user's text, not markup
            table.add_row("", "")
        with VerticalScroll():
            yield Static("[b]podtui keys[/b]\n")
            yield Static(table)
            yield Static(
                "[dim]Data refreshes every few seconds; when RunPod cannot be reached the last "
                "good data stays, marked STALE with its age.[/]"
            )

    def action_close(self) -> None:
        self.dismiss(None)
