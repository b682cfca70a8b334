"""Edit a pod in place: its name, image, ports, container disk, volume path (and size, for its own volume), env and
lock. Then a review of what changes (old -> new, secret values masked) and of what a restart resets, then the
send, in a thread worker. What RunPod refuses is said in the form and nothing typed is lost.

The pod is read from RunPod as the form opens ("loading…"): the list holds a copy made fit to show (control
characters escaped), and an edit planned on it would send the escapes back as values. What is shown passes
through `visible`; a value RunPod sent that a text box would draw raw (a control character in a name, a line break
in an env value) is never put into one: the box is left empty (empty keeps it), and such an env value shows as
hidden and is kept unless retyped (core/pod_edit.py). When the pod changed on RunPod between the review and the
save, nothing is sent and the form takes the pod as it is now, keeping what was typed."""

from __future__ import annotations

from typing import Protocol

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, Static, TextArea

from podtui.core import pod_edit
from podtui.core.api import ApiError
from podtui.core.pod import Pod
from podtui.core.visible import visible, visible_fields
from podtui.ui import keymap
from podtui.ui.buttons import ready_again
from podtui.ui.needs import Needs, Notifies, Opens, Served
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import failures_shown, in_thread

KEEP = "(kept: it holds characters a text box cannot show; type a new one to change it)"


class EditPodNeeds(Served, Opens, Notifies, Protocol):
    def poll_now(self) -> None: ...


def _safe(value: str | None) -> str | None:
    """The value if a text box can show it as it is, else None."""
    return value if value is not None and visible(value) == value else None


class EditPodScreen(Dialog[Pod | None]):
    CSS_PATH = ["dialog.tcss", "edit_pod.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("edit")

    needs = Needs[EditPodNeeds]()
    on_worker_state_changed = failures_shown  # the send catches what it expects; the rest is said in the form

    def __init__(self, pod: Pod) -> None:
        """pod: the list's copy, for the title while the pod itself is read from RunPod."""
        super().__init__()
        self.pod = pod
        self.loaded = False  # the form holds the pod as RunPod sent it, and can be sent
        self.kind = pod_edit.mount_kind(pod)
        self._sending = False
        self.plan: pod_edit.EditPlan | None = None

    def compose(self) -> ComposeResult:
        shown = visible_fields(self.pod)
        with Frame(id="dialog"):
            yield Static(f"Edit {shown.name} ({shown.id})", id="title", markup=False)
            if self.loaded:
                yield from self._form()
            else:  # the body: a frame holding only its docked bars would be drawn empty
                yield Static("loading the pod from RunPod…", id="loading", markup=False)
            with Vertical(id="foot"):
                yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel")
                    yield Button("Review", id="review", variant="primary", disabled=not self.loaded)

    def _form(self) -> ComposeResult:
        pod, shown = self.pod, visible_fields(self.pod)
        yield Label("Name")
        yield self._box("name", pod.name)
        yield Label("Image")
        yield self._box("image", pod.image)
        yield Label("Ports (22/tcp: direct SSH with exec and SFTP)")
        yield self._box("ports", pod.ports_spec or "")
        yield Label("Container disk GB (wiped when the container restarts)")
        disk = "" if pod.container_disk_gb is None else f"{pod.container_disk_gb:g}"
        yield Input(disk, id="container", type="integer")
        if self.kind == "persistent":
            yield Label("Volume GB (it can grow, not shrink) · mount path")
            with Horizontal():
                yield Input(f"{pod.volume_gb or 0:g}", id="volume", type="integer")
                yield self._box("path", pod.volume_mount_path)
        elif self.kind == "network":
            yield Label(f"Network volume {shown.network_volume}: its mount path (the volume itself cannot change)")
            yield self._box("path", pod.volume_mount_path)
        else:
            yield Static("No volume: RunPod adds none to a pod after it is created.", id="no-volume")
        unshown = len(pod_edit.unshown_keys(pod.env))
        kept = f"; {unshown} whose names cannot be shown here are kept" if unshown else ""
        yield Label(f"Environment: one KEY=value per line (hidden values are kept unless retyped{kept})")
        yield TextArea(pod_edit.env_lines(pod.env), id="env", soft_wrap=False, show_line_numbers=False)
        yield Checkbox(
            "Locked (Locked pods cannot be stopped or reset)", value=pod.locked, id="locked", button_first=True
        )

    def _box(self, box_id: str, value: str | None) -> Input:
        safe = _safe(value)
        return Input(safe or "", id=box_id, placeholder=KEEP if safe is None and value else "")

    def on_mount(self) -> None:
        if self.needs.read_only:
            self._error("read-only mode: editing a pod is switched off")
            return
        self._load()

    @in_thread(group="edit", description="reading the pod to edit")
    def _load(self) -> None:
        try:
            pod = self.needs.services.api.fetch_pod(self.pod.id)
        except ApiError as e:
            self.app.call_from_thread(self._unreadable, f"could not read the pod from RunPod: {e}")
        else:
            self.app.call_from_thread(self._loaded, pod)

    def _unreadable(self, text: str) -> None:
        """The pod could not be read: said where "loading…" was; nothing can be sent."""
        for line in self.query("#loading").results(Static):
            line.update(visible(f"{text}; nothing can be changed (escape closes)"))
            line.add_class("-failed")

    def _loaded(self, pod: Pod) -> None:
        """The pod as RunPod has it: the form, filled from it (unless it was closed meanwhile)."""
        if not self.is_attached:
            return
        self.pod, self.kind, self.loaded = pod, pod_edit.mount_kind(pod), True
        self.call_next(self._fill)

    async def _fill(self) -> None:
        await self.recompose()
        self.query_one("#name", Input).focus()

    def _error(self, text: str, error: bool = True) -> None:
        """The line over the buttons: what is wrong, or (error=False) what is under way."""
        line = self.query_one("#error", Static)
        line.update(visible(text))
        line.set_class(bool(text), "-shown")
        line.set_class(not error, "-under-way")

    def _field(self, box_id: str) -> str | None:
        """A box's value; None (no change) when it is empty and the pod's value could not be shown in it."""
        found = self.query(f"#{box_id}").results(Input)
        box = next(iter(found), None)
        if box is None:
            return None
        if not box.value and box.placeholder == KEEP:
            return None
        return box.value

    def request(self) -> pod_edit.EditRequest:
        """What the form asks for; raises ValueError for env lines that cannot be read."""
        env = pod_edit.env_from_lines(self.query_one("#env", TextArea).text, self.pod.env)
        volume = self._field("volume") if self.kind == "persistent" else None
        return pod_edit.EditRequest(
            name=self._field("name"),
            image=self._field("image"),
            ports=self._field("ports"),
            container_gb=self._field("container") or None,
            volume_gb=volume or None,
            volume_path=self._field("path") if self.kind != "none" else None,
            env=env,
            locked=self.query_one("#locked", Checkbox).value,
        )

    def action_submit(self) -> None:
        """Review: what changes, and what a restart resets; then save."""
        if self._sending or self.needs.read_only:
            return
        if not self.loaded:  # ctrl+s before the pod is in: the status line says why nothing happens
            return
        try:
            request = self.request()
            plan = pod_edit.plan_edit(self.pod, request)
        except pod_edit.EditRefused as e:
            self._error("; ".join(f"{k}: {v}" for k, v in e.problems.items()))
            return
        except ValueError as e:
            self._error(f"env: {e}")
            return
        if plan.empty:
            self._error("nothing to change: every field is as the pod has it")
            return
        self._error("")
        from podtui.ui.screens.confirm import ConfirmScreen

        name = visible(self.pod.name)
        question = ConfirmScreen(
            f"Change {name}?",
            "\n".join(visible(line) for line in plan.lines()),
            "Save and restart" if plan.restarts else "Save",
            danger=plan.restarts,
        )
        self.needs.open_screen(
            question, ("edit-review", self.pod.id), lambda yes: self._send(plan, request) if yes else None
        )

    def _send(self, plan: pod_edit.EditPlan, request: pod_edit.EditRequest) -> None:
        if self._sending:  # a second confirm while the first is on its way
            return
        self._sending = True
        self.query_one("#review", Button).disabled = True
        self._error("saving…", error=False)
        self._apply(plan, request)

    @in_thread(group="edit", description="saving the pod's changes")
    def _apply(self, plan: pod_edit.EditPlan, request: pod_edit.EditRequest) -> None:
        try:
            after = pod_edit.apply_reviewed(self.needs.services.api, plan, request)
        except pod_edit.EditRefused as e:
            self.app.call_from_thread(self._failed, "; ".join(f"{k}: {v}" for k, v in e.problems.items()))
        except pod_edit.PodChanged as e:
            self.app.call_from_thread(self._changed, e.fresh)
        except ApiError as e:
            self.app.call_from_thread(self._failed, f"not saved: {e}")
        else:
            self.app.call_from_thread(self._saved, after, plan.restarts)

    def show_failure(self, line: str) -> None:
        """An unexpected error in the read or the send (failures_shown): said in the form, which keeps what was
        typed."""
        if not self.loaded:
            self._unreadable(line)
        self._failed(line)

    def _failed(self, text: str) -> None:
        self._sending = False
        ready_again(self.query_one("#review", Button), not self.needs.read_only and self.loaded)
        self._error(text)

    def _changed(self, fresh: Pod) -> None:
        """The pod changed on RunPod after the form read it: the next review is made against it as it is now
        (what was typed is kept; a hidden value kept is the one RunPod has now)."""
        self.pod = fresh
        self._failed(
            "the pod changed on RunPod since the form read it (someone else, or RunPod): nothing sent. "
            "Review again: the changes are now shown against the pod as it is now"
        )

    def _saved(self, pod: Pod, restarted: bool) -> None:
        name = visible(pod.name)
        self.needs.notify(
            f"{name}: changed" + (" (its container restarts)" if restarted else ""), markup=False, timeout=6
        )
        self.needs.poll_now()
        self.dismiss(pod)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "review":
            self.action_submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
