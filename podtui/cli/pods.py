"""`podtui pods`, `podtui stop|resume|restart|terminate`: the pod list and actions without the TUI."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from podtui.cli.output import notes, write_table
from podtui.cli.session import UsageError
from podtui.core import actions, units
from podtui.core.api.client import find_pod
from podtui.core.feed import starting_label, starting_since
from podtui.core.pod import Pod
from podtui.core.pod_links import PROXY_URL, services
from podtui.core.services import Services
from podtui.core.visible import visible, visible_fields


def pod_json(p: Pod, proxy_url: str = PROXY_URL) -> dict[str, Any]:
    """proxy_url: where the pod's HTTP ports are reached (`Services.proxy_url`)."""
    return {
        "id": p.id,
        "name": p.name,
        "status": p.status_raw or p.status.value,  # RunPod's v2 status, as it sent it
        "state": p.state,
        "gpu": p.gpu_label,
        "gpu_count": p.gpu_count,
        "gpu_name": p.gpu_name,
        "gpu_util_percent": p.gpu_util,
        "cost_per_hr": p.cost_per_hr,
        "uptime_s": p.uptime_s,
        "accrued_cost": None if p.accrued_cost is None else round(p.accrued_cost, 6),
        "actions": sorted(p.actions),
        "locked": p.locked,
        "ssh": {"proxy": p.proxy_ssh_command, "direct": p.direct_ssh_command},
        "services": [service.as_json() for service in services(p, proxy_url)],
        "image": p.image,
        "data_center": p.location,
        "cuda_version": p.cuda_version,
    }


def _starting_s(pod: Pod, now: float) -> float | None:
    since = starting_since(pod, now, {})
    return None if since is None else round(now - since, 1)


def cmd_pods(session: Services, as_json: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    snap = session.api.fetch_snapshot()
    if as_json:
        proxy_url = session.proxy_url()
        listed = [{**pod_json(p, proxy_url), "starting_s": _starting_s(p, snap.fetched_at)} for p in snap.pods]
        json.dump(listed, out, indent=2)
        out.write("\n")
        return 0
    rows = [("NAME", "ID", "STATUS", "GPU", "UTIL", "$/HR", "UPTIME", "COST", "SSH")]
    for p in sorted(snap.pods, key=lambda p: p.name.lower()):
        rows.append(
            (
                p.name,
                p.id,
                _status(p, snap.fetched_at),
                p.gpu_label,
                units.percent(p.gpu_util),
                units.rate(p.cost_per_hr).removesuffix("/hr"),
                units.duration(p.uptime_s),
                units.money(p.accrued_cost),
                p.reach_label,
            )
        )
    write_table(out, rows)
    a = snap.account
    out.write(f"\nbalance {units.money(a.balance)} · burn {units.rate(a.spend_per_hr)}\n")
    if a.unknown_why:
        out.write(f"balance unknown: {visible(a.unknown_why)}\n")
    notes(snap.problems)
    return 0


def _status(pod: Pod, now: float) -> str:
    """As the list shows it; a starting pod with how long, from RunPod's startedAt (one look, no history)."""
    starting_s = _starting_s(pod, now)
    return pod.state if starting_s is None else starting_label(starting_s, pod.state)


def _ask(question: str) -> bool:
    if not sys.stdin.isatty():
        raise UsageError("not asking on a non-interactive input: add --yes to confirm")
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def cmd_action(session: Services, verb: actions.Verb, ref: str, yes: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    pod = find_pod(session.api, ref)
    if verb == "terminate" and ref not in (pod.id, pod.name):
        # a prefix is fine for stop, resume and restart; deleting a pod's data takes its whole id or name
        raise UsageError(
            f"terminate needs the pod's whole id or name ({visible(pod.id)} or {visible(pod.name)}), not {ref!r}"
        )
    actions.check(verb, pod)
    shown = visible_fields(pod)  # what RunPod sent, on one line each: a name cannot forge a line of output
    if not yes:
        c = actions.confirmation(verb, shown)
        sys.stderr.write(c.body + "\n")
        if verb == "terminate" and session.config.confirm_terminate == "name":
            if not sys.stdin.isatty():
                raise UsageError("not asking on a non-interactive input: add --yes to confirm")
            typed = input(f"{c.title} Type the pod's name, {shown.name}, to confirm: ").strip()
            confirmed = typed in (pod.name, shown.name)  # a name with control characters is typed as shown
        else:
            confirmed = _ask(c.title)
        if not confirmed:
            out.write("cancelled; nothing changed\n")
            return 1
    actions.perform(session.api, verb, pod)
    out.write(f'pod "{shown.id}" ({shown.name}) {actions.UNDER_WAY[verb]}\n')
    return 0
