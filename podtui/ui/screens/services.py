"""A pod's services, full screen (docs/services.md): the services panel (its ports, links and forwards) under a
heading naming the pod. Below 100x30, where the main screen has no pane, `S` opens this."""

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
from podtui.ui.widgets.services_panel import ServicesPanel


class ServicesNeeds(PodBroadcasts, HasNavigator, Protocol):
    """The pod as polled, and the pod's logs screen."""


class ServicesScreen(Screen[None]):
    CSS_PATH = "services.tcss"
    BINDINGS = keymap.bindings("service-screen")

    needs = Needs[ServicesNeeds]()

    def __init__(self, pod: Pod) -> None:
        super().__init__()
        self.pod = pod

    def compose(self) -> ComposeResult:
        p = self.pod  # RunPod's words: shown, never acted on
        yield Static(Text.assemble(("Services · ", "bold"), (visible(p.name), "bold"), f"  {visible(p.id)}"), id="head")
        yield ServicesPanel()
        yield FittedFooter()

    def action_logs(self) -> None:
        """The pod's logs: the screen under this one when it came from there, else a new one."""
        if self.needs.navigator.is_under(self, ("logs", self.pod.id)):
            self.dismiss()
        else:
            self.needs.navigator.open_logs(self.pod)

    def on_mount(self) -> None:
        panel = self.query_one(ServicesPanel)
        panel.show_pod(self.pod)
        panel.table.focus()
        subscribe(self, self.needs.pods_polled, self._polled)

    def _polled(self, data: PodData) -> None:
        snap = data.feed.snapshot
        pod = next((p for p in snap.pods if p.id == self.pod.id), None) if snap is not None else None
        if pod is not None:  # a pod gone from the account keeps what was last seen
            self.pod = pod
            self.query_one(ServicesPanel).show_pod(pod)

    def on_services_panel_left(self, _message: ServicesPanel.Left) -> None:
        self.dismiss()
