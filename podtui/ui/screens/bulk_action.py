"""Stop or terminate the marked pods: one question listing them all, each with its cost per hour and which of its
data survives, those that cannot be stopped or terminated now and why (a locked pod, a stopped one), and what the
action saves per hour. Cancel has focus; terminating N pods asks for the number N typed."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from podtui.core import actions, units
from podtui.core.pod import Pod
from podtui.core.visible import visible, visible_fields
from podtui.ui import colours, keymap
from podtui.ui.screens.dialog import Dialog, Frame


class BulkActionScreen(Dialog[bool]):
    CSS_PATH = ["dialog.tcss", "bulk_action.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("bulk")

    def __init__(self, plan: actions.BulkPlan) -> None:
        super().__init__(classes="-danger" if plan.verb == "terminate" else "")
        self.plan = plan
        self.count = len(plan.acting)
        self.type_count = plan.verb == "terminate" and self.count > 0

    def compose(self) -> ComposeResult:
        plan, n = self.plan, self.count
        verb = plan.verb.upper() if plan.verb == "terminate" else plan.verb.capitalize()
        with Frame(id="dialog"):
            yield Static(f"{verb} {n} pod{'s' if n != 1 else ''}?", id="title", markup=False)
            yield Static(self._pods(), id="pods")
            if plan.refused:
                yield Static(self._refused(), id="refused")
            yield Static(plan.summary() + (" This cannot be undone." if self.type_count else ""), id="summary")
            with Vertical(id="foot"):
                if self.type_count:
                    yield Static(f"Type the number of pods, {n}, to confirm:", id="ask", markup=False)
                    yield Input(placeholder="how many pods", id="count", select_on_focus=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel", variant="primary")
                    yield Button(
                        f"{plan.verb.capitalize()} {n}",
                        id="confirm",
                        variant="error" if plan.verb == "terminate" else "warning",
                        disabled=self.type_count or not n,
                    )

    def _pods(self) -> Text:
        st = colours.palette(self.app).style
        t = Text()
        for pod in (visible_fields(p) for p in self.plan.acting):
            item = next(i for i in self.plan.items if i.pod.id == pod.id)
            t.append(f"{pod.name}", style="bold")
            t.append(f"  {pod.id}  {units.rate(pod.cost_per_hr)}", style=st("muted"))
            t.append(f"  saves {units.rate(item.saves_per_hr)}\n")
            t.append(f"  {actions.survives(self.plan.verb, pod)}\n", style=st("warn" if self._loses(pod) else "muted"))
        return t

    def _loses(self, pod: Pod) -> bool:
        """Whether the action deletes data a user may want: a terminate without a network volume, a stop of a pod
        with no volume at all."""
        if self.plan.verb == "terminate":
            return not pod.network_volume
        return not pod.volume_gb and not pod.network_volume

    def _refused(self) -> Text:
        st = colours.palette(self.app).style
        t = Text(f"Not {actions.PAST[self.plan.verb]}:\n", style=st("bold warn"))
        for item in self.plan.refused:
            t.append(f"  {visible(item.pod.name)}: {visible(item.refused or '')}\n", style=st("warn"))
        return t

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_one("#confirm", Button).disabled = event.value.strip() != str(self.count)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip() == str(self.count):
            self.dismiss(True)
        else:
            self.notify(
                f"type {self.count}, the number of pods, to terminate them; nothing was terminated",
                severity="warning",
                markup=False,
            )

    def on_button_pressed(self, event: Button.Pressed) -> None:
        confirmed = event.button.id == "confirm" and self.count > 0
        if confirmed and self.type_count:
            confirmed = self.query_one("#count", Input).value.strip() == str(self.count)
        self.dismiss(confirmed)

    def action_cancel(self) -> None:
        self.dismiss(False)
