"""The key reference, opened with `?`."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from podtui.ui.screens.dialog import Dialog

KEYS = [
    ("Pods", [
        ("↑ ↓  j k", "move"),
        ("enter", "details of the selected pod"),
        ("/", "filter by name, id, status or GPU (escape clears)"),
        ("o / O", "sort by the next column / reverse the order"),
        ("s", "stop the pod (asks first)"),
        ("r", "resume the pod (asks first)"),
        ("T", "terminate the pod (asks first; Cancel is the default)"),
        ("ctrl+r", "refresh now"),
        ("c", "open a console (a terminal into the pod) in a new tab"),
        ("C", "show the open consoles"),
        ("u", "transfer a file or folder to or from the pod"),
        ("t", "show the transfers"),
        ("A", "in-app autostop for the pod: once idle, a countdown, then stop (any key cancels)"),
        ("D", "doctor: Python, torch, CUDA, GPU, transformers, disk, runpodctl, HF login on the pod, with fixes"),
        ("H", "Hugging Face: is the token good, is the repo gated and why it refuses, size; download on the pod"),
        ("P", "GPU advisor: VRAM, prices, stock; which GPU fits a model and method"),
        ("n", "create a pod: image, GPU, disks, env; the cost per hour shown before you confirm"),
    ]),
    ("GPU advisor and new pod", [
        ("m", "the model size box (1.5B, 7b, 350M) and the method"),
        ("enter / n", "create a pod with the highlighted GPU"),
        ("ctrl+s", "in the form: create (after showing the cost)"),
        ("escape", "back"),
    ]),
    ("Console", [
        ("ctrl+]", "leave the console: podtui's keys work again"),
        ("enter / i", "type into the console again"),
        ("[  ]", "previous / next console tab"),
        ("shift+PgUp/PgDn", "scroll back / forward (the mouse wheel too)"),
        ("mouse drag", "select and copy (hold shift when the program uses the mouse)"),
        ("x / R / S", "close / reconnect / save output to a text file"),
        ("escape", "back to the pods; consoles stay open"),
    ]),
    ("Transfers", [
        ("a", "add a transfer: tab completes local paths, ctrl+l lists the pod's folder"),
        ("x / r", "cancel / retry the highlighted transfer"),
        ("l", "show or hide its log"),
        ("d", "remove a finished transfer from the list (files stay)"),
        ("", "every file is verified by checksum on both ends before it is called done"),
    ]),
    ("Everywhere", [
        ("ctrl+p", "command palette: every action, searchable"),
        ("K", "SSH key: create a dedicated key and register it on the account"),
        ("?", "this help"),
        ("escape", "back / close"),
        ("q", "quit"),
    ]),
]


class HelpScreen(Dialog[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 92; height: auto; max-height: 90%; border: thick $primary; background: $surface; padding: 1 2;
    }
    """
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for section, rows in KEYS:
            table.add_row(f"[bold underline]{section}[/]", "")
            for key, what in rows:
                table.add_row(key, what)
            table.add_row("", "")
        with VerticalScroll():
            yield Static("[b]podtui keys[/b]\n")
            yield Static(table)
            yield Static("[dim]Data refreshes every few seconds; when RunPod cannot be reached the last "
                         "good data stays, marked STALE with its age.[/]")

    def action_close(self) -> None:
        self.dismiss(None)
