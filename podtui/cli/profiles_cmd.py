"""`podtui profiles [--json]`: every profile in config.toml's [profiles], where its key comes from, its pods
running, burn, balance and runway, and their sum: the accounts view's table (docs/profiles.md#the-accounts-view)."""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TextIO

from podtui.cli.output import write_table
from podtui.cli.session import open_session
from podtui.core import units
from podtui.core.paths import Paths
from podtui.core.profiles import AccountBurn, fetch_account, marked_duplicates, runway_words, total_burn
from podtui.core.services import Services
from podtui.core.visible import visible

NO_PROFILES = (
    "no profiles: config.toml has no [profiles.NAME] tables. Add one per account, e.g.\n"
    '  [profiles.work]\n  key_env = "RUNPOD_KEY_WORK"\n'
    "(key_file = true keeps its key in podtui's key file: `podtui config set-key --profile NAME`)\n"
)


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui profiles`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "Every profile (config.toml's [profiles.NAME]): where its key comes from, its pods running, what it burns, "
        "its balance and runway, each fetched with its own key; then their sum. Exit status 1 when a profile could "
        "not be read (no key, a refused key, RunPod unreachable): its row says why."
    )
    p.add_argument("--json", action="store_true", help="one JSON object: each profile, and the total")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    # no key is needed for the profile in use: each profile is asked with its own
    with open_session(demo, paths, allow_no_key=True) as session:
        return cmd_profiles(session, args.json)


def fetch_all(session: Services) -> list[AccountBurn]:
    """Each profile's figures, fetched side by side, each with an API of its own key, closed after; a profile
    reaching an account an earlier one reaches is marked (`same_as`), and counted once in the total."""
    profile_api = session.profile_api
    if profile_api is None or not session.profiles:
        return []

    def one(item: tuple[str, str]) -> AccountBurn:
        return fetch_account(item[0], item[1], profile_api, session.clock)

    with ThreadPoolExecutor(max_workers=min(8, len(session.profiles))) as pool:
        return marked_duplicates(pool.map(one, session.profiles.items()))


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def burn_json(row: AccountBurn) -> dict[str, Any]:
    return {
        "profile": row.profile,
        "key_source": row.source,
        "running": row.running,
        "pods": row.pods,
        "burn_per_hr": _r(row.burn_per_hr),
        "balance": _r(row.balance),
        "runway_s": _r(row.runway_s),
        "balance_unknown_why": row.balance_unknown_why,
        "error": row.error,
        "same_account_as": row.same_as,  # counted once in the total, on that profile
    }


def cmd_profiles(session: Services, as_json: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    rows = fetch_all(session)
    total = total_burn(rows)
    failed = any(not r.ok for r in rows)
    if as_json:
        listed = [{**burn_json(r), "in_use": r.profile == session.profile} for r in rows]
        json.dump({"profiles": listed, "total": burn_json(total)}, out, indent=2)
        out.write("\n")
        return 1 if failed else 0
    if not rows:
        out.write(NO_PROFILES)
        return 0
    table = [("PROFILE", "RUNNING", "$/HR", "BALANCE", "RUNWAY", "KEY FROM · NOTE")]
    for r in [*rows, total]:
        here = " *" if r.profile == session.profile and r is not total else ""
        if not r.ok:
            table.append((r.profile + here, "-", "-", "-", "-", visible(r.error or "")))
            continue
        runway = runway_words(r)
        note = r.source + (f" · balance unknown: {visible(r.balance_unknown_why)}" if r.balance_unknown_why else "")
        if r.same_as is not None:
            note += f" · same account as {r.same_as}, counted once"
        table.append(
            (
                r.profile + here,
                f"{r.running}/{r.pods}",
                units.rate(r.burn_per_hr).removesuffix("/hr"),
                units.money(r.balance),
                runway if r is not total else f"{runway} (soonest)",
                note,
            )
        )
    write_table(out, table)
    if session.profile is not None:
        out.write(f"\n* the profile in use ({session.profile})\n")
    if failed:
        out.write("a profile could not be read: it is left out of the total\n")
    return 1 if failed else 0
