"""RunPod's data centres (`GET /v2/catalog/datacenters`): where pods and network volumes live
(docs/runpod-facts.md#data-centres-and-stock)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from podtui.core.pod import JsonFields, PayloadError


@dataclass(frozen=True)
class DataCentre:
    id: str
    name: str
    volume_types: tuple[str, ...] = ()  # the network volume tiers it offers; () none
    region: str | None = None  # NORTH_AMERICA, EUROPE, ...

    @property
    def takes_volumes(self) -> bool:
        return bool(self.volume_types)


def parse_data_centres(payload: object) -> tuple[tuple[DataCentre, ...], tuple[str, ...]]:
    """`{"dataCenters": [...]}`; raises PayloadError when the list itself is missing."""
    items = payload.get("dataCenters") if isinstance(payload, Mapping) else None
    if not isinstance(items, list):
        raise PayloadError("the answer has no dataCenters list")
    problems: list[str] = []
    out: list[DataCentre] = []
    for raw in items:
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str) or not raw["id"]:
            problems.append("a data centre record has no id; skipped")
            continue
        f = JsonFields(raw, f"data centre {raw['id']}", problems)
        types = tuple(t for t in f.items("networkVolumeTypes") if isinstance(t, str))
        out.append(DataCentre(raw["id"], f.text("name") or raw["id"], types, f.text("region")))
    return tuple(out), tuple(problems)
