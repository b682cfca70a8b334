"""What a sync leaves out: `.gitignore` files at every level as git reads them, `.git` itself, and `--exclude`
patterns, which win over them (docs/sync.md#ignore-rules)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence

from pathspec import GitIgnoreSpec

from podtui.transfer.sync.tree import STAGE_PREFIX


class BadPattern(ValueError):
    """An --exclude pattern that is not gitignore syntax; the message names it."""


def _spec(lines: Iterable[str]) -> tuple[GitIgnoreSpec, list[str]]:
    """A spec of the lines that are patterns, and the lines that are not (git skips a bad pattern, and so does
    podtui: the rest of the file still counts)."""
    lines = list(lines)
    try:
        return GitIgnoreSpec.from_lines(lines), []
    except Exception:  # pathspec raises re.error or its own pattern error, depending on its version
        good, bad = [], []
        for line in lines:
            try:
                GitIgnoreSpec.from_lines([line])
                good.append(line)
            except Exception:
                bad.append(line)
        return GitIgnoreSpec.from_lines(good), bad


_DIR_MARK = "ps_d"  # pathspec's group for the `/` after a folder's name


class _Patterns:
    """One file's patterns (or --exclude's), in order. `decide(probe)`: the last pattern that matches the path itself
    decides, as git does for a path whose folders are not ignored. pathspec's GitIgnoreSpec ranks a file pattern
    above a folder pattern, which is right for a path inside an ignored folder (never asked here) but wrong for the
    folder itself: after `*`, `!*/` must bring every folder back (docs/sync.md#ignore-rules)."""

    def __init__(self, spec: GitIgnoreSpec) -> None:
        self.rules: list[tuple[re.Pattern[str], bool]] = []
        for pattern in spec.patterns:
            regex = getattr(pattern, "regex", None)
            if pattern.include is None or regex is None:
                continue
            if _DIR_MARK in regex.groupindex:
                # a match that stops at the `/` after a folder above the path is that folder's, not the path's
                regex = re.compile(f"(?:{regex.pattern})(?({_DIR_MARK})\\Z)", regex.flags)
            self.rules.append((regex, pattern.include))

    def __bool__(self) -> bool:
        return bool(self.rules)

    def decide(self, probe: str) -> bool | None:
        """True: ignored; False: brought back by a negation; None: no pattern matches. probe: a folder ends in `/`."""
        decided = None
        for regex, include in self.rules:
            if regex.search(probe) is not None:
                decided = include
        return decided


def check_excludes(patterns: Sequence[str]) -> None:
    """Raise BadPattern for an --exclude that is not a pattern."""
    _, bad = _spec(patterns)
    if bad:
        raise BadPattern(f"--exclude {bad[0]!r} is not a gitignore pattern")


class IgnoreRules:
    """The rules of one end: its `.gitignore` files (added folder by folder, as they are found), `.git`, and the
    --exclude patterns. `ignored(path, is_dir)` answers for a path whose folders above it are not ignored (a scan
    never enters an ignored folder, as git never does)."""

    def __init__(self, excludes: Sequence[str] = (), gitignore: bool = True, fixed: Iterable[str] = ()) -> None:
        self.gitignore = gitignore
        self.fixed = frozenset(fixed)  # paths never synced whatever the rules say: podtui's own folders on the pod
        self.excludes = _Patterns(_spec(excludes)[0])
        self._levels: dict[str, _Patterns] = {}  # folder ("" the top) -> its .gitignore's patterns
        self.bad: list[tuple[str, str]] = []  # (folder, line) skipped as no pattern

    def add_gitignore(self, folder: str, text: str) -> None:
        """Folder `folder`'s .gitignore (read only when gitignore files count)."""
        if not self.gitignore:
            return
        spec, bad = _spec(text.splitlines())
        self.bad += [(folder, line) for line in bad]
        patterns = _Patterns(spec)
        if patterns:
            self._levels[folder] = patterns

    def ignored(self, path: str, is_dir: bool) -> bool:
        name = posixpath.basename(path)
        if "/" not in path and name.startswith(STAGE_PREFIX):
            return True  # podtui's own working folder
        if path in self.fixed:
            return True
        if self.gitignore and name == ".git":
            return True
        probe = path + "/" if is_dir else path  # a folder-only pattern (`build/`) matches only with the slash
        decided = self.excludes.decide(probe)
        if decided is not None:
            return decided
        folder = posixpath.dirname(path)
        while True:  # the deepest .gitignore that has a say decides (git's precedence)
            spec = self._levels.get(folder)
            if spec is not None:
                rel = probe[len(folder) + 1 :] if folder else probe
                decided = spec.decide(rel)
                if decided is not None:
                    return decided
            if not folder:
                return False
            folder = posixpath.dirname(folder)

    def covers(self, path: str, is_dir: bool) -> bool:
        """Whether `path` is left out, by itself or by a folder above it being ignored (for --watch, which hears
        of paths deep inside folders a scan never enters)."""
        parts = path.split("/")
        for i in range(1, len(parts)):
            if self.ignored("/".join(parts[:i]), True):
                return True
        return self.ignored(path, is_dir)
