"""The simulator's REST v2 billing routes: GET /v2/billing and /v2/billing/{pods,network-volumes,serverless,
endpoints,clusters} (docs/runpod-facts.md#billing).

The window is startTime/endTime (RFC 3339; the last 30 days up to now by default) or the lastN buckets ending with
the current one, never both; startTime is snapped down and endTime up to bucket boundaries (UTC; weeks begin on
Monday), and only a window holding no bucket once snapped is refused. The amounts come from the world's usage record
(billing.py), the same accounting the balance is drained by. The aggregate route has one record per bucket, empty
buckets included; the per-resource routes one per resource per bucket it cost something in
(docs/spend.md#the-simulators-billing). The simulator has no serverless endpoints, public endpoints or clusters:
those routes answer their window with no records.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from podtui.sim import billing
from podtui.sim.billing import Charge
from podtui.sim.problem import Answer, json_answer
from podtui.sim.v2_request import Call, refuse

BUCKETS = ("hour", "day", "week", "month", "year")
DEFAULT_BUCKET = "day"
DEFAULT_DAYS = 30
# The simulator's own bound on one answer (RunPod's document gives none): a few years of hours.
MAX_BUCKETS = 30_000
PLACES = 6  # amounts are rounded to a millionth of a dollar

AGGREGATE = (
    "podGpuAmount",
    "podCpuAmount",
    "podDiskAmount",
    "serverlessGpuAmount",
    "serverlessCpuAmount",
    "serverlessDiskAmount",
    "serverlessFeeAmount",
    "storageStandardAmount",
    "storageHighPerformanceAmount",
    "endpointAmount",
    "clusterGpuAmount",
    "clusterDiskAmount",
    "clusterNetworkingAmount",
)
POD_AMOUNTS = {billing.GPU: "gpuAmount", billing.CPU: "cpuAmount", billing.DISK: "diskAmount"}
VOLUME_AMOUNTS = {billing.STANDARD: "standardAmount", billing.HIGH_PERFORMANCE: "highPerformanceAmount"}
# where a pod's or a volume's kind of charge goes in the aggregate record
AGGREGATE_OF = {
    billing.GPU: "podGpuAmount",
    billing.CPU: "podCpuAmount",
    billing.DISK: "podDiskAmount",
    billing.STANDARD: "storageStandardAmount",
    billing.HIGH_PERFORMANCE: "storageHighPerformanceAmount",
}
# RFC 3339's date-time: a date, a time and its zone, nothing left out
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})", re.ASCII)
_WHOLE = re.compile(r"[+-]?[0-9]{1,12}", re.ASCII)
SERVERLESS_AMOUNTS = ("gpuAmount", "cpuAmount", "diskAmount", "feeAmount")
CLUSTER_AMOUNTS = ("gpuAmount", "diskAmount", "networkingAmount")


# --- the window ----------------------------------------------------------------------------------------------


def _floor(moment: datetime, size: str) -> datetime:
    """The start of the bucket `moment` is in."""
    if size == "hour":
        return moment.replace(minute=0, second=0, microsecond=0)
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if size == "day":
        return day
    if size == "week":
        return day - timedelta(days=day.weekday())
    if size == "month":
        return day.replace(day=1)
    return day.replace(month=1, day=1)


def _next(moment: datetime, size: str) -> datetime:
    """The start of the bucket after the one starting at `moment`."""
    if size == "hour":
        return moment + timedelta(hours=1)
    if size == "day":
        return moment + timedelta(days=1)
    if size == "week":
        return moment + timedelta(weeks=1)
    if size == "month":
        return moment.replace(year=moment.year + moment.month // 12, month=moment.month % 12 + 1)
    return moment.replace(year=moment.year + 1)


def _previous(moment: datetime, size: str) -> datetime:
    if size in ("hour", "day", "week"):
        return moment - {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(weeks=1)}[size]
    if size == "month":
        return moment.replace(year=moment.year - (moment.month == 1), month=(moment.month - 2) % 12 + 1)
    return moment.replace(year=moment.year - 1)


def _moment(call: Call, name: str) -> datetime | None:
    raw = call.one(name)
    if raw is None:
        return None
    bad = refuse(400, f"{name} must be an RFC 3339 date-time", [f"{name}: {raw[:40]!r} is not a date-time"])
    if not _DATE_TIME.fullmatch(raw):
        raise bad
    whole, dot, rest = raw.upper().replace("Z", "+00:00").partition(".")
    if dot:  # Python reads at most six places of a second
        digits = len(rest) - len(rest.lstrip("0123456789"))
        whole += "." + rest[: min(digits, 6)] + rest[digits:]
    try:
        return datetime.fromisoformat(whole).astimezone(UTC)
    except (ValueError, OverflowError):  # no such day or time, or a zone that moves it past year 1 or 9999
        raise bad from None


def _last_n(call: Call) -> int | None:
    raw = call.one("lastN")
    if raw is None:
        return None
    # ASCII digits only, nothing around them: str.isdigit() takes "²" and full-width digits, which int() refuses
    if not _WHOLE.fullmatch(raw):
        raise refuse(400, f"lastN must be a whole number, not {raw[:40]!r}", ["lastN: not an integer"])
    if int(raw) < 1:
        raise refuse(400, "lastN must be 1 or more", [f"lastN: must be >= 1, but got {int(raw)}"])
    return int(raw)


def _bucket_size(call: Call) -> str:
    size = call.one("bucketSize")
    if size is None:
        return DEFAULT_BUCKET
    if size not in BUCKETS:
        raise refuse(
            400,
            f"bucketSize must be one of {', '.join(BUCKETS)}",
            [f"bucketSize: value must be one of {', '.join(repr(b) for b in BUCKETS)}"],
        )
    return size


def _too_many(count: str) -> Exception:
    return refuse(400, f"the window holds {count} buckets; the simulator answers at most {MAX_BUCKETS} at once")


def window(call: Call, now: float) -> tuple[str, list[float]]:
    """The bucket size and the buckets' edges (the first is the window's start, the last its end), or a refusal."""
    size = _bucket_size(call)
    last_n = _last_n(call)
    start, end = _moment(call, "startTime"), _moment(call, "endTime")
    current = datetime.fromtimestamp(now, UTC)
    try:
        if last_n is not None:
            if start is not None or end is not None:
                given = " and ".join(n for n, v in (("startTime", start), ("endTime", end)) if v is not None)
                raise refuse(
                    400, f"lastN cannot be given with {given}: give one or the other", ["lastN: with " + given]
                )
            if last_n > MAX_BUCKETS:
                raise _too_many(str(last_n))
            first = _floor(current, size)
            for _ in range(last_n - 1):
                first = _previous(first, size)
            return size, _edges(first, _next(_floor(current, size), size), size)
        first = _floor(start if start is not None else current - timedelta(days=DEFAULT_DAYS), size)
        last = _floor(end if end is not None else current, size)
        if last != (end if end is not None else current):
            last = _next(last, size)
        # the snapped window is what must hold a bucket: a start and an end within one bucket make that bucket
        if last <= first:
            raise _empty(start is None, end is None)
        return size, _edges(first, last, size)
    except (OverflowError, ValueError):  # a window running past year 1 or 9999 once snapped
        raise refuse(400, "the window reaches past the dates RFC 3339 can write", ["startTime: out of range"]) from None


def _empty(default_start: bool, default_end: bool) -> Exception:
    """A window that holds no bucket once snapped, in words naming what made it."""
    if default_start:
        why = f"endTime is before the default start, {DEFAULT_DAYS} days ago"
    elif default_end:
        why = "startTime is after the default end, now"
    else:
        why = "endTime must be after startTime"
    return refuse(400, why, ["endTime: not after startTime"])


def _edges(first: datetime, end: datetime, size: str) -> list[float]:
    edges = [first]
    while edges[-1] < end:
        if len(edges) > MAX_BUCKETS:
            raise _too_many(f"more than {MAX_BUCKETS}")
        edges.append(_next(edges[-1], size))
    return [e.timestamp() for e in edges]


def stamp(t: float) -> str:
    """RFC 3339 in UTC, the year in four digits even before 1000 (strftime's %Y is not padded everywhere)."""
    d = datetime.fromtimestamp(t, UTC)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}Z"


# --- the answers ---------------------------------------------------------------------------------------------


def _rounded(amounts: dict[str, float], names: tuple[str, ...]) -> dict[str, float]:
    """`names` each rounded, and totalAmount their sum: what a record or the totals say."""
    out = {name: round(amounts.get(name, 0.0), PLACES) for name in names}
    return {"totalAmount": round(float(sum(out.values())), PLACES), **out}


def _span(edges: list[float], i: int) -> dict[str, str]:
    return {"startTime": stamp(edges[i]), "endTime": stamp(edges[i + 1])}


def _query(size: str, edges: list[float], **filters: str | None) -> dict[str, Any]:
    return {"startTime": stamp(edges[0]), "endTime": stamp(edges[-1]), "bucketSize": size, **filters}


def _looked_at(call: Call) -> tuple[str, list[float]]:
    """The window, and the world brought up to now so the record holds every second until then."""
    with call.world.lock:
        call.world.advance()
        now = call.world.clock.now()
    return window(call, now)


def list_billing(call: Call) -> Answer:
    size, edges = _looked_at(call)
    usage = call.world.usage
    sums: list[dict[str, float]] = [{} for _ in edges[1:]]
    with call.world.lock:  # charges still open grow as the world advances
        charges = [c for book in (usage.pods, usage.volumes) for cs in book.values() for c in cs]
        spread = billing.spread(charges, edges)
    for i, amounts in enumerate(spread):
        for kind, amount in amounts.items():
            sums[i][AGGREGATE_OF[kind]] = sums[i].get(AGGREGATE_OF[kind], 0.0) + amount
    records: list[dict[str, Any]] = [{**_span(edges, i), **_rounded(s, AGGREGATE)} for i, s in enumerate(sums)]
    totals = _rounded({n: sum(r[n] for r in records) for n in AGGREGATE}, AGGREGATE)
    return json_answer(
        200,
        {"records": records, "metadata": {"query": _query(size, edges), "recordCount": len(records), "totals": totals}},
    )


def _per_owner(
    call: Call,
    book: Callable[[billing.Usage], dict[str, list[Charge]]],
    filter_name: str,
    names: dict[str, str],
    id_field: str,
    count_field: str,
) -> Answer:
    """One record per owner per bucket it was billed in, by bucket then id; `filter_name` narrows to one owner."""
    wanted = call.one(filter_name)
    size, edges = _looked_at(call)
    with call.world.lock:  # charges still open grow as the world advances
        owners = book(call.world.usage)
        spread = {k: billing.spread(owners[k], edges) for k in sorted(owners) if wanted is None or k == wanted}
    fields = tuple(names.values())
    by_bucket: list[list[dict[str, Any]]] = [[] for _ in edges[1:]]
    for owner, buckets in spread.items():
        for i, amounts in enumerate(buckets):
            if amounts:
                shown = _rounded({names[k]: v for k, v in amounts.items()}, fields)
                by_bucket[i].append({**_span(edges, i), id_field: owner, **shown})
    records = [r for bucket in by_bucket for r in bucket]
    totals = _rounded({n: sum(r[n] for r in records) for n in fields}, fields)
    metadata = {
        "query": _query(size, edges, **{filter_name: wanted}),
        "recordCount": len(records),
        "totals": totals,
        count_field: len({r[id_field] for r in records}),
    }
    return json_answer(200, {"records": records, "metadata": metadata})


def list_pod_billing(call: Call) -> Answer:
    return _per_owner(call, lambda u: u.pods, "podId", POD_AMOUNTS, "podId", "uniquePodCount")


def list_volume_billing(call: Call) -> Answer:
    return _per_owner(
        call, lambda u: u.volumes, "networkVolumeId", VOLUME_AMOUNTS, "networkVolumeId", "uniqueNetworkVolumeCount"
    )


def _none_of(call: Call, fields: tuple[str, ...], filter_name: str | None, count_field: str | None) -> Answer:
    """A window the simulator has nothing of: no records, zero totals."""
    wanted = call.one(filter_name) if filter_name else None
    size, edges = _looked_at(call)
    metadata: dict[str, Any] = {
        "query": _query(size, edges, **({filter_name: wanted} if filter_name else {})),
        "recordCount": 0,
        "totals": _rounded({}, fields),
    }
    if count_field:
        metadata[count_field] = 0
    return json_answer(200, {"records": [], "metadata": metadata})


def list_serverless_billing(call: Call) -> Answer:
    return _none_of(call, SERVERLESS_AMOUNTS, "serverlessId", "uniqueServerlessCount")


def list_endpoint_billing(call: Call) -> Answer:
    return _none_of(call, (), None, None)


def list_cluster_billing(call: Call) -> Answer:
    return _none_of(call, CLUSTER_AMOUNTS, "clusterId", "uniqueClusterCount")
