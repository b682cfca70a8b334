"""`podtui cost [--json]`: burn, balance, runway, and per pod what it costs now and has cost this run."""

from __future__ import annotations

import datetime as dt
import json
import sys
from typing import Any, TextIO

from podtui.cli.output import notes, write_table
from podtui.core import units
from podtui.core.cost import CostView, cost_view, projected_today
from podtui.core.idle import DEFAULT_THRESHOLD_PCT
from podtui.core.services import Services
from podtui.core.visible import visible


def _json(view: CostView) -> dict[str, Any]:
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 6)

    return {
        "burn_per_hr": r(view.burn_per_hr),
        "burn_per_hr_api": r(view.api_burn_per_hr),
        "burn_per_hr_pods": r(view.pods_burn_per_hr),
        "burn_disagrees": view.burn_disagrees,
        "balance": r(view.balance),
        "balance_unknown_why": None if view.balance is not None else view.balance_unknown_why,
        "spend_limit": view.spend_limit,
        "runway_s": r(view.runway_s),
        "lose_data_at_zero": list(view.lose_data_at_zero),
        "unknown_rates": list(view.unknown_rates),
        "pods": [
            {
                "id": c.pod.id,
                "name": c.pod.name,
                "state": c.pod.state,
                "per_hr": r(c.per_hr) if c.rate_known else None,
                "storage_per_hr": r(c.storage_per_hr),
                "accrued": r(c.accrued),
                "gpu_util_percent": c.pod.gpu_util,
                # one look cannot tell idleness (that needs a window of samples, as the TUI keeps): low GPU now
                "gpu_low_now": c.pod.gpu_util is not None and c.pod.gpu_util < DEFAULT_THRESHOLD_PCT,
            }
            for c in view.pods
        ],
    }


def cmd_cost(session: Services, as_json: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    snap = session.api.fetch_snapshot()
    view = cost_view(snap, snap.fetched_at)
    if as_json:
        json.dump(_json(view), out, indent=2)
        out.write("\n")
        return 0
    rows = [("NAME", "STATE", "NOW $/HR", "THIS RUN", "GPU")]
    for c in sorted(view.pods, key=lambda c: -c.per_hr):
        util = units.percent(c.pod.gpu_util)
        if c.pod.gpu_util is not None and c.pod.gpu_util < DEFAULT_THRESHOLD_PCT:
            util += " (low)"
        now = units.rate(c.per_hr).removesuffix("/hr") if c.rate_known else "—"
        rows.append((c.pod.name, c.pod.state, now, units.money(c.accrued), util))
    write_table(out, rows)
    out.write(f"\nburn {units.rate(view.burn_per_hr)}")
    pods_sum = ("at least " if view.unknown_rates else "") + units.rate(view.pods_burn_per_hr)
    if view.burn_disagrees:
        out.write(f" (RunPod says {units.rate(view.api_burn_per_hr)}; the pods add up to {pods_sum})")
    out.write(f" · balance {units.money(view.balance)} · runway {units.duration(view.runway_s)}\n")
    if view.balance is None and view.balance_unknown_why:
        out.write(f"balance and runway unknown: {visible(view.balance_unknown_why)}\n")
    midnight = dt.datetime.combine(dt.date.today() + dt.timedelta(days=1), dt.time())
    left = (midnight - dt.datetime.now()).total_seconds()
    out.write(f"by midnight at this burn: {units.money(projected_today(0.0, view.burn_per_hr, left))} more\n")
    out.write(view.at_zero_warning() + "\n")
    if view.unknown_rates:
        out.write(f"$/hr unknown for {', '.join(visible(n) for n in view.unknown_rates)}: the sums leave it out\n")
    notes(snap.problems)
    return 0
