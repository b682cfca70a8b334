"""What a sync changes at its destination, in the order it is done, as data each end carries out its own way
(docs/sync.md#routes, docs/sync.md#deleting). Paths are relative to the synced folder."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Ops:
    delete: list[str] = field(default_factory=list)  # files and symlinks (never followed)
    rmdir: list[str] = field(default_factory=list)  # deepest first; one that still holds anything stays
    mkdir: list[str] = field(default_factory=list)
    staged_times: list[tuple[str, int]] = field(default_factory=list)  # (a file in the working folder, ns)
    staged_modes: list[tuple[str, int]] = field(default_factory=list)
    singles: list[tuple[str, str]] = field(default_factory=list)  # (from the working folder, final)
    # (final folder, [(from, final)]): every `from` has its final's name, so one `mv -t` moves a folder's files
    groups: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)  # (path, target)
    times: list[tuple[str, int]] = field(default_factory=list)
    modes: list[tuple[str, int]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not any(
            (
                self.delete,
                self.rmdir,
                self.mkdir,
                self.staged_times,
                self.staged_modes,
                self.singles,
                self.groups,
                self.links,
                self.times,
                self.modes,
            )
        )


@dataclass
class Applied:
    failed: dict[str, str] = field(default_factory=dict)  # path -> why
    kept: list[str] = field(default_factory=list)  # folders --delete left (they hold what is ignored, or new files)
