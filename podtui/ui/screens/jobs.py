"""A pod's detached jobs, full screen (docs/jobs.md): the jobs panel under a heading naming the pod. Below 100x30,
where the main screen has no pane, the jobs key and the palette's "Jobs of POD" open this."""

from __future__ import annotations

from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Static

from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.needs import Needs, PodBroadcasts, PodData, Transfers, subscribe
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.jobs_panel import JobsPanel


class JobsNeeds(PodBroadcasts, Transfers, Protocol):
    """The pod as polled (its cost per hour, whether it runs), and the transfers (a job's pulls)."""


class JobsScreen(Screen[None]):
    CSS_PATH = "jobs.tcss"
    BINDINGS = keymap.bindings("jobs-screen")

    needs = Needs[JobsNeeds]()

    def __init__(self, pod: Pod) -> None:
        super().__init__()
        self.pod = pod

    def compose(self) -> ComposeResult:
        p = self.pod  # RunPod's words: shown, never acted on
        yield Static(Text.assemble(("Jobs · ", "bold"), (visible(p.name), "bold"), f"  {visible(p.id)}"), id="head")
        yield JobsPanel()
        yield FittedFooter()

    @property
    def panel(self) -> JobsPanel:
        return self.query_one(JobsPanel)

    def on_mount(self) -> None:
        self.panel.show_pod(self.pod)
        self.panel.set_in_sight(True)
        self.panel.table.focus()
        subscribe(self, self.needs.pods_polled, self._polled)

    def on_screen_suspend(self) -> None:
        from textual.screen import ModalScreen

        if not isinstance(self.app.screen, ModalScreen):  # a job's log over it: nothing read meanwhile
            self.panel.set_in_sight(False)

    def on_screen_resume(self) -> None:
        self.panel.set_in_sight(True)

    def _polled(self, data: PodData) -> None:
        snap = data.feed.snapshot
        pod = next((p for p in snap.pods if p.id == self.pod.id), None) if snap is not None else None
        if pod is not None:  # a pod gone from the account keeps what was last seen
            self.pod = pod
            self.panel.show_pod(pod)

    def on_jobs_panel_left(self, _message: JobsPanel.Left) -> None:
        self.dismiss()

    def action_transfers(self) -> None:
        self.needs.transfers.show()
