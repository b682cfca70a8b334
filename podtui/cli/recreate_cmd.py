"""`podtui recreate REF`: a pod created again as podtui last saw it, a terminated one too (docs/storage.md#recreate).

REF is a pod on the account now (its spec is read from RunPod's record) or one podtui remembers
(`podtui.core.launch_memory`). The spec and its cost per hour are shown, and asked about, as `podtui create` shows
them; the pod is then made through the same create. Env values that look like credentials are not remembered: each
comes from this machine's environment (`--secrets env`, the default: left out, and said, when it is not set here), a
RunPod secret reference (`--secrets reference`), or nothing (`--secrets omit`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TextIO

from podtui.cli.create_cmd import _as_json, _ask, _create, _stock_lines, plan_or_refuse
from podtui.cli.session import UsageError, open_session
from podtui.core import actions, units
from podtui.core.actions import ActionRefused
from podtui.core.api import ApiNotFound
from podtui.core.gpu import Cloud, GpuType
from podtui.core.launch_memory import (
    SECRET_SOURCES,
    LaunchMemory,
    LaunchRecord,
    NotLaunchable,
    SecretSource,
    record_of,
    remember_quietly,
)
from podtui.core.paths import Paths
from podtui.core.pod import PodStatus, Snapshot
from podtui.core.pod_spec import (
    Choice,
    PodSpec,
    SpecError,
    link_template,
    spec_cost,
    spec_from_candidates,
    unlinked_words,
)
from podtui.core.services import Services
from podtui.core.template import Template
from podtui.core.visible import visible
from podtui.core.volume import NetworkVolume


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui recreate`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "Create a pod again as podtui last saw it: image, GPU, cloud, disks, volume or network volume, ports, env, "
        "template. REF is a pod's name or id, on the account or terminated (podtui remembers the last 200 pods it "
        "has listed). The spec and its cost per hour are shown first."
    )
    p.add_argument("ref", metavar="REF", help="the pod's name or id")
    p.add_argument(
        "--gpu",
        action="append",
        default=[],
        metavar="TYPE",
        help="another GPU type than the pod had (repeat: choices tried in order)",
    )
    p.add_argument(
        "--cloud",
        choices=["community", "secure", "any"],
        default=None,
        help="another cloud than the pod had; any: community cloud, then secure",
    )
    p.add_argument(
        "--secrets",
        choices=SECRET_SOURCES,
        default="env",
        help="where credential-looking env values come from (podtui never keeps them): this machine's "
        "environment (default; left out when not set), RunPod secret references, or nowhere",
    )
    p.add_argument("--name", help="another name for the new pod")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout (the summary goes to stderr)")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    with open_session(demo, paths) as session:
        return cmd_recreate(
            session,
            args.ref,
            args.gpu,
            args.secrets,
            args.yes,
            args.json,
            read_only or session.config.read_only,
            name=args.name,
            cloud=args.cloud,
        )


def _spec_for(
    snap: Snapshot, memory: LaunchMemory, ref: str, source: SecretSource, environ: Mapping[str, str]
) -> tuple[PodSpec, list[str]]:
    """The spec, from the live pod when it is on the account, else from what podtui remembers; and lines saying
    where it came from and where each secret's value does."""
    ref = ref.strip()
    exact = [p for p in snap.pods if ref in (p.id, p.name) and p.status is not PodStatus.TERMINATED]
    if len(exact) > 1:
        raise ActionRefused(f"{len(exact)} pods on the account are called {visible(ref)!r}: name one by its id")
    if exact:
        live = exact[0]
        try:
            # its credentials go through --secrets as a remembered pod's do, never copied from RunPod's answer
            spec, secrets = record_of(live, snap.fetched_at).launch_spec(source, environ)
        except NotLaunchable as e:
            raise ActionRefused(visible(str(e))) from None
        note = f"from        {visible(live.name)} ({visible(live.id)}), on the account now ({live.state})"
        lines = [note, "note        the pod is still there: this makes a second one"]
        return spec, lines + [f"secret      {visible(s)}" for s in secrets]
    try:
        record = memory.find(ref)
    except LookupError as e:
        raise ActionRefused(f"{e}, and no pod on the account is: `podtui pods` lists those that are") from None
    return _from_record(record, snap, source, environ)


def _from_record(
    record: LaunchRecord, snap: Snapshot, source: SecretSource, environ: Mapping[str, str]
) -> tuple[PodSpec, list[str]]:
    spec, secrets = record.launch_spec(source, environ)
    seen = units.ago(record.seen_at, snap.fetched_at)
    status = f", {visible(record.status)}" if record.status else ""
    lines = [f"from        {visible(record.name)} ({visible(record.pod_id)}), last seen {seen}{status}"]
    lines += [f"secret      {visible(s)}" for s in secrets]
    return spec, lines


def _with_gpus(spec: PodSpec, gpus: list[GpuType]) -> PodSpec:
    if not gpus:
        return spec
    first, *then = gpus
    fallbacks = tuple(Choice(g.id, spec.gpu_count, spec.cloud) for g in then)
    return replace(spec, gpu_type_id=first.id, fallbacks=fallbacks)


def _clouds(flag: str | None) -> list[Cloud]:
    if flag is None:
        return []
    return [Cloud.COMMUNITY, Cloud.SECURE] if flag == "any" else [Cloud(flag.upper())]


def _volume(session: Services, spec: PodSpec) -> NetworkVolume | None:
    """The network volume the spec mounts; refused in words when it is gone (its data went with it)."""
    if spec.network_volume_id is None:
        return None
    found = next((v for v in session.api.network_volumes() if v.id == spec.network_volume_id), None)
    if found is None:
        raise ActionRefused(
            f"the pod's network volume {visible(spec.network_volume_id)} is no longer on the account: "
            "`podtui create` makes a pod without it"
        )
    return found


def _template(session: Services, spec: PodSpec) -> tuple[PodSpec, Template | None, list[str]]:
    """The template the spec names; a template deleted since is dropped (the spec holds its values), and said."""
    if spec.template_id is None:
        return spec, None, []
    try:
        return spec, session.api.template(spec.template_id), []
    except ApiNotFound:
        gone = f"note        template {visible(spec.template_id)} is gone: the pod is made from the values above"
        return replace(spec, template_id=None), None, [gone]


def cmd_recreate(
    session: Services,
    ref: str,
    gpus: list[str],
    secrets: SecretSource = "env",
    yes: bool = False,
    as_json: bool = False,
    read_only: bool = False,
    out: TextIO | None = None,
    sleep: Callable[[float], None] = time.sleep,
    environ: Mapping[str, str] = os.environ,
    name: str | None = None,
    cloud: str | None = None,
) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    actions.guard(read_only, "creating a pod")
    snap = session.api.fetch_snapshot()
    memory = LaunchMemory.for_services(session)
    trouble = remember_quietly(memory, snap.pods, snap.fetched_at)
    if trouble:
        sys.stderr.write(f"podtui: {trouble}\n")
    spec, origin = _spec_for(snap, memory, ref, secrets, environ)
    catalogue = session.api.gpu_types()
    try:
        chosen = [catalogue.find(g) for g in gpus]
    except LookupError as e:
        raise UsageError(f"--gpu: {e}") from None
    spec = _with_gpus(spec, chosen)
    if name is not None:
        spec = replace(spec, name=name.strip())
    try:
        spec.validate()
    except SpecError as e:
        raise ActionRefused(f"the spec cannot be created as it is: {visible(str(e))}") from None
    volume = _volume(session, spec)
    spec, template, template_notes = _template(session, spec)
    by_id = {g.id: g for g in catalogue.types}
    missing = [c.gpu_type_id for c in spec.choices if c.gpu_type_id not in by_id]
    if missing:
        raise ActionRefused(
            f"RunPod no longer lists {', '.join(visible(m) for m in missing)}: choose another with --gpu"
        )
    # planned as `create --volume` plans: on a network volume each candidate names its data centre, and one
    # without stock there is left out (docs/launch.md#network-volumes)
    try:
        planned = plan_or_refuse(
            catalogue,
            [by_id[g] for g in dict.fromkeys(c.gpu_type_id for c in spec.choices)],
            _clouds(cloud) or list(dict.fromkeys(c.cloud for c in spec.choices)),
            spec.gpu_count,
            [volume.data_centre] if volume is not None else [],
            volume,
        )
    except UsageError as e:
        raise ActionRefused(f"{e}: choose another GPU type with --gpu, or another cloud with --cloud") from None
    spec, unlinked = link_template(spec_from_candidates(spec, planned), template)
    cost = spec_cost(by_id[spec.gpu_type_id], spec.cloud, spec.gpu_count, spec.container_gb, spec.volume_gb, volume)
    assert cost is not None  # a candidate has a price on its cloud
    summary = [*origin, *spec.lines(volume, template), *template_notes]
    summary += [unlinked_words(template, unlinked)] if template is not None and unlinked else []
    summary += [f"skipped    {m}" for m in planned.skipped] + [f"cost       {cost.line()}"]
    summary += _stock_lines(spec, {c.gpu_type_id: by_id[c.gpu_type_id] for c in spec.choices})
    shown = sys.stderr if as_json else out
    shown.write("\n".join(visible(line) for line in summary) + "\n")
    shown.flush()
    if not yes and not _ask("Create?", shown):
        shown.write("cancelled; nothing was created\n")
        return 1
    created = _create(session, spec, shown, sleep)
    for line in created.refused:
        shown.write(f"not placed: {visible(line)}\n")
    status = created.status or PodStatus.PROVISIONING.value
    if as_json:
        json.dump(_as_json(created, spec, status), out, indent=2)
        out.write("\n")
    else:
        out.write(
            f'created pod "{visible(created.id)}" ({visible(created.name or spec.name)}): {visible(status)} '
            f"at {units.rate(created.cost_per_hr)}; billing starts once it runs\n"
        )
    return 0
