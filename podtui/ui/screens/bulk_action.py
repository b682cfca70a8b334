"""Stop or terminate the marked pods: one question listing them all, one line each (its id, its cost per hour and
what becomes of its volume), the transfers a terminate would cut off, those that cannot be stopped or terminated
now and why (a locked pod, a stopped one), how many marked pods the filter hides (left out), and what the action
saves per hour. Cancel has focus; terminating N pods asks for the number N typed, and digits typed anywhere go
to its box."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from podtui.core import actions, units
from podtui.core.pod import Pod
from podtui.core.visible import visible, visible_fields
from podtui.ui import colours, keymap
from podtui.ui.screens.dialog import Dialog, Frame

NAME_MAX = 22  # a longer name is cut, so each pod keeps to one line at 80 columns


def _cell(text: str, width: int) -> str:
    """`text` in exactly `width` columns: padded, or cut with an ellipsis."""
    if cell_len(text) <= width:
        return set_cell_size(text, width)
    return set_cell_size(text, width - 1) + "…"


class BulkActionScreen(Dialog[bool]):
    CSS_PATH = ["dialog.tcss", "bulk_action.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("bulk")

    def __init__(
        self, plan: actions.BulkPlan, pending: Mapping[str, Sequence[str]] | None = None, hidden: int = 0
    ) -> None:
        """pending: by pod id, its transfers not yet verified (a terminate cuts them off); hidden: marked pods the
        filter hides, left out."""
        super().__init__(classes="-danger" if plan.verb == "terminate" else "")
        self.plan = plan
        self.pending = {pid: list(jobs) for pid, jobs in (pending or {}).items() if jobs}
        self.hidden = hidden
        self.count = len(plan.acting)
        self.type_count = plan.verb == "terminate" and self.count > 0

    def compose(self) -> ComposeResult:
        plan, n = self.plan, self.count
        verb = plan.verb.upper() if plan.verb == "terminate" else plan.verb.capitalize()
        with Frame(id="dialog"):
            yield Static(f"{verb} {n} pod{'s' if n != 1 else ''}?", id="title", markup=False)
            if plan.acting:
                yield Static(self._pods(), id="pods")
            if self.hidden:
                s = "s" if self.hidden != 1 else ""
                are = "are" if self.hidden != 1 else "is"
                yield Static(
                    f"{self.hidden} marked pod{s} hidden by the filter {are} left out", id="hidden", markup=False
                )
            if self.pending:
                yield Static(self._pending(), id="pending")
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
        """One line a pod, in columns: its name, id, cost per hour, and what becomes of its volume."""
        st = colours.palette(self.app).style
        shown = [visible_fields(p) for p in self.plan.acting]
        name_w = min(NAME_MAX, max(cell_len(p.name) for p in shown))
        id_w = max(cell_len(p.id) for p in shown)
        rates = [units.rate(p.cost_per_hr) for p in shown]
        rate_w = max(len(r) for r in rates)
        t = Text()
        for pod, rate in zip(shown, rates, strict=True):
            if t:
                t.append("\n")
            t.append(_cell(pod.name, name_w), style="bold")
            t.append(f"  {_cell(pod.id, id_w)}  ", style=st("muted"))
            t.append(rate.rjust(rate_w))
            t.append(f"  {actions.fate(self.plan.verb, pod)}", style=st("warn" if self._loses(pod) else "muted"))
        return t

    def _loses(self, pod: Pod) -> bool:
        """Whether the action deletes data a user may want: a terminate without a network volume, a stop of a pod
        with no volume at all."""
        if self.plan.verb == "terminate":
            return not pod.network_volume
        return not pod.volume_gb and not pod.network_volume

    def _pending(self) -> Text:
        st = colours.palette(self.app).style
        t = Text("Transfers not yet verified (terminating the pod ends them):", style=st("bold warn"))
        for pod in self.plan.acting:
            jobs = self.pending.get(pod.id)
            if jobs:
                t.append(f"\n  {visible(pod.name)}: {visible('; '.join(jobs))}", style=st("warn"))
        return t

    def _refused(self) -> Text:
        st = colours.palette(self.app).style
        t = Text(f"Not {actions.PAST[self.plan.verb]}:\n", style=st("bold warn"))
        for item in self.plan.refused:
            t.append(f"  {visible(item.pod.name)}: {visible(item.refused or '')}\n", style=st("warn"))
        return t

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_key(self, event: events.Key) -> None:
        # Cancel has focus; the count typed goes to its box, so nobody has to find it first (as the single
        # terminate does with the name). A digit that reaches the screen was not taken by the box.
        if self.type_count and event.character is not None and event.character.isdigit():
            box = self.query_one("#count", Input)
            if not box.has_focus:
                box.focus()
            box.insert_text_at_cursor(event.character)
            event.stop()

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
