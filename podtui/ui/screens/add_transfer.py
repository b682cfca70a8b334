"""Add a transfer: which pod, which way, the local path (completed as you type) and the pod's path (typed, or
picked from a listing of the pod's folder), how to move it, how to check it, and whether to terminate after."""

from __future__ import annotations

import base64
import os
import posixpath
import shlex

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, OptionList, RadioButton, RadioSet, Select, Static

from podtui.core.pod import Pod, PodStatus
from podtui.core.visible import is_clean, visible
from podtui.transfer.checksum import ALGORITHMS
from podtui.transfer.job import ROUTE_CHOICES, TransferJob
from podtui.ui import keymap
from podtui.ui.needs import Needs, Served
from podtui.ui.path_completion import LocalPathInput
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import failures_shown, in_thread

REMOTE_LABEL = {
    "pull": "Path on the pod to download (relative: from where its shell starts)",
    "push": "Where on the pod: a folder ending in /, or a new name (relative: from where its shell starts)",
}
LOCAL_LABEL = {
    "pull": "Folder or name on this machine to save it as (tab completes)",
    "push": "File or folder on this machine to upload (tab completes)",
}
CHOICES_SHOWN = 12  # names listed under the box when tab finds more than one; the rest are counted


class AddTransferScreen(Dialog[TransferJob | None]):
    CSS_PATH = ["dialog.tcss", "add_transfer.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("add-transfer")

    def __init__(self, pods: list[Pod], selected: Pod | None) -> None:
        super().__init__()
        self.pods = [p for p in pods if p.status is PodStatus.RUNNING]
        self.selected = selected if selected in self.pods else (self.pods[0] if self.pods else None)
        self._listed = ""  # the pod folder the listing shows ("" is where the pod's shell starts)
        self._names: list[str] = []  # its entries as they are (shown through visible())
        self._choices_for = ""  # the local path whose completions are listed under its box

    needs = Needs[Served]()  # read-only mode, and how to reach the pod to list its folder
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        with Frame(id="dialog"):
            yield Static("Add a transfer", id="title")
            yield Label("Pod")
            # names are RunPod's data, not markup: Text, or "[red]x[/]" would show as a red x
            yield Select(
                [(Text(visible(f"{p.name}  ({p.id})")), p.id) for p in self.pods],
                id="pod",
                allow_blank=False,
                value=self.selected.id if self.selected else Select.BLANK,
            )
            with RadioSet(id="direction"):
                yield RadioButton("Download: pod → this machine", value=True, id="pull")
                yield RadioButton("Upload: this machine → pod", id="push")
            yield Label(REMOTE_LABEL["pull"], id="remote-label")
            with Horizontal(id="remote-row"):
                yield Input(placeholder="outputs/adapter.safetensors", id="remote")
                yield Button("List", id="browse")
            yield OptionList(id="listing")
            yield Label(LOCAL_LABEL["pull"], id="local-label")
            yield LocalPathInput(".", id="local")
            yield Static("", id="local-choices", classes="under-field", markup=False)
            yield Static("", id="local-error", classes="under-field field-error", markup=False)
            with Horizontal(id="how"):
                yield Select([(f"via {v}", v) for v in ROUTE_CHOICES], value="auto", id="via", allow_blank=False)
                yield Select([(f"verify {a}", a) for a in ALGORITHMS], value="sha256", id="verify", allow_blank=False)
            yield Checkbox("Replace an existing file at the target", id="overwrite")
            # one row each (a Checkbox never wraps): at 80 columns a label has 68
            yield Checkbox("Then terminate the pod, once every download marked so is verified", id="terminate")
            yield Checkbox("…without asking first: as soon as they are verified", id="preconfirm")
            with Vertical(id="foot"):
                yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel")
                    yield Button("Add", id="add", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#remote", Input).focus()
        if not self.pods:
            self._error("no running pod: transfers need a running pod")

    def show_failure(self, line: str) -> None:
        self._error(f"cannot list the pod's folder: {line}")

    def _error(self, text: str) -> None:
        line = self.query_one("#error", Static)
        line.update(text)
        line.display = bool(text)

    @property
    def direction(self) -> str:
        pressed = self.query_one(RadioSet).pressed_button
        return "push" if pressed is not None and pressed.id == "push" else "pull"

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "add":
            self.action_submit()
        elif event.button.id == "browse":
            self.action_browse()
        else:
            self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_submit()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        way = self.direction
        self.query_one("#remote-label", Label).update(REMOTE_LABEL[way])
        self.query_one("#local-label", Label).update(LOCAL_LABEL[way])
        for box in ("#terminate", "#preconfirm"):  # only a download can leave the pod with nothing left on it
            self.query_one(box, Checkbox).disabled = way == "push"
        self._local_error("")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "local":
            self._local_error("")
            if event.value != self._choices_for:
                self._show_choices("", ())

    def on_local_path_input_listed(self, event: LocalPathInput.Listed) -> None:
        self._show_choices(event.value, event.choices)

    def _show_choices(self, value: str, choices: tuple[str, ...]) -> None:
        self._choices_for = value
        more = f"  … and {len(choices) - CHOICES_SHOWN} more" if len(choices) > CHOICES_SHOWN else ""
        line = self.query_one("#local-choices", Static)
        line.update("  ".join(choices[:CHOICES_SHOWN]) + more)  # clean names only (completion_of)
        line.set_class(bool(choices), "-shown")
        self._bring_into_view(line)

    def _local_error(self, text: str) -> None:
        line = self.query_one("#local-error", Static)
        line.update(text)
        line.set_class(bool(text), "-shown")
        self._bring_into_view(line)

    def _bring_into_view(self, line: Static) -> None:
        """A line just shown under the box with the focus is below it: scrolled to, once laid out."""
        if line.has_class("-shown"):
            self.call_after_refresh(line.scroll_visible, animate=False)

    def action_submit(self) -> None:
        pod_id = self.query_one("#pod", Select).value
        remote = self.query_one("#remote", Input).value.strip()
        local = self.query_one("#local", Input).value.strip()
        pod = next((p for p in self.pods if p.id == pod_id), None)
        if pod is None:
            self._error("pick a running pod")
            return
        push = self.direction == "push"
        if not (local if push else remote):
            self._error(f"which {'local' if push else 'remote'} file or folder?")
            return
        terminate = self.query_one("#terminate", Checkbox).value and not push
        if self.needs.read_only and (push or terminate):
            self._error("read-only mode: uploads and terminating are switched off")
            return
        job = TransferJob(
            pod.id,
            "push" if push else "pull",
            local if push else remote,
            remote if push else (local or "."),
            pod_name=pod.name,
            route_choice=self.query_one("#via", Select).value,  # type: ignore[arg-type]
            algorithm=self.query_one("#verify", Select).value,  # type: ignore[arg-type]
            overwrite=self.query_one("#overwrite", Checkbox).value,
            terminate_after=terminate,
            terminate_confirmed=terminate and self.query_one("#preconfirm", Checkbox).value,
        )
        if push:
            self._check_source(job)  # an upload of nothing is refused here, before it is queued
        else:
            self.dismiss(job)  # a download's folder is made if need be

    @in_thread(group="source-check", description="looking at the file to upload", exclusive=True)
    def _check_source(self, job: TransferJob) -> None:
        there = os.path.exists(os.path.expanduser(job.source))
        self.app.call_from_thread(self._checked, job, there)

    def _checked(self, job: TransferJob, there: bool) -> None:
        if job.source != self.query_one("#local", Input).value.strip():
            return  # the path was changed meanwhile: the new one is checked on the next submit
        if there:
            self.dismiss(job)
            return
        self._local_error(f"no such file or folder on this machine: {visible(job.source)}; nothing was added")
        self._error("")
        self.query_one("#local", Input).focus()

    # --- the pod's folder, listed over SSH ------------------------------------------------------------

    def action_browse(self) -> None:
        pod_id = self.query_one("#pod", Select).value
        pod = next((p for p in self.pods if p.id == pod_id), None)
        if pod is None:
            return
        typed = self.query_one("#remote", Input).value.strip()
        folder = typed if not typed or typed.endswith("/") else posixpath.dirname(typed) + "/"
        self._error(f"listing {visible(folder) or 'the start folder'} on {visible(pod.name)}…")
        self._list(pod, folder)

    @in_thread(group="listing", description="listing the pod's folder", exclusive=True)
    def _list(self, pod: Pod, folder: str) -> None:
        from podtui.core.ssh.errors import SshError
        from podtui.core.ssh.remote import open_remote

        try:
            with open_remote(pod, self.needs.services.ssh_settings()) as shell:
                # names exactly as they are (any byte but / and NUL), NUL-separated and base64-encoded: the
                # gateway's terminal would otherwise rewrite control characters, and a name could hold a line feed
                # "./-x", never "-x": a folder starting with a dash would be read by find as an option
                where = (
                    shlex.quote(folder if folder.startswith(("/", "./", "../")) else f"./{folder}") if folder else "."
                )
                result = shell.run(
                    f"[ -d {where} ] && find -H {where} -mindepth 1 -maxdepth 1 -printf '%Y %f\\0' "
                    "| head -c 4000000 | base64 -w0",
                    timeout_s=30,
                )
        except SshError as e:
            self.app.call_from_thread(self._error, visible(f"cannot list the pod's folder: {e}"))
            return
        names = listed_names(result.output)
        if result.exit_code != 0 or names is None:
            self.app.call_from_thread(
                self._error,
                visible(f"cannot list {folder or 'the start folder'}: it is not a folder there, or cannot be read"),
            )
            return
        self.app.call_from_thread(self._show_listing, folder, names)

    def _show_listing(self, folder: str, names: list[str]) -> None:
        listing = self.query_one("#listing", OptionList)
        listing.clear_options()
        self._names = names[:500]
        # file names are data: not markup, and shown with any control character made visible
        listing.add_options([Text("../"), *(Text(visible(n)) for n in self._names)])
        listing.highlighted = 1 if names else 0
        listing.add_class("-shown")
        self._listed = folder
        listing.focus()
        self._error(f"{len(names)} entries in {visible(folder) or 'the start folder'}: enter picks, a folder opens")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        index = event.option_index
        name = self._names[index - 1] if 0 < index <= len(self._names) else "../"
        if not is_clean(name):
            # the path box would draw it raw, and the pod's own name is what a transfer must ask for
            self._error(f"{visible(name)} holds control characters; rename it on the pod (a console) to transfer it")
            return
        path = parent_folder(self._listed) if name == "../" else posixpath.join(self._listed, name)
        remote = self.query_one("#remote", Input)
        remote.value = path
        if path.endswith("/") or not path:
            self.action_browse()
        else:
            event.option_list.remove_class("-shown")
            remote.focus()


def listed_names(output: str) -> list[str] | None:
    """The entries of a `find -printf '%Y %f\\0' | base64` listing, folders with a trailing slash, sorted; None when
    the output is not such a listing. Bytes that are not UTF-8 are kept (surrogateescape) and shown escaped."""
    try:
        raw = base64.b64decode("".join(output.split()), validate=True)
    except ValueError:
        return None
    names = []
    for entry in raw.split(b"\0")[:-1]:  # each entry ends with a NUL: a last one without is cut off
        kind, _, name = entry.partition(b" ")
        if not name:
            continue
        text = name.decode("utf-8", "surrogateescape")
        names.append(text + "/" if kind == b"d" else text)
    return sorted(names)


def parent_folder(folder: str) -> str:
    """The folder above, written so that listing it works: "" is the start folder, relative paths climb with ../."""
    if folder in ("", "./") or folder.rstrip("/").endswith(".."):
        return folder + "../" if folder not in ("", "./") else "../"
    if folder == "/":
        return "/"
    parent = posixpath.dirname(folder.rstrip("/"))
    return "" if not parent else parent if parent == "/" else parent + "/"
