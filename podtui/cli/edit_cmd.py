"""`podtui edit POD`: change a pod in place (REST v2's PATCH): its name, image, env, ports, disks, or its lock.

It reads the pod, shows what changes (old -> new, secret values masked) and what a restart of the container will
reset, asks, then sends only the fields that change (docs/runpod-facts.md#rest-v2). The env is the pod's own plus
the changes: PATCH replaces it whole, so no key is lost."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TextIO

from podtui.cli.pods import pod_json
from podtui.cli.session import UsageError, open_session
from podtui.core import actions, pod_edit
from podtui.core.api.client import find_pod
from podtui.core.api.errors import ApiError, ApiQueryError
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.pod_spec import env_from_host
from podtui.core.services import Services
from podtui.core.visible import visible, visible_fields


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui edit`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "Change a pod in place. What changes is shown first (secret values masked), with what a restart resets: "
        "a new image, env, ports or disk restarts a running pod's container, ending its processes and wiping its "
        "container disk; the volume is kept. Only the fields that change are sent."
    )
    p.add_argument("pod", help="pod id or name (a unique prefix works)")
    p.add_argument("--name", metavar="N", help="a new name")
    p.add_argument("--image", metavar="I", help="a new container image")
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY[=VALUE]",
        help="set a variable (repeatable); a bare KEY copies its value from this machine's environment, so a "
        "token need not be typed on the command line. The pod's other variables are kept",
    )
    p.add_argument("--unset-env", action="append", default=[], metavar="KEY", help="remove a variable (repeatable)")
    p.add_argument("--ports", metavar="P", help='the ports, all of them: "8888/http,22/tcp" ("" for none)')
    p.add_argument("--container-gb", metavar="GB", help="the container disk's size")
    p.add_argument("--volume-gb", metavar="GB", help="grow the pod's own volume (it cannot shrink)")
    p.add_argument("--volume-path", metavar="PATH", help="where the volume is mounted")
    lock = p.add_mutually_exclusive_group()
    lock.add_argument(
        "--lock", dest="locked", action="store_const", const=True, help="lock it: RunPod will not stop or reset it"
    )
    lock.add_argument("--unlock", dest="locked", action="store_const", const=False, help="unlock it")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument("--json", action="store_true", help="one JSON object: what changed and the pod afterwards")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    with open_session(demo, paths) as session:
        actions.guard(read_only or session.config.read_only, "editing a pod")
        return cmd_edit(session, args.pod, request_from(args), args.yes, args.json)


def request_from(args: argparse.Namespace, environ: dict[str, str] | None = None) -> pod_edit.EditRequest:
    """The arguments as an edit; a bare --env KEY is read from this machine's environment."""
    try:
        env_set = env_from_host(args.env, os.environ if environ is None else environ)
    except ValueError as e:
        raise UsageError(f"--env: {e}") from None
    return pod_edit.EditRequest(
        name=args.name,
        image=args.image,
        ports=args.ports,
        container_gb=args.container_gb,
        volume_gb=args.volume_gb,
        volume_path=args.volume_path,
        env_set=env_set,
        env_unset=tuple(k.strip() for k in args.unset_env),
        locked=args.locked,
    )


def cmd_edit(
    session: Services,
    ref: str,
    request: pod_edit.EditRequest,
    yes: bool,
    as_json: bool,
    out: TextIO | None = None,
) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    pod = find_pod(session.api, ref)
    shown = visible_fields(pod)
    try:
        plan = pod_edit.plan_edit(pod, request)
    except pod_edit.EditRefused as e:
        raise UsageError(
            f"nothing sent to {shown.name}: " + "; ".join(f"{k}: {v}" for k, v in e.problems.items())
        ) from None
    said = sys.stderr if as_json else out
    if plan.empty:
        said.write(f"nothing to change on {shown.name} ({shown.id}); nothing sent\n")
        if as_json:
            _json(out, plan, pod, sent=False)
        return 0
    said.write(f"{shown.name} ({shown.id}):\n")
    for line in plan.lines():
        said.write(f"  {visible(line)}\n" if line else "\n")
    if not yes and not _ask(f"Change {shown.name}?"):
        out.write("cancelled; nothing changed\n")
        return 1
    try:
        after = pod_edit.apply_reviewed(session.api, plan, request)
    except pod_edit.EditRefused as e:  # the pod changed meanwhile in a way that breaks a rule
        raise UsageError(f"nothing sent to {shown.name}: {e}") from None
    except ApiQueryError as e:
        raise ApiError(f"RunPod refused the change to {shown.name}: {e}") from None
    if as_json:
        _json(out, plan, after, sent=True)
    else:
        now = " (its container restarts)" if plan.restarts else ""
        out.write(f'pod "{shown.id}" ({visible(after.name)}) changed{now}\n')
    return 0


def _json(out: TextIO, plan: pod_edit.EditPlan, pod: Pod, sent: bool) -> None:
    json.dump(
        {
            "sent": sent,
            "changes": [{"what": c.what, "old": c.old, "new": c.new} for c in plan.changes],
            "restarts": plan.restarts,
            "pod": pod_json(pod),
        },
        out,
        indent=2,
    )
    out.write("\n")


def _ask(question: str) -> bool:
    if not sys.stdin.isatty():
        raise UsageError("not asking on a non-interactive input: add --yes to confirm")
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")
