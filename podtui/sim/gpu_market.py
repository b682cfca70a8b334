"""The simulated GPU market: RunPod's GPU types with prices in line with RunPod's (docs/runpod-facts.md#choosing-a-gpu),
and free GPUs per cloud and data centre that new pods use up, so stock runs Low and then out (and creation is
refused) the way it does on RunPod (docs/runpod-facts.md#data-centres-and-stock).

Each type is stocked in some data centres, not all. Other tenants' pods end and start as simulated time passes:
every STOCK_TICK_S each data centre's free count moves part of the way back to its usual level (up after pods took
GPUs, down after they gave them back), by a share drawn from the world's seed, so the same world always moves the
same way and a test can drain a type in a data centre and see it come back.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

# RunPod's answer when no machine has what a new pod asks for (seen in the wild from podFindAndDeployOnDemand
# and REST v2's 400 detail).
NO_STOCK = (
    "There are no longer any instances available with the requested specifications. Please refresh and try again."
)
CLOUDS = ("SECURE", "COMMUNITY")
STOCK_TICK_S = 300.0  # how often other tenants' pods come and go, in simulated seconds
SETTLED_TICKS = 64  # after this many ticks every data centre is back at its usual level

Stock = dict[str, dict[str, int]]  # cloud -> data centre -> free GPUs


def stock_level(free: int, count: int) -> str | None:
    """High/Medium/Low for `free` GPUs when a pod wants `count`, or None when it cannot have them."""
    if free < count:
        return None
    if free >= 8 * count:
        return "High"
    return "Medium" if free >= 3 * count else "Low"


class CloudTotals(Mapping[str, int]):
    """Free GPUs per cloud, summed over its data centres: a live view, as the market's totals always were."""

    def __init__(self, stock: Stock) -> None:
        self._stock = stock

    def __getitem__(self, cloud: str) -> int:
        if cloud not in CLOUDS:
            raise KeyError(cloud)
        return sum(self._stock.get(cloud, {}).values())

    def __iter__(self) -> Iterator[str]:
        return iter(("COMMUNITY", "SECURE"))

    def __len__(self) -> int:
        return len(CLOUDS)


@dataclass
class SimGpuType:
    id: str
    display_name: str
    memory_gb: int
    community: float | None  # on-demand $/hr per GPU; None: that cloud does not carry it
    secure: float | None
    usual: Stock = field(default_factory=dict)  # what each data centre has free when nobody of ours is on it
    max_count: int = 8
    stock: Stock = field(default_factory=dict)  # free now

    def __post_init__(self) -> None:
        if not self.stock:
            self.stock = {cloud: dict(self.usual.get(cloud, {})) for cloud in CLOUDS}

    @property
    def free(self) -> CloudTotals:
        return CloudTotals(self.stock)

    def price(self, cloud: str) -> float | None:
        return self.secure if cloud == "SECURE" else self.community

    def spot(self, cloud: str) -> float | None:
        # spot (interruptible) runs about half the on-demand price
        p = self.price(cloud)
        return round(p * 0.5, 3) if p is not None else None

    def centres(self, cloud: str) -> list[str]:
        """The data centres that stock this type in `cloud`, in the market's order."""
        return list(self.usual.get(cloud, {}))

    def free_in(self, cloud: str, centre: str) -> int:
        return self.stock.get(cloud, {}).get(centre, 0)

    def take(self, cloud: str, centre: str, count: int) -> None:
        self.stock.setdefault(cloud, {})[centre] = self.free_in(cloud, centre) - count

    def give(self, cloud: str, centre: str, count: int) -> None:
        self.stock.setdefault(cloud, {})[centre] = self.free_in(cloud, centre) + count

    def stock_status(self, cloud: str, count: int, centres: Collection[str] | None = None) -> str | None:
        """lowestPrice.stockStatus: High/Medium/Low over the cloud's free GPUs (in `centres`, or all), or null
        when no data centre has `count` of them for one machine."""
        if self.price(cloud) is None or count > self.max_count:
            return None
        free = [n for c, n in self.stock.get(cloud, {}).items() if centres is None or c in centres]
        if not any(n >= count for n in free):
            return None
        return stock_level(sum(free), count)

    def availability(self, cloud: str, count: int, centres: Collection[str] | None = None) -> str:
        """REST v2's AvailabilityLevel for `count` GPUs on one machine in `cloud`: the same stock as stockStatus."""
        level = self.stock_status(cloud, count, centres)
        return "NONE" if level is None else level.upper()

    def centre_availability(self, cloud: str, count: int, centre: str) -> str:
        if self.price(cloud) is None or count > self.max_count:
            return "NONE"
        level = stock_level(self.free_in(cloud, centre), count)
        return "NONE" if level is None else level.upper()

    def churn(self, seed: int, tick: int) -> None:
        """Other tenants' pods ending and starting over one tick: each data centre's free count moves a share of
        the way back to its usual level (a quarter, half or three quarters, at least one GPU)."""
        for cloud in CLOUDS:
            for centre, usual in self.usual.get(cloud, {}).items():
                free = self.free_in(cloud, centre)
                gap = usual - free
                if gap == 0:
                    continue
                share = (1 + _draw(seed, self.id, cloud, centre, tick) % 3) / 4
                step = max(1, math.ceil(abs(gap) * share))
                self.stock[cloud][centre] = free + (step if gap > 0 else -step)

    def settle(self) -> None:
        """Long enough for every data centre to be back at its usual level."""
        self.stock = {cloud: dict(self.usual.get(cloud, {})) for cloud in CLOUDS}

    def record(self) -> dict[str, Any]:
        def lowest(_info: Any, input: dict[str, Any]) -> dict[str, Any] | None:
            count = int(input.get("gpuCount") or 1)
            secure = input.get("secureCloud")
            clouds = ["SECURE"] if secure is True else ["COMMUNITY"] if secure is False else ["COMMUNITY", "SECURE"]
            offers = [(p, c) for c in clouds if (p := self.price(c)) is not None]
            if not offers:
                return None
            price, cloud = min(offers)
            return {
                "gpuName": self.display_name,
                "gpuTypeId": self.id,
                "minimumBidPrice": self.spot(cloud),
                "uninterruptablePrice": price,
                "minMemory": 31 * count,
                "minVcpu": 8 * count,
                "stockStatus": self.stock_status(cloud, count),
            }

        return {
            "id": self.id,
            "displayName": self.display_name,
            "memoryInGb": self.memory_gb,
            "maxGpuCount": self.max_count,
            "manufacturer": "Nvidia",
            "cudaCores": None,
            "secureCloud": self.secure is not None,
            "communityCloud": self.community is not None,
            # RunPod answers 0 where a cloud does not carry the type
            "securePrice": self.secure or 0.0,
            "communityPrice": self.community or 0.0,
            "secureSpotPrice": self.spot("SECURE") or 0.0,
            "communitySpotPrice": self.spot("COMMUNITY") or 0.0,
            "oneMonthPrice": None,
            "lowestPrice": lowest,
        }


def _draw(seed: int, *parts: object) -> int:
    """A number fixed by the seed and the parts: the same world churns the same way every run."""
    text = "|".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def market() -> list[SimGpuType]:
    """RTX 3090 ~$0.22/hr and RTX 4090 ~$0.40/hr on community cloud; secure cloud dearer; A100/H100 for 7B+
    (docs/runpod-facts.md#choosing-a-gpu). A few running low, and some out. Free GPUs per data centre: the totals
    per cloud are what they were before the market knew data centres (64 RTX 3090s on community cloud...)."""

    def g(
        gid: str,
        name: str,
        mem: int,
        community: float | None,
        secure: float | None,
        free_c: dict[str, int],
        free_s: dict[str, int],
        max_count: int = 8,
    ) -> SimGpuType:
        return SimGpuType(gid, name, mem, community, secure, {"COMMUNITY": free_c, "SECURE": free_s}, max_count)

    return [
        g(
            "NVIDIA GeForce RTX 3090",
            "RTX 3090",
            24,
            0.22,
            0.43,
            {"EU-RO-1": 24, "EU-SE-1": 16, "CA-MTL-1": 16, "US-TX-3": 8},
            {"EU-RO-1": 8, "US-KS-2": 8},
        ),
        g("NVIDIA GeForce RTX 4090", "RTX 4090", 24, 0.40, 0.69, {"EU-RO-1": 8, "EU-SE-1": 2}, {}),
        g(
            "NVIDIA RTX A5000",
            "RTX A5000",
            24,
            0.27,
            0.36,
            {"EU-SE-1": 16, "CA-MTL-1": 8, "US-TX-3": 6},
            {"US-KS-2": 8, "EU-SE-1": 4},
        ),
        g("NVIDIA RTX A6000", "RTX A6000", 48, 0.49, 0.76, {"US-CA-2": 8, "EU-RO-1": 4}, {"US-KS-2": 6}),
        g("NVIDIA L40S", "L40S", 48, 0.79, 0.86, {"CA-MTL-1": 4}, {"US-KS-2": 8, "EU-RO-1": 8, "US-CA-2": 4}),
        g("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB", 40, None, 1.19, {}, {"US-TX-3": 5}),
        g(
            "NVIDIA A100 80GB PCIe",
            "A100 80GB PCIe",
            80,
            1.19,
            1.64,
            {"CA-MTL-1": 8, "EU-SE-1": 8},
            {"US-TX-3": 16, "US-KS-2": 8},
        ),
        g(
            "NVIDIA A100-SXM4-80GB",
            "A100 SXM 80GB",
            80,
            1.39,
            1.74,
            {"US-CA-2": 8},
            {"US-KS-2": 16, "US-TX-3": 8, "EU-RO-1": 8},
        ),
        g("NVIDIA H100 PCIe", "H100 PCIe", 80, 1.99, 2.39, {"CA-MTL-1": 2}, {"US-CA-2": 8}),
        g("NVIDIA H100 80GB HBM3", "H100 SXM", 80, 2.69, 2.99, {}, {"US-KS-2": 16}),
    ]
