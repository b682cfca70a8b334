"""A template from a pod: the pod (the one selected first), a name, public or not, and for each env key what its
value becomes: kept, a RunPod secret reference, or left out. A token of a kind podtui knows (hf_..., a JWT, a URL
holding a password) cannot be kept in clear (reference by default); a value that only looks like a credential (its
key's name, MY_TOKEN but not TOKENIZERS_PARALLELISM, or a long run of token characters such as a hash) can, after a
warning that Create must be pressed again to accept. The preview lists what will be sent,
keys only, and the secrets the account must have (docs/storage.md#templates-from-a-pod). A create whose answer is
lost looks for the template by name, and never says it was not made.

The pods are read in a thread when the form opens, as RunPod sent them: the template is built from those, not from
the copies made safe to show."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Protocol, cast

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from podtui.core.api import ApiError
from podtui.core.lost_answer import LOOKUP_DELAYS, answer_lost, lost_create_message
from podtui.core.pod import Pod
from podtui.core.template import Template
from podtui.core.template_spec import (
    EnvChoice,
    TemplateDraft,
    default_choices,
    find_created_template,
    is_reference,
    looks_secret,
    may_keep_in_clear,
    template_env,
    template_from_pod,
)
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.buttons import ready_again
from podtui.ui.needs import Needs, Served
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import failures_shown, in_thread

KEEP = ("kept as it is", "keep")
KEEP_CLEAR = ("kept in clear (warned)", "keep")  # for a value that looks like a credential, no known token
REFERENCE = ("a RunPod secret reference", "reference")
OMIT = ("left out", "omit")


class TemplateFormNeeds(Served, Protocol):
    """The API."""


class TemplateFormScreen(Dialog[Template | None]):
    CSS_PATH = ["dialog.tcss", "template_form.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("template-form")
    lookup_delays: ClassVar[Sequence[float]] = LOOKUP_DELAYS  # before each look after a lost answer

    def __init__(self, pod_id: str | None = None) -> None:
        super().__init__()
        self.pod_id = pod_id
        self.pods: dict[str, Pod] = {}  # as RunPod sent them, by id
        self.draft: TemplateDraft | None = None
        self._choices: list[tuple[str, Select[str]]] = []  # each env key's choice, in the pod's order
        self._given_name = ""
        self._busy = False
        self._warned: tuple[str, ...] = ()  # the credential-looking keys the user was warned are kept in clear
        self._maybe_made: str | None = None  # why Create is off: a lost answer, the template may exist

    needs = Needs[TemplateFormNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        with Frame(id="dialog"):
            yield Static("A template from a pod", id="title")
            yield Label("Pod")
            yield Select[str]([], prompt="loading the pods…", id="pod")
            yield Label("Template name")
            yield Input("", id="name")
            yield Checkbox("public: every RunPod user can see it, and its env", id="public")
            yield Label("What each env value becomes (a token is never kept in clear)")
            yield Vertical(id="env")
            yield Static("", id="preview", markup=False)
            with Vertical(id="foot"):
                yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel")
                    yield Button("Create", id="create", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#pod", Select).focus()
        self._load()

    @in_thread(group="template-pods", description="loading the pods", exclusive=True)
    def _load(self) -> None:
        try:
            pods = self.needs.services.api.fetch_snapshot().pods
        except ApiError as e:
            self.app.call_from_thread(self._error, f"cannot load the pods: {e}")
            return
        self.app.call_from_thread(self._loaded, pods)

    def show_failure(self, line: str) -> None:
        self._busy = False
        ready_again(self.query_one("#create", Button))
        self._error(f"that failed: {line}")

    def _loaded(self, pods: tuple[Pod, ...]) -> None:
        self.pods = {p.id: p for p in pods}
        select: Select[str] = self.query_one("#pod", Select)
        select.set_options([(visible(f"{p.name} · {p.id}"), p.id) for p in pods])
        if not pods:
            self._error("there are no pods on the account to make a template from")
            return
        select.value = self.pod_id if self.pod_id in self.pods else pods[0].id

    @property
    def pod(self) -> Pod | None:
        value = self.query_one("#pod", Select).value
        return self.pods.get(value) if isinstance(value, str) else None

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "pod":
            self._pod_changed()
        self._refresh()

    def _pod_changed(self) -> None:
        pod = self.pod
        box = self.query_one("#name", Input)
        if pod is not None and box.value in ("", self._given_name):
            self._given_name = box.value = f"{pod.name}-template"[:80] if pod.name.isprintable() else "template"
        env = template_env(pod) if pod is not None else ()
        defaults = default_choices(env)
        rows: list[Horizontal] = []
        self._choices = []
        for key, value in env:
            secret = looks_secret(key, value) and not is_reference(value)
            if secret and may_keep_in_clear(key, value):
                options, said = [REFERENCE, OMIT, KEEP_CLEAR], " (looks like a credential)"
            elif secret:
                options, said = [REFERENCE, OMIT], " (a token)"
            else:
                options, said = [KEEP, REFERENCE, OMIT], ""
            choice: Select[str] = Select(options, value=defaults[key], allow_blank=False, classes="choice")
            label = Static(visible(key) + said, classes="key")
            rows.append(Horizontal(label, choice, classes="env-row"))
            self._choices.append((key, choice))
        box_env = self.query_one("#env", Vertical)
        box_env.remove_children()
        if rows:
            box_env.mount(*rows)
        else:
            box_env.mount(Static("the pod has no env of its own", classes="key"))

    def on_input_changed(self, event: Input.Changed) -> None:
        self._refresh()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self._refresh()

    def _refresh(self) -> None:
        preview = self.query_one("#preview", Static)
        pod = self.pod
        self.draft = None
        if pod is None:
            preview.update("")
            return
        choices = {key: cast(EnvChoice, select.value) for key, select in self._choices}
        try:
            self.draft = template_from_pod(
                self.query_one("#name", Input).value,
                pod,
                choices=choices,
                public=self.query_one("#public", Checkbox).value,
            )
        except ValueError as e:
            preview.update(visible(str(e)))
            preview.set_class(True, "-bad")
            return
        preview.set_class(False, "-bad")
        if self._warned and self._warned != self.draft.kept_in_clear:
            self._warned = ()
            self._error("")
        lines = [visible(line) for line in self.draft.lines()]
        need = self.draft.secrets_needed()
        preview.update("\n".join(lines + ([visible(need)] if need else [])))

    def _error(self, text: str) -> None:
        line = self.query_one("#error", Static)
        line.update(visible(text, lines=True))
        line.display = bool(text)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "create":
            self.action_submit()
        else:
            self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_submit()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_submit(self) -> None:
        if self._busy:
            return
        if self._maybe_made is not None:
            self._error(self._maybe_made)
            return
        if self.needs.read_only:
            self._error("read-only mode: creating a template is switched off")
            return
        self._refresh()
        if self.draft is None:
            self._error("nothing was sent: see the line above the buttons' box")
            return
        clear = self.draft.kept_in_clear
        if clear and self._warned != clear:
            self._warned = clear
            self._error(f"{', '.join(clear)}: {self.draft.clear_warning()}. Press Create again to make it so")
            return
        self._busy = True
        self.query_one("#create", Button).disabled = True
        self._error("creating the template…")
        self._create(self.draft)

    @in_thread(group="template-create", description="creating the template", exclusive=True)
    def _create(self, draft: TemplateDraft) -> None:
        api = self.needs.services.api
        name = str(draft.body["name"])
        try:
            known: frozenset[str] | None = frozenset(t.id for t in api.templates())
        except ApiError:
            known = None
        try:
            made = api.create_template(draft.body)
        except ApiError as e:
            if not answer_lost(e):
                self.app.call_from_thread(self.show_failure, f"RunPod did not create the template: {e}")
                return
            self.app.call_from_thread(self._error, f"RunPod's answer was lost: looking for {name} on the account…")
            what = f"the template {name}"
            try:
                found = find_created_template(api.templates, name, known, self.lookup_delays)
            except ApiError as err:
                self.app.call_from_thread(self._uncertain, lost_create_message(what, e, err, "your templates"))
                return
            if found is None:
                self.app.call_from_thread(self._uncertain, lost_create_message(what, e, None, "your templates"))
                return
            self.app.call_from_thread(self._created, found, draft, "created after all: template")
            return
        self.app.call_from_thread(self._created, made, draft)

    def _uncertain(self, message: str) -> None:
        """The template may exist: Create stays off; what was chosen stays."""
        self._busy = False
        self._maybe_made = message
        self._error(message)

    def _created(self, template: Template, draft: TemplateDraft, said: str = "created template") -> None:
        need = draft.secrets_needed()
        self.app.notify(
            visible(f"{said} {template.name} ({template.id})" + (f"; {need}" if need else "")),
            timeout=15 if need else 6,
            markup=False,
        )
        self.dismiss(template)
