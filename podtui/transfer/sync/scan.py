"""The local folder listed: every file with its size, time and mode, every folder, every symlink with its target;
ignored folders never entered (docs/sync.md#ignore-rules), symlinks never followed (docs/sync.md#what-is-synced)."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from podtui.transfer.sync.ignore import IgnoreRules
from podtui.transfer.sync.tree import Node, Scan, stays_inside

_SPECIAL = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a device file",
    stat.S_IFBLK: "a device file",
    stat.S_IFSOCK: "a socket",
}


def scan_local(
    root: Path, own: IgnoreRules, by: IgnoreRules | None = None, check: Callable[[], None] | None = None
) -> Scan:
    """List `root`. own: this folder's rules, filled with the .gitignore files found here. by: the rules that decide
    what is left out (the source's, when this is the destination); None: `own`, as they are found (a folder's
    .gitignore is read before what the folder holds). check: called now and then (a cancel raises from it)."""
    decide = by or own
    scan = Scan()
    links: dict[str, str] = {}
    pending = [""]
    while pending:
        if check is not None:
            check()
        rel = pending.pop()
        here = root / rel if rel else root
        try:
            with os.scandir(here) as it:
                found = sorted(it, key=lambda d: d.name)
        except OSError as e:
            if not rel:
                raise
            scan.skipped.append((rel, f"cannot list it: {e.strerror or e}"))
            scan.unlisted.add(rel)
            continue
        gitignore = next((d for d in found if d.name == ".gitignore"), None)
        if gitignore is not None and own.gitignore:
            text = _read_gitignore(gitignore.path)
            if text is not None:
                own.add_gitignore(rel, text)
        for d in found:
            path = f"{rel}/{d.name}" if rel else d.name
            try:
                st = d.stat(follow_symlinks=False)
            except OSError as e:
                scan.skipped.append((path, f"cannot read it: {e.strerror or e}"))
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            if decide.ignored(path, is_dir):
                scan.ignored += 1
                continue
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                try:
                    links[path] = os.readlink(d.path)
                except OSError as e:
                    scan.skipped.append((path, f"cannot read the symlink: {e.strerror or e}"))
            elif is_dir:
                scan.tree[path] = Node("dir", mode=mode)
                pending.append(path)
            elif stat.S_ISREG(st.st_mode):
                readable = os.access(d.path, os.R_OK)
                scan.tree[path] = Node("file", st.st_size, st.st_mtime_ns, mode, readable=readable)
            else:
                what = _SPECIAL.get(stat.S_IFMT(st.st_mode), "a special file")
                scan.skipped.append((path, f"{what}: not copied"))
    for path, target in links.items():
        if stays_inside(links, path):
            scan.tree[path] = Node("link", target=target)
        else:
            scan.skipped.append((path, f"a symlink out of the folder ({target}): not followed"))
    return scan


def _read_gitignore(path: str) -> str | None:
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):  # a link or a FIFO named .gitignore: git reads neither here
            return None
        with open(path, "rb") as f:
            return f.read(1 << 20).decode("utf-8", "surrogateescape")
    except OSError:
        return None
