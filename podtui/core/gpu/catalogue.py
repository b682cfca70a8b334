"""RunPod's GPU types with their prices and stock, parsed strictly from the gpuTypes query.

A malformed entry (a price that is not a number, a missing id) is skipped and reported: one odd GPU type must
not hide the others, and a guessed price must never reach a cost shown before creating a pod.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

# The counts podtui asks stock for, one lowestPrice alias each (see queries.gpu_types_query): multi-GPU
# machines come in 1, 2, 4 and 8.
STOCK_COUNTS = (1, 2, 4, 8)


class Cloud(str, Enum):
    """RunPod's cloudType for on-demand pods (ALL lets RunPod pick, which leaves the price open)."""

    SECURE = "SECURE"
    COMMUNITY = "COMMUNITY"

    @property
    def label(self) -> str:
        return self.value.lower()


class Stock(str, Enum):
    # lowestPrice.stockStatus is "High", "Medium", "Low" or null; null (or 0 price) means nothing free now.
    HIGH = "High"
    MEDIUM = "Medium"
    LOW = "Low"
    NONE = "None"

    @property
    def available(self) -> bool:
        return self is not Stock.NONE


@dataclass(frozen=True)
class GpuType:
    id: str  # what podFindAndDeployOnDemand's gpuTypeId wants, e.g. "NVIDIA GeForce RTX 3090"
    display_name: str  # "RTX 3090"
    memory_gb: int
    secure_price: float | None = None  # $/hr per GPU, on demand; None when that cloud does not offer it
    community_price: float | None = None
    secure_spot_price: float | None = None
    community_spot_price: float | None = None
    max_count: int | None = None
    stock: Mapping[tuple[Cloud, int], Stock] = field(default_factory=dict)

    def price(self, cloud: Cloud) -> float | None:
        return self.secure_price if cloud is Cloud.SECURE else self.community_price

    @property
    def spot_price(self) -> float | None:
        prices = [p for p in (self.secure_spot_price, self.community_spot_price) if p is not None]
        return min(prices) if prices else None

    def stock_for(self, cloud: Cloud, count: int = 1) -> Stock:
        """Stock for `count` GPUs on one machine: the answer for the smallest count asked that is at least it."""
        if self.price(cloud) is None:
            return Stock.NONE
        for n in STOCK_COUNTS:
            if n >= count and (cloud, n) in self.stock:
                return self.stock[(cloud, n)]
        return Stock.NONE

    def spot_stock(self, count: int = 1) -> Stock:
        # Spot pods run on idle on-demand machines: the better of the two clouds' stock.
        order = list(Stock)
        return min((self.stock_for(c, count) for c in Cloud), key=order.index)

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


class _Bad(Exception):
    """One entry is malformed: skipped, and the reason reported."""


def _price(entry: Mapping[str, object], key: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise _Bad(f"{key} is {value!r}, not a price")
    # RunPod answers 0 for a cloud that does not offer the type: not free, just not there.
    return float(value) if value > 0 else None


def _stock(raw: object, where: str) -> Stock:
    if raw is None:
        return Stock.NONE
    if not isinstance(raw, Mapping):
        raise _Bad(f"{where} is {type(raw).__name__}, not an object")
    status = raw.get("stockStatus")
    if status is None:
        return Stock.NONE
    if not isinstance(status, str):
        raise _Bad(f"{where}.stockStatus is {status!r}")
    for s in Stock:
        if s.value.lower() == status.strip().lower():
            return s
    raise _Bad(f"{where}.stockStatus {status!r} is not High, Medium, Low or None")


def _entry(raw: object) -> GpuType:
    if not isinstance(raw, Mapping):
        raise _Bad(f"an entry is {type(raw).__name__}, not an object")
    gid, name, memory = raw.get("id"), raw.get("displayName"), raw.get("memoryInGb")
    if not isinstance(gid, str) or not gid.strip():
        raise _Bad(f"an entry has no id ({gid!r})")
    if not isinstance(name, str) or not name.strip():
        raise _Bad(f"{gid}: displayName is {name!r}")
    if isinstance(memory, bool) or not isinstance(memory, (int, float)) or not 0 < memory < 10_000:
        raise _Bad(f"{gid}: memoryInGb is {memory!r}")
    max_count = raw.get("maxGpuCount")
    if max_count is not None and (isinstance(max_count, bool) or not isinstance(max_count, int) or max_count < 1):
        raise _Bad(f"{gid}: maxGpuCount is {max_count!r}")
    try:
        prices = {k: _price(raw, k) for k in ("securePrice", "communityPrice", "secureSpotPrice", "communitySpotPrice")}
        # a cloud that RunPod says does not carry the type has no price there, whatever the price fields say
        for flag, key in (("secureCloud", "securePrice"), ("communityCloud", "communityPrice")):
            if raw.get(flag) is False:
                prices[key] = None
        stock: dict[tuple[Cloud, int], Stock] = {}
        for cloud in Cloud:
            for n in STOCK_COUNTS:
                alias = f"{cloud.label}{n}"
                if alias in raw:
                    stock[(cloud, n)] = _stock(raw[alias], alias)
    except _Bad as e:
        raise _Bad(f"{gid}: {e}") from None
    return GpuType(
        gid.strip(),
        name.strip(),
        int(memory),
        prices["securePrice"],
        prices["communityPrice"],
        prices["secureSpotPrice"],
        prices["communitySpotPrice"],
        max_count,
        stock,
    )


def parse_gpu_types(payload: object) -> GpuCatalogue:
    """The `data` of a gpuTypes query. Raises ValueError only when there is no list at all."""
    data = payload.get("data") if isinstance(payload, Mapping) else None
    entries = data.get("gpuTypes") if isinstance(data, Mapping) else None
    if not isinstance(entries, list):
        raise ValueError("the answer has no list of GPU types")
    types: list[GpuType] = []
    problems: list[str] = []
    seen: set[str] = set()
    for raw in entries:
        try:
            gpu = _entry(raw)
        except _Bad as e:
            problems.append(f"skipped a GPU type: {e}"[:200])
            continue
        if gpu.id in seen:
            problems.append(f"skipped a second entry for {gpu.id}")
            continue
        seen.add(gpu.id)
        types.append(gpu)
    types.sort(key=lambda g: (g.memory_gb, g.community_price or g.secure_price or math.inf, g.display_name))
    return GpuCatalogue(tuple(types), tuple(problems))
