"""A new detached job on a pod (docs/jobs.md): the command, a name, the folder it runs in, what happens once it
ends (nothing, stop the pod, terminate it) and the paths to bring home then, one `REMOTE[:LOCAL]` a line. Each field
is checked as it is typed; a refusal (the pod unreachable, the job not started) appears in the form and nothing
typed is lost (docs/architecture.md#forms)."""

from __future__ import annotations

from typing import Protocol

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from podtui.core.jobs.job import Job, JobError, JobSpec, Then
from podtui.core.jobs.typed_spec import SpecProblem, problems, typed_spec
from podtui.core.pod import Pod
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.buttons import ready_again
from podtui.ui.needs import Needs, Served
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import failures_shown, in_thread

THEN: tuple[tuple[str, str], ...] = (
    ("nothing: the pod keeps running", "none"),
    ("stop the pod (its volume is kept)", "stop"),
    ("terminate the pod (asks you first here)", "terminate"),
)
FIELDS = ("command", "name", "workdir", "then", "pulls")


class StartsJobs(Protocol):
    def start(self, pod: Pod, spec: JobSpec) -> Job: ...  # blocking: the job started and followed


class NewJobNeeds(Served, Protocol):
    @property
    def jobs(self) -> StartsJobs: ...


class NewJobScreen(Dialog[Job | None]):
    CSS_PATH = ["dialog.tcss", "new_job.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("new-job")

    needs = Needs[NewJobNeeds]()
    on_worker_state_changed = failures_shown

    def __init__(self, pod: Pod) -> None:
        super().__init__()
        self.pod = pod
        self._busy = False

    def compose(self) -> ComposeResult:
        with Frame(id="dialog"):
            yield Static(f"New job on {visible(self.pod.name)}", id="title", markup=False)
            yield Label("Command (run by the pod's shell, detached: it survives podtui and the connection)")
            yield Input(id="command", placeholder="python train.py --epochs 3")
            yield Static("", id="err-command", classes="field-error", markup=False)
            yield Label("Name (optional)")
            yield Input(id="name", placeholder="train")
            yield Static("", id="err-name", classes="field-error", markup=False)
            yield Label("Folder on the pod (optional; /workspace when left empty, a relative one is under it)")
            yield Input(id="workdir", placeholder="/workspace")
            yield Static("", id="err-workdir", classes="field-error", markup=False)
            yield Label("Once it ends")
            yield Select[str](THEN, value="none", allow_blank=False, id="then")
            yield Static("", id="err-then", classes="field-error", markup=False)
            yield Label("Bring home once it ends, verified, one a line: REMOTE[:LOCAL] (REMOTE under its folder)")
            yield TextArea(id="pulls", soft_wrap=False, show_line_numbers=False)
            yield Static("", id="err-pulls", classes="field-error", markup=False)
            with Vertical(id="foot"):
                yield Static("", id="what", markup=False)
                yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel")
                    yield Button("Start", id="start", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#command", Input).focus()
        self._refresh(shown=False)

    # --- the fields --------------------------------------------------------------------------------------

    def _values(self) -> tuple[str, str, str, Then | None, str]:
        then = self.query_one("#then", Select).value
        chosen: Then | None = "stop" if then == "stop" else "terminate" if then == "terminate" else None
        return (
            self.query_one("#command", Input).value,
            self.query_one("#name", Input).value,
            self.query_one("#workdir", Input).value,
            chosen,
            self.query_one("#pulls", TextArea).text,
        )

    def _refresh(self, shown: bool = True) -> dict[str, str]:
        """Each field's problem under it (the command's only once something was typed or sent: an empty form is
        not wrong yet), and what happens once the job ends."""
        command, name, workdir, then, pulls = self._values()
        found = problems(command, name, workdir, pulls, then, self.pod.network_volume)
        for field in FIELDS:
            text = found.get(field, "") if shown or field != "command" else ""
            line = self.query_one(f"#err-{field}", Static)
            line.update(text)
            line.set_class(bool(text), "-shown")
        self.query_one("#what", Static).update(self._what(then, pulls if "pulls" not in found else ""))
        return found

    def _what(self, then: Then | None, pulls: str) -> str:
        n = len([line for line in pulls.splitlines() if line.strip()])
        fetched = f"its {n} path{'s' if n != 1 else ''} brought home and verified" if n else ""
        name = visible(self.pod.name)
        if then is None:
            return f"Once it ends: an alert{', ' + fetched if fetched else ''}; {name} keeps running."
        if then == "stop":
            act = f"{name} stopped"
        else:
            kept = "its network volume is kept" if self.pod.network_volume else "its disks are deleted"
            act = f"{name} terminated once you confirm ({kept}; `podtui watch` terminates without asking)"
        if fetched:
            return f"Once it ends: an alert, {fetched}, then {act}, only if every pull verified."
        return f"Once it ends: an alert, then {act}."

    def on_input_changed(self, _event: Input.Changed) -> None:
        self._refresh()

    def on_text_area_changed(self, _event: TextArea.Changed) -> None:
        self._refresh()

    def on_select_changed(self, _event: Select.Changed) -> None:
        self._refresh()

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self.action_submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.action_submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    # --- starting -----------------------------------------------------------------------------------------

    def action_submit(self) -> None:
        if self._busy:  # a second press while the first is on its way: one job, not two
            return
        if self.needs.read_only:
            self._error("read-only mode: starting a job is switched off")
            return
        found = self._refresh()
        if found:
            self._error("fix the fields marked in red first; nothing was started")
            return
        try:
            spec = typed_spec(*self._values())
        except SpecProblem as e:  # not reached: problems() found nothing
            self._error(str(e))
            return
        self._busy = True
        self.query_one("#start", Button).disabled = True
        self._error(f"starting it on {visible(self.pod.name)}…")
        self._start(spec)

    @in_thread(group="job-start", description="starting the job", exclusive=True)
    def _start(self, spec: JobSpec) -> None:
        from podtui.core.ssh.errors import SshError

        try:
            job = self.needs.jobs.start(self.pod, spec)
        except (JobError, SshError, OSError) as e:
            self.app.call_from_thread(self._refused, str(e))
            return
        self.app.call_from_thread(self.dismiss, job)

    def show_failure(self, line: str) -> None:
        """Starting failed on something unexpected: said, and Start works again."""
        self._refused(f"unexpected error: {line}")

    def _refused(self, why: str) -> None:
        self._busy = False
        ready_again(self.query_one("#start", Button))
        self._error(f"the job was not started: {why}")

    def _error(self, text: str) -> None:
        line = self.query_one("#error", Static)
        line.update(visible(text, lines=True))
        line.display = bool(text)
