"""Create a pod: a form whose every field is checked as it is typed, with the hourly and daily cost shown live
before the Create button; RunPod's refusal (no stock, low balance) appears in the form, and nothing typed is lost.
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
from podtui.core.gpu import Cloud, GpuCatalogue, GpuType, Stock
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
    parse_env,
    parse_ports,
    scrub,
    spec_cost,
)
from podtui.core.visible import visible, visible_fields
from podtui.ui import keymap
from podtui.ui.needs import Needs, Served
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.worker_errors import failures_shown, in_thread

log = logging.getLogger(__name__)

CLOUDS = [("community cloud", Cloud.COMMUNITY.value), ("secure cloud", Cloud.SECURE.value)]
FIELDS = ("name", "image", "gpu", "count", "container", "volume", "ports", "env")


def default_name(gpu: GpuType | None) -> str:
    return "podtui-" + (gpu.display_name.lower().replace(" ", "-") if gpu else "pod")


def gpu_label(g: GpuType) -> str:
    prices = " · ".join(f"{c.label} ${p:.2f}" for c in Cloud if (p := g.price(c)) is not None)
    return f"{g.display_name} · {g.memory_gb} GB · {prices or 'no price'}"


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
    ) -> None:
        super().__init__()
        self.catalogue = catalogue
        self._gpu_id, self._count, self._cloud = gpu_type_id, count, cloud or Cloud.COMMUNITY
        # the name follows the GPU type while it is the one it was given: a name typed (or changed) stays; a flag
        # set on a change while the box had focus took the form's own first change of it for typing
        self._given_name = default_name(None)
        self._creating = False
        # After an unanswered create whose pod could not be looked up: Create only looks again, never creates,
        # until the pod is found (created after all) or known to be absent.
        self._unsure: PodSpec | None = None
        self._known: frozenset[str] | None = None  # the pods there before that create
        self.spec: PodSpec | None = None  # the spec as it stands, when every field is valid
        self.cost: SpecCost | None = None

    needs = Needs[CreatePodNeeds]()
    on_worker_state_changed = failures_shown  # the create and the look-up catch everything themselves

    def compose(self) -> ComposeResult:
        with Frame(id="dialog"):
            yield Static("Create a pod", id="title")
            yield Label("Name")
            yield Input(self._given_name, id="name")
            yield Static("", id="err-name", classes="field-error", markup=False)
            yield Label("Image (pick one of RunPod's PyTorch images, or type any image)")
            yield Select([(i, i) for i in IMAGES], value=DEFAULT_IMAGE, allow_blank=False, id="image-choice")
            yield Input(DEFAULT_IMAGE, id="image")
            yield Static("", id="err-image", classes="field-error", markup=False)
            yield Label("GPU type, count, cloud")
            with Horizontal():
                yield Select([], prompt="loading GPU types…", id="gpu")
                yield Input(str(self._count), id="count", type="integer")
                yield Select(CLOUDS, value=self._cloud.value, allow_blank=False, id="cloud")
            yield Static("", id="err-gpu", classes="field-error", markup=False)
            yield Static("", id="err-count", classes="field-error", markup=False)
            yield Label(f"Container disk GB (wiped on stop) · volume GB (kept, at {DEFAULT_MOUNT}; 0 for none)")
            with Horizontal():
                yield Input(str(DEFAULT_CONTAINER_GB), id="container", type="integer")
                yield Input(str(DEFAULT_VOLUME_GB), id="volume", type="integer")
            yield Static("", id="err-container", classes="field-error", markup=False)
            yield Static("", id="err-volume", classes="field-error", markup=False)
            yield Label("Ports (22/tcp: direct SSH with exec and SFTP; without it only RunPod's gateway console)")
            yield Input(DEFAULT_PORTS, id="ports")
            yield Static("", id="err-ports", classes="field-error", markup=False)
            yield Label("Environment: one KEY=value per line")
            yield TextArea("", id="env", soft_wrap=False, show_line_numbers=False)
            yield Static("", id="err-env", classes="field-error", markup=False)
            with Vertical(id="foot"):  # the cost, and what RunPod said, stay in view beside the buttons
                yield Static("", id="cost", markup=False)
                yield Static("", id="stock", markup=False)
                yield Static("", id="error", markup=False)
                with Horizontal(id="buttons"):
                    yield Button("Cancel", id="cancel")
                    yield Button("Create", id="create", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#name", Input).focus()
        if self.needs.read_only:
            self.query_one("#create", Button).disabled = True
            self._error("read-only mode: creating a pod is switched off")
        if self.catalogue is None:
            self._load()
        else:
            self._loaded(self.catalogue)

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
        select: Select[str] = self.query_one("#gpu", Select)
        select.set_options([(gpu_label(g), g.id) for g in catalogue.types])
        ids = [g.id for g in catalogue.types]
        if self._gpu_id in ids:
            select.value = self._gpu_id
        elif ids:
            cheapest = min(catalogue.types, key=lambda g: g.community_price or g.secure_price or 1e9)
            select.value = cheapest.id
        self._refresh()

    # --- live validation and cost -------------------------------------------------------------------------

    @property
    def gpu(self) -> GpuType | None:
        value = self.query_one("#gpu", Select).value
        if self.catalogue is None or not isinstance(value, str):
            return None
        return next((g for g in self.catalogue.types if g.id == value), None)

    def on_input_changed(self, event: Input.Changed) -> None:
        self._refresh()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "image-choice" and isinstance(event.value, str):
            self.query_one("#image", Input).value = event.value
        name = self.query_one("#name", Input)
        if event.select.id == "gpu" and name.value == self._given_name:
            name.value = self._given_name = default_name(self.gpu)
        self._refresh()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._refresh()

    def _value(self, widget_id: str) -> str:
        return self.query_one(f"#{widget_id}", Input).value

    def _check(self) -> tuple[dict[str, object], dict[str, str]]:
        gpu = self.gpu
        checks: dict[str, Callable[[], object]] = {
            "name": lambda: check_name(self._value("name")),
            "image": lambda: check_image(self._value("image")),
            "gpu": lambda: gpu if gpu is not None else _fail("pick a GPU type"),
            "count": lambda: check_count(self._value("count"), gpu),
            "container": lambda: check_gb(self._value("container"), CONTAINER_GB_RANGE),
            "volume": lambda: check_volume_gb(self._value("volume")),
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

    def _refresh(self) -> None:
        values, problems = self._check()
        for name in FIELDS:
            line = self.query_one(f"#err-{name}", Static)
            line.update(problems.get(name, ""))
            line.set_class(name in problems, "-shown")
        gpu = values.get("gpu")
        cloud = Cloud(str(self.query_one("#cloud", Select).value))
        self.spec, self.cost = None, None
        stock = ""
        if isinstance(gpu, GpuType) and not {"count", "container", "volume"} & problems.keys():
            count, container, volume = (cast(int, values[k]) for k in ("count", "container", "volume"))
            self.cost = spec_cost(gpu, cloud, count, container, volume)
            if self.cost is None:
                problems["cloud"] = f"{gpu.display_name} is not offered on {cloud.label} cloud"
            elif gpu.stock_for(cloud, count) is Stock.NONE:
                stock = (
                    f"RunPod shows no stock of {count} x {gpu.display_name} on {cloud.label} cloud right now: "
                    "creating will probably be refused"
                )
            elif gpu.stock_for(cloud, count) is Stock.UNKNOWN:
                stock = f"RunPod did not say whether {count} x {gpu.display_name} is free on {cloud.label} cloud"
        if self.cost is not None:
            c = self.cost
            text = (
                f"Cost: ${c.per_hr:.3f}/hr · ${c.per_day:.2f}/day while running "
                f"(GPU ${c.gpu_per_hr:.3f}/hr + disks ${c.storage_per_hr:.3f}/hr); "
                f"stopped, the volume costs ${c.stopped_per_hr * 24:.2f}/day"
            )
        else:
            text = "Cost: " + (problems.get("cloud") or "fill in the GPU, count and disks to see it")
        self.query_one("#cost", Static).update(text)
        self.query_one("#stock", Static).update(stock)
        self.query_one("#stock", Static).display = bool(stock)
        if not problems and isinstance(gpu, GpuType):
            self.spec = PodSpec(
                cast(str, values["name"]),
                gpu.id,
                cast(int, values["count"]),
                cloud,
                cast(str, values["image"]),
                cast(int, values["container"]),
                cast(int, values["volume"]),
                DEFAULT_MOUNT,
                cast(str, values["ports"]),
                cast("tuple[tuple[str, str], ...]", values["env"]),
            )
        button = self.query_one("#create", Button)
        if self._unsure is not None:
            button.label = "Check again"
        else:
            button.label = f"Create (${self.cost.per_hr:.3f}/hr)" if self.cost else "Create"
        button.refresh(layout=True)  # its width is auto, and a new label alone does not lay it out again

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
        self.query_one("#create", Button).disabled = False
        self._error(f"RunPod did not create the pod: {message}")

    def _created(self, created: CreatedPod) -> None:
        self.app.notify(f"{created.name or created.id}: created, starting; billing starts once it runs", markup=False)
        self._finish(created)

    def _finish(self, created: CreatedPod) -> None:
        self.needs.poll_now()
        self.dismiss(created)


def _fail(message: str) -> object:
    raise ValueError(message)
