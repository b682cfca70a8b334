"""`podtui spend [--days N] [--by pod|gpu|day|volume] [--json|--csv]`: what was spent over the last N UTC days and on
what, from RunPod's billing (podtui's ledger when it cannot be had), with a bar per row (docs/spend.md#podtui-spend)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Any, TextIO

from podtui.cli.output import notes, write_table
from podtui.cli.session import UsageError, open_session
from podtui.core.bars import bar_text
from podtui.core.paths import Paths
from podtui.core.services import Services
from podtui.core.spend import BY, MAX_DAYS, REASONS, By, Row, SpendReport, gather
from podtui.core.visible import visible

BAR_WIDTH = 24
MAX_NOTES = 10  # the ledger's troubles first, then what was odd in RunPod's billing
# A cell a spreadsheet would read as a formula (OWASP's CSV injection): a pod may be named "=HYPERLINK(...)"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui spend`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "What was spent over the last N days (UTC days, today included), broken down by pod, GPU type, day or "
        "network volume. From RunPod's billing when it answers, from podtui's ledger of the pod runs it has seen "
        "otherwise; with both, the two are compared and a difference is said."
    )
    p.add_argument("--days", type=int, default=7, metavar="N", help=f"1 (today) to {MAX_DAYS}; 7 unless given")
    p.add_argument("--by", choices=BY, default="pod", help="the breakdown (pod unless given)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="the whole report as JSON on stdout")
    out.add_argument("--csv", action="store_true", help="the breakdown as CSV on stdout, with a header line")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    if not 1 <= args.days <= MAX_DAYS:
        raise UsageError(f"--days is a number of days from 1 (today) to {MAX_DAYS}")
    with open_session(demo, paths) as session:
        return cmd_spend(session, args.days, args.by, "json" if args.json else "csv" if args.csv else "text")


def cmd_spend(session: Services, days: int, by: By, form: str, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    made = gather(session, days)
    notes(made.notes, MAX_NOTES)
    if form == "json":
        json.dump(report_json(made), out, indent=2)
        out.write("\n")
    elif form == "csv":
        write_csv(out, made, by)
    else:
        write_text(out, made, by)
    return 0


def _heading(made: SpendReport) -> str:
    w = made.window
    span = "today" if w.days == 1 else f"the last {w.label}"
    why = f" ({made.source_why})" if made.source == "ledger" else ""
    return f"${made.total:,.2f} spent {span} ({w.dates}, UTC days), from {made.source_line}{why}"


def write_text(out: TextIO, made: SpendReport, by: By) -> None:
    out.write(_heading(made) + "\n\n")
    rows = made.rows(by)
    if not rows:
        out.write(made.empty_line(by) + "\n")
    else:
        most = max(r.amount for r in rows)
        table = [(by.upper() if by != "gpu" else "GPU", "$", "", "")]
        for r in rows:
            table.append((r.label, f"${r.amount:,.2f}", bar_text(r.amount, most, BAR_WIDTH), r.note))
        write_table(out, table)
    rec = made.reconciliation
    if rec is not None:
        out.write(f"\nledger vs RunPod: {rec.line()}\n")
        for d in rec.pods[:10]:
            out.write(f"  {visible(d.label)}: ledger ${d.ledger:,.2f}, RunPod ${d.billing:,.2f}\n")
        if not rec.agrees:
            out.write(f"  why they may differ: {REASONS}\n")
    elif made.source == "ledger":
        out.write("\nthe ledger counts each pod's $/hr over the time podtui saw it running\n")


def write_csv(out: TextIO, made: SpendReport, by: By) -> None:
    """One row per line of the breakdown; amounts as plain numbers (never in exponent form), text made single-line
    and never read as a formula."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["key", "label", "amount_usd", "note", "source"])
    for r in made.rows(by):
        writer.writerow([_cell(r.key), _cell(r.label), f"{r.amount:.6f}", _cell(r.note), made.source])


def _cell(text: str) -> str:
    shown = visible(text)
    return "'" + shown if shown.startswith(FORMULA_STARTS) else shown


def _row_json(r: Row) -> dict[str, Any]:
    return {"key": r.key, "label": r.label, "amount": round(r.amount, 6), "note": r.note, "other": r.other}


def report_json(made: SpendReport) -> dict[str, Any]:
    w = made.window
    rec = made.reconciliation
    return {
        "days": w.days,
        "start": w.start,
        "end": w.end,
        "source": made.source,
        "source_why": made.source_why,
        "total": round(made.total, 6),
        "by_pod": [_row_json(r) for r in made.by_pod],
        "by_gpu": [_row_json(r) for r in made.by_gpu],
        "by_volume": [_row_json(r) for r in made.by_volume],
        "by_day": [_row_json(r) for r in made.by_day],
        "reconciliation": None
        if rec is None
        else {
            "ledger": round(rec.ledger, 6),
            "billing_compute": round(rec.billing, 6),
            "billing_disk": round(rec.disk, 6),
            "agrees": rec.agrees,
            "pods": [
                {"id": d.pod_id, "label": d.label, "ledger": round(d.ledger, 6), "billing": round(d.billing, 6)}
                for d in rec.pods
            ],
            "never_seen": list(rec.unseen),
        },
        "notes": list(made.notes),
    }
