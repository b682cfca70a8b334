"""RunPod's GPU types with their prices and stock, parsed from REST v2's catalogue (`GET /v2/catalog/gpus`).

One answer of the catalogue says how available each type is for one cloud and one GPU count (the `cloud` and
`count` filters); `merge_answers` joins the answers for every cloud and count into one GpuCatalogue. A
malformed entry (a price that is not a number, a missing id) is skipped and reported: one odd GPU type must not
hide the others, and a guessed price must never reach a cost shown before creating a pod. An availability word
podtui does not know is shown as unknown, never a crash (docs/runpod-facts.md#rest-v2).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeGuard

# The counts podtui asks stock for, one catalogue request per cloud and count: machines come with 1, 2, 4 and 8
# GPUs, and a type can have many single GPUs free and no machine with eight.
STOCK_COUNTS = (1, 2, 4, 8)


class Cloud(str, Enum):
    """Where a pod runs: RunPod's own data centres (secure) or its hosts' (community)."""

    SECURE = "SECURE"
    COMMUNITY = "COMMUNITY"

    @property
    def label(self) -> str:
        return self.value.lower()


class Stock(str, Enum):
    """REST v2's availability level for a type, cloud and count; UNKNOWN when the answer said nothing podtui
    knows (a new word, a null, or a request for that count that failed)."""

    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"
    NONE = "NONE"
    UNKNOWN = "UNKNOWN"

    @property
    def available(self) -> bool:
        """RunPod says some are free now (any level but NONE and UNKNOWN)."""
        return self in (Stock.HIGH, Stock.MEDIUM, Stock.LOW)

    @property
    def order(self) -> int:
        """Ranking: free first, then not known, then none."""
        return 0 if self.available else 1 if self is Stock.UNKNOWN else 2

    @property
    def label(self) -> str:
        return self.value.lower()


_LEVELS = (Stock.HIGH, Stock.MEDIUM, Stock.LOW, Stock.UNKNOWN, Stock.NONE)


@dataclass(frozen=True)
class DataCentreStock:
    id: str  # what a create's dataCenterIds wants, e.g. "US-KS-2"
    name: str
    stock: Stock


@dataclass(frozen=True)
class GpuType:
    id: str  # what a create's gpu.id wants, e.g. "NVIDIA GeForce RTX 3090"
    display_name: str  # "RTX 3090"
    memory_gb: int
    secure_price: float | None = None  # $/hr per GPU; None when that cloud does not offer the type
    community_price: float | None = None
    max_counts: Mapping[Cloud, int] = field(default_factory=dict)  # most GPUs of this type on one pod, per cloud
    stock: Mapping[tuple[Cloud, int], Stock] = field(default_factory=dict)
    data_centres: Mapping[tuple[Cloud, int], tuple[DataCentreStock, ...]] = field(default_factory=dict)

    def price(self, cloud: Cloud) -> float | None:
        return self.secure_price if cloud is Cloud.SECURE else self.community_price

    @property
    def max_count(self) -> int | None:
        """Most GPUs of this type on one pod, on whichever cloud offers more (None: RunPod did not say)."""
        known = [n for c, n in self.max_counts.items() if self.price(c) is not None]
        return max(known) if known else None

    def max_count_for(self, cloud: Cloud) -> int | None:
        return self.max_counts.get(cloud)

    def stock_for(self, cloud: Cloud, count: int = 1) -> Stock:
        """Stock for `count` GPUs on one machine: the answer for the smallest count asked that is at least it."""
        if self.price(cloud) is None:
            return Stock.NONE
        most = self.max_counts.get(cloud)
        if most is not None and count > most:
            return Stock.NONE
        for n in STOCK_COUNTS:
            if n >= count and (cloud, n) in self.stock:
                return self.stock[(cloud, n)]
        return Stock.NONE

    def data_centres_for(self, cloud: Cloud, count: int = 1) -> tuple[DataCentreStock, ...]:
        """The data centres that have `count` of this type on `cloud` (by the same answer as stock_for)."""
        for n in STOCK_COUNTS:
            if n >= count and (cloud, n) in self.stock:
                return self.data_centres.get((cloud, n), ())
        return ()

    def stock_in(self, cloud: Cloud, count: int, data_centre: str) -> Stock:
        """Stock of `count` of this type on `cloud` in one data centre (docs/runpod-facts.md#data-centres-and-stock):
        its level there; NONE where the answer lists it nowhere or not there (`dataCenters` names only the data
        centres that have it); UNKNOWN when the stock for that count is not known, or the answer gave a level but
        no data centres."""
        level = self.stock_for(cloud, count)
        if not level.available:
            return level
        centres = self.data_centres_for(cloud, count)
        if not centres:
            return Stock.UNKNOWN
        return next((d.stock for d in centres if d.id == data_centre), Stock.NONE)

    def where(self, cloud: Cloud, count: int = 1) -> tuple[DataCentreStock, ...]:
        """The data centres that have `count` of this type on `cloud`, the most stock first (then by id)."""
        centres = self.data_centres_for(cloud, count)
        return tuple(sorted((d for d in centres if d.stock.available), key=lambda d: (_LEVELS.index(d.stock), d.id)))

    def where_words(self, cloud: Cloud, count: int = 1, most: int | None = None) -> str:
        """'EU-RO-1 high, US-KS-2 low' (at most `most` of them, '+2 more' after), or why there are none."""
        if self.price(cloud) is None:
            return f"not on {cloud.label} cloud"
        centres = self.where(cloud, count)
        if not centres:
            level = self.stock_for(cloud, count)
            if level is Stock.UNKNOWN:
                return "stock not known"
            return "none free" if not level.available else "data centres not said"
        shown = centres if most is None else centres[:most]
        words = ", ".join(f"{d.id} {d.stock.label}" for d in shown)
        return words + (f" +{len(centres) - len(shown)} more" if len(shown) < len(centres) else "")

    def matches(self, ref: str) -> bool:
        r = ref.strip().lower()
        return r in (self.id.lower(), self.display_name.lower())


@dataclass(frozen=True)
class GpuCatalogue:
    types: tuple[GpuType, ...]
    problems: tuple[str, ...] = ()

    def find(self, ref: str) -> GpuType:
        """A GPU type by id or display name, case-insensitive ("rtx 3090", "NVIDIA GeForce RTX 3090")."""
        hits = [g for g in self.types if g.matches(ref)]
        if not hits:
            words = ref.strip().lower()
            hits = [g for g in self.types if words and words in g.display_name.lower()]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            names = ", ".join(g.display_name for g in self.types[:12])
            raise LookupError(f"no GPU type {ref!r} on RunPod's list (e.g. {names})")
        raise LookupError(f"{ref!r} matches several GPU types: {', '.join(g.display_name for g in hits)}")

    def stocked_in(self, data_centre: str, cloud: Cloud, count: int = 1) -> tuple[GpuType, ...]:
        """The types with `count` free on `cloud` in that data centre, by RunPod's catalogue."""
        return tuple(g for g in self.types if g.stock_in(cloud, count, data_centre).available)


class _Bad(Exception):
    """One entry is malformed: skipped, and the reason reported."""


@dataclass(frozen=True)
class Entry:
    """One GPU type as one catalogue answer gave it: what it is, and its stock for that answer's cloud and count."""

    gpu: GpuType
    stock: Stock
    data_centres: tuple[DataCentreStock, ...]


@dataclass(frozen=True)
class Answer:
    """One catalogue answer, parsed: the entries that were well formed, and what was wrong with the others."""

    entries: tuple[Entry, ...]
    problems: tuple[str, ...] = ()


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _price(prices: Mapping[str, object], cloud: Cloud, offered: object) -> float | None:
    value = prices.get(cloud.label)
    if value is None:
        return None
    if not _number(value) or value < 0:
        raise _Bad(f"price.{cloud.label} is {value!r}, not a price")
    # a cloud that does not carry the type has no price there, whatever the number says; 0 is not free, just absent
    if offered is False or value == 0:
        return None
    return float(value)


def _max_counts(raw: object) -> dict[Cloud, int]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _Bad(f"maxCount is {type(raw).__name__}, not an object")
    out: dict[Cloud, int] = {}
    for cloud in Cloud:
        n = raw.get(cloud.label)
        if n is None:
            continue
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise _Bad(f"maxCount.{cloud.label} is {n!r}")
        out[cloud] = n
    return out


def stock_level(raw: object, notes: list[str], where: str) -> Stock:
    """An availability word as a level; anything else is UNKNOWN, with a note when it was not simply absent."""
    if raw is None:
        return Stock.UNKNOWN
    if isinstance(raw, str):
        try:
            level = Stock(raw.strip().upper())
        except ValueError:
            level = Stock.UNKNOWN
        if level is not Stock.UNKNOWN:
            return level
    notes.append(f"{where}: availability {str(raw)[:30]!r} is not a level podtui knows; shown as unknown")
    return Stock.UNKNOWN


def _data_centres(raw: object, notes: list[str], where: str) -> tuple[DataCentreStock, ...]:
    # dataCenters is left out when no data centre has the type in the asked configuration
    if not isinstance(raw, list):
        return ()
    out: list[DataCentreStock] = []
    for item in raw:
        if not isinstance(item, Mapping) or not isinstance(item.get("id"), str) or not item["id"].strip():
            continue
        name = item.get("name")
        dc_id = item["id"].strip()
        stock = stock_level(item.get("availability"), notes, f"{where} in {dc_id[:30]}")
        out.append(DataCentreStock(dc_id, name.strip() if isinstance(name, str) and name.strip() else dc_id, stock))
    return tuple(out)


def _entry(raw: object, notes: list[str]) -> Entry:
    if not isinstance(raw, Mapping):
        raise _Bad(f"an entry is {type(raw).__name__}, not an object")
    gid, name, memory = raw.get("id"), raw.get("name"), raw.get("memory")
    if not isinstance(gid, str) or not gid.strip():
        raise _Bad(f"an entry has no id ({str(gid)[:40]!r})")
    gid = gid.strip()
    try:
        if not isinstance(name, str) or not name.strip():
            raise _Bad(f"name is {str(name)[:40]!r}")
        if not _number(memory) or not 0 < memory < 10_000:
            raise _Bad(f"memory is {str(memory)[:40]!r}")
        memory_gb = int(memory)
        prices = raw.get("price")
        if prices is None:
            prices = {}
        if not isinstance(prices, Mapping):
            raise _Bad(f"price is {type(prices).__name__}, not an object")
        secure = _price(prices, Cloud.SECURE, raw.get("secure"))
        community = _price(prices, Cloud.COMMUNITY, raw.get("community"))
        max_counts = _max_counts(raw.get("maxCount"))
    except _Bad as e:
        raise _Bad(f"{gid[:60]}: {e}") from None
    stock = stock_level(raw.get("availability"), notes, gid[:60])
    gpu = GpuType(gid, name.strip(), memory_gb, secure, community, max_counts)
    return Entry(gpu, stock, _data_centres(raw.get("dataCenters"), notes, gid[:60]))


def parse_answer(payload: object) -> Answer:
    """One `GET /v2/catalog/gpus` answer. Raises ValueError only when there is no list at all."""
    entries = payload.get("gpus") if isinstance(payload, Mapping) else None
    if not isinstance(entries, list):
        raise ValueError("the answer has no list of GPU types")
    out: list[Entry] = []
    problems: list[str] = []
    seen: set[str] = set()
    for raw in entries:
        try:
            entry = _entry(raw, problems)
        except _Bad as e:
            problems.append(f"skipped a GPU type: {e}"[:200])
            continue
        if entry.gpu.id in seen:
            problems.append(f"skipped a second entry for {entry.gpu.id[:60]}")
            continue
        seen.add(entry.gpu.id)
        out.append(entry)
    return Answer(tuple(out), tuple(dict.fromkeys(problems)))


def merge_answers(
    answers: Mapping[tuple[Cloud, int], Answer],
    failed: Iterable[tuple[Cloud, int]] = (),
    problems: Iterable[str] = (),
) -> GpuCatalogue:
    """One catalogue from the answers per (cloud, count). What a type is and costs comes from the first answer
    that has it (list prices do not depend on the filters); its stock from each. A type missing from an answer
    has no stock there; for a (cloud, count) whose request failed, every type's stock is unknown."""
    failed = tuple(failed)
    first: dict[str, GpuType] = {}
    for answer in answers.values():
        for entry in answer.entries:
            first.setdefault(entry.gpu.id, entry.gpu)
    types: list[GpuType] = []
    for gid, gpu in first.items():
        stock: dict[tuple[Cloud, int], Stock] = {}
        centres: dict[tuple[Cloud, int], tuple[DataCentreStock, ...]] = {}
        for key, answer in answers.items():
            mine = next((e for e in answer.entries if e.gpu.id == gid), None)
            stock[key] = mine.stock if mine is not None else Stock.NONE
            if mine is not None and mine.data_centres:
                centres[key] = mine.data_centres
        for key in failed:
            stock[key] = Stock.UNKNOWN
        types.append(
            GpuType(
                gpu.id,
                gpu.display_name,
                gpu.memory_gb,
                gpu.secure_price,
                gpu.community_price,
                gpu.max_counts,
                stock,
                centres,
            )
        )
    types.sort(key=lambda g: (g.memory_gb, g.community_price or g.secure_price or math.inf, g.display_name))
    notes = [*problems, *(p for a in answers.values() for p in a.problems)]
    return GpuCatalogue(tuple(types), tuple(dict.fromkeys(notes)))
