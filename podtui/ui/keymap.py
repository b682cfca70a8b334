"""Every key podtui binds, declared once.

The screens' `BINDINGS`, the help screen (`?`), the key hints in the command palette and the keys named in the
screens' own words ("press c on a running pod") are all made from the table below, and a `[keys]` section in
config.toml remaps any binding by its id through Textual's keymap (`App.set_keymap`), so a remapped key shows up
everywhere the table is shown (`key_for` is the key to name in a sentence). A remap that cannot work (an id no
binding has, a key Textual never sends, a key another binding has where it is pressed) is refused and said, and its
binding keeps its key (`key_remaps.py`).

A binding's id is `<where>.<what>`; the pod actions shared by the list and the details screen share their id, so
one line of config remaps both.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from textual.app import App
from textual.binding import Binding, BindingType

from podtui.console.keys import RELEASE_KEY_LABEL
from podtui.ui import key_names
from podtui.ui.pod_view import AT_ZERO_MARK, AUTOSTOP_MARK, CONSOLE_MARK, LOCKED_MARK, PICKED_MARK


@dataclass(frozen=True)
class Key:
    """One binding: the key(s), the action, the footer's label, and the words for the help screen and tooltip."""

    id: str
    keys: str  # Textual key names, comma-separated: "escape,backspace,h"
    action: str
    label: str  # the footer's word
    tooltip: str  # shown when the pointer rests on the footer's key
    help: str = ""  # the help screen's line ("" keeps it off the help screen); {id} is replaced by that key
    scopes: tuple[str, ...] = ()  # the screens and widgets that bind it (see SCOPES)
    show: bool = True  # in the footer
    priority: bool = False
    named: str = ""  # the key a sentence names while it is not remapped, when that is not the first of `keys`
    rank: int = 3  # in the footer: the highest rank is dropped first when it is narrow; 0 is never dropped

    def binding(self) -> Binding:
        return Binding(
            self.keys, self.action, self.label, show=self.show, priority=self.priority, tooltip=self.tooltip, id=self.id
        )


# Where a key can be bound: the App, then each screen or widget class, by name.
SCOPES = (
    "app",
    "pods",
    "pod-table",
    "details",
    "gpus",
    "create",
    "console",
    "transfers",
    "transfer-table",
    "add-transfer",
    "hf",
    "doctor",
    "log-screen",
    "logs",
    "service-screen",
    "services",
    "jobs",
    "jobs-screen",
    "job-log",
    "new-job",
    "sync",
    "sync-screen",
    "sync-form",
    "volumes",
    "spend",
    "accounts",
    "volume-form",
    "volume-edit",
    "volume-delete",
    "templates",
    "template-form",
    "recreate",
    "help",
    "ssh-key",
    "confirm",
    "terminate",
    "bulk",
    "edit",
    "resume-offer",
    "welcome",
    "save-as",
    "copy",
)

_POD = ("pods", "details")  # the selected pod's actions: on the list and on its details screen

KEYS: tuple[Key, ...] = (
    # --- everywhere ---
    Key(
        "app.quit",
        "q",
        "quit",
        "Quit",
        "Quit podtui (asks first while consoles are open); pods keep running",
        "quit",
        ("app",),
        rank=5,
    ),
    Key("app.help", "question_mark", "help", "Help", "Every key podtui knows", "this help", ("app",), rank=0),
    Key(
        "app.ssh-key",
        "K",
        "keys",
        "SSH key",
        "Create a dedicated SSH key and register it on the RunPod account",
        "SSH key: create a dedicated key and register it on the account",
        ("app",),
        rank=6,
    ),
    # Textual's own palette key, declared here so that [keys] can move it too (Textual then adds no other)
    Key(
        "app.palette",
        App.COMMAND_PALETTE_BINDING,
        "command_palette",
        "palette",
        "Open the command palette",
        "command palette: every action, searchable",
        ("app",),
        show=False,
        priority=True,
        rank=4,  # its hint, docked right: kept at 120 columns, dropped at 80 (? stays)
    ),
    # --- the pod list (its cursor keys are the table's, below) ---
    Key(
        "pods.filter",
        "slash",
        "filter",
        "Filter",
        "Show only pods whose name, id, status or GPU has the words typed",
        "filter by name, id, status or GPU ({pods.clear-filter} clears)",
        ("pods",),
        rank=2,
    ),
    Key(
        "pods.clear-filter",
        "escape",
        "clear_filter",
        "Clear filter",
        "Clear the filter: show every pod",
        scopes=("pods",),
        show=False,
    ),
    Key("details.back", "escape,backspace,h", "back", "Back", "Back to the pod list", scopes=("details",), rank=1),
    Key(
        "pods.stop",
        "s",
        "pod('stop')",
        "Stop",
        "Stop the selected pod (asks first); its volume is kept",
        "stop the pod (asks first)",
        _POD,
        rank=1,
    ),
    Key(
        "pods.resume",
        "r",
        "pod('resume')",
        "Resume",
        "Resume the selected pod (asks first)",
        "resume the pod (asks first)",
        _POD,
        rank=1,
    ),
    Key(
        "pods.restart",
        "R",
        "pod('restart')",
        "Restart",
        "Restart the selected running pod's container (asks first); its volume is kept",
        "restart the pod (asks first)",
        _POD,
        rank=6,
    ),
    Key(
        "pods.terminate",
        "T",
        "pod('terminate')",
        "Terminate",
        "Terminate the selected pod: it is deleted with its disk (asks first)",
        "terminate the pod (asks first; Cancel is the default)",
        _POD,
        rank=2,
    ),
    Key(
        "pods.edit",
        "e",
        "edit",
        "Edit",
        "Change the selected pod's name, image, ports, disk, env or lock (shows what changes first)",
        "edit the pod: name, image, ports, disk, env, lock; the changes and what a restart resets shown first",
        _POD,
        rank=6,
    ),
    Key(
        "pods.mark",
        "space",
        "mark",
        "Mark",
        "Mark or unmark the highlighted pod: stop and terminate then act on the marked pods the filter shows",
        "mark / unmark the pod: {pods.stop} and {pods.terminate} then act on the marked pods the filter shows",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.mark-all",
        "a",
        "mark_all",
        "Mark all",
        "Mark every pod the filter shows, or unmark them all when they all are",
        "mark every pod shown (under the filter), or unmark them all; {pods.clear-filter} clears the marks first",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.console",
        "c",
        "console",
        "Console",
        "Open a terminal into the selected pod: in its pane, or a screen of its own in a small terminal",
        "open a console (a terminal into the pod): in its pane, or a screen of its own under 100x30",
        _POD,
        rank=1,
    ),
    Key(
        "pods.close-console",
        "X",
        "close_console",
        "Close console",
        "Close the selected pod's console in the pane: its shell ends (asks first)",
        "close the pod's console in the pane (asks first)",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.consoles",
        "C",
        "consoles",
        "Consoles",
        "Show the consoles already open",
        "show the open consoles",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.transfers",
        "t",
        "transfers",
        "Transfers",
        "Show the transfers: progress, checksums and logs",
        "show the transfers",
        ("pods",),
    ),
    Key(
        "pods.autostop",
        "A",
        "autostop",
        "Autostop",
        "In-app autostop for the selected pod: once it is idle, a countdown, then it is stopped",
        "in-app autostop for the pod: once idle, a countdown, then stop (any key cancels)",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.add-transfer",
        "u",
        "add_transfer",
        "Transfer",
        "Upload or download a file or folder, verified",
        "transfer a file or folder to or from the pod",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.logs",
        "L",
        "logs",
        "Logs",
        "Show the selected pod's logs, live: its container's and the system's",
        "logs: the pod's container and system lines, live (the system's say why a pod never comes up)",
        _POD,
        rank=5,
    ),
    Key(
        "pods.services",
        "S",
        "services",
        "Services",
        "The pod's exposed ports: links to open or copy, and ports forwarded to this machine",
        "services: the pod's ports, their links, and ports forwarded to this machine",
        _POD,
        rank=6,
    ),
    Key(
        "pods.ssh",
        "exclamation_mark",
        "ssh",
        "ssh",
        "Leave podtui for OpenSSH on the pod (podtui's key, its pinned host key); back when it ends",
        "ssh: OpenSSH on the pod, in this terminal; podtui comes back when it ends",
        _POD,
        show=False,
    ),
    Key(
        "pods.editor",
        "V",
        "editor",
        "Editor",
        "Open the pod's /workspace in VS Code or Cursor (direct SSH)",
        "open the pod's /workspace in VS Code or Cursor (needs direct SSH)",
        _POD,
        show=False,
    ),
    Key(
        "pods.jobs",
        "J",
        "app.jobs",
        "Jobs",
        "The selected pod's detached jobs: start one, read its log, cancel it",
        "jobs: the pod's detached jobs (in its pane, or a screen of their own); start one, read its log, cancel it",
        _POD,
        show=False,
    ),
    Key(
        "pods.sync",
        "Y",
        "app.sync",
        "Sync",
        "Keep a local folder and one on the selected pod in step: what changed, in flight, the last result",
        "sync: a local folder and one on the pod kept in step, verified (in its pane, or a screen of its own)",
        _POD,
        show=False,
    ),
    Key(
        "pods.doctor",
        "D",
        "doctor",
        "Doctor",
        "Check the selected pod's environment, with fixes",
        "doctor: Python, torch, CUDA, GPU, transformers, disk, runpodctl, HF login on the pod, with fixes",
        ("pods",),
        rank=4,
    ),
    Key(
        "pods.hf",
        "H",
        "hf_check",
        "Hugging Face",
        "Check a Hugging Face repo (token, gated access, size) and download it on a pod",
        "Hugging Face: is the token good, is the repo gated and why it refuses, size; download on the pod",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.gpus",
        "P",
        "gpus",
        "GPUs",
        "The GPU advisor: which GPU fits a model, with prices and stock",
        "GPU advisor: VRAM, prices, stock; which GPU fits a model and method",
        ("pods",),
        rank=4,
    ),  # g: the table's top
    Key(
        "pods.create",
        "n",
        "create_pod",
        "New pod",
        "Create a pod; the cost per hour is shown before you confirm",
        "create a pod: image, GPU, disks, env; the cost per hour shown before you confirm",
        ("pods",),
        rank=2,
    ),
    Key(
        "pods.volumes",
        "v",
        "volumes",
        "Volumes",
        "Network volumes: size, data centre, cost per month, the pods using each; create, grow, delete",
        "network volumes: size, data centre, $/month, pods using each; create, grow, rename, delete",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.spend",
        "dollar_sign",
        "spend",
        "Spend",
        "What was spent today, over 7 or 30 days: per day, by pod, GPU type or network volume",
        "spend: today, 7 or 30 days; per day, by pod, GPU or volume; RunPod's billing and the ledger",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.templates",
        "m",
        "templates",
        "Templates",
        "Templates, yours or RunPod's public ones: create a pod from one, or one from a pod",
        "templates: yours or public; a pod from one, one from a pod",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.recreate",
        "N",
        "recreate",
        "Recreate",
        "Pods podtui has seen, terminated ones too: create one again as it was",
        "recreate: a pod podtui has seen (a terminated one too), created again as it was",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.copy",
        "y",
        "copy",
        "Copy",
        "Copy the selected pod's SSH command, its id or a service URL",
        "copy the pod's SSH command, id or a service URL (OSC 52; the text is shown too)",
        _POD,
        rank=5,
    ),
    Key(
        "pods.zoom",
        "z",
        "zoom",
        "Zoom",
        "Zoom the focused pane to the whole screen, and back",
        "zoom the focused pane (the list or the pod's pane) and back",
        ("pods",),
        rank=6,
    ),
    Key(
        "pods.sort", "o", "sort(False)", "Sort", "Sort by the next column", "sort by the next column", ("pods",), rank=6
    ),
    Key(
        "pods.sort-reverse",
        "O",
        "sort(True)",
        "Reverse sort",
        "Reverse the sort order",
        "reverse the order",
        ("pods",),
        show=False,
    ),
    Key(
        "pods.refresh",
        "ctrl+r",
        "refresh",
        "Refresh",
        "Fetch the pods from RunPod now",
        "refresh now",
        ("pods",),
        show=False,
    ),
    # --- the pod table ---
    Key("pod-table.up", "up,k", "cursor(-1)", "Up", "Move to the pod above", scopes=("pod-table",), show=False),
    Key("pod-table.down", "down,j", "cursor(1)", "Down", "Move to the pod below", scopes=("pod-table",), show=False),
    Key("pod-table.page-up", "pageup", "page(-1)", "Page up", "Move up a page", scopes=("pod-table",), show=False),
    Key(
        "pod-table.page-down", "pagedown", "page(1)", "Page down", "Move down a page", scopes=("pod-table",), show=False
    ),
    Key("pod-table.top", "home,g", "jump(0)", "Top", "Move to the first pod", scopes=("pod-table",), show=False),
    Key("pod-table.bottom", "end,G", "jump(-1)", "Bottom", "Move to the last pod", scopes=("pod-table",), show=False),
    Key(
        "pod-table.select",
        "enter",
        "select",
        "Details",
        "Ports, SSH commands and env of the selected pod",
        "details of the selected pod",
        ("pod-table",),
    ),
    # --- the GPU advisor and the create form ---
    Key(
        "gpus.back",
        "escape",
        "back",
        "Back",
        "Back to the pod list (from the model box: back to the table)",
        "back",
        ("gpus",),
    ),
    Key(
        "gpus.create",
        "n",
        "create",
        "Create pod",
        "Create a pod with the highlighted GPU (enter does the same)",
        "create a pod with the highlighted GPU",
        ("gpus",),
    ),
    Key(
        "gpus.refresh", "ctrl+r", "refresh", "Refresh", "Fetch the GPU types, prices and stock again", scopes=("gpus",)
    ),
    Key(
        "gpus.model",
        "m",
        "focus_model",
        "Model size",
        "Type the model size (1.5B, 7b, 350M); then pick the method",
        "the model size box (1.5B, 7b, 350M) and the method",
        ("gpus",),
    ),
    Key("create.cancel", "escape", "cancel", "Cancel", "Close the form; nothing is created", scopes=("create",)),
    Key(
        "create.submit",
        "ctrl+s",
        "submit",
        "Create",
        "Create the pod, after showing what it costs",
        "in the form: create (after showing the cost)",
        ("create",),
    ),
    # --- consoles ---
    Key(
        "console.leave",
        "escape",
        "leave",
        "Pods",
        "Back to the pod list; the consoles stay open",
        "back to the pods; consoles stay open",
        ("console",),
    ),
    Key(
        "console.type",
        "enter,i",
        "focus_console",
        "Type",
        "Type into the console again",
        "type into the console again",
        ("console",),
    ),
    Key(
        "console.prev",
        "left_square_bracket",
        "switch(-1)",
        "Prev",
        "The previous console tab",
        "previous",
        ("console",),
    ),
    Key(
        "console.next",
        "right_square_bracket",
        "switch(1)",
        "Next",
        "The next console tab",
        "next console tab",
        ("console",),
    ),
    Key(
        "console.close",
        "x",
        "close_console",
        "Close",
        "Close this console: its shell ends (asks first)",
        "close",
        ("console",),
    ),
    Key(
        "console.reconnect", "R", "reconnect", "Reconnect", "Open a fresh shell in this tab", "reconnect", ("console",)
    ),
    Key(
        "console.save",
        "S",
        "save",
        "Save output",
        "Save the scrollback and screen as a plain text file",
        "save output to a text file",
        ("console",),
    ),
    # --- transfers ---
    Key("transfers.back", "escape", "back", "Pods", "Back to the pod list; transfers go on", scopes=("transfers",)),
    Key(
        "transfers.add",
        "a",
        "add",
        "Add",
        "Add a transfer to or from a pod",
        "add a transfer: tab completes local paths, {add-transfer.browse} lists the pod's folder",
        ("transfer-table",),
    ),
    Key("transfers.cancel", "x", "cancel", "Cancel", "Cancel the highlighted transfer", "cancel", ("transfer-table",)),
    Key(
        "transfers.retry",
        "r",
        "retry",
        "Retry",
        "Retry the highlighted transfer, if it failed or was cancelled",
        "retry the highlighted transfer",
        ("transfer-table",),
    ),
    Key(
        "transfers.log",
        "l",
        "log",
        "Log",
        "Show or hide the highlighted transfer's log",
        "show or hide its log",
        ("transfer-table",),
    ),
    Key(
        "transfers.remove",
        "delete,d",
        "remove",
        "Remove",
        "Remove a finished transfer from the list (files stay)",
        "remove a finished transfer from the list (files stay)",
        ("transfer-table",),
        show=False,
        named="d",
    ),
    Key(
        "add-transfer.cancel",
        "escape",
        "cancel",
        "Cancel",
        "Close the form; nothing is transferred",
        scopes=("add-transfer",),
    ),
    Key("add-transfer.submit", "ctrl+s", "submit", "Add", "Queue the transfer", scopes=("add-transfer",)),
    Key(
        "add-transfer.browse",
        "ctrl+l",
        "browse",
        "List pod folder",
        "List the folder on the pod",
        scopes=("add-transfer",),
    ),
    # --- Hugging Face, the doctor ---
    Key("hf.close", "escape", "close", "Close", "Close; a download already started goes on", scopes=("hf",)),
    Key("hf.check", "ctrl+r", "check", "Check", "Check the token and the repo", scopes=("hf",)),
    Key(
        "hf.download",
        "ctrl+s",
        "download",
        "Download on pod",
        "Download the repo on the pod, verified file by file",
        scopes=("hf",),
    ),
    Key("doctor.back", "escape", "app.pop_screen", "Back", "Back to the pod list", scopes=("doctor",)),
    Key("doctor.run", "r", "run", "Check again", "Run every check on the pod again", scopes=("doctor",)),
    Key(
        "doctor.fix",
        "enter",
        "fix",
        "Type the fix into a console",
        "Type the highlighted check's fix into a console on the pod (not run: you press enter)",
        scopes=("doctor",),
    ),
    Key("logs.back", "escape", "back", "Back", "Back to where the logs were opened from", scopes=("logs",), rank=1),
    Key(
        "logs.source",
        "s",
        "source",
        "Source",
        "Show both logs, the container's or the system's",
        "logs: both sources, the container's or the system's",
        ("logs",),
        rank=2,
    ),
    Key("logs.pause", "space,p", "pause", "Pause", "Hold the view still (lines keep coming)", "logs: pause", ("logs",)),
    Key(
        "logs.filter",
        "slash",
        "filter",
        "Filter",
        "Show only the lines with the words typed",
        "logs: only the lines with these words",
        ("logs",),
        rank=2,
    ),
    Key(
        "logs.find",
        "f",
        "find",
        "Find",
        "Go to the lines with the words typed, highlighted",
        "logs: find words (n next, N previous)",
        ("logs",),
        rank=3,
    ),
    Key("logs.next", "n", "find_next(True)", "Next", "The next line found", scopes=("logs",), show=False),
    Key("logs.previous", "N", "find_next(False)", "Previous", "The line found before", scopes=("logs",), show=False),
    Key(
        "logs.range",
        "t",
        "range",
        "Range",
        "How far back: the last N lines, or since a time",
        "logs: how far back (the last N lines, or since 10m, 2h, a date)",
        ("logs",),
    ),
    Key("logs.save", "w", "save", "Save", "Save the lines shown to a file (yours alone)", "logs: save", ("logs",)),
    Key(
        "log-screen.services",
        "S",
        "services",
        "Services",
        "This pod's services: its ports, links and forwards",
        scopes=("log-screen",),
        rank=4,
    ),
    Key(
        "service-screen.logs",
        "L",
        "logs",
        "Logs",
        "This pod's logs, live",
        scopes=("service-screen",),
        rank=4,
    ),
    Key("services.back", "escape", "back", "Back", "Back to where they were opened", scopes=("services",), rank=1),
    Key(
        "services.open",
        "o",
        "open",
        "Open",
        "Open the highlighted link in the browser",
        "services: open the link in the browser",
        ("services",),
        rank=2,
    ),
    Key("services.copy", "y", "copy", "Copy", "Copy the highlighted link", "services: copy the link", ("services",)),
    Key(
        "services.password",
        "p",
        "password",
        "Password",
        "Copy the pod's JUPYTER_PASSWORD (never shown)",
        "services: copy Jupyter's password (shown masked)",
        ("services",),
    ),
    Key(
        "services.forward",
        "f",
        "forward",
        "Forward",
        "Forward the highlighted port to 127.0.0.1 on this machine (direct SSH)",
        "services: forward the port to this machine",
        ("services",),
        rank=2,
    ),
    Key(
        "services.unforward",
        "x",
        "stop_forward",
        "Unforward",
        "Stop forwarding the highlighted port",
        "services: stop forwarding the port",
        ("services",),
    ),
    # --- detached jobs (docs/jobs.md) ---
    Key("jobs.back", "escape", "back", "Back", "Back to where the jobs were opened from", scopes=("jobs",), rank=1),
    Key(
        "jobs.new",
        "n",
        "new",
        "New job",
        "Start a command on the pod, detached: it survives podtui and the connection",
        "jobs: start one (a command, then pulls and a stop or terminate once it ends)",
        ("jobs",),
        rank=2,
    ),
    Key(
        "jobs.log",
        "l",
        "log",
        "Log",
        "The highlighted job's log, live while it runs (enter too)",
        "jobs: the job's log, live while it runs (enter too)",
        ("jobs",),
        rank=2,
    ),
    Key(
        "jobs.cancel",
        "x",
        "cancel",
        "Cancel job",
        "Cancel the highlighted running job: SIGTERM, then SIGKILL (asks first)",
        "jobs: cancel the job (asks first)",
        ("jobs",),
        rank=3,
    ),
    Key(
        "jobs.refresh",
        "ctrl+r",
        "refresh",
        "Refresh",
        "Read the pod's jobs again",
        "jobs: read them again",
        ("jobs",),
        rank=5,
    ),
    Key(
        "jobs-screen.transfers",
        "t",
        "transfers",
        "Transfers",
        "The transfers: a job's pulls, with their progress and checksums",
        scopes=("jobs-screen",),
        rank=4,
    ),
    Key("job-log.back", "escape", "back", "Back", "Back to the jobs; the job goes on", scopes=("job-log",), rank=1),
    Key(
        "job-log.cancel",
        "x",
        "cancel",
        "Cancel job",
        "Cancel this job: SIGTERM, then SIGKILL (asks first)",
        scopes=("job-log",),
        rank=3,
    ),
    Key("new-job.cancel", "escape", "cancel", "Cancel", "Close the form; nothing is started", scopes=("new-job",)),
    Key("new-job.submit", "ctrl+s", "submit", "Start", "Start the job on the pod", scopes=("new-job",)),
    # --- sync (docs/sync.md) ---
    Key("sync.back", "escape", "back", "Back", "Back to where the sync was opened from", scopes=("sync",), rank=1),
    Key(
        "sync.new",
        "n",
        "new",
        "Sync…",
        "Sync a folder with the pod: which folders, which way, delete, excludes, watch",
        "sync: a folder with the pod (the form: folders, push or pull, delete, excludes, .gitignore, watch)",
        ("sync",),
        rank=2,
    ),
    Key(
        "sync.again",
        "r",
        "again",
        "Sync again",
        "Sync once more as last time: only what changed is copied",
        "sync: again as last time (only what changed is copied)",
        ("sync",),
        rank=2,
    ),
    Key(
        "sync.watch",
        "w",
        "watch",
        "Watch",
        "Turn the watch on or off: sync again whenever a local file changes (push only)",
        "sync: watch on / off (sync again whenever a local file changes)",
        ("sync",),
        rank=3,
    ),
    Key(
        "sync.cancel",
        "x",
        "cancel",
        "Cancel sync",
        "Stop the sync under way (between files), or the watch",
        "sync: cancel the sync under way, or the watch",
        ("sync",),
        rank=3,
    ),
    Key(
        "sync-screen.console",
        "c",
        "console",
        "Console",
        "A console on the pod: run what was just synced",
        scopes=("sync-screen",),
        rank=4,
    ),
    Key("sync-form.cancel", "escape", "cancel", "Cancel", "Close the form; nothing is synced", scopes=("sync-form",)),
    Key("sync-form.submit", "ctrl+s", "submit", "Sync", "Start the sync", scopes=("sync-form",)),
    # --- network volumes, templates, recreate (docs/storage.md) ---
    Key("volumes.back", "escape", "back", "Back", "Back to the pods", scopes=("volumes",), rank=1),
    Key(
        "volumes.create",
        "n",
        "create",
        "New",
        "Create a network volume (its cost a month shown first)",
        "volumes: create one (name, size, data centre, type; $/month shown)",
        ("volumes",),
        rank=2,
    ),
    Key(
        "volumes.grow",
        "g",
        "grow",
        "Grow",
        "Make the highlighted volume larger (never smaller)",
        "volumes: grow the volume",
        ("volumes",),
    ),
    Key("volumes.rename", "r", "rename", "Rename", "Rename the highlighted volume", "volumes: rename", ("volumes",)),
    Key(
        "volumes.delete",
        "d,delete",
        "delete",
        "Delete",
        "Delete the highlighted volume and its data (its name typed; refused while a pod uses it)",
        "volumes: delete (the name typed; refused while a pod uses it)",
        ("volumes",),
        rank=4,
    ),
    Key(
        "volumes.pod",
        "c",
        "create_pod",
        "New pod",
        "Create a pod on the highlighted volume, in its data centre",
        "volumes: create a pod on the volume",
        ("volumes",),
        rank=2,
    ),
    Key(
        "volumes.refresh",
        "ctrl+r",
        "refresh",
        "Refresh",
        "Ask RunPod again",
        "volumes, templates, recreate: ask RunPod again",
        ("volumes",),
        rank=5,
    ),
    # --- every profile's account (docs/profiles.md#the-accounts-view) ---
    Key("accounts.back", "escape", "back", "Back", "Back to the pods", scopes=("accounts",), rank=1),
    Key(
        "accounts.switch",
        "s",
        "switch",
        "Switch",
        "Switch to the highlighted profile (the app starts again on that account)",
        "accounts: switch to the profile (enter too)",
        ("accounts",),
        rank=2,
    ),
    Key(
        "accounts.refresh",
        "ctrl+r",
        "refresh",
        "Refresh",
        "Ask every profile's account again",
        "accounts: ask every account again",
        ("accounts",),
        rank=5,
    ),
    # --- the Spend view (docs/spend.md#the-spend-view) ---
    Key("spend.back", "escape", "back", "Back", "Back to the pods", scopes=("spend",), rank=1),
    Key("spend.today", "t", "today", "Today", "What was spent today (UTC)", "spend: today", ("spend",), rank=2),
    Key(
        "spend.week",
        "w",
        "week",
        "7 days",
        "The last 7 days, today included",
        "spend: the last 7 days",
        ("spend",),
        rank=2,
    ),
    Key(
        "spend.month",
        "m",
        "month",
        "30 days",
        "The last 30 days, today included",
        "spend: the last 30 days",
        ("spend",),
        rank=2,
    ),
    Key(
        "spend.by-pod",
        "p",
        "by_pod",
        "By pod",
        "Each pod's spend, terminated ones too",
        "spend: by pod",
        ("spend",),
        rank=3,
    ),
    Key("spend.by-gpu", "g", "by_gpu", "By GPU", "The spend by GPU type", "spend: by GPU type", ("spend",), rank=3),
    Key(
        "spend.by-volume",
        "v",
        "by_volume",
        "By volume",
        "Each network volume's storage (RunPod's billing only)",
        "spend: by network volume",
        ("spend",),
        rank=3,
    ),
    Key("spend.by-day", "d", "by_day", "By day", "The spend of each UTC day", "spend: by day", ("spend",), rank=3),
    Key(
        "spend.refresh",
        "ctrl+r",
        "refresh",
        "Refresh",
        "Ask RunPod's billing again",
        "spend: ask RunPod's billing again",
        ("spend",),
        rank=5,
    ),
    Key("volume-form.cancel", "escape", "cancel", "Cancel", "Close; no volume is made", scopes=("volume-form",)),
    Key("volume-edit.cancel", "escape", "cancel", "Cancel", "Close; nothing is changed", scopes=("volume-edit",)),
    Key("volume-delete.cancel", "escape", "cancel", "Cancel", "Keep the volume", scopes=("volume-delete",)),
    Key("template-form.cancel", "escape", "cancel", "Cancel", "Close; no template is made", scopes=("template-form",)),
    Key("templates.back", "escape", "back", "Back", "Back to the pods", scopes=("templates",), rank=1),
    Key(
        "templates.toggle",
        "p",
        "mine_or_public",
        "Mine/public",
        "Show your templates, or RunPod's public ones",
        "templates: yours, or RunPod's public ones",
        ("templates",),
        rank=2,
    ),
    Key(
        "templates.source",
        "s",
        "source",
        "Source",
        "Public templates: official, verified or community",
        "templates: which public ones (official, verified, community)",
        ("templates",),
        rank=4,
    ),
    Key(
        "templates.create",
        "c",
        "create_pod",
        "New pod",
        "Create a pod from the highlighted template (enter too)",
        "templates: create a pod from the template",
        ("templates",),
        rank=2,
    ),
    Key(
        "templates.from-pod",
        "n",
        "from_pod",
        "From pod",
        "A template from a pod's configuration (secrets as references)",
        "templates: make one from a pod (credential-looking values as RunPod secret references, or left out)",
        ("templates",),
        rank=3,
    ),
    Key(
        "templates.delete",
        "d,delete",
        "delete",
        "Delete",
        "Delete the highlighted template of yours (asks first)",
        "templates: delete one of yours (asks first)",
        ("templates",),
        rank=4,
    ),
    Key("templates.refresh", "ctrl+r", "refresh", "Refresh", "Ask RunPod again", scopes=("templates",), rank=5),
    Key("recreate.back", "escape", "back", "Back", "Back to the pods", scopes=("recreate",), rank=1),
    Key(
        "recreate.create",
        "c",
        "create_pod",
        "Recreate",
        "Open the create form with the highlighted pod's spec (enter too)",
        "recreate: the create form, filled in with the pod's spec",
        ("recreate",),
        rank=2,
    ),
    Key(
        "recreate.forget",
        "d,delete",
        "forget",
        "Forget",
        "Forget the highlighted pod's spec",
        "recreate: forget the pod",
        ("recreate",),
        rank=3,
    ),
    Key("recreate.refresh", "ctrl+r", "refresh", "Refresh", "Read the pods again", scopes=("recreate",), rank=5),
    # --- dialogs ---
    Key("help.close", "escape,q,question_mark", "close", "Close", "Close the help", scopes=("help",)),
    Key("ssh-key.close", "escape,q", "close", "Close", "Close", scopes=("ssh-key",)),
    Key(
        "ssh-key.setup",
        "s",
        "setup",
        "Set up",
        "Create the key if needed and register it on the account",
        scopes=("ssh-key",),
    ),
    Key("confirm.cancel", "escape,n", "cancel", "Cancel", "No: nothing is sent", scopes=("confirm",)),
    Key("confirm.yes", "y", "confirm", "Confirm", "Yes: send it", scopes=("confirm",)),
    Key("terminate.cancel", "escape", "cancel", "Cancel", "Keep the pod", scopes=("terminate",)),
    # only when the name need not be typed (confirm_terminate = "yn"); otherwise every letter goes to the name box
    Key("terminate.yes", "y,Y", "yes", "Terminate", "Yes: terminate the pod", scopes=("terminate",)),
    Key("terminate.no", "n,N", "no", "Keep", "No: keep the pod", scopes=("terminate",)),
    Key("bulk.cancel", "escape", "cancel", "Cancel", "Nothing is sent", scopes=("bulk",)),
    Key("edit.cancel", "escape", "cancel", "Cancel", "Close the form; nothing is changed", scopes=("edit",)),
    Key(
        "edit.submit",
        "ctrl+s",
        "submit",
        "Review",
        "Show what changes and what a restart resets, then save",
        "in the edit form: review the changes, then save",
        ("edit",),
    ),
    Key("resume-offer.cancel", "escape", "cancel", "Cancel", "Leave the pod stopped", scopes=("resume-offer",)),
    Key(
        "welcome.later",
        "escape",
        "later",
        "Later",
        "Close; the key can be set later from the command palette",
        scopes=("welcome",),
    ),
    Key("save-as.cancel", "escape", "cancel", "Cancel", "Close; nothing is saved", scopes=("save-as",)),
    Key("copy.cancel", "escape,q", "cancel", "Close", "Close; nothing is copied", scopes=("copy",)),
)

BY_ID: dict[str, Key] = {k.id: k for k in KEYS}


def bindings(scope: str) -> list[BindingType]:
    """A screen's or widget's BINDINGS, in the table's order (the footer's)."""
    if scope not in SCOPES:
        raise ValueError(f"no such key scope: {scope}")
    return [k.binding() for k in KEYS if scope in k.scopes]


# --- the help screen -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class HelpRow:
    """A line of the help screen: one or more bindings, or keys Textual does not bind (the console's own)."""

    ids: tuple[str, ...] = ()
    text: str | None = None  # default: the bindings' help, joined by " / "
    keys: str | None = None  # how to write the keys while they are not remapped; default: from the bindings


HELP: tuple[tuple[str, tuple[HelpRow, ...]], ...] = (
    (
        "Pods",
        (
            HelpRow(("pod-table.up", "pod-table.down"), "move", "↑ ↓  j k"),
            HelpRow(("pod-table.select",)),
            HelpRow(("pods.filter",)),
            HelpRow(("pods.sort", "pods.sort-reverse")),
            HelpRow(("pods.stop",)),
            HelpRow(("pods.resume",)),
            HelpRow(("pods.restart",)),
            HelpRow(("pods.terminate",)),
            HelpRow(("pods.edit",)),
            HelpRow(("pods.mark",)),
            HelpRow(("pods.mark-all",)),
            HelpRow(("pods.refresh",)),
            HelpRow(("pods.console",)),
            HelpRow(("pods.consoles",)),
            HelpRow(("pods.close-console",)),
            HelpRow(("pods.add-transfer",)),
            HelpRow(("pods.transfers",)),
            HelpRow(("pods.autostop",)),
            HelpRow(("pods.logs",)),
            HelpRow(("pods.services",)),
            HelpRow(("pods.ssh",)),
            HelpRow(("pods.editor",)),
            HelpRow(("pods.doctor",)),
            HelpRow(("pods.hf",)),
            HelpRow(("pods.gpus",)),
            HelpRow(("pods.create",)),
            HelpRow(("pods.copy",)),
            HelpRow(("pods.zoom",)),
            HelpRow(
                text="in the list: a console is open / in-app autostop is on", keys=f"{CONSOLE_MARK} / {AUTOSTOP_MARK}"
            ),
            HelpRow(
                text="in the list: marked / locked (Locked pods cannot be stopped or reset) / "
                "data deleted at $0 (no network volume: RunPod terminates it when the balance reaches $0)",
                keys=f"{PICKED_MARK} / {LOCKED_MARK} / {AT_ZERO_MARK}",
            ),
            HelpRow(text="move between the list and the pod's pane (the mouse too)", keys="tab / shift+tab"),
        ),
    ),
    (
        "GPU advisor and new pod",
        (
            HelpRow(("gpus.model",)),
            HelpRow(("gpus.create",), keys="enter / n"),  # enter on a row: the table's own selection
            HelpRow(("create.submit",)),
            HelpRow(("gpus.back",)),
        ),
    ),
    (
        "Console",
        (
            HelpRow(text="leave the console: podtui's keys work again", keys=RELEASE_KEY_LABEL),
            HelpRow(("console.type",)),
            HelpRow(("console.prev", "console.next"), keys="[  ]"),
            HelpRow(text="scroll back / forward (the mouse wheel too)", keys="shift+PgUp/PgDn"),
            HelpRow(text="select and copy (hold shift when the program uses the mouse)", keys="mouse drag"),
            HelpRow(("console.close", "console.reconnect", "console.save")),
            HelpRow(("console.leave",)),
        ),
    ),
    (
        "Logs",
        (
            HelpRow(("logs.source",)),
            HelpRow(("logs.range",)),
            HelpRow(("logs.filter",)),
            HelpRow(("logs.find", "logs.next", "logs.previous")),
            HelpRow(("logs.pause",)),
            HelpRow(("logs.save",)),
        ),
    ),
    (
        "Services",
        (
            HelpRow(("services.open", "services.copy")),
            HelpRow(("services.password",)),
            HelpRow(("services.forward", "services.unforward")),
        ),
    ),
    (
        "Jobs",
        (
            HelpRow(("pods.jobs",)),
            HelpRow(("jobs.new",)),
            HelpRow(("jobs.log", "jobs.cancel")),
            HelpRow(("jobs.refresh",)),
            HelpRow(text="a job's pulls are verified before its pod is stopped or terminated", keys=""),
        ),
    ),
    (
        "Sync",
        (
            HelpRow(("pods.sync",)),
            HelpRow(("sync.new",)),
            HelpRow(("sync.again",)),
            HelpRow(("sync.watch",)),
            HelpRow(("sync.cancel",)),
            HelpRow(("sync-screen.console",), "below 100x30, on the sync screen: a console on the pod"),
            HelpRow(text="only what changed is copied, and every file is verified by sha256 on both ends", keys=""),
        ),
    ),
    (
        "Volumes, templates, recreate",
        (
            HelpRow(("pods.volumes",)),
            HelpRow(("pods.templates",)),
            HelpRow(("pods.recreate",)),
            HelpRow(("volumes.create", "volumes.grow", "volumes.rename")),
            HelpRow(("volumes.delete",), keys="d"),
            HelpRow(("volumes.pod",)),
            HelpRow(("templates.toggle", "templates.source")),
            HelpRow(("templates.create",), keys="enter / c"),
            HelpRow(("templates.from-pod",)),
            HelpRow(("templates.delete",), keys="d"),
            HelpRow(("recreate.create",), keys="enter / c"),
            HelpRow(("recreate.forget",), keys="d"),
            HelpRow(("volumes.refresh",), keys="ctrl+r"),
        ),
    ),
    (
        "Spend",
        (
            HelpRow(("pods.spend",)),
            HelpRow(("spend.today", "spend.week", "spend.month")),
            HelpRow(("spend.by-pod", "spend.by-gpu", "spend.by-volume", "spend.by-day")),
            HelpRow(("spend.refresh",)),
        ),
    ),
    (
        "Accounts (profiles)",
        (
            HelpRow(("accounts.switch",), keys="enter / s"),
            HelpRow(("accounts.refresh",)),
        ),
    ),
    (
        "Transfers",
        (
            HelpRow(("transfers.add",)),
            HelpRow(("transfers.cancel", "transfers.retry")),
            HelpRow(("transfers.log",)),
            HelpRow(("transfers.remove",), keys="d"),
            HelpRow(text="every file is verified by checksum on both ends before it is called done", keys=""),
        ),
    ),
    (
        "Everywhere",
        (
            HelpRow(("app.palette",)),
            HelpRow(("app.ssh-key",)),
            HelpRow(("app.help",)),
            HelpRow(text="back / close", keys="escape"),
            HelpRow(("app.quit",)),
        ),
    ),
)

_LABELS = {
    "slash": "/",
    "question_mark": "?",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "up": "↑",
    "down": "↓",
}


def key_label(key: str) -> str:
    """A Textual key name as the help screen writes it: "slash" is "/", "full_stop" is ".", "ctrl+r" stays."""
    *modifiers, base = key.split("+")  # Textual names "+" itself "plus", so "+" only separates
    return "+".join([*modifiers, _LABELS.get(base) or key_names.character(base) or base])


# The [keys] remaps applied to each running app (key_remaps.apply): what the help screen and the palette show.
_remaps: weakref.WeakKeyDictionary[App[Any], dict[str, str]] = weakref.WeakKeyDictionary()


def remember(app: App[Any], applied: Mapping[str, str]) -> None:
    """The remaps in effect in `app`, for the keys named in its help, palette and sentences."""
    _remaps[app] = dict(applied)


def keys_of(app: App[Any] | None, key_id: str) -> str:
    """The key string in effect for a binding, remapped or not."""
    remapped = _remaps.get(app, {}) if app is not None else {}
    return remapped.get(key_id, BY_ID[key_id].keys)


def key_for(app: App[Any] | None, key_id: str) -> str:
    """The key to name in a sentence for a binding, as the user sees it after config.toml's [keys]: "D", "/",
    "escape"; the first of its keys in effect, unless the table names another while it is not remapped."""
    key = BY_ID[key_id]
    keys = keys_of(app, key_id)
    if key.named and keys == key.keys:
        return key_label(key.named)
    return key_label(keys.split(",")[0].strip())


def shown(app: App[Any] | None, key_id: str) -> str:
    return " / ".join(key_label(k.strip()) for k in keys_of(app, key_id).split(","))


_PLACEHOLDER = re.compile(r"\{([a-z0-9.-]+)\}")


def fill(app: App[Any] | None, text: str) -> str:
    """Text with each {binding id} replaced by that binding's key."""
    return _PLACEHOLDER.sub(lambda m: key_for(app, m.group(1)) if m.group(1) in BY_ID else m.group(0), text)


def help_rows(app: App[Any] | None) -> list[tuple[str, list[tuple[str, str]]]]:
    """The help screen's sections as (title, [(keys, what they do)]), with the keys in effect."""
    remapped = _remaps.get(app, {}) if app is not None else {}
    out: list[tuple[str, list[tuple[str, str]]]] = []
    for title, rows in HELP:
        lines: list[tuple[str, str]] = []
        for row in rows:
            text = row.text if row.text is not None else " / ".join(BY_ID[i].help for i in row.ids)
            if row.keys is not None and not any(i in remapped for i in row.ids):
                keys = row.keys
            else:
                keys = " / ".join(shown(app, i) for i in row.ids)
            lines.append((keys, fill(app, text)))
        out.append((title, lines))
    return out
