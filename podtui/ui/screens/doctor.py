"""The environment doctor's panel: one line per check, pass / warn / fail, with the fix; enter types the fix into a
console on the pod for the person to read and run, and on a line with nothing to type says so. Back from that
console, the results are out of date (the fix may have run): they stay, marked so, while the checks run again. In
the colours of the app's theme, drawn again when it changes."""

from __future__ import annotations

import time
from typing import Literal, Protocol

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from podtui.core import secret
from podtui.core.doctor import Check, DoctorReport, PodNotReady, doctor_pod
from podtui.core.pod import Pod
from podtui.core.ssh.errors import SshError
from podtui.core.visible import visible, visible_fields
from podtui.ui import colours, keymap
from podtui.ui.colours import CLASSIC, Palette
from podtui.ui.needs import HasNavigator, Needs, Served, subscribe
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.worker_errors import failures_shown, in_thread

BADGE = {
    "pass": ("  ok  ", "badge-pass"),
    "warn": (" warn ", "badge-warn"),
    "fail": (" FAIL ", "badge-fail"),
    "skip": ("  --  ", "badge-skip"),
}  # in colour roles (podtui/ui/colours.py)
WORST = {"fail": "bold bad", "warn": "bold warn"}  # the summary's colour; otherwise "bold good"


def nothing_to_type(c: Check) -> str:
    """What enter on a check without a command to type says."""
    if c.status == "pass":
        return f"{c.title}: passed, no fix needed"
    if c.status == "skip":
        return f"{c.title}: not checked, nothing to type for this check"
    if c.remedy:
        return f"{c.title}: nothing to type for this check; its fix, in words, is on its line"
    return f"{c.title}: nothing to type for this check"


def check_text(c: Check, width: int, palette: Palette = CLASSIC) -> Table:
    """One check as a grid, so long findings and fixes wrap inside their own column."""
    st = palette.style
    label, style = BADGE[c.status]
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=6, no_wrap=True)
    grid.add_column(width=width, no_wrap=True)
    grid.add_column(ratio=1)
    body = Text(c.finding)
    if c.status != "pass" and (c.remedy or c.command):
        body.append("\nfix: ", st("bold command"))
        body.append(c.remedy)
        if c.command:
            body.append("\n")
            body.append(c.command, st("command"))
    grid.add_row(Text(label, st(style)), Text(c.title, "bold"), body)
    return grid


class DoctorNeeds(Served, HasNavigator, Protocol):
    """How to reach the pod, the time, and a console to type a fix into."""


class DoctorScreen(Screen[None]):
    CSS_PATH = "doctor.tcss"
    BINDINGS = keymap.bindings("doctor")

    def __init__(self, pod: Pod) -> None:
        super().__init__()
        self.pod = pod
        self.report: DoctorReport | None = None
        # what the summary shows, to draw it again in a new theme: the report and when it was made, why the pod
        # could not be examined, or None while the checks run
        self._shown: tuple[DoctorReport, float] | str | None = None
        self._fix_typed = False  # a fix went into a console since the results shown: back here, they are old
        # after the console: the checks run again with the old results on screen, or they ran again
        self._again: Literal["checking", "checked"] | None = None

    needs = Needs[DoctorNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        yield Static(self._head(), id="head")
        yield Static("", id="summary")
        yield OptionList(id="checks")
        yield Static("", id="said", markup=False)  # the answer to enter, on the screen as well as in a toast
        yield FittedFooter()  # the keys that fit, whole, at 80 columns too

    def _head(self) -> Text:
        p = self.pod
        return Text.assemble(
            ("Doctor · ", "bold"),
            (p.name, "bold"),
            f"  {p.gpu_label}  ",
            (p.image or "image unknown", colours.palette(self.app).style("muted")),
        )

    def on_mount(self) -> None:
        subscribe(self, self.app.theme_changed_signal, self._recolour)
        self.action_run()

    def _recolour(self, _theme: object) -> None:
        self.query_one("#head", Static).update(self._head())
        if isinstance(self._shown, str):
            self._failed(self._shown)
        elif self._shown is not None:
            report, checked_at = self._shown
            self._summarise(report, checked_at)
            options = self.query_one(OptionList)
            width = max(len(c.title) for c in report.checks)
            palette = colours.palette(self.app)
            for i, c in enumerate(report.checks):
                options.replace_option_prompt_at_index(i, check_text(c, width, palette))

    def on_screen_resume(self) -> None:
        """Back from the console a fix was typed into: the results may be out of date, so the checks run again."""
        if self._fix_typed and isinstance(self._shown, tuple):
            self._fix_typed = False
            self._again = "checking"
            self._summarise(*self._shown)
            self._say("")
            self._examine()

    def action_run(self) -> None:
        self._shown, self._again, self._fix_typed = None, None, False
        self._say("")
        self.query_one("#summary", Static).update(
            Text(
                f"checking {self.pod.name} through its shell: Python, torch, CUDA, GPU, transformers, disk, runpodctl, "
                "Hugging Face…",
                style="italic",
            )
        )
        self.query_one(OptionList).clear_options()
        self._examine()

    @in_thread(group="doctor", description="the doctor", exclusive=True)
    def _examine(self) -> None:
        try:
            report = doctor_pod(self.pod, self.needs.services.ssh_settings())
        except (PodNotReady, SshError, OSError) as e:
            self.app.call_from_thread(self._failed, secret.redact(str(e)))
            return
        self.app.call_from_thread(self._show, report)

    def show_failure(self, line: str) -> None:
        self._failed(line)

    def _failed(self, why: str) -> None:
        self._shown, self._again = why, None
        self.query_one(OptionList).clear_options()  # results from before cannot be told from today's
        self.query_one("#summary", Static).update(
            Text(f"could not examine the pod: {visible(why)}", style=colours.palette(self.app).style("bad"))
        )

    def _show(self, report: DoctorReport) -> None:
        report = visible_fields(report)  # what the pod printed, shown and never acted on
        self.report = report
        checked_at = self.needs.services.clock()
        self._shown = (report, checked_at)
        if self._again == "checking":
            self._again = "checked"
        self._summarise(report, checked_at)
        width = max(len(c.title) for c in report.checks)
        options = self.query_one(OptionList)
        options.clear_options()
        palette = colours.palette(self.app)
        options.add_options([Option(check_text(c, width, palette), id=c.id) for c in report.checks])
        first_problem = next((i for i, c in enumerate(report.checks) if c.status == "fail"), None)
        options.highlighted = first_problem if first_problem is not None else 0
        options.focus()

    def _summarise(self, report: DoctorReport, checked_at: float) -> None:
        st = colours.palette(self.app).style
        counts = "  ".join(f"{report.count(s)} {s}" for s in ("fail", "warn", "pass") if report.count(s))
        hint = (
            keymap.fill(self.app, "  · {doctor.fix} on a fix types it into a console on the pod (you press enter)")
            if any(c.command and c.status in ("warn", "fail") for c in report.checks)
            else ""
        )
        when = time.strftime("%H:%M:%S", time.localtime(checked_at))
        if self._again == "checking":
            summary = Text.assemble(
                (counts, st(WORST.get(report.worst, "bold good"))),
                (f"  · checked {when}, before the console: out of date, checking again…", st("bold warn")),
            )
        else:
            again = (
                keymap.fill(
                    self.app, "  · checked again after the console; {doctor.run} checks again once the fix has finished"
                )
                if self._again == "checked"
                else ""
            )
            summary = Text.assemble(
                (counts, st(WORST.get(report.worst, "bold good"))),
                f"  · checked {when}",
                (again, st("warn")),
                (hint, st("muted")),
            )
        self.query_one("#summary", Static).update(summary)

    def _say(self, line: str) -> None:
        said = self.query_one("#said", Static)
        said.update(line)
        said.display = bool(line)

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
        if check is None:
            line = "no results yet: nothing to type" if self.report is None else "no check highlighted"
            self._say(line)
            self.notify(line, markup=False)
            return
        if not check.command or check.status in ("pass", "skip"):
            line = nothing_to_type(check)
            self._say(line)
            self.notify(line, markup=False)
            return
        self._fix_typed = True  # before the console is pushed: coming back from it resumes this screen
        view = await self.needs.navigator.open_console(self.pod)
        if view is None:
            self._fix_typed = False
            return
        view.link.type_when_connected(check.command)
        self._say(f"{check.title}: the fix was typed into a console on {self.pod.name}")
        self.notify("the fix is typed at the prompt: read it, then press enter to run it", timeout=6)
