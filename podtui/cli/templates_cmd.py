"""`podtui templates`: the account's own templates, or RunPod's public catalogue (`--public`)
(docs/storage.md#templates)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from podtui.cli.output import write_table
from podtui.cli.session import UsageError, open_session
from podtui.core.paths import Paths
from podtui.core.services import Services
from podtui.core.template import Template

SOURCES = ("official", "verified", "community")


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui templates`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "Your templates (image, disks, ports and env kept under a name), or RunPod's public ones with --public. "
        "`podtui create --template REF` makes a pod from one; `podtui template create NAME --from POD` makes one."
    )
    p.add_argument("--public", action="store_true", help="RunPod's public catalogue instead of yours")
    p.add_argument(
        "--source",
        choices=SOURCES,
        help="with --public: official (RunPod's, the default), verified, or community (at most 100)",
    )
    p.add_argument("--json", action="store_true", help="a JSON list on stdout")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    if args.source is not None and not args.public:
        raise UsageError("--source goes with --public")
    with open_session(demo, paths) as session:
        return cmd_templates(session, args.public, args.source or "official", args.json)


def kind(t: Template) -> str:
    return "serverless" if t.serverless else "pod"


def template_json(t: Template) -> dict[str, Any]:
    """A template as listed: its env keys only (a value may be a credential, even in someone's public template)."""
    return {
        "id": t.id,
        "name": t.name,
        "image": t.image,
        "disk_gb": t.disk_gb,
        "volume_gb": t.volume_gb,
        "volume_path": t.volume_path,
        "ports": list(t.ports),
        "env_keys": [k for k, _ in t.env],
        "category": t.category,
        "kind": kind(t),
        "public": t.public,
        "start_ssh": t.start_ssh,
        "start_jupyter": t.start_jupyter,
    }


def cmd_templates(
    session: Services, public: bool, source: str = "official", as_json: bool = False, out: TextIO | None = None
) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    templates = session.api.public_templates(source) if public else session.api.templates()
    if as_json:
        json.dump([template_json(t) for t in templates], out, indent=2)
        out.write("\n")
        return 0
    if not templates:
        out.write(
            f"no {source} public templates\n"
            if public
            else "no templates of yours (podtui template create NAME --from POD; --public lists RunPod's)\n"
        )
        return 0
    rows = [("NAME", "ID", "IMAGE", "DISK", "PORTS", "CATEGORY", "KIND", "PUBLIC")]
    for t in sorted(templates, key=lambda t: t.name.lower()):
        rows.append(
            (
                t.name,
                t.id,
                t.image,
                "—" if t.disk_gb is None else f"{t.disk_gb} GB",
                ",".join(t.ports) or "—",
                t.category or "?",
                kind(t),
                "yes" if t.public else "no",
            )
        )
    write_table(out, rows)
    return 0
