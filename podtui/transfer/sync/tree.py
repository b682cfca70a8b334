"""A synced folder's listing as data: each entry by its path relative to the folder (docs/sync.md#what-is-synced)."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["file", "dir", "link"]
STAGE_PREFIX = ".podtui-sync-"  # podtui's working folders at the top of either end (docs/sync.md#routes)
MAX_HOPS = 40  # symlinks followed while resolving one, as Linux's own limit


@dataclass(frozen=True)
class Node:
    kind: Kind
    size: int = 0  # files
    mtime_ns: int = 0  # files
    mode: int = 0o644  # permission bits
    target: str = ""  # symlinks: the target as written
    readable: bool = True  # files: this end can read it

    @property
    def executable(self) -> bool:
        return bool(self.mode & 0o100)


Tree = dict[str, Node]


@dataclass
class Scan:
    """One end's folder as podtui sees it: what takes part in the sync, and what does not."""

    tree: Tree = field(default_factory=dict)  # files, folders and symlinks inside the folder, not ignored
    ignored: int = 0  # entries the rules left out (an ignored folder counts once)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why) seen but not synced
    unlisted: set[str] = field(default_factory=set)  # folders that could not be listed
    missing: bool = False  # the folder itself is not there
    incomplete: str = ""  # why the listing may lack entries (then nothing is deleted)

    def kept(self) -> set[str]:
        """Paths the source has but does not sync (skipped, or in a folder it could not list)."""
        return {p for p, _ in self.skipped} | self.unlisted


def plain(path: str) -> bool:
    """A relative path of plain parts: no `/` at either end, no empty, `.` or `..` part, no NUL. Every path podtui
    writes or deletes is one, so nothing it does reaches out of the synced folder (docs/sync.md#deleting)."""
    if not path or "\0" in path or path.startswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def parent(path: str) -> str:
    return posixpath.dirname(path)


def ancestors(path: str) -> list[str]:
    """The folders above `path` inside the synced folder, outermost first ("a", "a/b" for "a/b/c")."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def depth_first(paths: list[str]) -> list[str]:
    """Deepest first: what a folder holds before the folder (deletes)."""
    return sorted(paths, key=lambda p: (-p.count("/"), p))


def stays_inside(links: Mapping[str, str], path: str) -> bool:
    """Whether the symlink at `path` (target links[path]) resolves inside the folder, through the folder's other
    symlinks as the kernel would: `self -> .` then `x -> self/../y` leaves it. A loop among them stays inside."""
    stack = path.split("/")[:-1]
    pending = links[path].split("/")
    if links[path].startswith("/"):
        return False
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                return False
            stack.pop()
            continue
        here = "/".join([*stack, part])
        target = links.get(here)
        if target is not None:
            hops += 1
            if hops > MAX_HOPS:
                return True  # a loop: nothing outside is ever reached through it
            if target.startswith("/"):
                return False
            pending = target.split("/") + pending  # relative to the folder holding that link
            continue
        stack.append(part)
    return True


def time_arg(mtime_ns: int) -> str:
    """A modification time as `touch -d @SECONDS.NANOSECONDS` and a tar's pax header read it."""
    seconds, ns = divmod(mtime_ns, 1_000_000_000)
    return f"{seconds}.{ns:09d}"


def parse_time(text: str) -> int:
    """find's `%T@` (seconds, then up to ten decimals) in nanoseconds."""
    whole, _, frac = text.partition(".")
    negative = whole.startswith("-")
    ns = abs(int(whole)) * 1_000_000_000 + int((frac + "000000000")[:9])
    return -ns if negative else ns
