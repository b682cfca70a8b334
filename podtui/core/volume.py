"""RunPod's network volumes (`/v2/network-volumes`): storage in one data centre that outlives the pods using it
(docs/runpod-facts.md#network-volumes).

A pod without one loses its data when the balance reaches $0 (docs/runpod-facts.md#pricing-and-the-balance); a
pod on one can be recreated on the same data elsewhere in its data centre.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from podtui.core.api.errors import ApiError
from podtui.core.lost_answer import LOOKUP_DELAYS, look_for_created
from podtui.core.pod import JsonFields, PayloadError, Pod

T = TypeVar("T")

# $/GB/month (docs/runpod-facts.md#pricing-and-the-balance)
NETWORK_VOLUME_PER_GB_MONTH = 0.07
# The sizes RunPod accepts, GB (docs/runpod-facts.md#network-volumes)
VOLUME_GB_RANGE = (10, 4096)


@dataclass(frozen=True)
class NetworkVolume:
    id: str
    name: str
    size_gb: int
    data_centre: str
    type: str | None = None  # STANDARD or HIGH_PERFORMANCE; None when RunPod did not say

    @property
    def cost_per_month(self) -> float:
        return self.size_gb * NETWORK_VOLUME_PER_GB_MONTH

    def users(self, pods: Iterable[Pod]) -> tuple[Pod, ...]:
        """The pods that mount it (a terminated pod is not on the account any more)."""
        return tuple(p for p in pods if p.network_volume == self.id)

    def matches(self, ref: str) -> bool:
        return ref in (self.id, self.name)


def parse_volume(raw: object, problems: list[str]) -> NetworkVolume | None:
    """One NetworkVolume record; None (with a note) when it lacks what identifies it."""
    if not isinstance(raw, Mapping):
        problems.append(f"a network volume record is not an object ({type(raw).__name__}); skipped")
        return None
    volume_id = raw.get("id")
    if not isinstance(volume_id, str) or not volume_id:
        problems.append("a network volume record has no id; skipped")
        return None
    f = JsonFields(raw, f"network volume {volume_id}", problems)
    size = f.whole("size")
    centre = f.text("dataCenter")
    if size is None or size < 0 or not centre:
        problems.append(f"network volume {volume_id}: no size or data centre; skipped")
        return None
    return NetworkVolume(volume_id, f.text("name") or volume_id, size, centre, f.text("type"))


def parse_volumes(payload: object) -> tuple[tuple[NetworkVolume, ...], tuple[str, ...]]:
    """`{"networkVolumes": [...]}`; raises PayloadError when the list itself is missing."""
    items = payload.get("networkVolumes") if isinstance(payload, Mapping) else None
    if not isinstance(items, list):
        raise PayloadError("the answer has no networkVolumes list")
    problems: list[str] = []
    volumes = tuple(v for raw in items if (v := parse_volume(raw, problems)) is not None)
    return volumes, tuple(problems)


def find_volume(volumes: Iterable[NetworkVolume], ref: str) -> NetworkVolume:
    """The volume with this id, or the one with this name; LookupError in words when none or several match."""
    volumes = tuple(volumes)
    by_id = [v for v in volumes if v.id == ref]
    found = by_id or [v for v in volumes if v.name == ref]
    if not found:
        raise LookupError(f"no network volume is called or has the id {ref!r}")
    if len(found) > 1:
        ids = ", ".join(v.id for v in found)
        raise LookupError(f"{len(found)} network volumes are called {ref!r} ({ids}): name one by its id")
    return found[0]


# --- checks before anything is sent (docs/storage.md#network-volumes) --------------------------------------

VOLUME_TYPES = ("STANDARD", "HIGH_PERFORMANCE")  # RunPod's tiers; fixed when the volume is made
MAX_VOLUME_NAME = 100


def check_volume_name(value: str) -> str:
    name = value.strip()
    if not name:
        raise ValueError("give the volume a name")
    if len(name) > MAX_VOLUME_NAME:
        raise ValueError(f"a volume name is at most {MAX_VOLUME_NAME} characters")
    if not name.isprintable():
        raise ValueError("a volume name holds no newlines or control characters")
    return name


def check_volume_size(value: object) -> int:
    """A whole number of GB in RunPod's range; "50", "50GB" and 50 alike."""
    lo, hi = VOLUME_GB_RANGE
    if isinstance(value, str):
        value = value.strip().removesuffix("GB").removesuffix("gb").strip()
        if not value.isdecimal() or not value.isascii():
            raise ValueError(f"a whole number of GB from {lo} to {hi}")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValueError(f"a whole number of GB from {lo} to {hi}")
    return value


def check_volume_type(value: str | None) -> str | None:
    """STANDARD or HIGH_PERFORMANCE (any case, - or _); None: the data centre's default tier."""
    if value is None or not value.strip():
        return None
    tier = value.strip().upper().replace("-", "_")
    if tier not in VOLUME_TYPES:
        raise ValueError(f"{value[:30]!r} is not a volume type: {' or '.join(VOLUME_TYPES)}")
    return tier


def check_grow(volume: NetworkVolume, value: object) -> int:
    """The new size of `volume`: larger than it is now (a network volume never shrinks)."""
    size = check_volume_size(value)
    if size < volume.size_gb:
        raise ValueError(f"{volume.name} is {volume.size_gb} GB and a network volume cannot shrink: give a larger size")
    if size == volume.size_gb:
        raise ValueError(f"{volume.name} is {volume.size_gb} GB already: give a larger size")
    return size


def delete_refusal(volume: NetworkVolume, pods: Iterable[Pod]) -> str | None:
    """Why `volume` may not be deleted now (a pod mounts it), in words; None when it may."""
    users = volume.users(pods)
    if not users:
        return None
    names = ", ".join(f"{p.name} ({p.id})" for p in users)
    one = len(users) == 1
    return (
        f"{volume.name} is in use by {'pod' if one else 'pods'} {names}: terminate {'it' if one else 'them'} "
        "first (RunPod keeps a volume a pod mounts), then delete the volume"
    )


def money_per_month(amount: float) -> str:
    return f"${amount:,.2f}/month"


def totals(volumes: Iterable[NetworkVolume]) -> tuple[int, float]:
    """GB and $ per month of every volume."""
    volumes = tuple(volumes)
    return sum(v.size_gb for v in volumes), sum(v.cost_per_month for v in volumes)


# --- a create whose answer was lost (docs/storage.md#network-volumes) -------------------------------------------


def find_created_volume(
    listing: Callable[[], Iterable[NetworkVolume]],
    name: str,
    data_centre: str,
    known_ids: Collection[str] | None,
    delays: Sequence[float] = LOOKUP_DELAYS,
    sleep: Callable[[float], None] = time.sleep,
) -> NetworkVolume | None:
    """The volume a create whose answer was lost made: called `name`, in `data_centre`, not among `known_ids` (the
    volumes before the create; None when unknown: then any of that name counts). Names are not unique, so a create
    tried again would make a second volume, billed too."""

    def made(v: NetworkVolume) -> bool:
        return v.name == name and v.data_centre == data_centre and (known_ids is None or v.id not in known_ids)

    return look_for_created(listing, made, delays, sleep)


def known_volume_ids(listing: Callable[[], Iterable[NetworkVolume]]) -> frozenset[str] | None:
    """The volumes there before a create, to tell the new one after a lost answer; None when they cannot be read."""
    try:
        return frozenset(v.id for v in listing())
    except ApiError:
        return None
