"""A pod's sync, full screen (docs/sync.md): the sync panel under a heading naming the pod. Below 100x30, where the
main screen has no pane, the sync key and the palette open this; `c` opens a console on the pod, to run what was
synced."""

from __future__ import annotations

from typing import Protocol

from podtui.core.pod import Pod
from podtui.ui import keymap
from podtui.ui.needs import HasNavigator, Needs, PodBroadcasts
from podtui.ui.screens.pod_panel import PodPanelScreen
from podtui.ui.widgets.sync_panel import SyncPanel


class SyncNeeds(PodBroadcasts, HasNavigator, Protocol):
    """The pod as polled (its name, whether it runs), and a console on it."""


class SyncScreen(PodPanelScreen[SyncPanel]):
    BINDINGS = keymap.bindings("sync-screen")
    HEADING = "Sync"

    needs = Needs[SyncNeeds]()

    def __init__(self, pod: Pod) -> None:
        super().__init__(pod, SyncPanel)

    def on_sync_panel_left(self, _message: SyncPanel.Left) -> None:
        self.dismiss()

    async def action_console(self) -> None:
        """A console on the pod (a screen of its own here, below 100x30): run what was synced."""
        await self.needs.navigator.open_console(self.pod)
