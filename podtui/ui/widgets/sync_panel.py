"""A pod's sync (docs/sync.md): the folders and how they are synced, what changed (the plan: new, changed, deleted,
unchanged, skipped and why), what is in flight (the files, a bar for the whole copy), the last result (verified,
failed files and why, the route, when and how long) and whether a watch is on. `n` opens the form, `r` syncs again
as last time, `w` turns the watch on or off, `x` cancels.

The sync desk (ui/sync_desk.py) runs the syncs and publishes each move; the pane's Sync tab and the sync screen
(below 100x30) are both this panel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui import colours, keymap
from podtui.ui.needs import Needs, subscribe
from podtui.ui.sync_view import sync_text

if TYPE_CHECKING:
    from textual.signal import Signal

    from podtui.ui.sync_view import PodSync

IDLE = (
    "No sync with {pod} yet.\n\n"
    "Press {sync.new} to keep a folder here and one on the pod in step: what changed (size, time, then sha256) is "
    "copied and every file verified on both ends; .gitignore is honoured. {sync.watch} syncs again whenever a local "
    "file changes."
)
KEYS = "{sync.new} sync a folder · {sync.again} sync again · {sync.watch} watch on/off · {sync.cancel} cancel"


class RunsSyncs(Protocol):
    """The sync desk, as the panel uses it."""

    @property
    def changed_signal(self) -> Signal[str]: ...
    def view(self, pod_id: str) -> PodSync: ...
    def ask(self, pod: Pod, watch: bool = False) -> None: ...
    def again(self, pod: Pod) -> None: ...
    def toggle_watch(self, pod: Pod) -> None: ...
    def cancel(self, pod: Pod) -> None: ...


class SyncPanelHost(Protocol):
    @property
    def syncs(self) -> RunsSyncs: ...


class SyncPanel(VerticalScroll, can_focus=True):
    BINDINGS = keymap.bindings("sync")

    needs = Needs[SyncPanelHost]()

    class Left(Message):
        """Back was pressed: whoever holds the panel decides."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pod: Pod | None = None
        self._busy = False  # as last drawn: the cancel key is shown dimmed while nothing runs

    def compose(self) -> ComposeResult:
        yield Static(id="sync-body", markup=False)
        yield Static(id="sync-keys", markup=False)

    def on_mount(self) -> None:
        subscribe(self, self.needs.syncs.changed_signal, self._moved)
        self.draw()

    def on_resize(self) -> None:
        self.draw()

    def show_pod(self, pod: Pod | None) -> None:
        """This pod's sync (the same pod again, as polled: its name redrawn)."""
        self.pod = pod
        if self.is_mounted:
            self.draw()

    def _moved(self, pod_id: str) -> None:
        if self.pod is not None and pod_id == self.pod.id:
            self.draw()

    @property
    def view(self) -> PodSync | None:
        return self.needs.syncs.view(self.pod.id) if self.pod is not None else None

    def draw(self) -> None:
        body = self.query_one("#sync-body", Static)
        keys = self.query_one("#sync-keys", Static)
        view = self.view
        busy = view is not None and view.busy
        if busy != self._busy:
            self._busy = busy
            self.refresh_bindings()
        if self.pod is None or view is None:
            body.update("no pod selected")
            keys.update("")
            return
        if view.spec is None:
            # the keys first: a pod named "{sync.new}" stays its name
            body.update(keymap.fill(self.app, IDLE).replace("{pod}", visible(self.pod.name)))
            keys.update("")
            return
        palette = colours.palette(self.app)
        body.update(sync_text(view, self.pod.name, self.content_size.width, palette))
        keys.update(Text(keymap.fill(self.app, KEYS), palette.style("muted")))

    # --- keys ----------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Cancel only while a sync or a watch runs (None: shown dimmed in the footer)."""
        return None if action == "cancel" and not self._busy else True

    def action_new(self) -> None:
        if self.pod is not None:
            self.needs.syncs.ask(self.pod)

    def action_again(self) -> None:
        if self.pod is not None:
            self.needs.syncs.again(self.pod)

    def action_watch(self) -> None:
        if self.pod is not None:
            self.needs.syncs.toggle_watch(self.pod)

    def action_cancel(self) -> None:
        if self.pod is not None:
            self.needs.syncs.cancel(self.pod)

    def action_back(self) -> None:
        self.post_message(self.Left())
