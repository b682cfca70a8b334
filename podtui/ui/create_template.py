"""The create form's template: the values it puts in the fields, and taking them back when it is cleared or
switched (what the user changed stays: docs/launch.md#templates). Plain values, no widgets: the form reads its
fields into a `TemplateFields`, asks `TemplateSwitch` what to put back, and puts it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from podtui.core.api import ApiError, ApiNotFound, RunPodApi
from podtui.core.pod_spec import (
    DEFAULT_CONTAINER_GB,
    DEFAULT_IMAGE,
    DEFAULT_MOUNT,
    DEFAULT_PORTS,
    DEFAULT_VOLUME_GB,
    PodSpec,
    TemplateFill,
    cuda_words,
    template_fill,
)
from podtui.core.template import Template
from podtui.core.visible import visible
from podtui.ui.create_env import Env, env_key, shown_env


@dataclass(frozen=True)
class TemplateFields:
    """The form's values a template sets: what it filled in, or what the form held before it (a template cleared
    gives back what it set and the user did not change)."""

    image: str
    container: str
    volume: str
    mount: str
    ports: str
    env: tuple[str, ...]  # the env box's lines
    hidden: Env  # env sent, not shown (shown_env)
    start_ssh: bool
    start_jupyter: bool
    cuda: tuple[str, ...]
    args: str
    registry: str | None


NO_TEMPLATE = TemplateFields(
    DEFAULT_IMAGE, str(DEFAULT_CONTAINER_GB), str(DEFAULT_VOLUME_GB), DEFAULT_MOUNT, DEFAULT_PORTS, (), (),
    True, False, (), "", None,
)  # fmt: skip
# each field's name in the note that says what a cleared template took back
FIELD_WORDS = {
    "image": "image",
    "container": "container disk",
    "volume": "volume",
    "mount": "volume path",
    "ports": "ports",
    "start_ssh": "SSH setting",
    "start_jupyter": "Jupyter",
    "cuda": "CUDA constraint",
    "args": "start command",
    "registry": "registry login",
}


TYPED = frozenset(("image", "container", "volume", "ports"))  # the fields with a box the user may change
# what link_template gives the spec from the template whatever the form holds (a prefill's template)
FROM_LINK = frozenset(("start_jupyter", "cuda", "args", "registry"))


def template_fields(fill: TemplateFill) -> TemplateFields:
    text, hidden = shown_env(fill.env)
    return TemplateFields(
        fill.image,
        str(fill.container_gb),
        str(fill.volume_gb),
        fill.volume_mount_path,
        fill.ports,
        tuple(text.splitlines()),
        hidden,
        fill.start_ssh,
        fill.start_jupyter,
        fill.cuda_versions,
        fill.args,
        fill.registry,
    )


def spec_fields(spec: PodSpec) -> TemplateFields:
    """A spec's values as the form's boxes show them. Its text may be RunPod's: made visible (a box draws its text
    raw); env values stay as they are, sent and not shown (shown_env)."""
    text, hidden = shown_env(spec.env)
    return TemplateFields(
        visible(spec.image),
        str(spec.container_gb),
        str(spec.volume_gb),
        spec.volume_mount_path,
        visible(spec.ports),
        tuple(text.splitlines()),
        hidden,
        spec.start_ssh,
        spec.start_jupyter,
        spec.cuda_versions,
        spec.args,
        spec.registry,
    )


def template_label(t: Template, whose: str) -> str:
    return f"{whose}: {visible(t.name)} · {visible(t.image)}"


def template_words(template: Template | None) -> str:
    """What the template adds that no field shows: its start command, registry login, Jupyter and a CUDA
    constraint, each said only when it has one."""
    if template is None:
        return ""
    words = []
    if template.args:
        command = template.args if len(template.args) <= 60 else template.args[:59] + "…"
        words.append(f"starts with its command {command}")
    if template.registry:
        words.append("pulls the image with its registry login")
    if template.start_jupyter:
        words.append("starts Jupyter (RunPod puts a JUPYTER_PASSWORD in the env)")
    if template.cuda_versions:
        words.append(cuda_words(template.cuda_versions))
    return template.name + (": " + "; ".join(words) if words else "")


def fetch_templates(api: RunPodApi, wanted: str | None) -> tuple[tuple[tuple[str, Template], ...], str, bool]:
    """Blocking: the account's templates, then RunPod's official ones; pod templates only (not serverless, not
    CPU). A prefill's template in neither list (a community one, or one deleted since) is asked for by id.
    Returns each with whose it is ("yours" or "RunPod"), what could not be read, and whether `wanted` is gone."""
    found: list[tuple[str, Template]] = []
    failed: list[str] = []
    gone = False
    lists: tuple[tuple[str, Callable[[], tuple[Template, ...]]], ...] = (
        ("yours", api.templates),
        ("RunPod", lambda: api.public_templates("official")),
    )
    for whose, fetch in lists:
        try:
            found += [(whose, t) for t in fetch() if not t.serverless and t.category != "CPU"]
        except ApiError as e:
            failed.append(f"cannot load {'your' if whose == 'yours' else whose + chr(39) + 's'} templates: {e}")
    if wanted is not None and all(t.id != wanted for _, t in found):
        try:
            template = api.template(wanted)
        except ApiNotFound:
            gone = True
        except ApiError as e:
            failed.append(f"cannot read template {wanted}: {e}")
        else:
            found.append(("RunPod" if template.public else "yours", template))
    return tuple(found), "; ".join(failed), gone


class TemplateSwitch:
    """Which template's values are in the form's fields, and what the fields held before it."""

    def __init__(self, applied: str | None = None, before: TemplateFields | None = None) -> None:
        self.applied = applied  # the template whose values are in the fields now
        self.before = before  # the fields before it was applied, or a prefill's

    def apply(self, template: Template, now: TemplateFields, on_volume: bool) -> TemplateFields:
        """The fields with the template's values; what the template leaves out is left out (no ports, no volume).
        Env merges: the template's lines, then what the box held (its values win for the same key). On a network
        volume the volume fields stay. Raises ValueError (nothing changed) for a template RunPod would refuse."""
        fill = template_fill(template)
        self.before, self.applied = now, template.id
        filled = template_fields(fill)
        keys = {env_key(line) for line in now.env}
        return dataclasses.replace(
            filled,
            volume=filled.volume if not on_volume else now.volume,
            mount=filled.mount if not on_volume else now.mount,
            env=(*(line for line in filled.env if env_key(line) not in keys), *now.env),
            hidden=(*(kv for kv in filled.hidden if kv[0] not in keys), *now.hidden),
        )

    def clear(
        self, templates: Mapping[str, Template], now: TemplateFields, on_volume: bool
    ) -> tuple[TemplateFields | None, str]:
        """Take back what the applied template set and the user did not change: those fields get what they held
        before it (a prefill's values), its env lines and hidden env go, and what no box shows (its start command,
        Jupyter, CUDA constraint, registry login) goes whatever the fields hold. Returns the fields to put (None:
        leave them) and the note saying what was taken back and what was kept."""
        name, self.applied = self.applied, None
        before, self.before = self.before or NO_TEMPLATE, None
        template = templates.get(name or "")
        try:
            filled = template_fields(template_fill(template)) if template is not None else None
        except ValueError:
            filled = None  # never applied: its values were refused
        if filled is None:
            return None, f"template {name} cleared: its values are not known, so the fields keep what they hold"
        back: dict[str, object] = {}
        removed: list[str] = []
        kept: list[str] = []
        for field, words in FIELD_WORDS.items():
            if field == "volume" and on_volume:
                continue  # the network volume set it to 0, not the template
            theirs, mine = getattr(filled, field), getattr(before, field)
            if theirs == mine:
                continue
            if field in TYPED and getattr(now, field) != theirs:
                if getattr(now, field) != mine:
                    kept.append(words)
                continue
            # no box shows the others: the user cannot have changed them
            back[field] = mine
            if getattr(now, field) != mine or field in FROM_LINK:
                removed.append(words)
        added = [line for line in filled.env if line not in before.env]
        env = tuple(line for line in now.env if line not in added)
        removed += [f"env {env_key(line)}" for line in added if line in now.env]
        kept += [f"env {env_key(line)}" for line in added if line not in now.env and env_key(line) in map(env_key, env)]
        added_hidden = [kv for kv in filled.hidden if kv not in before.hidden]
        hidden = tuple(kv for kv in now.hidden if kv not in added_hidden)
        removed += [f"env {k} (not shown)" for k, v in added_hidden if (k, v) in now.hidden]
        fields = dataclasses.replace(now, env=env, hidden=hidden, **back)  # type: ignore[arg-type]
        what = f"template {template.name if template is not None else name} cleared"
        what += f": took back its {', '.join(removed)}" if removed else ": it had set nothing still in the fields"
        return fields, what + (f"; kept what you changed: {', '.join(kept)}" if kept else "")
