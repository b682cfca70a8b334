"""A resume RunPod refused because the pod's machine has no free GPU now (a stopped pod holds none): what can be
done. Wait and retry (a try every 30 s, up to a limit, stopped by pressing resume on the pod again), recreate it
on its network volume with another GPU (only when it has one: its data is there, not on the machine), or leave it
stopped (Cancel, focused)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from podtui.core import resume
from podtui.core.pod import Pod
from podtui.core.visible import visible, visible_fields
from podtui.ui import keymap
from podtui.ui.screens.dialog import Dialog, Frame

Choice = str  # "retry" or "recreate"; None: leave it stopped


class ResumeOfferScreen(Dialog[Choice | None]):
    CSS_PATH = ["dialog.tcss", "resume_offer.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("resume-offer")

    def __init__(self, pod: Pod, error: str, every_s: float = resume.RETRY_EVERY_S) -> None:
        super().__init__()
        self.pod, self.error, self.every_s = visible_fields(pod), visible(error), every_s

    def compose(self) -> ComposeResult:
        pod = self.pod
        with Frame(id="dialog"):
            yield Static(f"No free GPU for {pod.name}", id="title", markup=False)
            yield Static(self.error, id="said", markup=False)
            yield Static(
                f"A stopped pod holds no GPU, and its machine has rented its {pod.gpu_label} to others meanwhile. "
                "GPUs come free as other pods stop.",
                id="why",
                markup=False,
            )
            if pod.network_volume:
                yield Static(
                    f"Its data is on the network volume {pod.network_volume}: a pod like it can be created with "
                    "that volume and another GPU (the create form opens, filled in).",
                    id="volume",
                    markup=False,
                )
            else:
                yield Static(
                    "It has no network volume: its data stays on that machine, so waiting is the way to keep it.",
                    id="volume",
                    markup=False,
                )
            with Vertical(id="foot"), Horizontal(id="buttons"):
                yield Button("Cancel", id="cancel", variant="primary")
                yield Button(f"Retry every {self.every_s:g} s", id="retry", variant="warning")
                if pod.network_volume:
                    yield Button(f"Recreate on {pod.network_volume}", id="recreate", variant="default")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id if event.button.id in ("retry", "recreate") else None)

    def action_cancel(self) -> None:
        self.dismiss(None)
