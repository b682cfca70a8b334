"""A pod's detached jobs, full screen (docs/jobs.md): the jobs panel under a heading naming the pod. Below 100x30,
where the main screen has no pane, the jobs key and the palette's "Jobs of POD" open this."""

from __future__ import annotations

from typing import Protocol

from podtui.core.pod import Pod
from podtui.ui import keymap
from podtui.ui.needs import Needs, PodBroadcasts, Transfers
from podtui.ui.screens.pod_panel import PodPanelScreen
from podtui.ui.widgets.jobs_panel import JobsPanel


class JobsNeeds(PodBroadcasts, Transfers, Protocol):
    """The pod as polled (its cost per hour, whether it runs), and the transfers (a job's pulls)."""


class JobsScreen(PodPanelScreen[JobsPanel]):
    BINDINGS = keymap.bindings("jobs-screen")
    HEADING = "Jobs"

    needs = Needs[JobsNeeds]()

    def __init__(self, pod: Pod) -> None:
        super().__init__(pod, JobsPanel)

    def focus_panel(self) -> None:
        self.panel.set_in_sight(True)
        self.panel.table.focus()

    def on_screen_suspend(self) -> None:
        from textual.screen import ModalScreen

        if not isinstance(self.app.screen, ModalScreen):  # a job's log over it: nothing read meanwhile
            self.panel.set_in_sight(False)

    def on_screen_resume(self) -> None:
        self.panel.set_in_sight(True)

    def on_jobs_panel_left(self, _message: JobsPanel.Left) -> None:
        self.dismiss()

    def action_transfers(self) -> None:
        self.needs.transfers.show()
