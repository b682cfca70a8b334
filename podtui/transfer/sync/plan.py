"""What a sync does, from the two listings: what to copy, what to hash before deciding, what to delete, and what
cannot be done (docs/sync.md#what-counts-as-changed, docs/sync.md#deleting). Pure: no I/O."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from podtui.transfer.sync.ignore import IgnoreRules
from podtui.transfer.sync.tree import Node, Scan, ancestors, depth_first, parent, plain

Why = Literal["new", "changed"]


@dataclass(frozen=True)
class Copy:
    """A source file to copy, as the source's listing saw it."""

    path: str
    size: int
    mtime_ns: int
    executable: bool
    why: Why
    mode: int = -1  # permission bits: the source's for a new file, the destination's (executable bit as the source's)
    # for one it has; -1 unknown (see arrival_mode)


POD_UMASK = 0o022  # a pod's umask, for the bits a new file gets there (root's on RunPod's images)


def arrival_mode(c: Copy, umask: int) -> int:
    """The permission bits the copy of `c` gets, as rsync gives them without --perms (docs/sync.md#what-is-synced):
    a file the destination has keeps its own bits, but for the executable bit; a new one gets the source's, masked
    by the destination's umask. A private file (0600) stays private on either end."""
    if c.mode < 0:
        return (0o777 if c.executable else 0o666) & ~umask
    return c.mode & 0o777 & ~umask if c.why == "new" else c.mode & 0o777  # never set-id or sticky bits


@dataclass
class Plan:
    pull: bool
    delete: bool
    copies: list[Copy] = field(default_factory=list)
    check: list[Copy] = field(default_factory=list)  # same size, other time: both ends hashed before deciding
    check_modes: dict[str, int] = field(default_factory=dict)  # of `check`, those whose executable bit differs
    touch: list[tuple[str, int]] = field(default_factory=list)  # same bytes: only the time is set
    settled: int = 0  # of `check`, found the same by their hashes
    chmod: list[tuple[str, int]] = field(default_factory=list)  # the executable bit differs
    links: list[tuple[str, str]] = field(default_factory=list)  # (path, target) to make or make again
    mkdirs: list[str] = field(default_factory=list)  # shallowest first
    deletes: list[str] = field(default_factory=list)  # files and symlinks, deepest first
    rmdirs: list[str] = field(default_factory=list)  # folders, deepest first (kept while they hold anything)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, why) that cannot be done
    unchanged: int = 0
    ignored: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    extra: int = 0  # destination-only entries left there (no --delete)
    protected: int = 0  # destination-only entries its own .gitignore keeps from --delete
    notes: list[str] = field(default_factory=list)

    @property
    def new(self) -> list[Copy]:
        return [c for c in self.copies if c.why == "new"]

    @property
    def changed(self) -> list[Copy]:
        return [c for c in self.copies if c.why == "changed"]

    @property
    def bytes_to_copy(self) -> int:
        return sum(c.size for c in self.copies)

    @property
    def empty(self) -> bool:
        """Nothing to do but what failed."""
        return not (self.copies or self.check or self.touch or self.chmod or self.links or self.mkdirs) and not (
            self.deletes or self.rmdirs
        )


def make_plan(source: Scan, dest: Scan, dest_rules: IgnoreRules, *, pull: bool, delete: bool) -> Plan:
    """Compare the listings. dest_rules: the destination's own rules, which keep what they ignore from --delete."""
    plan = Plan(pull, delete, ignored=source.ignored, skipped=list(source.skipped))
    blocked: set[str] = set()  # paths that failed: nothing under them is done
    for path in sorted(source.tree):
        s = source.tree[path]
        if not plain(path):
            plan.failed.append((path, "not a plain relative path: left alone"))
            blocked.add(path)
            continue
        if any(a in blocked for a in ancestors(path)):
            continue
        d = dest.tree.get(path)
        if not _one(plan, path, s, d):
            blocked.add(path)
    if delete:
        _deletions(plan, source, dest, dest_rules, blocked)
    else:
        plan.extra = sum(1 for p, n in dest.tree.items() if p not in source.tree and n.kind != "dir")
    plan.mkdirs.sort()
    plan.deletes = depth_first(plan.deletes)
    plan.rmdirs = depth_first(plan.rmdirs)
    return plan


def _in_the_way(d: Node) -> str:
    return {"dir": "a folder", "file": "a file", "link": "a symlink"}[d.kind]


def _one(plan: Plan, path: str, s: Node, d: Node | None) -> bool:
    """Plan one source entry against the destination's; False when it cannot be done (nothing under it is)."""
    if d is not None and (d.kind == "dir") != (s.kind == "dir"):
        if not plan.delete:
            plan.failed.append(
                (
                    path,
                    f"the destination has {_in_the_way(d)} there, not {_in_the_way(s)}; not replaced without --delete",
                )
            )
            return False
        if d.kind == "dir":
            plan.rmdirs.append(path)  # emptied by the deletes below: the source has nothing under it
        else:
            plan.deletes.append(path)
        d = None
    if s.kind == "dir":
        if d is None:
            plan.mkdirs.append(path)
        return True
    if s.kind == "link":
        if d is not None and d.kind == "link" and d.target == s.target:
            plan.unchanged += 1
        else:
            plan.links.append((path, s.target))
        return True
    if d is None or d.kind != "file" or d.size != s.size:
        why: Why = "new" if d is None else "changed"
        if not s.readable:
            plan.failed.append((path, "cannot read it: Permission denied"))
            return False
        mode = s.mode if d is None or d.kind != "file" else mode_like(d.mode, s.executable)
        plan.copies.append(Copy(path, s.size, s.mtime_ns, s.executable, why, mode))
        return True
    if d.mtime_ns != s.mtime_ns:
        if not s.readable:
            plan.failed.append((path, "cannot read it: Permission denied"))
            return False
        plan.check.append(Copy(path, s.size, s.mtime_ns, s.executable, "changed", mode_like(d.mode, s.executable)))
        if d.executable != s.executable:
            plan.check_modes[path] = mode_like(d.mode, s.executable)
        return True
    plan.unchanged += 1
    if d.executable != s.executable:
        plan.chmod.append((path, mode_like(d.mode, s.executable)))
    return True


def mode_like(mode: int, executable: bool) -> int:
    """`mode` made executable (where it is readable) or not, as git keeps that one bit."""
    return mode | ((mode & 0o444) >> 2) if executable else mode & ~0o111


def _deletions(plan: Plan, source: Scan, dest: Scan, dest_rules: IgnoreRules, blocked: set[str]) -> None:
    for scan, which in ((dest, "destination"), (source, "source")):
        if scan.incomplete:
            # a source that could not list everything would have its missing entries' copies deleted
            plan.notes.append(f"nothing deleted: the {which}'s listing may be incomplete ({scan.incomplete})")
            return
    kept = source.kept() | blocked

    def under_kept(path: str) -> bool:
        return path in kept or any(a in kept for a in ancestors(path))

    gone: list[tuple[str, Node]] = []
    protected: list[str] = []
    for path, d in dest.tree.items():
        if path in source.tree or under_kept(path):
            continue
        if not plain(path):
            continue  # never deleted: podtui deletes only what it can name plainly inside the folder
        if dest_rules.covers(path, d.kind == "dir") or _in_their_own_git(path, source):
            protected.append(path)
            continue
        gone.append((path, d))
    for path, d in gone:
        if posixpath.basename(path) == ".gitignore" and _guards(parent(path), protected):
            protected.append(path)  # the rule that keeps them stays too, or the next sync would delete them
            continue
        (plan.rmdirs if d.kind == "dir" else plan.deletes).append(path)
    plan.protected += len(protected)


def _in_their_own_git(path: str, source: Scan) -> bool:
    """Whether `path` is (in) a `.git` of the destination's where the source has none: a repository is never
    deleted by a sync, even with --no-gitignore (then a `.git` the source has is kept in step, deletes and all)."""
    parts = path.split("/")
    return any(part == ".git" and "/".join(parts[: i + 1]) not in source.tree for i, part in enumerate(parts))


def _guards(folder: str, protected: list[str]) -> bool:
    """Whether something under `folder` ("" the top) is kept by the destination's .gitignore files."""
    return any(not folder or p.startswith(folder + "/") for p in protected)


def settle(plan: Plan, source_hashes: Mapping[str, str], dest_hashes: Mapping[str, str]) -> None:
    """Decide the files of `check` by their hashes on both ends: the same bytes only get the source's time (and
    executable bit); others are copied. A source that could not be hashed fails; a destination that could not, is
    copied over."""
    for c in plan.check:
        here, there = source_hashes.get(c.path), dest_hashes.get(c.path)
        if here is None:
            plan.failed.append((c.path, "could not be hashed to compare it"))
        elif here == there:
            plan.touch.append((c.path, c.mtime_ns))
            if c.path in plan.check_modes:
                plan.chmod.append((c.path, plan.check_modes[c.path]))
            plan.settled += 1
            plan.unchanged += 1
        else:
            plan.copies.append(c)
    plan.check = []
