"""A pod's log, full screen (docs/architecture.md#logs): the log panel (the stream, its state, the lines, the
filter) under a heading naming the pod, the source and how far back it goes."""

from __future__ import annotations

from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.needs import HasNavigator, Needs, Served
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.log_panel import LogPanel


class LogsNeeds(Served, HasNavigator, Protocol):
    """How to reach RunPod, where files go, and the pod's services screen."""


class LogsScreen(Screen[None]):
    CSS_PATH = "logs.tcss"
    BINDINGS = keymap.bindings("log-screen")  # the panel's keys, its back included, are the panel's

    needs = Needs[LogsNeeds]()

    def __init__(self, pod: Pod) -> None:
        super().__init__()
        self.pod = pod

    def compose(self) -> ComposeResult:
        yield Static(id="head")
        yield LogPanel(lambda: self.needs.services)
        yield FittedFooter()

    @property
    def panel(self) -> LogPanel:
        return self.query_one(LogPanel)

    def action_services(self) -> None:
        """The pod's services: the screen under this one when it came from there, else a new one."""
        if self.needs.navigator.is_under(self, ("services", self.pod.id)):
            self.dismiss()
        else:
            self.needs.navigator.open_services(self.pod)

    def on_mount(self) -> None:
        self._head()
        self.panel.show_pod(self.pod)
        self.panel.view.focus()

    def _head(self) -> None:
        p = self.pod
        self.query_one("#head", Static).update(
            Text.assemble(
                ("Logs · ", "bold"), (visible(p.name), "bold"), f"  {visible(p.id)}  ", (self.panel.heading, "italic")
            )
        )

    def on_log_panel_changed(self, _message: LogPanel.Changed) -> None:
        self._head()

    def on_log_panel_left(self, _message: LogPanel.Left) -> None:
        self.dismiss()
