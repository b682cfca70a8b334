"""The simulated account's network volumes: storage in one data centre that outlives the pods mounting it
(docs/runpod-facts.md#network-volumes). The World keeps them and bills them; volumes_v2.py serves them."""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass
from typing import Any

SIZE_GB = (10, 4096)  # what RunPod accepts, GB
NETWORK_VOLUME_MONTH = 0.07  # $/GB/month (docs/runpod-facts.md#pricing-and-the-balance)


@dataclass
class SimVolume:
    id: str
    name: str
    size_gb: int
    data_centre: str
    type: str = "STANDARD"  # STANDARD or HIGH_PERFORMANCE, fixed when made

    def record(self) -> dict[str, Any]:
        """REST v2's NetworkVolume."""
        return {
            "id": self.id,
            "name": self.name,
            "size": self.size_gb,
            "dataCenter": self.data_centre,
            "type": self.type,
        }


def new_volume_id() -> str:
    """Like RunPod's: ten lowercase letters and digits."""
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(10))
