"""The environment doctor's panel: one line per check, pass / warn / fail, with the fix; enter types the fix into a
console on the pod for the person to read and run."""

from __future__ import annotations

import time
from typing import Protocol

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from podtui.core import secret
from podtui.core.doctor import Check, DoctorReport, PodNotReady, doctor_pod
from podtui.core.pod import Pod
from podtui.core.ssh.errors import SshError
from podtui.core.visible import visible, visible_fields
from podtui.ui import keymap
from podtui.ui.needs import Needs, PodActions, Served
from podtui.ui.worker_errors import pass_errors_to_app

BADGE = {"pass": ("  ok  ", "black on green"), "warn": (" warn ", "black on yellow"),
         "fail": (" FAIL ", "white on red"), "skip": ("  --  ", "black on grey50")}


def check_text(c: Check, width: int) -> Table:
    """One check as a grid, so long findings and fixes wrap inside their own column."""
    label, style = BADGE[c.status]
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=6, no_wrap=True)
    grid.add_column(width=width, no_wrap=True)
    grid.add_column(ratio=1)
    body = Text(c.finding)
    if c.status != "pass" and (c.remedy or c.command):
        body.append("\nfix: ", "bold cyan")
        body.append(c.remedy)
        if c.command:
            body.append("\n")
            body.append(c.command, "cyan")
    grid.add_row(Text(label, style), Text(c.title, "bold"), body)
    return grid


class DoctorNeeds(Served, PodActions, Protocol):
    """How to reach the pod, the time, and a console to type a fix into."""


class DoctorScreen(Screen[None]):
    CSS_PATH = "doctor.tcss"
    BINDINGS = keymap.bindings("doctor")

    def __init__(self, pod: Pod) -> None:
        super().__init__()
        self.pod = pod
        self.report: DoctorReport | None = None

    needs = Needs[DoctorNeeds]()
    on_worker_state_changed = pass_errors_to_app

    def compose(self) -> ComposeResult:
        p = self.pod
        yield Static(Text.assemble(("Doctor · ", "bold"), (p.name, "bold"), f"  {p.gpu_label}  ",
                                   (p.image or "image unknown", "grey62")), id="head")
        yield Static("", id="summary")
        yield OptionList(id="checks")
        yield Footer()

    def on_mount(self) -> None:
        self.action_run()

    def action_run(self) -> None:
        self.query_one("#summary", Static).update(Text(
            f"checking {self.pod.name} through its shell: Python, torch, CUDA, GPU, transformers, disk, runpodctl, "
            "Hugging Face…", style="italic"))
        self.query_one(OptionList).clear_options()
        self._examine()

    @work(thread=True, exclusive=True, group="doctor", exit_on_error=False, description="the doctor")
    def _examine(self) -> None:
        try:
            report = doctor_pod(self.pod, self.needs.services.ssh_settings())
        except (PodNotReady, SshError, OSError) as e:
            self.app.call_from_thread(self._failed, secret.redact(str(e)))
            return
        self.app.call_from_thread(self._show, report)

    def _failed(self, why: str) -> None:
        self.query_one("#summary", Static).update(Text(f"could not examine the pod: {visible(why)}", style="red"))

    def _show(self, report: DoctorReport) -> None:
        report = visible_fields(report)  # what the pod printed, shown and never acted on
        self.report = report
        counts = "  ".join(f"{report.count(s)} {s}" for s in ("fail", "warn", "pass") if report.count(s))
        style = {"fail": "bold red", "warn": "bold yellow"}.get(report.worst, "bold green")
        hint = "  · enter on a fix types it into a console on the pod (you press enter)" \
            if any(c.command and c.status in ("warn", "fail") for c in report.checks) else ""
        when = time.strftime("%H:%M:%S", time.localtime(self.needs.services.clock()))
        summary = Text.assemble((counts, style), f"  · checked {when}", (hint, "grey62"))
        self.query_one("#summary", Static).update(summary)
        width = max(len(c.title) for c in report.checks)
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(check_text(c, width), id=c.id) for c in report.checks])
        first_problem = next((i for i, c in enumerate(report.checks) if c.status == "fail"), None)
        options.highlighted = first_problem if first_problem is not None else 0
        options.focus()

    def highlighted_check(self) -> Check | None:
        options = self.query_one(OptionList)
        if self.report is None or options.highlighted is None:
            return None
        return self.report.checks[options.highlighted]

    async def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        await self.action_fix()

    async def action_fix(self) -> None:
        check = self.highlighted_check()
        if check is None or not check.command or check.status == "pass":
            self.notify("this line has no command to type", severity="warning")
            return
        view = await self.needs.open_console(self.pod)
        if view is not None:
            view.link.type_when_connected(check.command)
            self.notify("the fix is typed at the prompt: read it, then press enter to run it", timeout=6)
