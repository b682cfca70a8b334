"""The simulated GPU market: RunPod's GPU types with prices in line with RunPod's (docs/runpod-facts.md#choosing-a-gpu),
and free GPUs per cloud that new pods use up, so stock runs Low and then out (and creation is refused) the way it
does on RunPod.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# RunPod's answer when no machine has what a new pod asks for (seen in the wild from podFindAndDeployOnDemand
# and REST v2's 400 detail).
NO_STOCK = (
    "There are no longer any instances available with the requested specifications. Please refresh and try again."
)


@dataclass
class SimGpuType:
    id: str
    display_name: str
    memory_gb: int
    community: float | None  # on-demand $/hr per GPU; None: that cloud does not carry it
    secure: float | None
    free: dict[str, int] = field(default_factory=dict)  # free GPUs per cloud ("SECURE", "COMMUNITY")
    max_count: int = 8

    def price(self, cloud: str) -> float | None:
        return self.secure if cloud == "SECURE" else self.community

    def spot(self, cloud: str) -> float | None:
        # spot (interruptible) runs about half the on-demand price
        p = self.price(cloud)
        return round(p * 0.5, 3) if p is not None else None

    def stock_status(self, cloud: str, count: int) -> str | None:
        """lowestPrice.stockStatus: High/Medium/Low, or null when `count` GPUs cannot be had on one machine."""
        free = self.free.get(cloud, 0)
        if self.price(cloud) is None or count > self.max_count or free < count:
            return None
        if free >= 8 * count:
            return "High"
        return "Medium" if free >= 3 * count else "Low"

    def availability(self, cloud: str, count: int) -> str:
        """REST v2's AvailabilityLevel for `count` GPUs on one machine in `cloud`: the same stock as stockStatus."""
        level = self.stock_status(cloud, count)
        return "NONE" if level is None else level.upper()

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


def market() -> list[SimGpuType]:
    """RTX 3090 ~$0.22/hr and RTX 4090 ~$0.40/hr on community cloud; secure cloud dearer; A100/H100 for 7B+
    (docs/runpod-facts.md#choosing-a-gpu). A few running low, and some out."""

    def g(
        gid: str,
        name: str,
        mem: int,
        community: float | None,
        secure: float | None,
        free_c: int,
        free_s: int,
        max_count: int = 8,
    ) -> SimGpuType:
        return SimGpuType(gid, name, mem, community, secure, {"COMMUNITY": free_c, "SECURE": free_s}, max_count)

    return [
        g("NVIDIA GeForce RTX 3090", "RTX 3090", 24, 0.22, 0.43, 64, 16),
        g("NVIDIA GeForce RTX 4090", "RTX 4090", 24, 0.40, 0.69, 10, 0),
        g("NVIDIA RTX A5000", "RTX A5000", 24, 0.27, 0.36, 30, 12),
        g("NVIDIA RTX A6000", "RTX A6000", 48, 0.49, 0.76, 12, 6),
        g("NVIDIA L40S", "L40S", 48, 0.79, 0.86, 4, 20),
        g("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB", 40, None, 1.19, 0, 5),
        g("NVIDIA A100 80GB PCIe", "A100 80GB PCIe", 80, 1.19, 1.64, 16, 24),
        g("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB", 80, 1.39, 1.74, 8, 32),
        g("NVIDIA H100 PCIe", "H100 PCIe", 80, 1.99, 2.39, 2, 8),
        g("NVIDIA H100 80GB HBM3", "H100 SXM", 80, 2.69, 2.99, 0, 16),
    ]
