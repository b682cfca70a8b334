"""Sync a folder with a pod (docs/sync.md): the folder here (tab completes it), the pod's folder, which way, whether to
delete what the source no longer has, what to leave out, whether to honour .gitignore, whether to watch, whether
only to show what would change (a dry run), and the route (docs/sync.md#routes). Filled in with the pod's last sync
(never its dry run: a dry run is looked at, then done for real). The folders and patterns are checked as they are
typed (in a thread: a folder on a dead mount must not stall the screen); a refusal (a field, read-only mode, a sync
already under way) is said in the form and nothing typed is lost (docs/architecture.md#forms)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, RadioButton, RadioSet, Select, Static, TextArea

from podtui.core.pod import Pod
from podtui.core.visible import is_clean, visible
from podtui.transfer.sync.state import SyncSpec, Via
from podtui.ui import keymap
from podtui.ui.buttons import ready_again
from podtui.ui.needs import Needs, Served
from podtui.ui.path_completion import LocalPathInput
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.sync_view import shown_path
from podtui.ui.worker_errors import failures_shown, in_thread

FIELDS = ("local", "remote", "excludes")
CHOICES_SHOWN = 12  # names listed under the local box when tab finds more than one; the rest are counted
HOME_FOR_CHECKS = "/root"  # `~/x` on the pod, for checking the remote folder's form before the pod is asked
# the routes, as `podtui sync --via` names them (docs/sync.md#routes); rsync and SFTP need the pod's direct SSH
ROUTES: tuple[tuple[str, Via], ...] = (
    ("auto: the fastest this pod offers", "auto"),
    ("rsync through OpenSSH (direct SSH)", "rsync"),
    ("SFTP (direct SSH)", "sftp"),
    ("the console (works over the gateway)", "console"),
)


class StartsSyncs(Protocol):
    def start(self, pod: Pod, spec: SyncSpec, watch: bool = False) -> str | None: ...  # None, or why not


class SyncFormNeeds(Served, Protocol):
    @property
    def syncs(self) -> StartsSyncs: ...


@dataclass(frozen=True)
class Typed:
    """What the form holds."""

    local: str
    remote: str
    pull: bool
    delete: bool
    gitignore: bool
    watch: bool
    excludes: str
    dry_run: bool = False
    via: Via = "auto"

    @property
    def patterns(self) -> tuple[str, ...]:
        return tuple(line.strip() for line in self.excludes.splitlines() if line.strip())

    def spec(self, pod_id: str) -> SyncSpec:
        local = Path(os.path.abspath(os.path.expanduser(self.local.strip()))) if self.local.strip() else Path()
        return SyncSpec(
            pod_id,
            local,
            self.remote.strip(),
            pull=self.pull,
            delete=self.delete,
            excludes=self.patterns,
            gitignore=self.gitignore,
            via=self.via,
            dry_run=self.dry_run,
        )


def problems(typed: Typed, pod: Pod) -> dict[str, str]:
    """Each field's problem, in words (blocking: it looks at the local folder)."""
    from podtui.transfer.sync.ignore import BadPattern, check_excludes
    from podtui.transfer.sync.run import SyncError, check_local, remote_root

    found: dict[str, str] = {}
    spec = typed.spec(pod.id)
    if not typed.local.strip():
        found["local"] = "which folder on this machine?"
    else:
        try:
            check_local(SyncSpec(pod.id, spec.local, spec.remote, pull=spec.pull))
        except SyncError as e:
            found["local"] = str(e)
    if not typed.remote.strip():
        found["remote"] = "which folder on the pod?"
    else:
        try:
            remote_root(pod, spec.remote, HOME_FOR_CHECKS)
        except SyncError as e:
            found["remote"] = str(e)
    lines = [line.strip() for line in typed.excludes.splitlines()]
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        try:
            check_excludes([line])
        except BadPattern:
            found["excludes"] = f"line {number}: {visible(line)!r} is not a gitignore pattern"
            break
    return found


class SyncFormScreen(Dialog[bool]):
    CSS_PATH = ["dialog.tcss", "sync_form.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("sync-form")

    needs = Needs[SyncFormNeeds]()
    on_worker_state_changed = failures_shown

    def __init__(self, pod: Pod, prefill: SyncSpec | None = None, watch: bool = False) -> None:
        super().__init__()
        self.pod = pod
        self.prefill = prefill
        self.watching = watch and (prefill is None or not prefill.pull)
        self._busy = False
        self._touched: set[str] = set()  # fields typed into: an empty one is said only then, or once sent
        self._choices_for = ""

    def compose(self) -> ComposeResult:
        p = self.prefill
        volume = visible(self.pod.volume_mount_path or "/workspace")
        with Frame(id="dialog"):
            yield Static(f"Sync a folder with {visible(self.pod.name)}", id="title", markup=False)
            yield Label("Folder on this machine (tab completes)")
            # a box draws its value raw: the last sync's words only when they hold no control character
            yield LocalPathInput(shown_path(p.local) if p is not None and is_clean(str(p.local)) else ".", id="local")
            yield Static("", id="local-choices", classes="under-field", markup=False)
            yield Static("", id="err-local", classes="field-error", markup=False)
            yield Label(f"Folder on the pod (absolute, ~/…, or relative to its volume, {volume})")
            yield Input(p.remote if p is not None and is_clean(p.remote) else "", id="remote", placeholder="proj")
            yield Static("", id="err-remote", classes="field-error", markup=False)
            with RadioSet(id="direction"):
                yield RadioButton("Push: this machine → pod", value=p is None or not p.pull, id="push")
                yield RadioButton("Pull: pod → this machine", value=p is not None and p.pull, id="pull")
            yield Checkbox(
                "Delete what the source no longer has (never what is ignored)",
                p is not None and p.delete,
                id="delete",
            )
            yield Checkbox("Honour .gitignore files (and leave .git out)", p is None or p.gitignore, id="gitignore")
            yield Checkbox("Watch: sync again whenever a local file changes", self.watching, id="watch")
            yield Checkbox("Dry run: show what would change, change nothing", False, id="dry-run")
            yield Label("Route (rsync and SFTP need the pod's direct SSH)", id="route-label")
            offered = self._routes()
            yield Select[Via](offered, value=self._route(offered), allow_blank=False, id="via")
            yield Label(
                "Leave out, one pattern a line (gitignore syntax, from the top of the folder)", id="excludes-label"
            )
            yield TextArea("\n".join(x for x in p.excludes if is_clean(x)) if p else "", id="excludes", soft_wrap=False)
            yield Static("", id="err-excludes", classes="field-error", markup=False)
            with Vertical(id="foot"):
                yield Static("", id="what", markup=False)
                yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel")
                    yield Button("Sync", id="sync", variant="primary")

    def _routes(self) -> list[tuple[str, Via]]:
        """Those this pod can take: rsync and SFTP only with its direct SSH."""
        direct = self.pod.ssh_direct is not None
        return [(words, via) for words, via in ROUTES if direct or via in ("auto", "console")]

    def _route(self, offered: list[tuple[str, Via]]) -> Via:
        last = self.prefill.via if self.prefill is not None else "auto"
        return last if any(via == last for _, via in offered) else "auto"

    def on_mount(self) -> None:
        box = self.query_one("#remote" if self.prefill is None else "#local", Input)
        box.focus()
        box.cursor_position = len(box.value)
        self._follow_direction()
        self._changed()

    # --- the fields --------------------------------------------------------------------------------------

    def typed(self) -> Typed:
        pressed = self.query_one(RadioSet).pressed_button
        return Typed(
            self.query_one("#local", Input).value,
            self.query_one("#remote", Input).value,
            pressed is not None and pressed.id == "pull",
            self.query_one("#delete", Checkbox).value,
            self.query_one("#gitignore", Checkbox).value,
            self.query_one("#watch", Checkbox).value,
            self.query_one("#excludes", TextArea).text,
            self.query_one("#dry-run", Checkbox).value,
            self._via(),
        )

    def _via(self) -> Via:
        value = self.query_one("#via", Select).value
        return next((via for _, via in ROUTES if via == value), "auto")

    def _changed(self) -> None:
        """Something was typed: what the sync does is said at once, each field checked in a thread."""
        typed = self.typed()
        self.query_one("#what", Static).update(self._what(typed))
        self._check(typed, submit=False)

    def _what(self, typed: Typed) -> str:
        here = shown_path(typed.local.strip() or "?")
        there = f"{visible(self.pod.name)}:{visible(typed.remote.strip()) or '?'}"
        source, dest = (there, here) if typed.pull else (here, there)
        if typed.dry_run:
            gone = f" and what {source} no longer has" if typed.delete else ""
            return f"What changed in {source}{gone} is listed; nothing is copied to {dest} or deleted."
        words = f"What changed in {source} is copied to {dest}, every file verified by sha256 on both ends"
        if typed.delete:
            words += f"; what {source} no longer has is deleted there"
        if typed.watch and not typed.pull:
            words += "; then again whenever a local file changes"
        return words + "."

    def _follow_direction(self) -> None:
        """A watch follows local changes: a pull has none to follow, nor a dry run anything to do."""
        watch = self.query_one("#watch", Checkbox)
        typed = self.typed()
        watch.disabled = typed.pull or typed.dry_run
        if watch.disabled:
            watch.value = False

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id is not None:
            self._touched.add(event.input.id)
        if event.input.id == "local" and event.value != self._choices_for:
            self._show_choices("", ())
        self._changed()

    def on_text_area_changed(self, _event: TextArea.Changed) -> None:
        self._changed()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        if event.checkbox.id == "dry-run":
            self._follow_direction()
        self._changed()

    def on_select_changed(self, _event: Select.Changed) -> None:
        self._changed()

    def on_radio_set_changed(self, _event: RadioSet.Changed) -> None:
        self._follow_direction()
        self._changed()

    def on_local_path_input_listed(self, event: LocalPathInput.Listed) -> None:
        self._show_choices(event.value, event.choices)

    def _show_choices(self, value: str, choices: tuple[str, ...]) -> None:
        self._choices_for = value
        more = f"  … and {len(choices) - CHOICES_SHOWN} more" if len(choices) > CHOICES_SHOWN else ""
        line = self.query_one("#local-choices", Static)
        line.update("  ".join(choices[:CHOICES_SHOWN]) + more)  # clean names only (completion_of)
        line.set_class(bool(choices), "-shown")
        if choices:
            self.call_after_refresh(line.scroll_visible, animate=False)

    def _check(self, typed: Typed, submit: bool) -> None:
        if submit:
            self._check_to_send(typed)
        else:
            self._check_as_typed(typed)

    @in_thread(group="sync-check", description="checking the sync's folders", exclusive=True)
    def _check_as_typed(self, typed: Typed) -> None:
        found = problems(typed, self.pod)
        self.app.call_from_thread(self._checked, typed, found, False)

    # a group of its own: a check started by typing (exclusive in its group) must not cancel this one before its
    # thread begins, which would leave the form waiting with Sync greyed out
    @in_thread(group="sync-send", description="checking the sync's folders")
    def _check_to_send(self, typed: Typed) -> None:
        found = problems(typed, self.pod)
        self.app.call_from_thread(self._checked, typed, found, True)

    def _checked(self, typed: Typed, found: dict[str, str], submit: bool) -> None:
        if not self.is_mounted:
            return
        if typed != self.typed():  # typed on meanwhile: the newer check says
            if submit:
                self._ready_again("")
            return
        for name in FIELDS:
            text = found.get(name, "")
            if not submit and name == "remote" and "remote" not in self._touched and not typed.remote.strip():
                text = ""  # an empty form is not wrong yet
            line = self.query_one(f"#err-{name}", Static)
            line.update(visible(text, lines=True))
            line.set_class(bool(text), "-shown")
        if not submit:
            return
        if found:
            self._ready_again("fix the fields marked in red first; nothing was started")
            return
        watch = typed.watch and not typed.pull and not typed.dry_run
        refused = self.needs.syncs.start(self.pod, typed.spec(self.pod.id), watch)
        if refused is not None:
            self._ready_again(f"not started: {refused}")
            return
        self.dismiss(True)

    # --- sending -----------------------------------------------------------------------------------------

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self.action_submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "sync":
            self.action_submit()
        else:
            self.dismiss(False)

    def action_cancel(self) -> None:
        self.dismiss(False)

    def action_submit(self) -> None:
        if self._busy:  # a second press while the first is being checked: one sync, not two
            return
        typed = self.typed()
        if self.needs.read_only and not typed.pull and not typed.dry_run:
            self._error("read-only mode: a push to a pod is switched off (a pull still works)")
            return
        self._busy = True
        # once sent, an empty pod folder is wrong: a check as typed that lands after this one must not blank it
        self._touched.add("remote")
        self.query_one("#sync", Button).disabled = True
        self._error("checking the folders…")
        self._check(typed, submit=True)

    def show_failure(self, line: str) -> None:
        """The check failed on something unexpected: said, and Sync works again."""
        self._ready_again(line)

    def _ready_again(self, why: str) -> None:
        self._busy = False
        ready_again(self.query_one("#sync", Button))
        self._error(why)

    def _error(self, text: str) -> None:
        line = self.query_one("#error", Static)
        line.update(visible(text, lines=True))
        line.display = bool(text)
