"""`podtui create`: a new pod, its spec and hourly cost shown before it is created.

Several --gpu (or --cloud any) give RunPod choices in order: the create tries each until one is placed
(docs/runpod-facts.md#rest-v2)."""

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
    merge_env,
    parse_env_file,
    parse_ports,
    spec_cost,
)
from podtui.core.services import Services
from podtui.core.visible import visible

ENV_HELP = """\
Environment variables:
  --env KEY=VALUE   sets KEY on the pod (the value is then in your shell history and visible in `ps`)
  --env KEY         copies KEY's value from this machine's environment, as docker does: the way to pass
                    a secret, e.g. HF_TOKEN set by your shell profile (or `read -rs HF_TOKEN; export
                    HF_TOKEN`), then --env HF_TOKEN; an error if KEY is not set here
  --env-file FILE   KEY=VALUE lines, taken literally (no quotes removed, no $expansion); lines starting
                    with # and blank lines are skipped; a bare KEY line copies it from this machine.
                    --env wins over --env-file for the same KEY. Values that look like credentials are
                    shown hidden in the summary and in --json."""


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui create`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = (
        "Create a GPU pod. 22/tcp is published by default, so direct SSH (exec, SFTP) works. "
        "Repeat --gpu (or use --cloud any) to give RunPod choices in order: when it cannot place one, the next "
        "is tried.\n\nRunPod's PyTorch images:\n  " + "\n  ".join(IMAGES)
    )
    p.epilog = ENV_HELP
    p.add_argument(
        "--gpu",
        required=True,
        action="append",
        metavar="TYPE",
        help='GPU type, as `podtui gpus` lists it ("RTX 3090"); repeat for choices tried in order',
    )
    p.add_argument("--count", default="1", metavar="N", help="GPUs (1-8, default 1)")
    p.add_argument(
        "--cloud",
        choices=["community", "secure", "any"],
        default="community",
        help="default community; any: community cloud, then secure, for each --gpu",
    )
    p.add_argument(
        "--data-centre",
        "--data-center",
        dest="data_centres",
        action="append",
        default=[],
        metavar="ID",
        help="a data centre RunPod may place the pod in (repeat; e.g. US-KS-2); default: any",
    )
    p.add_argument("--image", default=DEFAULT_IMAGE, help=f"container image (default {DEFAULT_IMAGE})")
    p.add_argument("--name", help="pod name (default podtui-<gpu>)")
    p.add_argument(
        "--container-gb",
        default=str(DEFAULT_CONTAINER_GB),
        metavar="GB",
        help=f"container disk, wiped on stop (default {DEFAULT_CONTAINER_GB})",
    )
    p.add_argument(
        "--volume-gb",
        default=str(DEFAULT_VOLUME_GB),
        metavar="GB",
        help=f"volume, kept while stopped (default {DEFAULT_VOLUME_GB}; 0 for none, else at least {MIN_VOLUME_GB})",
    )
    p.add_argument("--volume-path", default=DEFAULT_MOUNT, metavar="PATH", help=f"default {DEFAULT_MOUNT}")
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
    p.add_argument("--ports", default=DEFAULT_PORTS, help=f"exposed ports (default {DEFAULT_PORTS})")
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


def _choices(
    catalogue: GpuCatalogue, args: argparse.Namespace, count: int
) -> tuple[list[tuple[GpuType, Cloud]], list[str]]:
    """The GPU type and cloud choices, in order, and a note for each left out because that cloud lacks it (or
    has no machine with `count` of it)."""
    clouds = [Cloud.COMMUNITY, Cloud.SECURE] if args.cloud == "any" else [Cloud(args.cloud.upper())]
    choices: list[tuple[GpuType, Cloud]] = []
    missing: list[str] = []
    problems: list[str] = []
    for ref in args.gpu:
        try:
            gpu = catalogue.find(ref)
        except LookupError as e:
            problems.append(str(e))
            continue
        for cloud in clouds:
            most = gpu.max_count_for(cloud)
            if gpu.price(cloud) is None:
                missing.append(f"{gpu.display_name} is not offered on {cloud.label} cloud")
            elif most is not None and count > most:
                missing.append(f"RunPod offers at most {most} x {gpu.display_name} on one {cloud.label} cloud pod")
            elif (gpu, cloud) not in choices:
                choices.append((gpu, cloud))
    if problems:
        raise UsageError("; ".join(problems))
    if not choices:
        raise UsageError("; ".join(missing) + ("; try the other one" if args.cloud != "any" else ""))
    if len(choices) > MAX_CHOICES:
        raise UsageError(f"at most {MAX_CHOICES} GPU type and cloud choices ({len(choices)} given)")
    return choices, [f"skipped    {m}" for m in missing]


def _stock_lines(spec: PodSpec, gpus: dict[str, GpuType]) -> list[str]:
    stocks = [(c, gpus[c.gpu_type_id].stock_for(c.cloud, c.gpu_count)) for c in spec.choices]
    if all(stock is Stock.NONE for _, stock in stocks):
        which = "any choice" if len(stocks) > 1 else f"{spec.gpu_count} x {gpus[spec.gpu_type_id].display_name}"
        where = "" if len(stocks) > 1 else f" on {spec.cloud.label} cloud"
        return [f"warning    RunPod shows no stock of {which}{where} right now: creating will probably be refused"]
    lines = []
    for choice, stock in stocks:
        if stock is Stock.NONE:
            lines.append(f"note       RunPod shows no stock of {choice.label} right now")
        elif stock is Stock.UNKNOWN:
            lines.append(f"note       RunPod did not say whether {choice.label} is free right now")
    return lines


def build_spec(
    session: Services, args: argparse.Namespace, environ: Mapping[str, str] = os.environ
) -> tuple[PodSpec, str]:
    """The spec from the arguments, every field checked; all problems reported at once."""
    catalogue = session.api.gpu_types()
    problems: dict[str, str] = {}
    try:
        count = check_count(args.count)
    except ValueError as e:
        problems["--count"], count = str(e), 1  # said with the others below
    choices, skipped = _choices(catalogue, args, count)
    gpu = choices[0][0]
    values: dict[str, Any] = {}
    fields: dict[str, Callable[[], object]] = {
        "--name": lambda: check_name(
            args.name if args.name is not None else "podtui-" + gpu.display_name.lower().replace(" ", "-")
        ),
        "--image": lambda: check_image(args.image),
        "--container-gb": lambda: check_gb(args.container_gb, CONTAINER_GB_RANGE),
        "--volume-gb": lambda: check_volume_gb(args.volume_gb),
        "--volume-path": lambda: check_mount(args.volume_path),
        "--ports": lambda: _ports(args),
        "--env": lambda: _env(args, environ),
        "--data-centre": lambda: tuple(check_data_centre(d) for d in args.data_centres),
    }
    for flag, check in fields.items():
        try:
            values[flag] = check()
        except ValueError as e:
            problems[flag] = str(e)
    if problems:  # what the user typed: a usage error (exit 2), not something RunPod sent
        raise UsageError(str(SpecError(problems)))
    first_cloud = choices[0][1]
    spec = PodSpec(
        values["--name"],
        gpu.id,
        count,
        first_cloud,
        values["--image"],
        values["--container-gb"],
        values["--volume-gb"],
        values["--volume-path"],
        values["--ports"],
        values["--env"],
        data_centre_ids=values["--data-centre"],
        fallbacks=tuple(Choice(g.id, count, c) for g, c in choices[1:]),
    )
    costs = [spec_cost(g, c, count, spec.container_gb, spec.volume_gb) for g, c in choices]
    first = costs[0]
    assert first is not None  # choices have a price on their cloud
    summary = [*spec.lines(), *skipped, f"cost       {first.line()}"]
    dearest = max(c.per_hr for c in costs if c is not None)
    if dearest > first.per_hr:
        summary.append(f"           up to ${dearest:.3f}/hr if RunPod places a later choice")
    summary += _stock_lines(spec, {g.id: g for g, _ in choices})
    if not spec.direct_ssh:
        summary.append("note       without 22/tcp published there is no direct SSH (no exec, no SFTP)")
    return spec, "\n".join(summary)


def _ports(args: argparse.Namespace) -> str:
    ports = parse_ports(args.ports)
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
        "refused": list(created.refused),
        "spec": {
            "name": spec.name,
            "gpu_type_id": spec.gpu_type_id,
            "gpu_count": spec.gpu_count,
            "cloud": spec.cloud.value,
            "fallbacks": [
                {"gpu_type_id": c.gpu_type_id, "gpu_count": c.gpu_count, "cloud": c.cloud.value} for c in spec.fallbacks
            ],
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
