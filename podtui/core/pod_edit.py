"""Editing a pod in place (REST v2's PATCH /v2/pods/{id}): what the user asks to change, checked against the
spec's rules before anything is sent, shown as a diff (secrets masked) with what a restart will reset, and sent
as a body holding only the fields that change.

PATCH replaces the whole `env`, so the new env is always the pod's current env plus the changes: a key the user
did not name is never lost. Mounts keep the kind they were created with, a network volume keeps its id, a
persistent volume does not shrink, and `network: []` is never sent (docs/runpod-facts.md#rest-v2; the spec's
`Mounts` rules).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from podtui.core import secret
from podtui.core.api.client import RunPodApi
from podtui.core.api.errors import ApiError
from podtui.core.pod import Pod, PodStatus, redact_env
from podtui.core.pod_spec import (
    CONTAINER_GB_RANGE,
    SpecError,
    check_env,
    check_gb,
    check_image,
    check_mount,
    check_name,
    check_volume_gb,
    parse_ports,
)
from podtui.core.visible import visible

# redact_env's stand-in for a value that may be a credential: in the edit form, a line still holding it keeps the
# pod's value (what the user never saw cannot be retyped)
HIDDEN = "•••••• (hidden)"
# the stand-in's marks: a new value holding one is the stand-in partly edited, not a value typed whole
MARKERS = ("•", "(hidden")
CHANGED = "•••••• (changed)"  # the diff's word for a hidden value that is replaced by another hidden one
# what a change of these does to a running pod: its container starts again (docs/runpod-facts.md#editing-a-pod)
RESTARTING = frozenset({"image", "args", "env", "ports", "disk", "mounts"})
# a locked running pod refuses every change that would restart it, unless the same edit unlocks it
# (docs/runpod-facts.md#editing-a-pod)
LOCK_REFUSES = RESTARTING

MountKind = Literal["persistent", "network", "none"]


@dataclass(frozen=True)
class EditRequest:
    """What to change; None (or empty) leaves a field as it is. `env` replaces the env as a whole (the edit form's
    lines); `env_set`/`env_unset` change single keys of the pod's env (the command line's --env/--unset-env)."""

    name: str | None = None
    image: str | None = None
    ports: str | None = None
    container_gb: int | str | None = None
    volume_gb: int | str | None = None
    volume_path: str | None = None
    env: tuple[tuple[str, str], ...] | None = field(default=None, repr=False)
    env_set: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    env_unset: tuple[str, ...] = ()
    locked: bool | None = None


@dataclass(frozen=True)
class Change:
    """One line of the diff: what, as it was and as it will be (secret values masked)."""

    what: str
    old: str
    new: str

    def line(self) -> str:
        return f"{self.what:<14} {self.old} -> {self.new}"


@dataclass(frozen=True)
class EditPlan:
    pod: Pod
    changes: tuple[Change, ...]
    body: Mapping[str, object] = field(repr=False)  # may hold env values in clear: never in a traceback

    @property
    def empty(self) -> bool:
        return not self.body

    @property
    def restarts(self) -> bool:
        """Whether sending it restarts the pod's container now (only a pod that is up has one to restart)."""
        return bool(RESTARTING & self.body.keys()) and self.pod.status in (
            PodStatus.RUNNING,
            PodStatus.STARTING,
            PodStatus.PROVISIONING,
        )

    def restart_warning(self) -> str | None:
        """What a restart resets, when the plan restarts the container; what happens instead for a stopped pod."""
        if not RESTARTING & self.body.keys():
            return None
        volume = _volume_words(self.pod)
        if self.restarts:
            return (
                "Saving restarts the pod's container: running processes end and the container disk "
                f"(everything outside the volume) is wiped; {volume}."
            )
        return f"The pod is not running: the changes apply when it next starts; {volume}."

    def lines(self) -> list[str]:
        out = [c.line() for c in self.changes]
        warning = self.restart_warning()
        if warning:
            out += ["", warning]
        return out


class EditRefused(SpecError):
    """A field is wrong or breaks one of the spec's PATCH rules; `problems` names each field."""


def mount_kind(pod: Pod) -> MountKind:
    if pod.network_volume:
        return "network"
    return "persistent" if pod.volume_gb else "none"


def _volume_words(pod: Pod) -> str:
    kind = mount_kind(pod)
    path = pod.volume_mount_path or "its mount path"
    if kind == "network":
        return f"the network volume {pod.network_volume} at {path} is kept"
    if kind == "persistent":
        return f"the volume ({pod.volume_gb or 0:g} GB at {path}) is kept"
    return "the pod has no volume: nothing of its files is kept"


def _shown(value: str | None) -> str:
    return value if value else "—"


def _env_with(pod: Pod, request: EditRequest, problems: dict[str, str]) -> tuple[tuple[str, str], ...] | None:
    """The pod's env with the changes asked for, None when it does not change (or a problem was noted)."""
    old = dict(pod.env)
    if request.env is None and not request.env_set and not request.env_unset:
        return None
    try:
        new = dict(check_env_changes(request.env, old)) if request.env is not None else dict(old)
        for key, value in check_env_changes(request.env_set, old):
            new[key] = value
        for key in request.env_unset:
            if key not in new:
                raise ValueError(f"{key} is not set on the pod")
            if any(k == key for k, _ in request.env_set):
                raise ValueError(f"{key} is both set and unset")
            del new[key]
        pairs = check_env_changes(new.items(), old)
    except ValueError as e:
        problems["env"] = str(e)
        return None
    return None if dict(pairs) == old else pairs


def check_env_changes(pairs: Iterable[tuple[str, str]], old: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """check_env on what changes: a variable the pod already has with the same value is RunPod's own (it took it),
    so a rule stricter than RunPod's (a key like `my.var`) does not stop an edit of something else. A key given
    twice is refused all the same. Raises ValueError."""
    out: list[tuple[str, str]] = []
    for key, value in pairs:
        if any(k == key for k, _ in out):
            raise ValueError(f"{key} is set twice")
        if old.get(key) != value:
            check_env([(key, value)])
        out.append((key, value))
    return tuple(out)


def env_changes(old: Iterable[tuple[str, str]], new: Iterable[tuple[str, str]]) -> tuple[Change, ...]:
    """Key by key: added (+), removed (-), changed; a value that may be a credential is masked on both sides, a
    hidden one replaced by another said so (both sides would otherwise read the same)."""
    before, after = dict(old), dict(new)
    shown_before, shown_after = dict(redact_env(tuple(before.items()))), dict(redact_env(tuple(after.items())))
    for key in after:
        if shown_after[key] != after[key]:
            secret.register(after[key])  # a token typed here is masked wherever it may turn up later
    out: list[Change] = []
    for key in sorted(before.keys() | after.keys()):
        if key not in after:
            out.append(Change(f"env -{key}", shown_before[key], "(removed)"))
        elif key not in before:
            out.append(Change(f"env +{key}", "(not set)", shown_after[key]))
        elif before[key] != after[key]:
            masked = shown_before[key] != before[key] or shown_after[key] != after[key]
            out.append(Change(f"env {key}", HIDDEN if masked else before[key], CHANGED if masked else after[key]))
    return tuple(out)


def plan_edit(pod: Pod, request: EditRequest) -> EditPlan:
    """The PATCH body and the diff for `request` on `pod` as RunPod last described it; raises EditRefused naming
    every field that is wrong, before anything is sent. A field given as the pod already has it is left alone
    unchecked: RunPod took it, and only what is sent is podtui's to judge."""
    problems: dict[str, str] = {}
    body: dict[str, object] = {}
    changes: list[Change] = []

    def field_check(name: str, check: Callable[[], None]) -> None:
        try:
            check()
        except ValueError as e:
            problems[name] = str(e)

    if request.name is not None and request.name != pod.name:

        def name() -> None:
            new = check_name(request.name or "")
            if new != pod.name:
                body["name"] = new
                changes.append(Change("name", pod.name, new))

        field_check("name", name)
    if request.image is not None and request.image != pod.image:

        def image() -> None:
            new = check_image(request.image or "")
            if new != pod.image:
                body["image"] = new
                changes.append(Change("image", _shown(pod.image), new))

        field_check("image", image)
    if request.ports is not None and request.ports.strip() != (pod.ports_spec or "").strip():

        def ports() -> None:
            new = parse_ports(request.ports or "")
            old = _normal_ports(pod.ports_spec)
            if new != old:
                body["ports"] = [p for p in new.split(",") if p]
                changes.append(Change("ports", old or "none", new or "none"))

        field_check("ports", ports)
    if request.container_gb is not None and not _same_gb(request.container_gb, pod.container_disk_gb):

        def disk() -> None:
            new = check_gb(request.container_gb, CONTAINER_GB_RANGE)
            if pod.container_disk_gb is None or new != pod.container_disk_gb:
                body["disk"] = new
                old = "?" if pod.container_disk_gb is None else f"{pod.container_disk_gb:g} GB"
                changes.append(Change("container disk", old, f"{new} GB"))

        field_check("container_gb", disk)
    _mounts(pod, request, body, changes, problems)
    env = _env_with(pod, request, problems)
    if env is not None:
        body["env"] = dict(env)
        changes.extend(env_changes(pod.env, env))
    if request.locked is not None and request.locked != pod.locked:
        body["locked"] = request.locked
        changes.append(Change("locked", _yes(pod.locked), _yes(request.locked)))
    if not problems:
        try:
            check_patch(pod, body)
        except EditRefused as e:
            problems.update(e.problems)
    if problems:
        raise EditRefused(problems)
    return EditPlan(pod, tuple(changes), body)


def _same_gb(value: int | str, current: float | None) -> bool:
    """Whether a size typed (or given) is the one the pod has."""
    if current is None:
        return False
    text = str(value).strip().removesuffix("GB").removesuffix("gb").strip()
    try:
        return float(text) == current
    except ValueError:
        return False


def _yes(on: bool) -> str:
    return "yes" if on else "no"


def _normal_ports(spec: str | None) -> str:
    """The pod's ports as RunPod listed them, in the form parse_ports gives (unreadable ones kept as they are)."""
    try:
        return parse_ports(spec or "")
    except ValueError:
        return spec or ""


def _mounts(
    pod: Pod, request: EditRequest, body: dict[str, object], changes: list[Change], problems: dict[str, str]
) -> None:
    if request.volume_gb is None and request.volume_path is None:
        return
    kind = mount_kind(pod)
    if kind == "none":
        problems["volume"] = "the pod was created without a volume, and RunPod adds none afterwards"
        return
    try:
        path = pod.volume_mount_path
        if request.volume_path is not None and request.volume_path.strip() != (path or ""):
            path = check_mount(request.volume_path)
        if path is None:
            raise ValueError("RunPod did not say where the volume is mounted: give --volume-path too")
    except ValueError as e:
        problems["volume_path"] = str(e)
        return
    if kind == "network":
        if request.volume_gb is not None:
            problems["volume_gb"] = (
                f"a network volume's size is the volume's own ({pod.network_volume}): grow it with `podtui volume`"
            )
            return
        if path != pod.volume_mount_path:
            body["mounts"] = {"network": [{"volumeId": pod.network_volume, "path": path}]}
            changes.append(Change("volume path", _shown(pod.volume_mount_path), path))
        return
    old_gb = int(pod.volume_gb or 0)
    try:
        same = request.volume_gb is None or _same_gb(request.volume_gb, pod.volume_gb)
        gb = old_gb if same else check_volume_gb(request.volume_gb)
        if gb < old_gb:
            raise ValueError(f"a volume cannot shrink (it is {old_gb} GB): its data would not fit")
    except ValueError as e:
        problems["volume_gb"] = str(e)
        return
    if gb != old_gb or path != pod.volume_mount_path:
        body["mounts"] = {"persistent": {"size": gb, "path": path}}
        if gb != old_gb:
            changes.append(Change("volume", f"{old_gb} GB", f"{gb} GB"))
        if path != pod.volume_mount_path:
            changes.append(Change("volume path", _shown(pod.volume_mount_path), path))


def check_patch(pod: Pod, body: Mapping[str, object]) -> None:
    """The spec's PATCH rules, on any body about to be sent. A locked running pod takes no change that restarts
    it unless the same edit unlocks it (docs/runpod-facts.md#editing-a-pod). Mounts: the kind is the one the pod
    was created with (none stays none), a network volume's id does not change, a persistent volume does not
    shrink, a network list is never empty, and every entry is whole. Raises EditRefused."""
    _check_lock(pod, body)
    mounts = body.get("mounts")
    if mounts is None:
        return
    if not isinstance(mounts, Mapping):
        raise EditRefused({"volume": "mounts must be an object"})
    kind = mount_kind(pod)
    persistent, network = mounts.get("persistent"), mounts.get("network")
    if persistent is not None and network is not None:
        raise EditRefused({"volume": "a pod has a persistent volume or a network volume, not both"})
    if network is not None:
        if not isinstance(network, list) or not network:
            raise EditRefused({"volume": "RunPod refuses an empty network mount list: a mount cannot be removed"})
        if kind != "network":
            raise EditRefused({"volume": f"the pod was created with {_kind_words(kind)}: it cannot take a network one"})
        for entry in network:
            if not isinstance(entry, Mapping) or not entry.get("volumeId") or not entry.get("path"):
                raise EditRefused({"volume": "a network mount needs its volumeId and path"})
            if entry["volumeId"] != pod.network_volume:
                raise EditRefused({"volume": f"the pod's network volume ({pod.network_volume}) cannot be swapped"})
    if persistent is not None:
        if kind != "persistent":
            raise EditRefused(
                {"volume": f"the pod was created with {_kind_words(kind)}: it cannot take a persistent one"}
            )
        size = persistent.get("size") if isinstance(persistent, Mapping) else None
        path = persistent.get("path") if isinstance(persistent, Mapping) else None
        if not isinstance(size, int) or isinstance(size, bool) or not isinstance(path, str) or not path:
            raise EditRefused({"volume": "a persistent mount needs its size and path"})
        if size < (pod.volume_gb or 0):
            raise EditRefused({"volume_gb": f"a volume cannot shrink (it is {pod.volume_gb:g} GB)"})


def _check_lock(pod: Pod, body: Mapping[str, object]) -> None:
    """RunPod answers 409 to a restarting change of a running pod that is locked once the edit is applied."""
    restarting = sorted(LOCK_REFUSES & body.keys())
    if not restarting or pod.status is not PodStatus.RUNNING or not body.get("locked", pod.locked):
        return
    what = ", ".join("container disk" if k == "disk" else k for k in restarting)
    if pod.locked:
        why = (
            f"the pod is locked and running, and changing its {what} restarts it: RunPod refuses that until it is "
            "unlocked; unlock it in the same edit (untick Locked, or --unlock)"
        )
    else:
        why = (
            f"changing its {what} restarts the running pod, which RunPod refuses once it is locked: lock it in "
            "an edit of its own afterwards"
        )
    raise EditRefused({"locked": why})


def _kind_words(kind: MountKind) -> str:
    return {"persistent": "a persistent volume", "network": "a network volume", "none": "no volume"}[kind]


def apply(api: RunPodApi, plan: EditPlan) -> Pod:
    """Send the plan (nothing when it is empty); the pod as RunPod has it afterwards. Raises ApiError."""
    if plan.empty:
        return plan.pod
    check_patch(plan.pod, plan.body)
    return api.update_pod(plan.pod.id, plan.body)


# --- the edit form's env lines --------------------------------------------------------------------------------


def _showable(text: str) -> bool:
    """Whether a text box can show it as it is (it draws control characters raw)."""
    return visible(text) == text


def unshown_keys(env: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """The variables whose names a text box cannot show: the form leaves them out, and they are kept as they are."""
    return tuple(key for key, _ in env if not _showable(key))


def env_lines(env: Iterable[tuple[str, str]]) -> str:
    """The env as the form shows it, one KEY=VALUE a line: a value that may be a credential, or that holds a line
    break or another character a text box cannot show, shows as HIDDEN and is kept unless retyped; a variable
    whose name cannot be shown is left out (and kept)."""
    pairs = tuple(env)
    out = []
    for (key, value), (_, shown) in zip(pairs, redact_env(pairs), strict=True):
        if not _showable(key):
            continue
        hide = shown != value or not _showable(value)
        out.append(f"{key}={HIDDEN if hide else value}")
    return "\n".join(out)


def env_from_lines(text: str, old: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The form's lines back into an env: a line still reading KEY=HIDDEN keeps the pod's value of KEY, and the
    variables the form could not show are kept; blank lines and lines starting with # are skipped. A stand-in
    partly edited is refused rather than sent as the value. Only what changes is checked (check_env_changes).
    Raises ValueError naming the line."""
    before = dict(old)
    pairs: list[tuple[str, str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, eq, value = line.partition("=")
        key = key.strip()
        if not eq:
            raise ValueError(f"line {n}: write KEY=value")
        if value == HIDDEN:
            if key not in before:
                raise ValueError(f"line {n}: {key} has no value to keep: type one")
            value = before[key]
        elif any(m in value for m in MARKERS) and value != before.get(key):
            raise ValueError(
                f"line {n}: {key} holds part of the hidden stand-in: type the whole new value, or put the "
                f"placeholder back ({HIDDEN}) to keep the old one"
            )
        pairs.append((key, value))
    pairs += [(key, before[key]) for key in unshown_keys(before.items())]
    return check_env_changes(pairs, before)


class PodChanged(ApiError):
    """The pod changed on RunPod between the review and the send: the reviewed diff no longer says what would
    happen, so nothing was sent. `fresh`: the pod as RunPod has it now."""

    def __init__(self, message: str, fresh: Pod) -> None:
        super().__init__(message)
        self.fresh = fresh


def editable(pod: Pod) -> tuple[object, ...]:
    """What an edit can change and what decides what it does: two pods alike in these give the same diff."""
    return (
        pod.name,
        pod.image,
        _normal_ports(pod.ports_spec),
        pod.container_disk_gb,
        pod.volume_gb,
        pod.volume_mount_path,
        pod.network_volume,
        tuple(sorted(pod.env)),
        pod.locked,
    )


def apply_reviewed(api: RunPodApi, plan: EditPlan, request: EditRequest) -> Pod:
    """Send `plan`, which the user has seen, only if the pod as RunPod has it now is the one it was made from: the
    body holds the whole env, so a value changed elsewhere meanwhile (a rotated token) would be silently put back,
    and a pod started meanwhile would restart where the review said it would not. Raises PodChanged, EditRefused
    or ApiError."""
    now = api.fetch_pod(plan.pod.id)
    changed = editable(now) != editable(plan.pod)
    fresh = None if changed else plan_edit(now, request)  # the rules again, on its status now
    if fresh is None or fresh.restarts != plan.restarts or dict(fresh.body) != dict(plan.body):
        raise PodChanged(
            f"{plan.pod.name} changed on RunPod since it was read: nothing sent; review the changes again", now
        )
    return apply(api, fresh)
