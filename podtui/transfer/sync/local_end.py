"""This machine's end of a sync: the local folder listed, files hashed, the working folder, and the changes made
(docs/sync.md#verification, docs/sync.md#deleting). Every path it writes or deletes is checked to resolve inside
the folder first: a symlink planted on the way since the listing is never followed out."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from podtui.transfer.checksum import ChecksumError, local_digest
from podtui.transfer.sync.ignore import IgnoreRules
from podtui.transfer.sync.ops import Applied, Ops
from podtui.transfer.sync.scan import scan_local
from podtui.transfer.sync.tree import STAGE_PREFIX, Scan

STALE_S = 3600.0  # working folders where nothing changed for this long are an earlier sync's that died


def _newest(folder: str) -> float:
    """When anything in `folder` (itself included) last changed: a working folder a sync still writes in is not
    stale, however old the folder itself is."""
    newest = os.stat(folder, follow_symlinks=False).st_mtime
    for here, _dirs, files in os.walk(folder):
        for name in [*_dirs, *files]:
            with contextlib.suppress(OSError):
                newest = max(newest, os.stat(os.path.join(here, name), follow_symlinks=False).st_mtime)
    return newest


class LocalEnd:
    def __init__(self, root: Path, check: Callable[[], None] | None = None) -> None:
        self.root = root
        self.check = check
        self.stage: str | None = None
        self._real = os.path.realpath(root)

    def scan(self, own: IgnoreRules, by: IgnoreRules | None = None) -> Scan:
        if not self.root.exists():
            return Scan(missing=True)
        return scan_local(self.root, own, by, self.check)

    def hash(self, paths: Sequence[str], total_bytes: int = 0) -> dict[str, str]:
        found = {}
        for path in paths:
            try:
                found[path] = local_digest(self.root / path, on_progress=self._checked)
            except ChecksumError:
                continue
        return found

    def _checked(self, _done: int) -> None:
        if self.check is not None:
            self.check()

    def open_stage(self) -> str:
        self.root.mkdir(exist_ok=True)  # a pull makes LOCAL_DIR when its parent is there (checked before)
        now = time.time()
        for entry in os.scandir(self.root):
            if entry.name.startswith(STAGE_PREFIX) and entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if now - _newest(entry.path) > STALE_S:
                        shutil.rmtree(entry.path, ignore_errors=True)
        self.stage = os.path.basename(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=self.root))  # 0700
        return self.stage

    def close_stage(self) -> None:
        if self.stage is not None:
            shutil.rmtree(self.root / self.stage, ignore_errors=True)
            self.stage = None

    def _inside(self, path: str) -> Path:
        """root/path, once the folder holding it resolves inside the root (its own last part is never followed)."""
        full = self.root / path
        parent = os.path.realpath(full.parent)
        if parent != self._real and not parent.startswith(self._real.rstrip("/") + "/"):
            raise OSError(f"{full.parent} leads out of {self.root}: not followed")
        return full

    def apply(self, ops: Ops) -> Applied:
        done = Applied()

        def attempt(path: str, why: str, action: Callable[..., object], *args: object) -> None:
            try:
                action(*args)
            except OSError as e:
                done.failed.setdefault(path, f"{why}: {e.strerror or e}")

        for path in ops.delete:
            attempt(path, "could not be deleted", self._unlink, path)
        for path in ops.rmdir:
            try:
                os.rmdir(self._inside(path))
            except OSError:
                done.kept.append(path)
        for path in ops.mkdir:
            attempt(path, "could not make the folder", self._mkdir, path)
        for path, ns in ops.staged_times:
            with contextlib.suppress(OSError):
                os.utime(self.root / path, ns=(ns, ns), follow_symlinks=False)
        for path, mode in ops.staged_modes:
            with contextlib.suppress(OSError):
                os.chmod(self.root / path, mode)
        moves = ops.singles + [move for _, group in ops.groups for move in group]
        for source, final in moves:
            attempt(final, "could not be put in place", self._replace, source, final)
        for path, target in ops.links:
            attempt(path, "could not make the symlink", self._link, path, target)
        for path, ns in ops.times:
            attempt(path, "could not set its time", self._utime, path, ns)
        for path, mode in ops.modes:
            attempt(path, "could not set its executable bit", self._chmod, path, mode)
        return done

    def _unlink(self, path: str) -> None:
        os.unlink(self._inside(path))

    def _utime(self, path: str, ns: int) -> None:
        os.utime(self._inside(path), ns=(ns, ns))

    def _chmod(self, path: str, mode: int) -> None:
        os.chmod(self._inside(path), mode)

    def _mkdir(self, path: str) -> None:
        full = self._inside(path)
        if full.is_symlink() or (full.exists() and not full.is_dir()):
            raise FileExistsError(17, "something else is in the way")
        full.mkdir(exist_ok=True)

    def _replace(self, source: str, final: str) -> None:
        target = self._inside(final)
        if target.is_dir() and not target.is_symlink():
            raise IsADirectoryError(21, "a folder is in the way")
        os.replace(self.root / source, target)

    def _link(self, path: str, target: str) -> None:
        full = self._inside(path)
        if full.is_dir() and not full.is_symlink():
            raise IsADirectoryError(21, "a folder is in the way")
        assert self.stage is not None
        temp = self.root / self.stage / f".link-{os.getpid()}-{abs(hash(path))}"
        temp.unlink(missing_ok=True)
        os.symlink(target, temp)
        os.replace(temp, full)
