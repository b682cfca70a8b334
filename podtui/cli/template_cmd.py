"""`podtui template create NAME --from POD`, `podtui template delete REF` (docs/storage.md#templates-from-a-pod).

A template from a pod keeps its image, container disk, volume, ports and env; a value that looks like a credential
becomes a RunPod secret reference (`--secrets reference`, the default: the user is told which secrets must exist on
the account) or is left out (`--secrets omit`); a known kind of token is never written in clear, while a value whose
key's name looks like a credential, or a long run of characters, is with `--keep KEY`, and the summary warns of it. A
create whose answer is lost looks for the template by name rather than ever saying it was not made.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from podtui.cli.session import UsageError, open_session
from podtui.cli.templates_cmd import template_json
from podtui.cli.volumes_cmd import ask
from podtui.core import actions
from podtui.core.actions import ActionRefused
from podtui.core.api import ApiError
from podtui.core.api.client import find_pod
from podtui.core.lost_answer import LOOKUP_DELAYS, answer_lost, lost_create_message
from podtui.core.paths import Paths
from podtui.core.services import Services
from podtui.core.template import Template, find_template
from podtui.core.template_spec import (
    SECRETS_MODES,
    EnvChoice,
    SecretsMode,
    find_created_template,
    template_from_pod,
)
from podtui.core.visible import visible


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui template`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "Create a template from a pod's configuration, or delete one of yours. REF is a template's id or name."
    )
    sub = p.add_subparsers(dest="template_command", metavar="ACTION", required=True)
    create = sub.add_parser(
        "create",
        parents=[common],
        help="a template from a pod: image, disks, ports, env (secrets as references)",
        description=(
            "A template from a pod's image, container disk, volume, ports and env. Env values that look like "
            "credentials are never stored in clear: each becomes {{ RUNPOD_SECRET_<key in lower case> }} (create "
            "that secret on the account: RunPod fills it in when a pod starts), or is left out with --secrets omit."
        ),
    )
    create.add_argument("name", metavar="NAME")
    create.add_argument("--from", dest="pod", required=True, metavar="POD", help="the pod's id or name")
    create.add_argument(
        "--secrets",
        choices=SECRETS_MODES,
        default="reference",
        help="what a credential-looking env value becomes: a RunPod secret reference (default) or nothing",
    )
    create.add_argument(
        "--keep",
        action="append",
        default=[],
        metavar="KEY",
        help="keep KEY's value in clear although it looks like a credential (never a known kind of token: hf_, a JWT, "
        "a URL with a password...)",
    )
    create.add_argument("--public", action="store_true", help="every RunPod user can see it (asks first)")
    create.add_argument("--yes", "-y", action="store_true", help="do not ask before making it public")
    create.add_argument("--json", action="store_true", help="the new template as one JSON object")
    delete = sub.add_parser("delete", parents=[common], help="delete one of your templates (asks first)")
    delete.add_argument("ref", metavar="REF")
    delete.add_argument("--yes", "-y", action="store_true", help="do not ask")
    delete.add_argument("--json", action="store_true", help="what was deleted, as one JSON object")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    with open_session(demo, paths) as session:
        read_only = read_only or session.config.read_only
        if args.template_command == "create":
            actions.guard(read_only, "creating a template")
            return cmd_create(
                session, args.name, args.pod, args.secrets, args.public, args.yes, args.json, keep=args.keep
            )
        actions.guard(read_only, "deleting a template")
        return cmd_delete(session, args.ref, args.yes, args.json)


def cmd_create(
    session: Services,
    name: str,
    pod_ref: str,
    secrets: SecretsMode = "reference",
    public: bool = False,
    yes: bool = False,
    as_json: bool = False,
    out: TextIO | None = None,
    keep: Sequence[str] = (),
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    pod = find_pod(session.api, pod_ref)
    choices: dict[str, EnvChoice] = {key: "keep" for key in keep}
    try:
        draft = template_from_pod(name, pod, secrets, choices, public=public)
    except ValueError as e:
        raise UsageError(visible(str(e))) from None
    shown = sys.stderr if as_json else out
    shown.write("\n".join(visible(line) for line in draft.lines()) + "\n")
    shown.flush()
    if public and not yes and not ask("Make it public?", shown, "add --yes to make it public"):
        shown.write("cancelled; no template was made\n")
        return 1
    made, verb = _create(session, str(draft.body["name"]), draft.body, shown, sleep)
    need = draft.secrets_needed()
    if as_json:
        json.dump(
            {
                **template_json(made),
                "secrets_needed": [n for _, n in draft.references],
                "left_out": list(draft.omitted),
            },
            out,
            indent=2,
        )
        out.write("\n")
    else:
        out.write(f"{verb} template {visible(made.name)} ({visible(made.id)})\n")
    if need:
        shown.write(f"{need}\n")
    return 0


def _create(
    session: Services, name: str, body: dict[str, object], shown: TextIO, sleep: Callable[[float], None]
) -> tuple[Template, str]:
    """Create once, and how to say it. When RunPod's answer is lost the template may exist: look it up by name
    rather than ever saying it was not made."""
    api = session.api
    try:
        known: frozenset[str] | None = frozenset(t.id for t in api.templates())
    except ApiError:
        known = None
    try:
        return api.create_template(body), "created"
    except ApiError as e:
        if not answer_lost(e):
            raise
        shown.write(f"RunPod's answer was lost ({visible(str(e))}); looking for {visible(name)} on the account…\n")
        shown.flush()
        what = f"the template {visible(name)}"
        try:
            found = find_created_template(api.templates, name, known, LOOKUP_DELAYS, sleep)
        except ApiError as err:
            raise ApiError(lost_create_message(what, e, err, "`podtui templates`")) from None
        if found is None:
            raise ApiError(lost_create_message(what, e, None, "`podtui templates`")) from None
        if known is None:
            shown.write(
                "(the templates before creating could not be read: check it is not an older one of that name)\n"
            )
        return found, "created after all:"


def cmd_delete(session: Services, ref: str, yes: bool, as_json: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        template = find_template(session.api.templates(), ref)
    except LookupError as e:
        raise ActionRefused(f"{e} among your templates") from None
    shown = sys.stderr if as_json else out
    question = f"Delete template {visible(template.name)} ({visible(template.id)})?"
    if not yes and not ask(question, shown, "add --yes to delete it"):
        shown.write("cancelled; nothing was deleted\n")
        return 1
    session.api.delete_template(template.id)
    if as_json:
        json.dump({"deleted": {"id": template.id, "name": template.name}}, out, indent=2)
        out.write("\n")
    else:
        out.write(f"deleted template {visible(template.name)} ({visible(template.id)})\n")
    return 0
