"""RunPod's templates (`/v2/templates`, `/v2/catalog/templates`): a container's image, disks, ports and env, kept
under a name to launch pods from (docs/runpod-facts.md#templates)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from podtui.core.pod import JsonFields, PayloadError


@dataclass(frozen=True)
class Template:
    id: str
    name: str
    image: str
    disk_gb: int | None = None  # container disk
    volume_gb: int | None = None  # the persistent mount's size, when it has one
    volume_path: str | None = None
    ports: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # may hold values: never in a traceback
    args: str = ""  # the start command: arguments to the image's entrypoint
    registry: str | None = None  # the registry credential's id, for a private image; RunPod shows only your own
    public: bool = False
    serverless: bool = False
    category: str | None = None  # CPU, NVIDIA, AMD
    start_ssh: bool = True
    start_jupyter: bool = False
    cuda_versions: tuple[str, ...] = ()  # () means any

    def matches(self, ref: str) -> bool:
        return ref in (self.id, self.name)


def parse_template(raw: object, problems: list[str]) -> Template | None:
    if not isinstance(raw, Mapping):
        problems.append(f"a template record is not an object ({type(raw).__name__}); skipped")
        return None
    template_id = raw.get("id")
    if not isinstance(template_id, str) or not template_id:
        problems.append("a template record has no id; skipped")
        return None
    where = f"template {template_id}"
    f = JsonFields(raw, where, problems)
    image = f.text("image")
    if not image:
        problems.append(f"{where}: no image; skipped")
        return None
    persistent = JsonFields(
        JsonFields(f.mapping("mounts") or {}, where + ".mounts", problems).mapping("persistent") or {},
        where + ".mounts.persistent",
        problems,
    )
    env_raw = f.mapping("env") or {}
    env = tuple((k, v) for k, v in env_raw.items() if isinstance(k, str) and isinstance(v, str))
    if len(env) != len(env_raw):
        problems.append(f"{where}: an env value is not text; left out")
    return Template(
        id=template_id,
        name=f.text("name") or template_id,
        image=image,
        disk_gb=f.whole("disk"),
        volume_gb=persistent.whole("size"),
        volume_path=persistent.text("path"),
        ports=tuple(p for p in f.items("ports") if isinstance(p, str)),
        env=env,
        args=f.text("args") or "",
        registry=f.text("registry") or None,
        public=f.flag("public"),
        serverless=f.flag("serverless"),
        category=f.text("category"),
        start_ssh=f.flag("startSsh") if "startSsh" in raw else True,
        start_jupyter=f.flag("startJupyter"),
        cuda_versions=tuple(v for v in f.items("allowedCudaVersions") if isinstance(v, str)),
    )


def parse_templates(payload: object) -> tuple[tuple[Template, ...], tuple[str, ...]]:
    """`{"templates": [...]}`; raises PayloadError when the list itself is missing."""
    items = payload.get("templates") if isinstance(payload, Mapping) else None
    if not isinstance(items, list):
        raise PayloadError("the answer has no templates list")
    problems: list[str] = []
    templates = tuple(t for raw in items if (t := parse_template(raw, problems)) is not None)
    return templates, tuple(problems)


def find_template(templates: Iterable[Template], ref: str) -> Template:
    """The template with this id, or the one with this name; LookupError in words when none or several match."""
    templates = tuple(templates)
    found = [t for t in templates if t.id == ref] or [t for t in templates if t.name == ref]
    if not found:
        raise LookupError(f"no template is called or has the id {ref!r}")
    if len(found) > 1:
        ids = ", ".join(t.id for t in found)
        raise LookupError(f"{len(found)} templates are called {ref!r} ({ids}): name one by its id")
    return found[0]
