"""`podtui volumes`: the account's network volumes, what each costs a month and which pods use it
(docs/storage.md#network-volumes)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from podtui.cli.output import write_table
from podtui.cli.session import UsageError, open_session
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.volume import NetworkVolume, money_per_month, totals


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui volumes`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "The account's network volumes: size, data centre, type, what each costs a month ($0.07/GB, billed "
        "whether a pod uses it or not) and the pods that mount it. `podtui volume` creates, grows, renames and "
        "deletes them."
    )
    p.add_argument("--json", action="store_true", help="a JSON list on stdout")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    with open_session(demo, paths) as session:
        return cmd_volumes(session, args.json)


def ask(question: str, shown: TextIO, unasked: str) -> bool:
    """The storage commands' yes/no: asked on `shown` (stderr with --json), answered on stdin; `unasked` says what
    to add on an input that cannot answer (a script)."""
    if not sys.stdin.isatty():
        raise UsageError(f"not asking on a non-interactive input: {unasked}")
    shown.write(f"{question} [y/N] ")
    shown.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def volume_json(v: NetworkVolume, pods: Sequence[Pod]) -> dict[str, Any]:
    return {
        "id": v.id,
        "name": v.name,
        "size_gb": v.size_gb,
        "data_centre": v.data_centre,
        "type": v.type,
        "cost_per_month": round(v.cost_per_month, 4),
        "pods": [{"id": p.id, "name": p.name} for p in v.users(pods)],
    }


def cmd_volumes(session: Services, as_json: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    volumes = session.api.network_volumes()
    pods = session.api.fetch_snapshot().pods
    if as_json:
        json.dump([volume_json(v, pods) for v in volumes], out, indent=2)
        out.write("\n")
        return 0
    if not volumes:
        out.write("no network volumes on the account (podtui volume create NAME --size GB --dc DATA_CENTRE)\n")
        return 0
    rows = [("NAME", "ID", "SIZE", "DATA CENTRE", "TYPE", "$/MONTH", "PODS")]
    for v in sorted(volumes, key=lambda v: v.name.lower()):
        users = ", ".join(p.name for p in v.users(pods)) or "—"
        rows.append((v.name, v.id, f"{v.size_gb} GB", v.data_centre, v.type or "?", f"${v.cost_per_month:,.2f}", users))
    write_table(out, rows)
    gb, money = totals(volumes)
    n = len(volumes)
    out.write(f"\n{n} volume{'' if n == 1 else 's'} · {gb:,} GB · {money_per_month(money)}\n")
    return 0
