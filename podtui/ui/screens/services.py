"""A pod's services, full screen (docs/services.md): the services panel (its ports, links and forwards) under a
heading naming the pod. Below 100x30, where the main screen has no pane, `S` opens this."""

from __future__ import annotations

from typing import Protocol

from podtui.core.pod import Pod
from podtui.ui import keymap
from podtui.ui.needs import HasNavigator, Needs, PodBroadcasts
from podtui.ui.screens.pod_panel import PodPanelScreen
from podtui.ui.widgets.services_panel import ServicesPanel


class ServicesNeeds(PodBroadcasts, HasNavigator, Protocol):
    """The pod as polled, and the pod's logs screen."""


class ServicesScreen(PodPanelScreen[ServicesPanel]):
    BINDINGS = keymap.bindings("service-screen")
    HEADING = "Services"

    needs = Needs[ServicesNeeds]()

    def __init__(self, pod: Pod) -> None:
        super().__init__(pod, ServicesPanel)

    def focus_panel(self) -> None:
        self.panel.table.focus()

    def action_logs(self) -> None:
        """The pod's logs: the screen under this one when it came from there, else a new one."""
        if self.needs.navigator.is_under(self, ("logs", self.pod.id)):
            self.dismiss()
        else:
            self.needs.navigator.open_logs(self.pod)

    def on_services_panel_left(self, _message: ServicesPanel.Left) -> None:
        self.dismiss()
