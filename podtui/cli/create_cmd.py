"""`podtui create`: a new pod, its spec, live stock and hourly cost shown before it is created.

Several GPU types, clouds and data centres give RunPod candidates in order: the create tries each until one is
placed (docs/runpod-facts.md#rest-v2, docs/launch.md#candidates); --volume puts the pod on a network volume, in
its data centre (docs/launch.md#network-volumes), and --template starts from a template (docs/launch.md#templates).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

from podtui.cli.session import UsageError, open_session
from podtui.core import actions, units
from podtui.core.api import ApiError, ApiNotFound
from podtui.core.gpu import Cloud, GpuCatalogue, GpuType, Stock
from podtui.core.paths import Paths
from podtui.core.pod import PodStatus, redact_env
from podtui.core.pod_spec import (
    CONTAINER_GB_RANGE,
    DEFAULT_CONTAINER_GB,
    DEFAULT_IMAGE,
    DEFAULT_MOUNT,
    DEFAULT_PORTS,
    DEFAULT_VOLUME_GB,
    IMAGES,
    LOOKUP_DELAYS,
    MAX_CHOICES,
    MIN_VOLUME_GB,
    Candidates,
    Choice,
    CreatedPod,
    CreateUncertain,
    PodSpec,
    SpecError,
    as_created,
    check_count,
    check_data_centre,
    check_gb,
    check_image,
    check_mount,
    check_name,
    check_volume_gb,
    env_from_host,
    find_created,
    link_template,
    merge_env,
    parse_env_file,
    parse_ports,
    plan_candidates,
    spec_cost,
    spec_from_candidates,
    stocked_words,
    template_fill,
    unlinked_words,
)
from podtui.core.services import Services
from podtui.core.template import Template, find_template
from podtui.core.visible import visible
from podtui.core.volume import NetworkVolume, find_volume

ENV_HELP = """\
Environment variables:
  --env KEY=VALUE   sets KEY on the pod (the value is then in your shell history and visible in `ps`)
  --env KEY         copies KEY's value from this machine's environment, as docker does: the way to pass
                    a secret, e.g. HF_TOKEN set by your shell profile (or `read -rs HF_TOKEN; export
                    HF_TOKEN`), then --env HF_TOKEN; an error if KEY is not set here
  --env-file FILE   KEY=VALUE lines, taken literally (no quotes removed, no $expansion); lines starting
                    with # and blank lines are skipped; a bare KEY line copies it from this machine.
                    --env wins over --env-file for the same KEY. Values that look like credentials are
                    shown hidden in the summary and in --json.

Candidates (tried in order until RunPod places one; docs/launch.md):
  --gpu "RTX 4090,RTX 3090"   GPU types, first choice first (a comma list, or repeat --gpu)
  --cloud any                 each type on community cloud, then on secure cloud
  --data-centre EU-RO-1,US-KS-2
                              each type and cloud in EU-RO-1, then in US-KS-2 (a comma list, or repeat
                              the flag, in order); one data centre a request. A data centre where RunPod's
                              catalogue shows none free is skipped and said. Without it RunPod picks one.
  --volume NAME|ID            the pod mounts that network volume (at --volume-path) instead of a volume of
                              its own, and goes to the volume's data centre, the only one it can use
  --template NAME|ID          your template of that name or id, else RunPod's public one: its image, disk,
                              ports, env and volume fill the flags you did not give (--env adds to its env)
Live stock for each candidate is shown before asking; afterwards, which candidate RunPod placed and why
each earlier one was refused, one line each (--json: "candidate" and "refused")."""


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui create`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = (
        "Create a GPU pod. 22/tcp is published by default, so direct SSH (exec, SFTP) works. "
        "Give several GPU types, clouds or data centres and RunPod is asked for each in turn until one is "
        "placed (see Candidates below).\n\nRunPod's PyTorch images:\n  " + "\n  ".join(IMAGES)
    )
    p.epilog = ENV_HELP
    p.add_argument(
        "--gpu",
        required=True,
        action="append",
        metavar="TYPE[,TYPE]",
        help='GPU type, as `podtui gpus` lists it ("RTX 3090"); a comma list or repeated: tried in that order',
    )
    p.add_argument("--count", default="1", metavar="N", help="GPUs (1-8, default 1)")
    p.add_argument(
        "--cloud",
        choices=["community", "secure", "any"],
        default=None,
        help="default community (any with --volume); any: community cloud, then secure, for each --gpu",
    )
    p.add_argument(
        "--data-centre",
        "--data-center",
        dest="data_centres",
        action="append",
        default=[],
        metavar="ID[,ID]",
        help="data centres to try, in this order (e.g. EU-RO-1,US-KS-2; or repeat); default: RunPod picks",
    )
    p.add_argument("--volume", metavar="NAME|ID", help="put the pod on this network volume (see `podtui volumes`)")
    p.add_argument("--template", metavar="NAME|ID", help="start from this template (yours, else RunPod's public)")
    p.add_argument("--image", default=None, help=f"container image (default {DEFAULT_IMAGE}, or the template's)")
    p.add_argument("--name", help="pod name (default podtui-<gpu>)")
    p.add_argument(
        "--container-gb",
        default=None,
        metavar="GB",
        help=f"container disk, wiped on stop (default {DEFAULT_CONTAINER_GB}, or the template's)",
    )
    p.add_argument(
        "--volume-gb",
        default=None,
        metavar="GB",
        help=f"volume, kept while stopped (default {DEFAULT_VOLUME_GB}, or the template's, or 0 on a network "
        f"volume; 0 for none, else at least {MIN_VOLUME_GB})",
    )
    p.add_argument(
        "--volume-path", default=None, metavar="PATH", help=f"where the volume is mounted (default {DEFAULT_MOUNT})"
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY[=VALUE]",
        help="environment variable (repeat); a bare KEY copies its value from this machine's "
        "environment, so secrets stay out of shell history and `ps`",
    )
    p.add_argument(
        "--env-file", action="append", default=[], metavar="FILE", help="KEY=VALUE lines (# comments); see below"
    )
    p.add_argument("--ports", default=None, help=f"exposed ports (default {DEFAULT_PORTS}, or the template's)")
    p.add_argument(
        "--no-direct-ssh",
        "--no-public-ip",
        dest="no_direct_ssh",
        action="store_true",
        help="leave 22/tcp out of the ports: no direct SSH, only RunPod's gateway console",
    )
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument("--wait", action="store_true", help="wait until the pod runs")
    p.add_argument("--wait-timeout", type=float, default=900.0, metavar="S", help="give up waiting after S s")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout (the summary goes to stderr)")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    with open_session(demo, paths) as session:
        return cmd_create(session, args, read_only or session.config.read_only)


def _env(args: argparse.Namespace, environ: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    files = []
    for name in getattr(args, "env_file", None) or []:
        try:
            text = Path(name).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"cannot read {name}: {getattr(e, 'strerror', None) or e}") from None
        files.append(parse_env_file(text, environ, name))
    return merge_env(*files, env_from_host(args.env, environ))


def _listed(values: list[str]) -> list[str]:
    """Comma lists and repeated flags, in the order given, each once."""
    return list(dict.fromkeys(part.strip() for value in values for part in value.split(",") if part.strip()))


def _gpus(catalogue: GpuCatalogue, refs: list[str]) -> list[GpuType]:
    gpus: list[GpuType] = []
    problems: list[str] = []
    for ref in _listed(refs):
        try:
            gpus.append(catalogue.find(ref))
        except LookupError as e:
            problems.append(str(e))
    if problems or not gpus:
        raise UsageError("; ".join(problems) or "--gpu: which GPU type?")
    return gpus


def _clouds(args: argparse.Namespace, volume: NetworkVolume | None) -> list[Cloud]:
    cloud = args.cloud or ("any" if volume is not None else "community")
    return [Cloud.COMMUNITY, Cloud.SECURE] if cloud == "any" else [Cloud(cloud.upper())]


def _candidates(
    catalogue: GpuCatalogue,
    args: argparse.Namespace,
    count: int,
    centres: list[str],
    volume: NetworkVolume | None,
) -> Candidates:
    """The candidates in order; a usage error naming what is free where asked when none is left."""
    return plan_or_refuse(catalogue, _gpus(catalogue, args.gpu), _clouds(args, volume), count, centres, volume)


def plan_or_refuse(
    catalogue: GpuCatalogue,
    gpus: list[GpuType],
    clouds: list[Cloud],
    count: int,
    centres: list[str],
    volume: NetworkVolume | None,
) -> Candidates:
    """`create` and `recreate`'s candidates (docs/launch.md#candidates): a UsageError naming what is free where
    asked when none is left (on a network volume, in its data centre)."""
    planned = plan_candidates(gpus, clouds, count, centres)
    if not planned.choices:
        why = "; ".join(planned.skipped)
        if volume is not None:
            where = f"{volume.name} is in {volume.data_centre}"
            raise UsageError(
                f"no GPU choice can go where {where} ({why}); {stocked_words(catalogue, centres[0], count)}"
            )
        if centres:
            free = "; ".join(stocked_words(catalogue, c, count) for c in centres)
            raise UsageError(f"no GPU choice is free in the data centres asked for ({why}); {free}")
        raise UsageError(why + ("; try the other one" if len(clouds) == 1 else ""))
    if len(planned.choices) > MAX_CHOICES:
        raise UsageError(
            f"at most {MAX_CHOICES} GPU type, cloud and data centre candidates ({len(planned.choices)} given)"
        )
    return planned


def _stock(choice: Choice, gpu: GpuType) -> Stock:
    if choice.data_centre_id:
        return gpu.stock_in(choice.cloud, choice.gpu_count, choice.data_centre_id)
    return gpu.stock_for(choice.cloud, choice.gpu_count)


def _stock_lines(spec: PodSpec, gpus: dict[str, GpuType]) -> list[str]:
    """Live stock for each candidate (where RunPod may place it: the data centres that have it), then what the
    stock says about the create."""
    stocks = [(c, _stock(c, gpus[c.gpu_type_id])) for c in spec.choices]
    lines = []
    for c, stock in stocks:
        where = (
            ""
            if c.data_centre_id or not stock.available
            else f" ({gpus[c.gpu_type_id].where_words(c.cloud, c.gpu_count, 4)})"
        )
        lines.append(f"stock      {c.label}: {stock.label}{where}")
    if all(stock is Stock.NONE for _, stock in stocks):
        which = "any choice" if len(stocks) > 1 else f"{spec.gpu_count} x {gpus[spec.gpu_type_id].display_name}"
        where = "" if len(stocks) > 1 else f" on {spec.cloud.label} cloud"
        lines.append(f"warning    RunPod shows no stock of {which}{where} right now: creating will probably be refused")
        return lines
    for choice, stock in stocks:
        if stock is Stock.NONE:
            lines.append(f"note       RunPod shows no stock of {choice.label} right now")
        elif stock is Stock.UNKNOWN:
            lines.append(f"note       RunPod did not say whether {choice.label} is free right now")
    return lines


def _volume(session: Services, args: argparse.Namespace) -> NetworkVolume | None:
    if not args.volume:
        return None
    try:
        return find_volume(session.api.network_volumes(), args.volume.strip())
    except LookupError as e:
        raise UsageError(f"--volume: {e} (podtui volumes lists them)") from None


def _template(session: Services, args: argparse.Namespace) -> Template | None:
    """The account's template of that name or id first, then RunPod's public ones (official, then community)."""
    if not args.template:
        return None
    ref = args.template.strip()
    for source in (
        session.api.templates,
        lambda: session.api.public_templates("official"),
        lambda: session.api.public_templates("community"),
    ):
        try:
            return find_template(source(), ref)
        except LookupError as e:
            if "no template" not in str(e):  # several of that name: naming one by id is the user's call
                raise UsageError(f"--template: {e}") from None
    raise UsageError(
        f"--template: neither your templates nor RunPod's public ones have one called or with the id {ref!r}"
    )


def build_spec(
    session: Services, args: argparse.Namespace, environ: Mapping[str, str] = os.environ
) -> tuple[PodSpec, str]:
    """The spec from the arguments, every field checked; all problems reported at once."""
    catalogue = session.api.gpu_types()
    volume = _volume(session, args)
    template = _template(session, args)
    problems: dict[str, str] = {}
    try:
        fill = template_fill(template) if template is not None else None
    except ValueError as e:
        raise UsageError(f"--template: {e}") from None
    try:
        count = check_count(args.count)
    except ValueError as e:
        problems["--count"], count = str(e), 1  # said with the others below
    centres: list[str] = []
    try:
        centres = [check_data_centre(d) for d in _listed(args.data_centres)]
    except ValueError as e:
        problems["--data-centre"] = str(e)
    if volume is not None:
        if centres and centres != [volume.data_centre]:
            problems["--data-centre"] = (
                f"{volume.name} is in {volume.data_centre}: a pod on it can only be there, not in {', '.join(centres)}"
            )
        centres = [volume.data_centre]
    candidates = _candidates(catalogue, args, count, centres, volume)
    gpu = catalogue.find(candidates.choices[0].gpu_type_id)

    def given(value: str | None, from_template: object, default: object) -> object:
        return value if value is not None else from_template if fill is not None else default

    values: dict[str, Any] = {}
    fields: dict[str, Callable[[], object]] = {
        "--name": lambda: check_name(
            args.name if args.name is not None else "podtui-" + gpu.display_name.lower().replace(" ", "-")
        ),
        "--image": lambda: check_image(str(given(args.image, fill and fill.image, DEFAULT_IMAGE))),
        "--container-gb": lambda: check_gb(
            given(args.container_gb, fill and fill.container_gb, DEFAULT_CONTAINER_GB), CONTAINER_GB_RANGE
        ),
        "--volume-gb": lambda: _volume_gb(args, volume, fill.volume_gb if fill is not None else None),
        "--volume-path": lambda: check_mount(
            str(given(args.volume_path, fill and fill.volume_mount_path, DEFAULT_MOUNT))
        ),
        "--ports": lambda: _ports(args, fill.ports if fill is not None else None),
        "--env": lambda: merge_env(fill.env if fill is not None else (), _env(args, environ)),
    }
    for flag, check in fields.items():
        try:
            values[flag] = check()
        except ValueError as e:
            problems[flag] = str(e)
    if problems:  # what the user typed: a usage error (exit 2), not something RunPod sent
        raise UsageError(str(SpecError(problems)))
    base = PodSpec(
        values["--name"],
        gpu.id,
        count,
        image=values["--image"],
        container_gb=values["--container-gb"],
        volume_gb=values["--volume-gb"],
        volume_mount_path=values["--volume-path"],
        ports=values["--ports"],
        env=values["--env"],
        start_ssh=fill.start_ssh if fill is not None else True,
        data_centre_ids=(volume.data_centre,) if volume is not None else (),
        network_volume_id=volume.id if volume is not None else None,
        template_id=template.id if template is not None else None,
        args=fill.args if fill is not None else "",  # kept when the spec goes without the template
        registry=fill.registry if fill is not None else None,
    )
    spec, unlinked = link_template(spec_from_candidates(base, candidates), template)
    gpus = {g.id: g for g in catalogue.types}
    costs = [
        spec_cost(gpus[c.gpu_type_id], c.cloud, count, spec.container_gb, spec.volume_gb, volume) for c in spec.choices
    ]
    first = costs[0]
    assert first is not None  # choices have a price on their cloud
    summary = [
        *spec.lines(volume, template),
        *([unlinked_words(template, unlinked)] if template is not None and unlinked else []),
        *(f"skipped    {m}" for m in candidates.skipped),
        f"cost       {first.line()}",
    ]
    dearest = max(c.per_hr for c in costs if c is not None)
    if dearest > first.per_hr:
        summary.append(f"           up to ${dearest:.3f}/hr if RunPod places a later choice")
    summary += _stock_lines(spec, gpus)
    if not spec.direct_ssh:
        summary.append("note       without 22/tcp published there is no direct SSH (no exec, no SFTP)")
    return spec, "\n".join(summary)


def _volume_gb(args: argparse.Namespace, volume: NetworkVolume | None, from_template: int | None) -> int:
    if volume is not None:
        if args.volume_gb is not None and check_volume_gb(args.volume_gb):
            raise ValueError(f"the pod is on network volume {volume.name}: no volume of its own (leave it out, or 0)")
        return 0
    if args.volume_gb is not None:
        return check_volume_gb(args.volume_gb)
    return from_template if from_template is not None else DEFAULT_VOLUME_GB


def _ports(args: argparse.Namespace, from_template: str | None) -> str:
    given = args.ports if args.ports is not None else from_template if from_template is not None else DEFAULT_PORTS
    ports = parse_ports(given)
    if args.no_direct_ssh:
        ports = ",".join(p for p in ports.split(",") if p and p != "22/tcp")
    return ports


def _ask(question: str, shown: TextIO) -> bool:
    """Asked on `shown` (stderr with --json, so stdout stays one JSON object), answered on stdin."""
    if not sys.stdin.isatty():
        raise UsageError("not asking on a non-interactive input: add --yes to create the pod")
    shown.write(f"{question} [y/N] ")
    shown.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def _known_ids(session: Services) -> frozenset[str] | None:
    """The pods there before creating: after an unanswered create, a new pod of the same name is ours."""
    try:
        return frozenset(p.id for p in session.api.fetch_snapshot().pods)
    except ApiError:
        return None


def _create(session: Services, spec: PodSpec, shown: TextIO, sleep: Callable[[float], None]) -> CreatedPod:
    """Create once. When RunPod's answer is lost the pod may exist: look it up by name rather than ever
    suggesting a blind retry, which could make (and bill) a second pod."""
    known = _known_ids(session)
    try:
        return session.api.create_pod(spec)
    except CreateUncertain as e:
        shown.write(f"{visible(str(e))}; looking for {spec.name} on the account…\n")
        shown.flush()
        waited = sum(LOOKUP_DELAYS)
        try:
            pod = find_created(session.api.fetch_snapshot, spec.name, known, LOOKUP_DELAYS, sleep)
        except ApiError as err:
            raise ApiError(
                f"{e}, and podtui could not check ({err}). Look at `podtui pods` (or RunPod's console) "
                "before creating it again: a second create could make a second pod"
            ) from None
        if pod is None:
            raise ApiError(
                f"{e}; no new pod named {spec.name} is on the account yet ({waited:g} s after the create). RunPod "
                "may still be creating it: look at `podtui pods` in a minute before running the command again "
                "(a second create could make a second pod)"
            ) from None
        older = (
            " (the pod list before creating was not available: check it is not an older pod of that name)"
            if known is None
            else ""
        )
        shown.write(f"created after all: {visible(pod.name)} ({visible(pod.id)}){older}\n")
        shown.flush()
        return as_created(pod)


def cmd_create(
    session: Services,
    args: argparse.Namespace,
    read_only: bool,
    out: TextIO | None = None,
    sleep: Callable[[float], None] = time.sleep,
    environ: Mapping[str, str] = os.environ,
) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    actions.guard(read_only, "creating a pod")
    spec, summary = build_spec(session, args, environ)
    shown = sys.stderr if args.json else out
    shown.write(summary + "\n")
    shown.flush()
    if not args.yes and not _ask("Create?", shown):
        shown.write("cancelled; nothing was created\n")
        return 1
    created = _create(session, spec, shown, sleep)
    for line in created.refused:  # the choices RunPod could not place before this one
        shown.write(f"not placed: {visible(line)}\n")
    if created.candidate is not None and len(spec.choices) > 1:
        which = spec.choices.index(created.candidate) + 1
        shown.write(f"placed:    candidate {which} of {len(spec.choices)}, {visible(created.candidate.label)}\n")
    if not args.json:
        placed = (
            f" on {created.gpu_count or spec.gpu_count} x {visible(created.gpu_type_id)}"
            f" ({visible((created.cloud or '?').lower())} cloud{_where(created)})"
            if created.gpu_type_id
            else ""
        )
        out.write(
            f'created pod "{visible(created.id)}" ({visible(created.name or spec.name)}){placed}: '
            f"{visible(created.status or PodStatus.PROVISIONING.value)} "
            f"at {units.rate(created.cost_per_hr)}; billing starts once it runs\n"
        )
        out.flush()
    status = created.status or PodStatus.PROVISIONING.value
    if args.wait:
        status = _wait(session, created, args.wait_timeout, out if not args.json else sys.stderr, sleep)
    if args.json:
        json.dump(_as_json(created, spec, status), out, indent=2)
        out.write("\n")
    return 0 if status == "RUNNING" or not args.wait else 1


def _where(created: CreatedPod) -> str:
    return f", {visible(created.data_centre_id)}" if created.data_centre_id else ""


def _as_json(created: CreatedPod, spec: PodSpec, status: str) -> dict[str, object]:
    """The created pod, where RunPod placed it, the choices it could not place, and the spec (env values that
    look like credentials hidden)."""
    return {
        "id": created.id,
        "name": created.name or spec.name,
        "status": status,
        "cost_per_hr": created.cost_per_hr,
        "pod_host_id": created.pod_host_id,
        "gpu_type_id": created.gpu_type_id,
        "gpu_count": created.gpu_count,
        "cloud": created.cloud,
        "data_centre_id": created.data_centre_id,
        # the spec's choice RunPod placed (null when the pod was found after an unanswered create), and one line
        # for each candidate before it: which, and why RunPod refused it
        "candidate": None
        if created.candidate is None
        else {"index": spec.choices.index(created.candidate), **created.candidate.as_json()},
        "refused": list(created.refused),
        "spec": {
            "name": spec.name,
            "gpu_type_id": spec.gpu_type_id,
            "gpu_count": spec.gpu_count,
            "cloud": spec.cloud.value,
            "data_centre_id": spec.data_centre_id,
            "fallbacks": [c.as_json() for c in spec.fallbacks],
            "network_volume_id": spec.network_volume_id,
            "template_id": spec.template_id,
            "start_jupyter": spec.start_jupyter,
            "cuda_versions": list(spec.cuda_versions),
            "args": spec.args,
            "registry": spec.registry,
            "image": spec.image,
            "container_gb": spec.container_gb,
            "volume_gb": spec.volume_gb,
            "volume_mount_path": spec.volume_mount_path,
            "ports": spec.ports,
            "start_ssh": spec.start_ssh,
            "data_centre_ids": list(spec.data_centre_ids),
            "env": dict(redact_env(spec.env)),
        },
    }


def _wait(session: Services, created: CreatedPod, timeout_s: float, out: TextIO, sleep: Callable[[float], None]) -> str:
    """Poll the pod until RUNNING with a runtime (RunPod gives none while the container starts)."""
    deadline = time.monotonic() + timeout_s
    last = ""
    while True:
        try:
            pod = session.api.fetch_pod(created.id)
        except ApiNotFound:
            out.write("RunPod does not know the new pod (yet)\n")
            state = "?"
        except ApiError as e:
            out.write(f"could not check on the pod: {visible(str(e))}\n")
            state = "?"
        else:
            state = pod.state
            if pod.status is PodStatus.RUNNING and pod.live_runtime is not None:
                ssh = pod.direct_ssh_command or pod.proxy_ssh_command or "no SSH yet"
                out.write(f"running; {ssh}\n")
                return "RUNNING"
            if pod.status in (PodStatus.EXITED, PodStatus.ERROR, PodStatus.TERMINATED):
                out.write(
                    f"the pod is {pod.status.value}: it did not start (its system log in RunPod's console says why)\n"
                )
                return str(pod.status.value)
        if state != last:
            out.write(f"waiting: {state}\n")
            out.flush()
            last = state
        if time.monotonic() > deadline:
            out.write(f"still not running after {timeout_s:g} s; it may yet start: podtui pods\n")
            return state
        sleep(2.0)
