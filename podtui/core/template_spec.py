"""A template from a pod's configuration: RunPod's CreateTemplateRequest body, built and checked before anything is
sent (docs/storage.md#templates-from-a-pod).

A template keeps its env in RunPod's account, readable by whoever can read the template (everyone, for a public
one). So podtui never puts a value that looks like a credential in one: each such key either becomes a reference to
a RunPod secret, `{{ RUNPOD_SECRET_<name> }}`, which RunPod fills in when a pod starts from the template (the secret
must exist on the account under that name: docs/storage.md#secret-references), or is left out. What looks like a
credential is what podtui hides everywhere else (`podtui.core.pod.redact_env`). A token of a kind podtui knows (a
known prefix, a JWT, a URL holding a password...) is never kept in clear; a value that only looks like one (a long
run of token characters, or a key whose name names a credential) is, when asked for by key (a warning is shown).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from podtui.core.demo_sandbox import SANDBOX_ENV
from podtui.core.lost_answer import LOOKUP_DELAYS, look_for_created
from podtui.core.pod import Pod, known_token, looks_like_credential
from podtui.core.pod_spec import MIN_VOLUME_GB, parse_ports
from podtui.core.template import Template

EnvChoice = Literal["keep", "reference", "omit"]
SecretsMode = Literal["reference", "omit"]
SECRETS_MODES: tuple[SecretsMode, ...] = ("reference", "omit")
MAX_TEMPLATE_NAME = 100
# RunPod sets these itself when a pod starts: PUBLIC_KEY from the account's keys (startSsh), and podtui's demo folder
# is the demo's own; neither belongs in a template.
INJECTED = frozenset({"PUBLIC_KEY", SANDBOX_ENV})
JUPYTER_PASSWORD = "JUPYTER_PASSWORD"  # startJupyter makes a fresh one unless env sets it

_REFERENCE = re.compile(r"\{\{\s*RUNPOD_SECRET_[A-Za-z0-9_.-]+\s*\}\}")


def looks_secret(key: str, value: str) -> bool:
    """Whether the pair looks like a credential: its key or its value (the rule podtui hides env values by)."""
    return looks_like_credential(key, value)


def may_keep_in_clear(key: str, value: str) -> bool:
    """The pair looks like a credential, but not a token of a kind podtui knows: only the key's name, or a long run
    of token characters (a hash, an id) does. The user may keep it in clear, warned."""
    return looks_secret(key, value) and not known_token(value) and not is_reference(value)


def is_reference(value: str) -> bool:
    """`{{ RUNPOD_SECRET_name }}`: a reference already, which holds no secret."""
    return _REFERENCE.fullmatch(value.strip()) is not None


def secret_name(key: str) -> str:
    """The RunPod secret a key refers to: the key in lower case (HF_TOKEN -> hf_token)."""
    return key.lower()


def secret_reference(key: str) -> str:
    return "{{ RUNPOD_SECRET_" + secret_name(key) + " }}"


def check_template_name(value: str) -> str:
    name = value.strip()
    if not name:
        raise ValueError("give the template a name")
    if len(name) > MAX_TEMPLATE_NAME:
        raise ValueError(f"a template name is at most {MAX_TEMPLATE_NAME} characters")
    if not name.isprintable():
        raise ValueError("a template name holds no newlines or control characters")
    return name


def template_env(pod: Pod) -> tuple[tuple[str, str], ...]:
    """The pod's env as a template may keep it: without what RunPod (or the demo) sets by itself."""
    return tuple((k, v) for k, v in pod.env if k not in INJECTED)


def default_choices(env: Iterable[tuple[str, str]], secrets: SecretsMode = "reference") -> dict[str, EnvChoice]:
    """Each key's choice when nobody picked one: a credential-looking value per `secrets`, the rest kept."""
    return {k: (secrets if looks_secret(k, v) and not is_reference(v) else "keep") for k, v in env}


@dataclass(frozen=True)
class TemplateDraft:
    """What will be sent, and what the user must be told: the secrets that must exist on the account (env key,
    secret name), the keys left out, and what a template cannot hold."""

    body: dict[str, object] = field(repr=False)
    references: tuple[tuple[str, str], ...] = ()
    omitted: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    kept_in_clear: tuple[str, ...] = ()  # keys that look like credentials (not known tokens), kept as asked

    def lines(self) -> list[str]:
        body = self.body
        env = body.get("env")
        keys = ", ".join(env) if isinstance(env, dict) and env else "none"
        mounts = body.get("mounts")
        persistent = mounts.get("persistent") if isinstance(mounts, dict) else None
        volume = (
            f"volume {persistent['size']} GB at {persistent['path']}" if isinstance(persistent, dict) else "no volume"
        )
        ports = body.get("ports")
        out = [
            f"name       {body['name']}",
            f"image      {body['image']}",
            f"disk       container {body.get('disk', '?')} GB, {volume}",
            f"ports      {','.join(ports) if isinstance(ports, list) and ports else 'none'}",
            f"env        {keys}",
            f"visible    {'public: every RunPod user can see it and its env' if body.get('public') else 'private'}",
        ]
        out += [f"secret     {key} = {{{{ RUNPOD_SECRET_{name} }}}}" for key, name in self.references]
        if self.omitted:
            out.append(f"left out   {', '.join(self.omitted)}")
        if self.kept_in_clear:
            out.append(f"in clear   {', '.join(self.kept_in_clear)}: {self.clear_warning()}")
        out += [f"note       {n}" for n in self.notes]
        return out

    def clear_warning(self) -> str:
        """What keeping credential-looking values in clear means; empty when none is."""
        if not self.kept_in_clear:
            return ""
        who = "every RunPod user" if self.body.get("public") else "whoever can read the template"
        return f"they look like credentials, kept in clear as asked: {who} can read them"

    def secrets_needed(self) -> str | None:
        """The sentence that tells which RunPod secrets pods from this template need; None when none."""
        if not self.references:
            return None
        names = ", ".join(name for _, name in self.references)
        return (
            f"pods from this template need these RunPod secrets on the account: {names} (RunPod console, "
            "Secrets; a missing one leaves its variable unset)"
        )


def template_from_pod(
    name: str,
    pod: Pod,
    secrets: SecretsMode = "reference",
    choices: Mapping[str, EnvChoice] | None = None,
    public: bool = False,
) -> TemplateDraft:
    """The CreateTemplateRequest for a template like `pod`: its image, container disk, volume, ports and env, each
    credential-looking value a secret reference or left out (`secrets`, or the key's own entry in `choices`).
    A credential-looking value that is no known token (`may_keep_in_clear`) is kept in clear when its entry in
    `choices` says "keep" (the draft's `kept_in_clear`, which the user must be warned of); a known token never is.
    Raises ValueError in words when the pod cannot make one (no image, a bad name, a clear secret asked for)."""
    name = check_template_name(name)
    if not pod.image:
        raise ValueError(f"RunPod did not say which image {pod.name} runs: no template can be made from it")
    env = template_env(pod)
    picked = {**default_choices(env, secrets), **(choices or {})}
    unknown = sorted(set(picked) - {k for k, _ in env})
    if unknown:
        raise ValueError(f"{pod.name} has no env key {', '.join(unknown)}")
    kept: dict[str, str] = {}
    references: list[tuple[str, str]] = []
    omitted: list[str] = []
    in_clear: list[str] = []
    for key, value in env:
        choice = picked[key]
        if choice == "keep":
            if looks_secret(key, value) and not is_reference(value):
                if not may_keep_in_clear(key, value):
                    raise ValueError(
                        f"{key} holds a known kind of token: podtui keeps it only as a secret reference, or not at all"
                    )
                in_clear.append(key)
            kept[key] = value
        elif choice == "reference":
            kept[key] = secret_reference(key)
            references.append((key, secret_name(key)))
        else:
            omitted.append(key)
    notes: list[str] = []
    body: dict[str, object] = {"name": name, "image": pod.image}
    if pod.container_disk_gb is not None and pod.container_disk_gb >= 1:
        body["disk"] = int(pod.container_disk_gb)
    if pod.network_volume:
        notes.append(
            f"the pod's network volume ({pod.network_volume}) is not kept: a template holds a volume of its own "
            "only; pick the network volume when creating a pod from it"
        )
    elif pod.volume_gb and pod.volume_gb >= MIN_VOLUME_GB:
        body["mounts"] = {"persistent": {"size": int(pod.volume_gb), "path": pod.volume_mount_path or "/workspace"}}
    try:
        ports = parse_ports(pod.ports_spec or "")
    except ValueError as e:
        raise ValueError(f"{pod.name}'s ports cannot go in a template: {e}") from None
    body["ports"] = [p for p in ports.split(",") if p]
    body["env"] = kept
    body["category"] = "CPU" if pod.gpu_count == 0 else "NVIDIA"
    body["public"] = public
    body["serverless"] = False
    body["startSsh"] = True
    # RunPod's default is a fresh Jupyter password on every pod; only a pod that had one gets it
    body["startJupyter"] = any(k == JUPYTER_PASSWORD for k, _ in pod.env)
    if public and kept:
        notes.append("a public template's env is readable by every RunPod user")
    return TemplateDraft(body, tuple(references), tuple(omitted), tuple(notes), tuple(in_clear))


def find_created_template(
    listing: Callable[[], Iterable[Template]],
    name: str,
    known_ids: Collection[str] | None,
    delays: Sequence[float] = LOOKUP_DELAYS,
    sleep: Callable[[float], None] = time.sleep,
) -> Template | None:
    """After a create whose answer was lost: the template called `name` that was not among `known_ids` (None when
    unknown: then any of that name counts). None only when the last look found none; raises its ApiError when it
    failed."""
    return look_for_created(
        listing, lambda t: t.name == name and (known_ids is None or t.id not in known_ids), delays, sleep
    )
