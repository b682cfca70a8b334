"""Create a pod: a form whose every field is checked as it is typed, with the hourly and daily cost shown live
before the Create button; RunPod's refusal (no stock, low balance) appears in the form, and nothing typed is lost.

A template fills the fields (they stay editable, and what is typed wins: docs/launch.md#templates); a network volume
puts the pod in the volume's data centre, and the GPU lists then hold only the types RunPod shows free there
(docs/launch.md#network-volumes); a second and third GPU type are tried in turn when RunPod cannot place the first
(docs/launch.md#candidates). The line under the GPU says where the chosen type is free now. Another screen may open
the form filled from a spec (`prefill`: recreate a pod, or create on a volume or from a template).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol, cast

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Label, Select, Static, TextArea

from podtui.core.api import ApiError
from podtui.core.feed import PodFeed
from podtui.core.gpu import Cloud, GpuCatalogue, GpuType
from podtui.core.pod import Pod
from podtui.core.pod_spec import (
    CONTAINER_GB_RANGE,
    DEFAULT_CONTAINER_GB,
    DEFAULT_IMAGE,
    DEFAULT_MOUNT,
    DEFAULT_PORTS,
    DEFAULT_VOLUME_GB,
    IMAGES,
    LOOKUP_DELAYS,
    Candidates,
    CreatedPod,
    CreateUncertain,
    PodSpec,
    SpecCost,
    as_created,
    check_count,
    check_gb,
    check_image,
    check_name,
    check_volume_gb,
    find_created,
    link_template,
    parse_env,
    parse_ports,
    plan_candidates,
    scrub,
    spec_cost,
    spec_from_candidates,
    stocked_words,
)
from podtui.core.template import Template
from podtui.core.visible import visible, visible_fields
from podtui.core.volume import NetworkVolume
from podtui.ui import keymap
from podtui.ui.buttons import ready_again
from podtui.ui.create_choices import (
    ANY_CLOUD,
    CLOUDS,
    GpuChoices,
    clouds_of,
    cost_words,
    default_name,
    review_lines,
    stock_words,
    volume_label,
)
from podtui.ui.create_env import box_lines, hidden_words, sent_env
from podtui.ui.create_template import (
    TemplateFields,
    TemplateSwitch,
    fetch_templates,
    spec_fields,
    template_label,
    template_words,
)
from podtui.ui.needs import Needs, Served
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import failures_shown, in_thread

log = logging.getLogger(__name__)

FIELDS = ("name", "image", "gpu", "count", "container", "volume", "ports", "env")
NO_NAME = "\0"  # a name no one types: the form's name never follows the GPU


class CreatePodNeeds(Served, Protocol):
    @property
    def feed(self) -> PodFeed: ...  # the pods there before a create: a new one of that name is the one created
    def poll_now(self) -> None: ...


class CreatePodScreen(Dialog[CreatedPod | None]):
    CSS_PATH = ["dialog.tcss", "create_pod.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("create")
    lookup_delays: tuple[float, ...] = LOOKUP_DELAYS  # looks at the pod list after an unanswered create

    def __init__(
        self,
        catalogue: GpuCatalogue | None = None,
        gpu_type_id: str | None = None,
        count: int = 1,
        cloud: Cloud | None = None,
        prefill: PodSpec | None = None,
    ) -> None:
        super().__init__()
        self.catalogue = catalogue
        self.prefill = prefill
        self._gpu_id, self._count, self._cloud = gpu_type_id, count, (cloud or Cloud.COMMUNITY).value
        # the form picks the GPU type (the cheapest, or the cheapest free on the volume) only when none was named;
        # a named one stays selected when it is not free there, marked, for the user to choose
        self._gpu_auto = not gpu_type_id
        self._gpu_gone: str | None = None  # a named type RunPod no longer lists
        self._cloud_chosen = cloud is not None  # else on a network volume both clouds, as `create --volume`
        self._then: list[str] = []  # the second and third GPU types to select once the list is in
        self._raw_name: str | None = None  # a prefill's name with control characters, shown escaped
        # the name follows the GPU type while it is the one it was given: a name typed (or changed) stays; a flag
        # set on a change while the box had focus took the form's own first change of it for typing
        self._given_name = default_name(None)
        self._name = self._given_name
        self._image = DEFAULT_IMAGE
        self._container, self._volume = str(DEFAULT_CONTAINER_GB), str(DEFAULT_VOLUME_GB)
        self._ports, self._env_text = DEFAULT_PORTS, ""
        self._hidden_env: tuple[tuple[str, str], ...] = ()  # sent, never shown (shown_env)
        self._mount, self._start_ssh = DEFAULT_MOUNT, True
        self._start_jupyter, self._cuda = False, cast("tuple[str, ...]", ())  # a template's, or a prefill's
        self._centres_any: tuple[str, ...] = ()  # a prefill's data centres, any of them
        self._centres_ordered: tuple[str, ...] = ()  # a prefill's candidates' own data centres, in order
        self._volume_id: str | None = None
        self._template_id: str | None = None
        self._switch = TemplateSwitch()  # the template whose values are in the fields now, and what they held
        self._args, self._registry = "", cast("str | None", None)  # a template's start command and registry login
        self._template_gone: str | None = None  # a prefill's template no longer on RunPod: why it was dropped
        self._unlinked: tuple[str, ...] = ()  # why the spec is sent without its template (link_template)
        self.volumes: dict[str, NetworkVolume] = {}
        self.templates: dict[str, Template] = {}
        self._listed_for = 1  # the count the GPU lists show stock for
        self._whose: dict[str, str] = {}  # a template's id: "yours" or "RunPod"
        if prefill is not None:
            self._take(prefill)
        self._creating = False
        # After an unanswered create whose pod could not be looked up: Create only looks again, never creates,
        # until the pod is found (created after all) or known to be absent.
        self._unsure: PodSpec | None = None
        self._known: frozenset[str] | None = None  # the pods there before that create
        self.spec: PodSpec | None = None  # the spec as it stands, when every field is valid
        self.cost: SpecCost | None = None
        self.candidates: Candidates | None = None

    def _take(self, spec: PodSpec) -> None:
        """Every field from a spec (recreate, or create on a volume or from a template). Its text may be RunPod's:
        the boxes get it made visible (spec_fields), and a name changed by that is flagged until edited."""
        first, *rest = spec.choices
        self._gpu_id, self._count = first.gpu_type_id, first.gpu_count
        self._gpu_auto = not first.gpu_type_id
        clouds = list(dict.fromkeys(c.cloud for c in spec.choices))
        self._cloud = ANY_CLOUD if len(clouds) > 1 else first.cloud.value
        # a prefill that names no GPU type names no cloud either: on a volume, both (docs/launch.md#network-volumes)
        self._cloud_chosen = bool(first.gpu_type_id)
        if spec.network_volume_id is not None and not self._cloud_chosen:
            self._cloud = ANY_CLOUD
        self._then = [g for g in dict.fromkeys(c.gpu_type_id for c in rest) if g != first.gpu_type_id][:2]
        self._given_name, self._name = NO_NAME, visible(spec.name)
        self._raw_name = self._name if self._name != spec.name else None
        fields = spec_fields(spec)
        self._image, self._container, self._volume = fields.image, fields.container, fields.volume
        self._ports, self._env_text, self._hidden_env = fields.ports, "\n".join(fields.env), fields.hidden
        self._put_hidden(fields)
        self._centres_ordered = tuple(dict.fromkeys(c.data_centre_id for c in spec.choices if c.data_centre_id))
        self._centres_any = spec.data_centre_ids
        self._volume_id = spec.network_volume_id
        self._template_id = spec.template_id
        # a recreated pod's values are its own, not the template's: clearing the template keeps them
        self._switch = TemplateSwitch(spec.template_id, fields)

    needs = Needs[CreatePodNeeds]()
    on_worker_state_changed = failures_shown  # the create and the look-up catch everything themselves

    def compose(self) -> ComposeResult:
        pick = self._image if self._image in IMAGES else Select.NULL
        with Frame(id="dialog"):
            yield Static("Create a pod", id="title")
            yield Label("Template (fills the fields below; what you type wins)")
            yield Select([], prompt="none: fill the fields yourself", id="template")
            yield Static("loading templates…", id="template-note", classes="note", markup=False)
            yield Label("Name")
            yield Input(self._name, id="name")
            yield Static("", id="err-name", classes="field-error", markup=False)
            yield Label("Image (pick one of RunPod's PyTorch images, or type any image)")
            yield Select([(i, i) for i in IMAGES], value=pick, prompt="RunPod's PyTorch images", id="image-choice")
            yield Input(self._image, id="image")
            yield Static("", id="err-image", classes="field-error", markup=False)
            yield Label("Network volume (data kept apart from any pod, in one data centre)")
            yield Select([], prompt="none: the pod gets a volume of its own", id="netvol")
            yield Static("loading network volumes…", id="netvol-note", classes="note", markup=False)
            yield Label("GPU type, count, cloud")
            with Horizontal():
                yield Select([], prompt="loading GPU types…", id="gpu")
                yield Input(str(self._count), id="count", type="integer")
                yield Select(CLOUDS, value=self._cloud, allow_blank=False, id="cloud")
            yield Static("", id="where", classes="note", markup=False)
            yield Static("", id="err-gpu", classes="field-error", markup=False)
            yield Static("", id="err-count", classes="field-error", markup=False)
            yield Label("If RunPod cannot place it, try these next, in order")
            with Horizontal():
                yield Select([], prompt="no second choice", id="gpu2")
                yield Select([], prompt="no third choice", id="gpu3")
            yield Label("Container disk GB (wiped on stop) · volume GB (kept; 0 for none)")
            with Horizontal():
                yield Input(self._container, id="container", type="integer")
                yield Input(self._volume, id="volume", type="integer")
            yield Static("", id="err-container", classes="field-error", markup=False)
            yield Static("", id="err-volume", classes="field-error", markup=False)
            yield Label("Ports (22/tcp: direct SSH with exec and SFTP; without it only RunPod's gateway console)")
            yield Input(self._ports, id="ports")
            yield Static("", id="err-ports", classes="field-error", markup=False)
            yield Label("Environment: one KEY=value per line")
            yield TextArea(self._env_text, id="env", soft_wrap=False, show_line_numbers=False)
            yield Static("", id="err-env", classes="field-error", markup=False)
            yield Static("", id="env-note", classes="note", markup=False)
            with Vertical(id="foot"):  # the candidates, the cost, and what RunPod said stay in view
                yield Static("", id="cost", markup=False)
                yield Static("", id="review", markup=False)
                yield Static("", id="stock", markup=False)
                yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel")
                    yield Button("Create", id="create", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#name", Input).focus()
        self._note_env()
        if self.needs.read_only:
            self.query_one("#create", Button).disabled = True
            self._error("read-only mode: creating a pod is switched off")
        if self.catalogue is None:
            self._load()
        else:
            self._loaded(self.catalogue)
        self._load_volumes()
        self._load_templates(self._template_id)

    @in_thread(group="gpu-types", description="loading GPU types", exclusive=True)
    def _load(self) -> None:
        try:
            catalogue = self.needs.services.api.gpu_types()
        except ApiError as e:
            self.app.call_from_thread(self._error, f"cannot load GPU types: {e}")
            return
        self.app.call_from_thread(self._loaded, catalogue)

    def _loaded(self, catalogue: GpuCatalogue) -> None:
        self.catalogue = catalogue = visible_fields(catalogue)  # names as RunPod sent them, made safe to show
        ids = [g.id for g in catalogue.types]
        if self._gpu_id not in ids and ids:
            if self._gpu_id:
                self._gpu_gone = self._gpu_id
            self._gpu_auto = True
            cheapest = min(catalogue.types, key=lambda g: g.community_price or g.secure_price or 1e9)
            self._gpu_id = cheapest.id
        self._set_gpu_options()
        self._then = []  # selected once; what the user clears stays cleared
        self._refresh()

    @in_thread(group="create-volumes", description="loading network volumes", exclusive=True)
    def _load_volumes(self) -> None:
        try:
            volumes = self.needs.services.api.network_volumes()
        except ApiError as e:
            self.app.call_from_thread(self._volumes_failed, str(e))
            return
        self.app.call_from_thread(self._volumes_loaded, volumes)

    def _volumes_failed(self, message: str) -> None:
        self._note("#netvol-note", f"cannot load the network volumes: {message}", error=True)
        if self._volume_id is not None:  # a prefill's volume, not to be dropped unseen
            select: Select[str] = self.query_one("#netvol", Select)
            select.set_options([(f"network volume {visible(self._volume_id)}", self._volume_id)])
            select.value = self._volume_id
        self._refresh()

    def _volumes_loaded(self, volumes: tuple[NetworkVolume, ...]) -> None:
        self.volumes = {v.id: v for v in volumes}
        select: Select[str] = self.query_one("#netvol", Select)
        select.set_options([(volume_label(v), v.id) for v in volumes])
        if self._volume_id in self.volumes:
            select.value = self._volume_id
        elif self._volume_id is not None:
            self._note("#netvol-note", f"network volume {self._volume_id} is not on the account", error=True)
            self._volume_id = None
            self._refresh()
            return
        self._note("#netvol-note", "" if volumes else "none on the account (podtui volumes makes one)")
        self._refresh()

    @in_thread(group="create-templates", description="loading templates", exclusive=True)
    def _load_templates(self, wanted: str | None) -> None:
        found, failed, gone = fetch_templates(self.needs.services.api, wanted)
        self.app.call_from_thread(self._templates_loaded, found, failed, gone)

    def _templates_loaded(self, templates: tuple[tuple[str, Template], ...], failed: str, gone: bool = False) -> None:
        self.templates, self._whose = {}, {}
        for whose, t in templates:
            if t.id not in self.templates:  # yours first
                self.templates[t.id], self._whose[t.id] = t, whose
        if gone and self._template_id is not None:
            # as `podtui recreate` does: the fields hold its values; sending its id would be refused (404)
            self._template_gone = f"template {self._template_id} is no longer on RunPod: the pod gets the fields below"
            self._template_id = self._switch.applied = None
        select: Select[str] = self.query_one("#template", Select)
        options = [(template_label(t, self._whose[t.id]), t.id) for t in self.templates.values()]
        if self._template_id is not None and self._template_id not in self.templates:
            options.insert(0, (f"template {visible(self._template_id)}", self._template_id))  # a prefill's, kept
        select.set_options(options)
        if self._template_id is not None:
            select.value = self._template_id
        notes = [n for n in (self._template_gone, failed, self._template_words()) if n]
        self._note("#template-note", "; ".join(notes), error=bool(failed or self._template_gone))
        self._refresh()

    def _template_words(self) -> str:
        return template_words(self.templates.get(self._template_id or ""))

    # --- choices that change other fields -----------------------------------------------------------------

    def _note(self, selector: str, text: str, error: bool = False) -> None:
        note = self.query_one(selector, Static)
        note.update(visible(text))
        note.set_class(error, "-error")
        note.display = bool(text)

    def _note_env(self) -> None:
        self._note("#env-note", hidden_words(self._hidden_env))

    @property
    def network_volume(self) -> NetworkVolume | None:
        value = self.query_one("#netvol", Select).value
        return self.volumes.get(value) if isinstance(value, str) else None

    @property
    def template(self) -> Template | None:
        value = self.query_one("#template", Select).value
        return self.templates.get(value) if isinstance(value, str) else None

    def _clouds(self) -> list[Cloud]:
        return clouds_of(self.query_one("#cloud", Select).value)

    def _count_now(self) -> int:
        try:
            return check_count(self._value("count"))
        except ValueError:
            return 1

    def _choices(self) -> GpuChoices:
        return GpuChoices(self.catalogue, self.network_volume, self._clouds(), self._count_now())

    def _set_gpu_options(self) -> None:
        """Fill the three GPU lists, keeping what each had selected (GpuChoices.options); the form picks the
        cheapest free there only when no type was named."""
        choices = self._choices()
        self._listed_for = choices.count
        if self._gpu_auto and self._gpu_id not in {g.id for g in choices.listed()} and choices.listed():
            self._gpu_id = choices.cheapest()
        selects: list[Select[str]] = [self.query_one(s, Select) for s in ("#gpu", "#gpu2", "#gpu3")]
        keep: list[str | None] = [self._gpu_id]
        for i, select in enumerate(selects[1:], 1):
            keep.append(
                select.value if isinstance(select.value, str) else self._then[i - 1] if len(self._then) >= i else None
            )
        options, ids = choices.options(keep, self._gpu_auto)
        for select, wanted in zip(selects, keep, strict=True):
            select.set_options(options)
            if wanted in ids:
                select.value = wanted
        selects[0].prompt = "pick a GPU type" if options else choices.none_listed_words()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "count" and self.catalogue is not None and self._count_now() != self._listed_for:
            self._set_gpu_options()  # the stock in the lists, and on a volume which types are free, are per count
        self._refresh()

    def on_select_changed(self, event: Select.Changed) -> None:
        sid = event.select.id
        if sid in ("image-choice", "template") and event.value != event.select.value:
            return  # stale: set again since (a template cleared then another applied); the later change counts
        if sid == "image-choice" and isinstance(event.value, str):
            self.query_one("#image", Input).value = event.value
        elif sid == "gpu":
            if isinstance(event.value, str):
                if event.value != self._gpu_id:  # the user's choice (the form's own sets _gpu_id first)
                    self._gpu_auto = False
                self._gpu_id = event.value
            name = self.query_one("#name", Input)
            if name.value == self._given_name:
                name.value = self._given_name = default_name(self.gpu)
        elif sid == "template":
            self._template_id = event.value if isinstance(event.value, str) else None
            if self._template_id != self._switch.applied:
                # what the template in the fields set and the user did not change goes first, then the new one
                cleared = self._unapply_template() if self._switch.applied is not None else ""
                if self._template_id is not None:
                    self._apply_template(cleared)
                else:
                    self._note("#template-note", cleared)
        elif sid in ("netvol", "cloud"):
            if sid == "cloud" and event.value != self._cloud:
                self._cloud, self._cloud_chosen = str(event.value), True
            if sid == "netvol":
                self._volume_id = event.value if isinstance(event.value, str) else None
                if self.network_volume is not None:
                    self.query_one("#volume", Input).value = "0"  # the network volume instead of one of its own
                if not self._cloud_chosen:  # on a volume both clouds, as `create --volume`; else community
                    self._cloud = ANY_CLOUD if self.network_volume is not None else Cloud.COMMUNITY.value
                    self.query_one("#cloud", Select).value = self._cloud
            self._set_gpu_options()
        self._refresh()

    def _apply_template(self, cleared: str = "") -> None:
        """The template's values into the fields (TemplateSwitch.apply); one RunPod would refuse is not used."""
        template = self.template
        if template is None:
            return
        try:
            filled = self._switch.apply(template, self._fields_now(), self.network_volume is not None)
        except ValueError as e:
            self._template_id = None  # not used, so not sent either
            self._note("#template-note", "; ".join(n for n in (cleared, f"{e}: not used") if n), error=True)
            return
        self._put(filled)
        self._note("#template-note", "; ".join(n for n in (cleared, f"filled from {self._template_words()}") if n))

    def _unapply_template(self) -> str:
        """Take back what the applied template set and the user did not change (TemplateSwitch.clear); returns
        the note saying what was taken back and what was kept."""
        fields, note = self._switch.clear(self.templates, self._fields_now(), self.network_volume is not None)
        if fields is not None:
            self._put(fields)
        return note

    def _fields_now(self) -> TemplateFields:
        return TemplateFields(
            self._value("image"),
            self._value("container"),
            self._value("volume"),
            self._mount,
            self._value("ports"),
            box_lines(self.query_one("#env", TextArea).text),
            self._hidden_env,
            self._start_ssh,
            self._start_jupyter,
            self._cuda,
            self._args,
            self._registry,
        )

    def _put(self, fields: TemplateFields) -> None:
        """These values into the form's fields."""
        self.query_one("#image", Input).value = fields.image
        pick: Select[str] = self.query_one("#image-choice", Select)
        if fields.image in IMAGES:
            pick.value = fields.image
        else:
            pick.clear()
        self.query_one("#container", Input).value = fields.container
        self.query_one("#volume", Input).value = fields.volume
        self.query_one("#ports", Input).value = fields.ports
        self.query_one("#env", TextArea).text = "\n".join(fields.env)
        self._hidden_env = fields.hidden
        self._put_hidden(fields)
        self._note_env()

    def _put_hidden(self, fields: TemplateFields) -> None:
        """The values no box shows."""
        self._mount, self._start_ssh = fields.mount, fields.start_ssh
        self._start_jupyter, self._cuda = fields.start_jupyter, fields.cuda
        self._args, self._registry = fields.args, fields.registry

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._refresh()

    # --- live validation and cost -------------------------------------------------------------------------

    def _pick(self, selector: str) -> GpuType | None:
        value = self.query_one(selector, Select).value
        if self.catalogue is None or not isinstance(value, str):
            return None
        return next((g for g in self.catalogue.types if g.id == value), None)

    @property
    def gpu(self) -> GpuType | None:
        return self._pick("#gpu")

    def _value(self, widget_id: str) -> str:
        return self.query_one(f"#{widget_id}", Input).value

    def _check(self) -> tuple[dict[str, object], dict[str, str]]:
        gpu = self.gpu
        volume = self.network_volume

        def own_volume() -> int:
            gb = check_volume_gb(self._value("volume"))
            if volume is not None and gb:
                raise ValueError(f"on network volume {volume.name} the pod has no volume of its own: 0")
            return gb

        checks: dict[str, Callable[[], object]] = {
            "name": self._check_name,
            "image": lambda: check_image(self._value("image")),
            "gpu": lambda: gpu if gpu is not None else _fail("pick a GPU type"),
            "count": lambda: check_count(self._value("count"), gpu),
            "container": lambda: check_gb(self._value("container"), CONTAINER_GB_RANGE),
            "volume": own_volume,
            "ports": lambda: parse_ports(self._value("ports")),
            "env": lambda: parse_env(self.query_one("#env", TextArea).text),
        }
        values: dict[str, object] = {}
        problems: dict[str, str] = {}
        for name, check in checks.items():
            try:
                values[name] = check()
            except ValueError as e:
                problems[name] = str(e)
        return values, problems

    def _check_name(self) -> str:
        name = check_name(self._value("name"))
        if self._raw_name is not None and name == self._raw_name.strip():
            raise ValueError("RunPod's name held control characters, shown escaped: type the name you want")
        return name

    def _plan(self, gpu: GpuType, count: int) -> Candidates:
        volume = self.network_volume
        picked = [gpu, *(g for s in ("#gpu2", "#gpu3") if (g := self._pick(s)) is not None)]
        centres = (volume.data_centre,) if volume is not None else self._centres_ordered
        return plan_candidates(picked, self._clouds(), count, centres)

    def _refresh(self) -> None:
        values, problems = self._check()
        gpu = values.get("gpu")
        volume = self.network_volume
        choices = self._choices()
        self.spec, self.cost, self.candidates = None, None, None
        stock = ""
        if isinstance(gpu, GpuType) and "count" not in problems:
            count = cast(int, values["count"])
            self.candidates = planned = self._plan(gpu, count)
            if not planned.choices:
                where = [volume.data_centre] if volume is not None else list(self._centres_ordered)
                free = "; ".join(stocked_words(self.catalogue, c, count) for c in where) if self.catalogue else ""
                problems["gpu"] = "; ".join(planned.skipped) + (f". {free}" if free else "")
                stock = choices.not_placeable(gpu, where)
            elif not {"container", "volume"} & problems.keys():
                first = planned.choices[0]
                chosen = self._type(first.gpu_type_id)
                self.cost = spec_cost(
                    chosen, first.cloud, count, cast(int, values["container"]), cast(int, values["volume"]), volume
                )
                stock = stock_words(first, chosen)
        if gpu is None and self.catalogue is not None and not choices.listed():
            stock = f"No GPU type can be picked: {choices.none_listed_words()} now" + (
                "; try the other cloud" if len(choices.clouds) == 1 else ""
            )
        if self._gpu_gone is not None and isinstance(gpu, GpuType):
            stock = f"RunPod no longer lists {self._gpu_gone}: {gpu.display_name} is picked instead" + (
                f"; {stock}" if stock else ""
            )
        for name in FIELDS:
            line = self.query_one(f"#err-{name}", Static)
            line.update(visible(problems.get(name, "")))
            line.set_class(name in problems, "-shown")
        self.query_one("#where", Static).update(choices.where_words(gpu if isinstance(gpu, GpuType) else None))
        self.query_one("#cost", Static).update(cost_words(self.cost))
        self.query_one("#stock", Static).update(visible(stock))
        self.query_one("#stock", Static).display = bool(stock)
        if not problems and isinstance(gpu, GpuType) and self.candidates is not None:
            base = PodSpec(
                cast(str, values["name"]),
                gpu.id,
                cast(int, values["count"]),
                image=cast(str, values["image"]),
                container_gb=cast(int, values["container"]),
                volume_gb=cast(int, values["volume"]),
                volume_mount_path=self._mount,
                ports=cast(str, values["ports"]),
                env=sent_env(self._hidden_env, cast("tuple[tuple[str, str], ...]", values["env"])),
                start_ssh=self._start_ssh,
                data_centre_ids=(volume.data_centre,) if volume is not None else self._centres_any,
                network_volume_id=volume.id if volume is not None else self._unloaded_volume(),
                template_id=self._template_id,
                start_jupyter=self._start_jupyter,
                cuda_versions=self._cuda,
                args=self._args,
                registry=self._registry,
            )
            self.spec, self._unlinked = link_template(
                spec_from_candidates(base, self.candidates), self.templates.get(self._template_id or "")
            )
        review = self.query_one("#review", Static)
        lines = review_lines(self.catalogue, self.candidates, self.spec, self._unlinked)
        review.update(visible("\n".join(lines), lines=True))
        review.display = bool(lines)
        button = self.query_one("#create", Button)
        if self._unsure is not None:
            button.label = "Check again"
        else:
            button.label = f"Create (${self.cost.per_hr:.3f}/hr)" if self.cost else "Create"
        button.refresh(layout=True)  # its width is auto, and a new label alone does not lay it out again

    def _unloaded_volume(self) -> str | None:
        """A prefill's volume while the list of volumes could not be read: kept, not silently dropped."""
        return self._volume_id if self._volume_id is not None and not self.volumes else None

    def _type(self, gpu_id: str) -> GpuType:
        assert self.catalogue is not None  # a candidate comes from the catalogue
        return next(g for g in self.catalogue.types if g.id == gpu_id)

    # --- submit -------------------------------------------------------------------------------------------

    def show_failure(self, line: str) -> None:
        self._error(f"cannot load GPU types: {line}")

    def _error(self, text: str) -> None:
        line = self.query_one("#error", Static)
        line.update(visible(text, lines=True))  # RunPod's words among podtui's
        line.display = bool(text)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "create":
            self.action_submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_submit(self) -> None:
        if self._creating:
            return
        if self.needs.read_only:
            self._error("read-only mode: creating a pod is switched off")
            return
        if self._unsure is not None:  # never a second create while the first one's outcome is unknown
            self._creating = True
            self.query_one("#create", Button).disabled = True
            self._error(f"looking for {self._unsure.name} on the account…")
            self._look(self._unsure, self._known)
            return
        self._refresh()
        if self.spec is None:
            self._error("fix the fields marked in red first; nothing was sent")
            return
        self._creating = True
        self.query_one("#create", Button).disabled = True
        self._error(f"creating {self.spec.name}…")
        self._create(self.spec)

    def _known_ids(self) -> frozenset[str] | None:
        snapshot = self.needs.feed.snapshot
        return frozenset(p.id for p in snapshot.pods) if snapshot is not None else None

    # A broad catch, not the app's handler for worker errors: the pod may have been created all the same, and an
    # error's text may quote `spec`, whose env values (tokens) only scrub() takes out.
    @in_thread(group="create-pod", description="creating the pod", exclusive=True)
    def _create(self, spec: PodSpec) -> None:
        try:
            known = self.app.call_from_thread(self._known_ids)
            try:
                created = self.needs.services.api.create_pod(spec)
            except CreateUncertain as e:
                message = str(e)
            except ApiError as e:
                self.app.call_from_thread(self._failed, scrub(str(e), spec))
                return
            except Exception as e:  # a bug after the request went out: the pod may exist just the same
                log.error("creating a pod failed: %s", scrub(f"{type(e).__name__}: {e}", spec))
                message = f"unexpected error: {scrub(f'{type(e).__name__}: {e}', spec)}: the pod may have been created"
            else:
                self.app.call_from_thread(self._created, created)
                return
            self.app.call_from_thread(self._uncertain, spec, known, message)
            self._find(spec, known)
        except Exception as e:
            log.error("creating a pod failed: %s", scrub(f"{type(e).__name__}: {e}", spec))
            self.app.call_from_thread(self._unknown, spec, f"unexpected error: {type(e).__name__}")

    def _uncertain(self, spec: PodSpec, known: frozenset[str] | None, message: str) -> None:
        self._unsure, self._known = spec, known
        self._error(f"{message}; looking for {spec.name} on the account…")
        self._refresh()

    @in_thread(group="create-pod", description="looking for the pod", exclusive=True)
    def _look(self, spec: PodSpec, known: frozenset[str] | None) -> None:
        self._find(spec, known)

    def _find(self, spec: PodSpec, known: frozenset[str] | None) -> None:
        """In a worker thread: is the pod of the unanswered create on the account after all?"""
        try:
            pod = find_created(self.needs.services.api.fetch_snapshot, spec.name, known, self.lookup_delays)
        except ApiError as e:
            self.app.call_from_thread(self._unknown, spec, scrub(str(e), spec))
        except Exception as e:
            log.error("looking for a new pod failed: %s", scrub(f"{type(e).__name__}: {e}", spec))
            self.app.call_from_thread(self._unknown, spec, f"unexpected error: {type(e).__name__}")
        else:
            if pod is None:
                self.app.call_from_thread(self._absent, spec)
            else:
                self.app.call_from_thread(self._found, pod, known is None)

    def _unknown(self, spec: PodSpec, message: str) -> None:
        self._creating = False
        self.query_one("#create", Button).disabled = False  # "Check again": looks, never creates
        self._refresh()
        self._error(
            f"RunPod's answer was lost: {spec.name} may have been created, and looking for it "
            f"failed ({message}). Check again, or look at the pod list before creating it again."
        )

    def _absent(self, spec: PodSpec) -> None:
        # Not found is not "not created": RunPod may still be carrying the request out. The button keeps only
        # looking; creating anyway takes closing this form and opening a new one, a choice made knowingly.
        self._creating = False
        self.query_one("#create", Button).disabled = False  # "Check again": looks, never creates
        self._refresh()
        self._error(
            f"No new pod named {spec.name} is on the account yet ({sum(self.lookup_delays):g} s after the create). "
            "RunPod may still be creating it: Check again in a minute. To create it anyway, close this form and "
            "open a new one (a second create could make a second pod)."
        )

    def _found(self, pod: Pod, maybe_older: bool) -> None:
        older = " (maybe an older pod of that name)" if maybe_older else ""
        self.app.notify(f"created after all: {pod.name} ({pod.id}){older}", markup=False)
        self._unsure = None
        self._finish(as_created(pod))

    def _failed(self, message: str) -> None:
        self._creating = False
        ready_again(self.query_one("#create", Button))
        self._error(f"RunPod did not create the pod: {message}")

    def _created(self, created: CreatedPod) -> None:
        """Said with the candidate RunPod placed when there were several, and why each one before it was not."""
        placed = ""
        if created.candidate is not None and self.spec is not None and len(self.spec.choices) > 1:
            placed = f" on {created.candidate.label}"
        refused = "".join(f"\nnot placed: {line}" for line in created.refused)
        self.app.notify(
            f"{created.name or created.id}: created{placed}, starting; billing starts once it runs{refused}",
            markup=False,
            timeout=12 if refused else 5,
        )
        self._finish(created)

    def _finish(self, created: CreatedPod) -> None:
        self.needs.poll_now()
        self.dismiss(created)


def _fail(message: str) -> object:
    raise ValueError(message)
