"""`podtui pods`, `podtui stop|resume|restart|terminate`: the pod list and actions without the TUI."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from podtui.cli.output import notes, write_table
from podtui.cli.session import UsageError
from podtui.core import actions, secret, units
from podtui.core.api.client import find_pod
from podtui.core.api.errors import ApiError
from podtui.core.feed import starting_label, starting_since
from podtui.core.pod import Pod
from podtui.core.pod_links import PROXY_URL, services
from podtui.core.resume import no_free_gpu, what_to_do
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
        "network_volume": p.network_volume,
        "volume_gb": p.volume_gb,
        # RunPod terminates pods without a network volume when the balance reaches $0
        # (docs/runpod-facts.md#pricing-and-the-balance)
        "data_deleted_at_zero": actions.loses_data_at_zero(p),
        "ssh": {"proxy": p.proxy_ssh_command, "direct": p.direct_ssh_command},
        "services": [service.as_json() for service in services(p, proxy_url)],
        "image": p.image,
        "data_center": p.location,
        "cuda_version": p.cuda_version,
    }


AT_ZERO_MARK = "$0!"  # after the volume of a pod whose data RunPod deletes at a $0 balance


def _volume(pod: Pod) -> str:
    """The pod's volume as the table shows it: a network volume by id, else its own, marked when its data goes at
    $0."""
    if pod.network_volume:
        return f"net {pod.network_volume}"
    own = f"{pod.volume_gb:g} GB" if pod.volume_gb else "none"
    return f"{own} {AT_ZERO_MARK}" if actions.loses_data_at_zero(pod) else own


def _starting_s(pod: Pod, now: float) -> float | None:
    since = starting_since(pod, now, {})
    return None if since is None else round(now - since, 1)


def cmd_pods(session: Services, as_json: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    snap = session.api.fetch_snapshot()
    from podtui.core.launch_memory import LaunchMemory, remember_quietly

    # what `podtui recreate` creates again (docs/storage.md#recreate)
    trouble = remember_quietly(LaunchMemory.for_services(session), snap.pods, snap.fetched_at)
    if trouble:
        sys.stderr.write(f"podtui: {trouble}\n")
    if as_json:
        proxy_url = session.proxy_url()
        listed = [{**pod_json(p, proxy_url), "starting_s": _starting_s(p, snap.fetched_at)} for p in snap.pods]
        json.dump(listed, out, indent=2)
        out.write("\n")
        return 0
    rows = [("NAME", "ID", "STATUS", "GPU", "UTIL", "$/HR", "UPTIME", "COST", "SSH", "VOLUME")]
    for p in sorted(snap.pods, key=lambda p: p.name.lower()):
        rows.append(
            (
                p.name,
                p.id,
                _status(p, snap.fetched_at) + (" locked" if p.locked else ""),
                p.gpu_label,
                units.percent(p.gpu_util),
                units.rate(p.cost_per_hr).removesuffix("/hr"),
                units.duration(p.uptime_s),
                units.money(p.accrued_cost),
                p.reach_label,
                _volume(p),
            )
        )
    write_table(out, rows)
    a = snap.account
    # whose money it is, when there are several accounts (docs/profiles.md#where-the-profile-shows)
    account = f"profile {session.profile} · " if session.profile is not None else ""
    out.write(f"\n{account}balance {units.money(a.balance)} · burn {units.rate(a.spend_per_hr)}\n")
    if a.unknown_why:
        out.write(f"balance unknown: {visible(a.unknown_why)}\n")
    # the legend of the table's words, under it like the balance: a warning is not an error (stderr stays empty)
    if any(p.locked for p in snap.pods):
        out.write(f"locked: {actions.LOCKED_WORDS} (`podtui edit POD --unlock`)\n")
    if any(actions.loses_data_at_zero(p) for p in snap.pods):
        out.write(
            f"{AT_ZERO_MARK}: {actions.DATA_AT_ZERO}: no network volume, and RunPod terminates such pods when the "
            "balance reaches $0\n"
        )
    notes(snap.problems)
    return 0


def _status(pod: Pod, now: float) -> str:
    """As the list shows it; a starting pod with how long, from RunPod's startedAt (one look, no history)."""
    starting_s = _starting_s(pod, now)
    return pod.state if starting_s is None else starting_label(starting_s, pod.state)


def _ask(question: str) -> bool:
    answer = _read(f"{question} [y/N] ")
    return answer is not None and answer.strip().lower() in ("y", "yes")


def _read(prompt: str) -> str | None:
    """A line typed at the terminal; None when the input ends instead (Ctrl+D): a cancel, like a "no"."""
    if not sys.stdin.isatty():
        raise UsageError("not asking on a non-interactive input: add --yes to confirm")
    try:
        return input(prompt)
    except EOFError:
        sys.stdout.write("\n")  # the prompt's line ends here, not in the next line printed
        return None


def cmd_action(
    session: Services,
    verb: actions.Verb,
    refs: list[str] | str,
    yes: bool,
    out: TextIO | None = None,
    as_json: bool = False,
) -> int:
    """One verb on one pod or several: one question for all, then each sent in turn and its result printed; exit
    status 1 when any was refused or failed."""
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    refs = [refs] if isinstance(refs, str) else list(refs)
    if len(refs) == 1 and not as_json:
        return _one(session, verb, refs[0], yes, out)
    snap = session.api.fetch_snapshot()
    results: list[dict[str, Any]] = []
    pods: list[Pod] = []
    for ref in refs:
        try:
            pod = snap.find(ref)
        except LookupError as e:
            results.append(_result(verb, ref, None, str(e)))
            continue
        _whole_ref(verb, ref, pod)
        pods.append(pod)
    plan = actions.bulk_plan(verb, pods)
    for item in plan.refused:
        results.append(_result(verb, item.pod.id, item.pod, item.refused))
    order = {pod.id: i for i, pod in reversed(list(enumerate(pods)))}
    acting = plan.acting
    if acting and not yes and not _confirmed(session, plan, results):
        out.write("cancelled; nothing changed\n")
        return 1
    for pod in acting:
        try:
            actions.perform(session.api, verb, pod)
        except ApiError as e:
            results.append(_result(verb, pod.id, pod, _with_advice(verb, pod, e)))
        else:
            results.append(_result(verb, pod.id, pod, None))
    results.sort(key=lambda r: order.get(r["id"], -1))  # as the pods were named, the ones not found first
    if as_json:
        json.dump(results, out, indent=2)
        out.write("\n")
    else:
        for r in results:
            name = f"{r['id']} ({r['name']})" if r["name"] is not None else repr(r["ref"])
            if r["ok"]:
                out.write(f'pod "{visible(r["id"])}" ({visible(r["name"])}) {actions.UNDER_WAY[verb]}\n')
            else:
                sys.stderr.write(f"podtui: {verb} {visible(name)} failed: {visible(secret.redact(r['error']))}\n")
    return 0 if all(r["ok"] for r in results) else 1


def _result(verb: str, ref: str, pod: Pod | None, error: str | None) -> dict[str, Any]:
    return {
        "ref": ref,
        "id": pod.id if pod is not None else None,
        "name": pod.name if pod is not None else None,
        "verb": verb,
        "ok": error is None,
        "state": actions.UNDER_WAY[verb] if error is None else None,
        "error": error,
    }


def _whole_ref(verb: str, ref: str, pod: Pod) -> None:
    if verb == "terminate" and ref not in (pod.id, pod.name):
        # a prefix is fine for stop, resume and restart; deleting a pod's data takes its whole id or name
        raise UsageError(
            f"terminate needs the pod's whole id or name ({visible(pod.id)} or {visible(pod.name)}), not {ref!r}"
        )


def _confirmed(session: Services, plan: actions.BulkPlan, results: list[dict[str, Any]]) -> bool:
    """One question for every pod: each with its cost and what survives, those that cannot be done and why;
    terminating asks for the number of pods typed."""
    err = sys.stderr
    for pod in plan.acting:
        shown = visible_fields(pod)
        err.write(
            f"  {shown.name} ({shown.id}) · {units.rate(pod.cost_per_hr)} · {actions.survives(plan.verb, shown)}\n"
        )
    for r in results:
        err.write(f"  not {actions.PAST[plan.verb]}: {visible(r['name'] or r['ref'])}: {visible(r['error'] or '')}\n")
    err.write(plan.summary() + "\n")
    n = len(plan.acting)
    if plan.verb == "terminate":
        typed = _read(f"TERMINATE {n} pod{'s' if n != 1 else ''}? This cannot be undone. Type {n} to confirm: ")
        return typed is not None and typed.strip() == str(n)
    return _ask(f"{plan.verb.capitalize()} {n} pod{'s' if n != 1 else ''}?")


def _with_advice(verb: str, pod: Pod, error: ApiError) -> str:
    """RunPod's refusal, with what to do when a resume found no free GPU."""
    text = str(error)
    if verb == "resume" and no_free_gpu(error):
        text += "; " + "; ".join(what_to_do(visible_fields(pod)))
    return text


def _one(session: Services, verb: actions.Verb, ref: str, yes: bool, out: TextIO) -> int:
    pod = find_pod(session.api, ref)
    _whole_ref(verb, ref, pod)
    actions.check(verb, pod)
    shown = visible_fields(pod)  # what RunPod sent, on one line each: a name cannot forge a line of output
    if not yes:
        c = actions.confirmation(verb, shown)
        sys.stderr.write(c.body + "\n")
        if verb == "terminate" and session.config.confirm_terminate == "name":
            typed = _read(f"{c.title} Type the pod's name, {shown.name}, to confirm: ")
            # a name with control characters is typed as shown
            confirmed = typed is not None and typed.strip() in (pod.name, shown.name)
        else:
            confirmed = _ask(c.title)
        if not confirmed:
            out.write("cancelled; nothing changed\n")
            return 1
    try:
        actions.perform(session.api, verb, pod)
    except ApiError as e:
        if verb == "resume" and no_free_gpu(e):
            raise ApiError(f"{e}; " + "; ".join(what_to_do(shown, visible(ref)))) from None
        raise
    out.write(f'pod "{shown.id}" ({shown.name}) {actions.UNDER_WAY[verb]}\n')
    return 0
