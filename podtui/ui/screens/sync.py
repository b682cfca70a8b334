"""A pod's sync, full screen (docs/sync.md): the sync panel under a heading naming the pod. Below 100x30, where the
main screen has no pane, the sync key and the palette open this; `c` opens a console on the pod, to run what was
synced."""

from __future__ import annotations

from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.needs import HasNavigator, Needs, PodBroadcasts, PodData, subscribe
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.sync_panel import SyncPanel


class SyncNeeds(PodBroadcasts, HasNavigator, Protocol):
    """The pod as polled (its name, whether it runs), and a console on it."""


class SyncScreen(Screen[None]):
    CSS_PATH = "sync.tcss"
    BINDINGS = keymap.bindings("sync-screen")

    needs = Needs[SyncNeeds]()

    def __init__(self, pod: Pod) -> None:
        super().__init__()
        self.pod = pod

    def compose(self) -> ComposeResult:
        p = self.pod  # RunPod's words: shown, never acted on
        yield Static(Text.assemble(("Sync · ", "bold"), (visible(p.name), "bold"), f"  {visible(p.id)}"), id="head")
        yield SyncPanel()
        yield FittedFooter()

    @property
    def panel(self) -> SyncPanel:
        return self.query_one(SyncPanel)

    def on_mount(self) -> None:
        self.panel.show_pod(self.pod)
        self.panel.focus()
        subscribe(self, self.needs.pods_polled, self._polled)

    def _polled(self, data: PodData) -> None:
        snap = data.feed.snapshot
        pod = next((p for p in snap.pods if p.id == self.pod.id), None) if snap is not None else None
        if pod is not None:  # a pod gone from the account keeps what was last seen
            self.pod = pod
            self.panel.show_pod(pod)

    def on_sync_panel_left(self, _message: SyncPanel.Left) -> None:
        self.dismiss()

    async def action_console(self) -> None:
        """A console on the pod (a screen of its own here, below 100x30): run what was synced."""
        await self.needs.navigator.open_console(self.pod)
