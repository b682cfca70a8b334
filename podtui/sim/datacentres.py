"""The simulated RunPod's data centres: where pods run and network volumes live
(docs/runpod-facts.md#data-centres-and-stock).

Each has the fields of REST v2's DataCenter. Most offer network volumes; CA-MTL-1 offers none, so a volume cannot
be made there and a pod there cannot mount one. None offers global networking (`globalNetwork` false): the
simulator has no private network between data centres, so a pod asking for one is refused everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STANDARD, HIGH_PERFORMANCE = "STANDARD", "HIGH_PERFORMANCE"
VOLUME_TYPES = (STANDARD, HIGH_PERFORMANCE)


@dataclass(frozen=True)
class SimDataCentre:
    id: str
    name: str
    region: str  # REST v2's DataCenterRegion
    volume_types: tuple[str, ...]  # the network volume tiers it offers, its default first; () none
    compliance: tuple[str, ...]
    global_network: bool = False  # see above: never True here

    @property
    def country(self) -> str:
        """ISO 3166 country code: US-KS-2 is in the US, EU-RO-1 in Romania, CA-MTL-1 in Canada."""
        first, second = self.id.split("-")[:2]
        return second if first == "EU" else first

    @property
    def default_volume_type(self) -> str | None:
        return self.volume_types[0] if self.volume_types else None

    def record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "region": self.region,
            "networkVolumeTypes": list(self.volume_types),
            "compliance": list(self.compliance),
            "globalNetwork": self.global_network,
        }


DATA_CENTRES: tuple[SimDataCentre, ...] = (
    SimDataCentre(
        "US-KS-2",
        "US Kansas 2",
        "NORTH_AMERICA",
        (HIGH_PERFORMANCE, STANDARD),
        ("SOC_2_TYPE_2", "ISO_IEC_27001"),
    ),
    SimDataCentre("US-TX-3", "US Texas 3", "NORTH_AMERICA", (STANDARD,), ("SOC_2_TYPE_2",)),
    SimDataCentre(
        "US-CA-2",
        "US California 2",
        "NORTH_AMERICA",
        (STANDARD, HIGH_PERFORMANCE),
        ("SOC_2_TYPE_2", "ISO_IEC_27001", "HIPAA"),
    ),
    SimDataCentre("EU-RO-1", "EU Romania 1", "EUROPE", (STANDARD,), ("GDPR", "ISO_IEC_27001")),
    SimDataCentre("EU-SE-1", "EU Sweden 1", "EUROPE", (STANDARD,), ("GDPR", "ISO_IEC_27001", "RENEWABLE")),
    SimDataCentre("CA-MTL-1", "CA Montreal 1", "NORTH_AMERICA", (), ("RENEWABLE",)),
)
BY_ID: dict[str, SimDataCentre] = {dc.id: dc for dc in DATA_CENTRES}


def find(dc_id: str) -> SimDataCentre | None:
    return BY_ID.get(dc_id)
