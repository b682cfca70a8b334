"""`podtui volume create|grow|rename|delete`: change the account's network volumes (docs/storage.md#network-volumes).

Every size and name is checked before anything is sent; create and grow say what the volume costs a month and ask
first (`--yes` skips the question); a create whose answer is lost looks for the volume by name rather than ever
saying it was not made (names are not unique: a second create makes a second volume, billed too); delete asks
for the volume's name typed, and is refused while a pod mounts it, naming the pods (`--yes` skips the question,
never the refusal). RunPod's own refusals are said in its words.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import TextIO

from podtui.cli.session import UsageError, open_session
from podtui.cli.volumes_cmd import ask, volume_json
from podtui.core import actions
from podtui.core.actions import ActionRefused
from podtui.core.api import ApiError
from podtui.core.lost_answer import LOOKUP_DELAYS, answer_lost, lost_create_message
from podtui.core.paths import Paths
from podtui.core.services import Services
from podtui.core.visible import visible
from podtui.core.volume import (
    NETWORK_VOLUME_PER_GB_MONTH,
    VOLUME_GB_RANGE,
    VOLUME_TYPES,
    NetworkVolume,
    check_grow,
    check_volume_name,
    check_volume_size,
    check_volume_type,
    delete_refusal,
    find_created_volume,
    find_volume,
    known_volume_ids,
    money_per_month,
)

LO, HI = VOLUME_GB_RANGE


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui volume`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "Create, grow, rename or delete a network volume: storage in one data centre that outlives the pods using "
        "it, $0.07/GB a month whether a pod uses it or not. REF is a volume's id or name."
    )
    sub = p.add_subparsers(dest="volume_command", metavar="ACTION", required=True)
    create = sub.add_parser(
        "create", parents=[common], help="a new volume (its cost a month shown first)", description="Create one."
    )
    create.add_argument("name", metavar="NAME")
    create.add_argument("--size", required=True, metavar="GB", help=f"{LO} to {HI} GB")
    create.add_argument(
        "--dc",
        "--data-centre",
        "--data-center",
        dest="dc",
        required=True,
        metavar="ID",
        help="the data centre (e.g. EU-RO-1): pods using the volume run there",
    )
    create.add_argument(
        "--type", dest="type_", metavar="TYPE", help=f"{' or '.join(VOLUME_TYPES)} (default: the data centre's)"
    )
    create.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    create.add_argument("--json", action="store_true", help="the new volume as one JSON object")
    grow = sub.add_parser("grow", parents=[common], help="make a volume larger (never smaller)")
    grow.add_argument("ref", metavar="REF")
    grow.add_argument("--size", required=True, metavar="GB", help=f"the new size, larger than now, up to {HI}")
    grow.add_argument("--yes", "-y", action="store_true", help="do not ask before the cost goes up")
    grow.add_argument("--json", action="store_true", help="the volume as one JSON object")
    rename = sub.add_parser("rename", parents=[common], help="give a volume another name")
    rename.add_argument("ref", metavar="REF")
    rename.add_argument("new_name", metavar="NEW")
    rename.add_argument("--json", action="store_true", help="the volume as one JSON object")
    delete = sub.add_parser(
        "delete", parents=[common], help="delete a volume and its data (asks for its name; refused while in use)"
    )
    delete.add_argument("ref", metavar="REF")
    delete.add_argument("--yes", "-y", action="store_true", help="do not ask (a volume in use is still refused)")
    delete.add_argument("--json", action="store_true", help="what was deleted, as one JSON object")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    command = args.volume_command
    with open_session(demo, paths) as session:
        read_only = read_only or session.config.read_only
        if command == "create":
            actions.guard(read_only, "creating a network volume")
            return cmd_create(session, args.name, args.size, args.dc, args.type_, args.yes, args.json)
        if command == "grow":
            actions.guard(read_only, "growing a network volume")
            return cmd_grow(session, args.ref, args.size, args.yes, args.json)
        if command == "rename":
            actions.guard(read_only, "renaming a network volume")
            return cmd_rename(session, args.ref, args.new_name, args.json)
        actions.guard(read_only, "deleting a network volume")
        return cmd_delete(session, args.ref, args.yes, args.json)


def _usage(option: str, error: ValueError) -> UsageError:
    return UsageError(f"{option}: {error}")


def _find(session: Services, ref: str) -> NetworkVolume:
    try:
        return find_volume(session.api.network_volumes(), ref)
    except LookupError as e:
        raise ActionRefused(str(e)) from None


def _said(v: NetworkVolume) -> str:
    return (
        f"{visible(v.name)} ({visible(v.id)}): {v.size_gb} GB in {visible(v.data_centre)}"
        f"{f', {visible(v.type)}' if v.type else ''}, {money_per_month(v.cost_per_month)}"
    )


def _done(session: Services, volume: NetworkVolume, verb: str, as_json: bool, out: TextIO) -> int:
    if as_json:
        json.dump(volume_json(volume, session.api.fetch_snapshot().pods), out, indent=2)
        out.write("\n")
    else:
        out.write(f"{verb} network volume {_said(volume)}\n")
    return 0


def cmd_create(
    session: Services,
    name: str,
    size: str,
    dc: str,
    type_: str | None,
    yes: bool,
    as_json: bool,
    out: TextIO | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    problems: list[str] = []
    values: dict[str, object] = {}
    for option, check in (
        ("NAME", lambda: check_volume_name(name)),
        ("--size", lambda: check_volume_size(size)),
        ("--type", lambda: check_volume_type(type_)),
    ):
        try:
            values[option] = check()
        except ValueError as e:
            problems.append(f"{option}: {e}")
    dc = dc.strip()
    centres = {c.id: c for c in session.api.data_centres()}
    centre = centres.get(dc)
    takes = sorted(i for i, c in centres.items() if c.takes_volumes)
    if centre is None:
        problems.append(f"--dc: RunPod has no data centre {visible(dc)!r}; those with volumes: {', '.join(takes)}")
    elif not centre.takes_volumes:
        problems.append(f"--dc: {visible(dc)} offers no network volumes; those that do: {', '.join(takes)}")
    elif values.get("--type") is not None and values["--type"] not in centre.volume_types:
        problems.append(f"--type: {visible(dc)} offers {', '.join(centre.volume_types)} volumes only")
    if problems:
        raise UsageError("; ".join(problems))
    size_gb = values["--size"]
    assert isinstance(size_gb, int)
    vol_name = str(values["NAME"])
    tier = values["--type"] if isinstance(values["--type"], str) else None
    shown = sys.stderr if as_json else out
    cost = size_gb * NETWORK_VOLUME_PER_GB_MONTH
    shown.write(
        f"network volume {visible(vol_name)}: {size_gb} GB in {visible(dc)}"
        f"{f', {tier}' if tier else ''}: {money_per_month(cost)}, billed until it is deleted\n"
    )
    shown.flush()
    if not yes and not ask("Create it?", shown, "add --yes to create the volume"):
        shown.write("cancelled; nothing was created\n")
        return 1
    api = session.api
    known = known_volume_ids(api.network_volumes)
    try:
        volume = api.create_network_volume(vol_name, size_gb, dc, tier)
    except ApiError as e:
        if not answer_lost(e):
            raise
        shown.write(f"RunPod's answer was lost ({visible(str(e))}); looking for {visible(vol_name)} on the account…\n")
        shown.flush()
        try:
            found = find_created_volume(api.network_volumes, vol_name, dc, known, LOOKUP_DELAYS, sleep)
        except ApiError as err:
            raise ApiError(lost_create_message(f"the volume {visible(vol_name)}", e, err, "`podtui volumes`")) from None
        if found is None:
            raise ApiError(
                lost_create_message(f"the volume {visible(vol_name)}", e, None, "`podtui volumes`")
            ) from None
        if known is None:
            shown.write("(the volumes before creating could not be read: check it is not an older one of that name)\n")
        return _done(session, found, "created after all:", as_json, out)
    return _done(session, volume, "created", as_json, out)


def cmd_grow(
    session: Services, ref: str, size: str, yes: bool = False, as_json: bool = False, out: TextIO | None = None
) -> int:
    """A volume never shrinks: growing it raises its cost for good, so the new cost is shown and asked about."""
    out = out or sys.stdout
    volume = _find(session, ref)
    try:
        new_size = check_grow(volume, size)
    except ValueError as e:
        raise _usage("--size", e) from None
    shown = sys.stderr if as_json else out
    now = money_per_month(new_size * NETWORK_VOLUME_PER_GB_MONTH)
    shown.write(
        f"grow {visible(volume.name)} ({visible(volume.id)}) from {volume.size_gb} GB to {new_size} GB: "
        f"{now}, was {money_per_month(volume.cost_per_month)}; a network volume never shrinks again\n"
    )
    shown.flush()
    if not yes and not ask("Grow it?", shown, "add --yes to grow the volume"):
        shown.write("cancelled; nothing was changed\n")
        return 1
    grown = session.api.update_network_volume(volume.id, size_gb=new_size)
    return _done(session, grown, "grew", as_json, out)


def cmd_rename(session: Services, ref: str, new_name: str, as_json: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        name = check_volume_name(new_name)
    except ValueError as e:
        raise _usage("NEW", e) from None
    volume = _find(session, ref)
    renamed = session.api.update_network_volume(volume.id, name=name)
    return _done(session, renamed, "renamed", as_json, out)


def cmd_delete(session: Services, ref: str, yes: bool, as_json: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    volume = _find(session, ref)
    refusal = delete_refusal(volume, session.api.fetch_snapshot().pods)
    if refusal is not None:
        raise ActionRefused(visible(refusal))
    shown = sys.stderr if as_json else out
    shown.write(f"delete {_said(volume)}: its data is gone for good\n")
    shown.flush()
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("not asking on a non-interactive input: add --yes to delete the volume")
        shown.write(f"Type the volume's name, {visible(volume.name)}, to delete it: ")
        shown.flush()
        if sys.stdin.readline().rstrip("\n") != volume.name:
            shown.write("that is not the volume's name; nothing was deleted\n")
            return 1
    session.api.delete_network_volume(volume.id)
    if as_json:
        json.dump({"deleted": {"id": volume.id, "name": volume.name}}, out, indent=2)
        out.write("\n")
    else:
        out.write(f"deleted network volume {visible(volume.name)} ({visible(volume.id)})\n")
    return 0
