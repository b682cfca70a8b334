"""What every route hands back: where each file's bytes landed at the destination, what failed, and the one error
that means the link itself broke (docs/sync.md#routes, docs/sync.md#failures)."""

from __future__ import annotations

from dataclasses import dataclass, field


class Cancelled(Exception):
    """The sync was asked to stop (SyncRun.cancel): raised between files and from progress callbacks."""


class LinkLost(Exception):
    """The connection to the pod broke (or the pod stopped): the sync is tried once more from a new listing."""


@dataclass(frozen=True)
class Landed:
    where: str  # relative to the destination folder: the final path, or a file in the working folder
    staged: bool = False  # in the working folder: moved into place once verified
    group: bool = False  # staged under its final name's own name, for one `mv -t` per folder (the pod)
    needs_time: bool = False  # its modification time is still to be set
    needs_mode: bool = False  # its executable bit is still to be set


@dataclass
class Moved:
    landed: dict[str, Landed] = field(default_factory=dict)  # path -> where its bytes are
    failed: dict[str, str] = field(default_factory=dict)  # path -> why
