"""A pod's panel (its services, sync or jobs), full screen under a heading naming the pod: what the main screen's pane
shows, below 100x30 where it has none. The panel follows the pod as polled; a pod gone from the account keeps what
was last seen. Each panel's own screen adds its keys and what its panel asks of it."""

from __future__ import annotations

from typing import ClassVar, Generic, Protocol, TypeVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui.needs import Needs, PodBroadcasts, PodData, subscribe
from podtui.ui.widgets.fitted_footer import FittedFooter

P = TypeVar("P", bound=Widget)


class ShowsPod(Protocol):
    def show_pod(self, pod: Pod | None) -> None: ...


class PodPanelScreen(Screen[None], Generic[P]):
    CSS_PATH = "pod_panel.tcss"  # beside each subclass's module too: they all live in this folder
    HEADING: ClassVar[str] = ""

    _polls = Needs[PodBroadcasts]()

    def __init__(self, pod: Pod, panel_type: type[P]) -> None:
        super().__init__()
        self.pod = pod
        self._panel_type = panel_type

    def compose(self) -> ComposeResult:
        p = self.pod  # RunPod's words: shown, never acted on
        head = Text.assemble((f"{self.HEADING} · ", "bold"), (visible(p.name), "bold"), f"  {visible(p.id)}")
        yield Static(head, id="head")
        yield self._panel_type()
        yield FittedFooter()

    @property
    def panel(self) -> P:
        return self.query_one(self._panel_type)

    def focus_panel(self) -> None:
        self.panel.focus()

    def on_mount(self) -> None:
        cast(ShowsPod, self.panel).show_pod(self.pod)
        self.focus_panel()
        subscribe(self, self._polls.pods_polled, self._polled)

    def _polled(self, data: PodData) -> None:
        snap = data.feed.snapshot
        pod = next((p for p in snap.pods if p.id == self.pod.id), None) if snap is not None else None
        if pod is not None:
            self.pod = pod
            cast(ShowsPod, self.panel).show_pod(pod)
