"""RunPod's billing history (`/v2/billing`, `/v2/billing/pods`, `/v2/billing/network-volumes`): what was spent, in
time buckets, for the account, per pod and per network volume (docs/spend.md#podtui-spend).

A query is a window (start and end, snapped by RunPod to its buckets) or the last N buckets, never both. Each answer
is parsed strictly but forgivingly, as the other lists are: a record without its bucket, its id or its total is
skipped with a note, a cost component of the wrong type counts as $0 with a note, and an answer that is not a list of
records at all is a PayloadError (the API turns it into an ApiResponseError). Amounts may be below zero (a credit or an
adjustment: the spec sets no minimum), within MOST_PER_BUCKET either way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Generic, Literal, TypeVar

from podtui.core.pod import JsonFields, PayloadError

BucketSize = Literal["hour", "day", "week", "month", "year"]
BUCKET_SIZES: tuple[BucketSize, ...] = ("hour", "day", "week", "month", "year")
# Beyond this a bucket's amount is garbage, not money; and beyond this many records an answer is cut (a year of
# hours for a few dozen pods is well under it).
MOST_PER_BUCKET = 10_000_000.0
MAX_RECORDS = 100_000

R = TypeVar("R")


def rfc3339(epoch_s: float) -> str:
    """An instant as RunPod's query parameters take it: UTC, whole seconds, `Z`."""
    return datetime.fromtimestamp(int(epoch_s), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value: object) -> float | None:
    """An RFC 3339 date-time as epoch seconds; None when it is not one (or has no offset: the time would be a guess)."""
    if not isinstance(value, str) or not 10 <= len(value) <= 40:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.timestamp()


@dataclass(frozen=True)
class BillingQuery:
    """What to ask for: `start`..`end` (epoch s; RunPod snaps them to the buckets) or the `last_n` buckets up to the
    current one. ValueError in words for a query RunPod would refuse."""

    bucket_size: BucketSize = "day"
    start: float | None = None
    end: float | None = None
    last_n: int | None = None

    def __post_init__(self) -> None:
        if self.bucket_size not in BUCKET_SIZES:
            raise ValueError(f"a bucket is one of {', '.join(BUCKET_SIZES)}, not {self.bucket_size!r}")
        if self.last_n is not None:
            if self.start is not None or self.end is not None:
                raise ValueError("ask for a window or for the last N buckets, not both")
            if isinstance(self.last_n, bool) or not isinstance(self.last_n, int) or self.last_n < 1:
                raise ValueError("the last N buckets: N is a whole number from 1")
        for when in (self.start, self.end):
            if when is not None and not (math.isfinite(when) and when >= 0):
                raise ValueError("a window's start and end are times after 1970")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError("a window ends after it starts")

    def params(self) -> dict[str, str | int]:
        out: dict[str, str | int] = {"bucketSize": self.bucket_size}
        if self.last_n is not None:
            out["lastN"] = self.last_n
        if self.start is not None:
            out["startTime"] = rfc3339(self.start)
        if self.end is not None:
            out["endTime"] = rfc3339(self.end)
        return out


@dataclass(frozen=True)
class AccountBill:
    """One bucket of the whole account: the total and its parts (pods, storage, the rest summed by family)."""

    start: float
    end: float
    total: float
    pod_gpu: float = 0.0
    pod_cpu: float = 0.0
    pod_disk: float = 0.0
    storage: float = 0.0  # network volumes, standard and high-performance
    serverless: float = 0.0
    endpoint: float = 0.0
    cluster: float = 0.0

    @property
    def pods(self) -> float:
        return self.pod_gpu + self.pod_cpu + self.pod_disk


@dataclass(frozen=True)
class PodBill:
    """One pod's bucket: GPU, CPU and disk."""

    start: float
    end: float
    pod_id: str
    total: float
    gpu: float = 0.0
    cpu: float = 0.0
    disk: float = 0.0

    @property
    def compute(self) -> float:
        """What the pod's $/hr covers: the GPU (or the CPU of a CPU pod), not its disks."""
        return self.gpu + self.cpu


@dataclass(frozen=True)
class VolumeBill:
    """One network volume's bucket."""

    start: float
    end: float
    volume_id: str
    total: float
    standard: float = 0.0
    high_performance: float = 0.0


@dataclass(frozen=True)
class Billing(Generic[R]):
    """One billing answer: its records, the window RunPod resolved (None when its metadata did not say), the total
    it gave for them, and what was odd in it (records skipped, fields of the wrong type, the answer cut)."""

    records: tuple[R, ...]
    window: tuple[float, float] | None = None
    bucket_size: str | None = None
    total: float | None = None
    problems: tuple[str, ...] = field(default=())
    skipped: int = 0  # records that could not be read (their money is in no record)
    skipped_ids: tuple[str, ...] = ()  # the pod or volume ids of those that had a readable one


# --- parsing ----------------------------------------------------------------------------------------------


def _bucket(raw: Mapping[str, object], where: str, problems: list[str]) -> tuple[float, float] | None:
    start, end = parse_time(raw.get("startTime")), parse_time(raw.get("endTime"))
    if start is None or end is None or end < start:
        problems.append(f"{where}: no readable startTime and endTime; skipped")
        return None
    return start, end


def _money(f: JsonFields, key: str, problems: list[str]) -> float | None:
    """An amount, credits (below zero) included; None, noted, when it is not a number or beyond MOST_PER_BUCKET."""
    value = f.num(key)
    if value is None or abs(value) <= MOST_PER_BUCKET:
        return value
    problems.append(f"{f.where}: {key} {value:g} is not a plausible amount")
    return None


def _amounts(
    raw: Mapping[str, object], where: str, problems: list[str], parts: tuple[str, ...]
) -> tuple[float, dict[str, float]] | None:
    """The record's totalAmount (required) and each of `parts` ($0, noted, when missing or not an amount)."""
    f = JsonFields(raw, where, problems)
    if "totalAmount" not in raw:
        problems.append(f"{where}: no totalAmount; skipped")
        return None
    total = _money(f, "totalAmount", problems)
    if total is None:
        problems.append(f"{where}: totalAmount is not an amount; skipped")
        return None
    out: dict[str, float] = {}
    for part in parts:
        value = _money(f, part, problems) if part in raw else None
        out[part] = value or 0.0
    return total, out


def _record_where(kind: str, raw: Mapping[str, object], id_key: str | None) -> str:
    ident = raw.get(id_key) if id_key else None
    when = raw.get("startTime")
    what = f"{kind} {ident}" if isinstance(ident, str) and ident else kind
    return f"{what} at {when}" if isinstance(when, str) else what


def parse_account_bill(raw: object, problems: list[str]) -> AccountBill | None:
    if not isinstance(raw, Mapping):
        problems.append(f"a billing record is not an object ({type(raw).__name__}); skipped")
        return None
    where = _record_where("billing record", raw, None)
    bucket = _bucket(raw, where, problems)
    if bucket is None:
        return None
    parts = (
        "podGpuAmount",
        "podCpuAmount",
        "podDiskAmount",
        "storageStandardAmount",
        "storageHighPerformanceAmount",
        "serverlessGpuAmount",
        "serverlessCpuAmount",
        "serverlessDiskAmount",
        "serverlessFeeAmount",
        "endpointAmount",
        "clusterGpuAmount",
        "clusterDiskAmount",
        "clusterNetworkingAmount",
    )
    amounts = _amounts(raw, where, problems, parts)
    if amounts is None:
        return None
    total, a = amounts
    return AccountBill(
        *bucket,
        total=total,
        pod_gpu=a["podGpuAmount"],
        pod_cpu=a["podCpuAmount"],
        pod_disk=a["podDiskAmount"],
        storage=a["storageStandardAmount"] + a["storageHighPerformanceAmount"],
        serverless=a["serverlessGpuAmount"]
        + a["serverlessCpuAmount"]
        + a["serverlessDiskAmount"]
        + a["serverlessFeeAmount"],
        endpoint=a["endpointAmount"],
        cluster=a["clusterGpuAmount"] + a["clusterDiskAmount"] + a["clusterNetworkingAmount"],
    )


def _ident(raw: Mapping[str, object], key: str, kind: str, problems: list[str]) -> str | None:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{_record_where(kind, raw, None)}: no {key}; skipped")
        return None
    return value


def parse_pod_bill(raw: object, problems: list[str]) -> PodBill | None:
    if not isinstance(raw, Mapping):
        problems.append(f"a pod billing record is not an object ({type(raw).__name__}); skipped")
        return None
    pod_id = _ident(raw, "podId", "pod billing record", problems)
    if pod_id is None:
        return None
    where = _record_where("pod billing record", raw, "podId")
    bucket = _bucket(raw, where, problems)
    amounts = _amounts(raw, where, problems, ("gpuAmount", "cpuAmount", "diskAmount")) if bucket else None
    if bucket is None or amounts is None:
        return None
    total, a = amounts
    return PodBill(*bucket, pod_id=pod_id, total=total, gpu=a["gpuAmount"], cpu=a["cpuAmount"], disk=a["diskAmount"])


def parse_volume_bill(raw: object, problems: list[str]) -> VolumeBill | None:
    if not isinstance(raw, Mapping):
        problems.append(f"a network volume billing record is not an object ({type(raw).__name__}); skipped")
        return None
    volume_id = _ident(raw, "networkVolumeId", "network volume billing record", problems)
    if volume_id is None:
        return None
    where = _record_where("network volume billing record", raw, "networkVolumeId")
    bucket = _bucket(raw, where, problems)
    amounts = _amounts(raw, where, problems, ("standardAmount", "highPerformanceAmount")) if bucket else None
    if bucket is None or amounts is None:
        return None
    total, a = amounts
    return VolumeBill(
        *bucket,
        volume_id=volume_id,
        total=total,
        standard=a["standardAmount"],
        high_performance=a["highPerformanceAmount"],
    )


def _metadata(
    payload: Mapping[str, object], problems: list[str]
) -> tuple[tuple[float, float] | None, str | None, float | None]:
    """The resolved window, bucket size and total from `metadata`; what is missing is None (noted when odd)."""
    meta = payload.get("metadata")
    if meta is None:
        return None, None, None
    if not isinstance(meta, Mapping):
        problems.append("billing metadata is not an object; ignored")
        return None, None, None
    window: tuple[float, float] | None = None
    bucket: str | None = None
    query = meta.get("query")
    if isinstance(query, Mapping):
        start, end = parse_time(query.get("startTime")), parse_time(query.get("endTime"))
        window = (start, end) if start is not None and end is not None and end >= start else None
        size = query.get("bucketSize")
        bucket = size if isinstance(size, str) and size in BUCKET_SIZES else None
    total: float | None = None
    totals = meta.get("totals")
    if isinstance(totals, Mapping):
        total = _money(JsonFields(totals, "billing metadata totals", problems), "totalAmount", problems)
    return window, bucket, total


def parse_billing(
    payload: object, parse_record: Callable[[object, list[str]], R | None], what: str, id_key: str | None = None
) -> Billing[R]:
    """`{"records": [...], "metadata": {...}}` read with `parse_record`; PayloadError when there is no records list.
    The records skipped are counted, with their `id_key` where it could be read (their pod or volume)."""
    records = payload.get("records") if isinstance(payload, Mapping) else None
    if not isinstance(records, list):
        raise PayloadError(f"the answer about {what} has no records list")
    problems: list[str] = []
    if len(records) > MAX_RECORDS:
        problems.append(f"{len(records):,} {what} records: only the first {MAX_RECORDS:,} were read")
        records = records[:MAX_RECORDS]
    parsed: list[R] = []
    skipped = 0
    skipped_ids: dict[str, None] = {}
    for raw in records:
        record = parse_record(raw, problems)
        if record is not None:
            parsed.append(record)
            continue
        skipped += 1
        ident = raw.get(id_key) if id_key and isinstance(raw, Mapping) else None
        if isinstance(ident, str) and ident.strip():
            skipped_ids[ident] = None
    assert isinstance(payload, Mapping)  # records were found in it
    window, bucket, total = _metadata(payload, problems)
    return Billing(tuple(parsed), window, bucket, total, tuple(problems), skipped, tuple(skipped_ids))


def parse_account_billing(payload: object) -> Billing[AccountBill]:
    return parse_billing(payload, parse_account_bill, "billing")


def parse_pod_billing(payload: object) -> Billing[PodBill]:
    return parse_billing(payload, parse_pod_bill, "pod billing", "podId")


def parse_volume_billing(payload: object) -> Billing[VolumeBill]:
    return parse_billing(payload, parse_volume_bill, "network volume billing", "networkVolumeId")
