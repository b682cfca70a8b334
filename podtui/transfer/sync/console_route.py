"""The console route: a pod reachable only through RunPod's gateway (a PTY shell, no SFTP). Small files travel in
gzipped tar batches, large ones one by one; every byte in chunks that are each checked by their own sha256
(routes.console, docs/runpod-facts.md#ssh-gateway), into the destination's working folder (docs/sync.md#routes).
A tree of 10,000 small files is a handful of commands."""

from __future__ import annotations

import io
import posixpath
import shlex
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from podtui.core.ssh.remote import RemoteShell
from podtui.transfer.part import remote_part
from podtui.transfer.routes import console
from podtui.transfer.routes.console import ConsoleTransferError
from podtui.transfer.sync.plan import POD_UMASK, Copy, arrival_mode
from podtui.transfer.sync.pod_batch import PodBatchError, PodTemp, decoded, nul_list, said
from podtui.transfer.sync.route import Landed, Moved
from podtui.transfer.sync.state import SyncListener
from podtui.transfer.sync.tree import parent, time_arg

SMALL = 1 << 20  # files up to this size go in batches
BATCH_BYTES = 8 << 20  # of files' bytes in one batch (before gzip)
BATCH_FILES = 2000
_PACK = (
    # --hard-dereference: a file hard-linked to another in the list travels as bytes, not as a link to that one
    'cd -- "$R" || exit 3; tar --null --no-recursion --hard-dereference -T "$T/in/pull" -czf "$T/b.tgz" 2> "$T/b-e"; '
    'echo "podtui-packed $? $(stat -c %s -- "$T/b.tgz" 2>/dev/null || echo 0) $(head -c 500 -- "$T/b-e" | base64 -w0)"'
)


def _batches(items: list[Copy]) -> list[list[Copy]]:
    out: list[list[Copy]] = []
    size = 0
    for c in items:
        if not out or len(out[-1]) >= BATCH_FILES or size + c.size > BATCH_BYTES:
            out.append([])
            size = 0
        out[-1].append(c)
        size += c.size
    return out


class ConsoleRoute:
    name = "console"

    def __init__(
        self,
        shell: RemoteShell,
        temp: PodTemp,
        local_root: Path,
        pull: bool,
        listener: SyncListener,
        check: Callable[[], None],
    ) -> None:
        self.shell, self.temp, self.local_root, self.pull = shell, temp, local_root, pull
        self.remote_root = temp.root
        self.listener, self.check = listener, check
        self.total = 0
        self.done = 0

    def cancel(self) -> None:
        """Seen between chunks and batches (check raises)."""

    def _progress(self, base: int, weight: float) -> Callable[[int, int], None]:
        def report(done: int, total: int) -> None:
            self.check()
            self.listener.progress(base + int(done / max(total, 1) * weight), self.total)

        return report

    def copy(self, items: list[Copy], stage: str) -> Moved:
        moved = Moved()
        self.total = sum(c.size for c in items)
        self.done = 0
        folders: dict[str, int] = {}
        small = [c for c in items if c.size <= SMALL]
        # a large file with a name that is not UTF-8 cannot be named in a command: it goes in a batch of its own
        large = [c for c in items if c.size > SMALL and (not self.pull or _utf8(c.path))]
        alone = [[c] for c in items if c.size > SMALL and self.pull and not _utf8(c.path)]
        for batch in _batches(small) + alone:
            self.check()
            for c in batch:
                self.listener.file_started(c.path, c.size)
            if self.pull:
                self._pull_batch(batch, stage, moved)
            else:
                self._push_batch(batch, stage, folders, moved)
            self.done += sum(c.size for c in batch)
            self.listener.progress(self.done, self.total)
        for c in large:
            self.check()
            self.listener.file_started(c.path, c.size)
            try:
                moved.landed[c.path] = (
                    self._pull_one(c, stage, len(moved.landed))
                    if self.pull
                    else self._push_one(c, stage, len(moved.landed))
                )
            except ConsoleTransferError as e:
                moved.failed[c.path] = str(e)
            except OSError as e:  # this machine's side: a full disk, a file too large, a file gone since the listing
                moved.failed[c.path] = f"{'cannot write it here' if self.pull else 'cannot read it'}: {e.strerror or e}"
            self.done += c.size
            self.listener.progress(self.done, self.total)
        return moved

    # -- this machine -> the pod ------------------------------------------------------------------------------

    def _push_batch(self, batch: list[Copy], stage: str, folders: dict[str, int], moved: Moved) -> None:
        placed: list[tuple[Copy, str]] = []
        with tempfile.TemporaryDirectory(prefix="podtui-sync-") as here:
            packed = Path(here) / "b.tgz"
            with tarfile.open(packed, "w:gz", format=tarfile.PAX_FORMAT) as tar:
                for c in batch:
                    try:
                        data = (self.local_root / c.path).read_bytes()
                    except OSError as e:
                        moved.failed[c.path] = f"cannot read it: {e.strerror or e}"
                        continue
                    k = folders.setdefault(parent(c.path), len(folders))
                    name = f"d{k}/{posixpath.basename(c.path)}"
                    info = tarfile.TarInfo(name)
                    info.size = len(data)
                    info.mode = arrival_mode(c, POD_UMASK)
                    info.mtime = c.mtime_ns // 1_000_000_000
                    info.pax_headers = {"mtime": time_arg(c.mtime_ns)}  # to the nanosecond (GNU tar reads it)
                    tar.addfile(info, io.BytesIO(data))
                    placed.append((c, name))
            if not placed:
                return
            weight = sum(c.size for c, _ in placed)
            try:
                part = console.upload(
                    self.shell, packed, f"{self.remote_root}/{stage}/b.tgz", self._progress(self.done, weight)
                )
            except ConsoleTransferError as e:
                moved.failed.update({c.path: str(e) for c, _ in placed})
                return
        q = shlex.quote(part)
        result = self.shell.run(
            f"(tar -xzf {q} -C {shlex.quote(posixpath.join(self.remote_root, stage))} --no-same-owner; rc=$?; "
            f"rm -f -- {q}; exit $rc)",
            timeout_s=300,
        )
        if result.exit_code != 0:
            why = f"tar on the pod could not unpack it: {result.output.strip()[-200:]}"
            moved.failed.update({c.path: why for c, _ in placed})
            return
        for c, name in placed:
            moved.landed[c.path] = Landed(f"{stage}/{name}", staged=True, group=True)

    def _push_one(self, c: Copy, stage: str, index: int) -> Landed:
        where = f"{stage}/u/{index}"
        console.upload(
            self.shell, self.local_root / c.path, f"{self.remote_root}/{where}", self._progress(self.done, c.size)
        )
        return Landed(remote_part(where), staged=True, needs_time=True, needs_mode=True)

    # -- the pod -> this machine ------------------------------------------------------------------------------

    def _pull_batch(self, batch: list[Copy], stage: str, moved: Moved) -> None:
        wanted = {c.path: c for c in batch}
        try:
            self.temp.put({"pull": nul_list(list(wanted))})
            result = self.temp.run(_PACK, 300 + sum(c.size for c in batch) / 10e6)
        except PodBatchError as e:
            moved.failed.update({p: str(e) for p in wanted})
            return
        answer = said(result.output, "packed")
        pod_said = decoded(answer[2]).strip().splitlines()[:1] if answer and len(answer) > 2 else []
        if answer is None or len(answer) < 2 or answer[1] in ("", "0"):
            why = f"tar on the pod could not pack it: {' '.join(pod_said) or result.output.strip()[-200:]}"
            moved.failed.update({p: why for p in wanted})
            return
        weight = sum(c.size for c in batch)
        local = self.local_root / stage / "b.tgz"
        try:
            part = console.download(self.shell, f"{self.temp.path}/b.tgz", local, self._progress(self.done, weight))
        except ConsoleTransferError as e:
            moved.failed.update({p: str(e) for p in wanted})
            return
        try:
            with tarfile.open(part, "r:gz") as tar:
                for member in tar:
                    c = wanted.get(member.name)
                    source = tar.extractfile(member) if c is not None and member.isfile() else None
                    if c is None or source is None:
                        continue  # not asked for, or not a file's bytes: what was asked for and not found fails below
                    del wanted[member.name]
                    where = f"{stage}/{len(moved.landed)}"
                    with (self.local_root / where).open("wb") as out:
                        while chunk := source.read(1 << 20):
                            out.write(chunk)
                    moved.landed[c.path] = Landed(where, staged=True, needs_time=True, needs_mode=True)
        except (tarfile.TarError, EOFError, OSError) as e:
            moved.failed.update({p: f"the batch from the pod was unreadable: {e}" for p in wanted})
            return
        finally:
            part.unlink(missing_ok=True)
        why = f"tar on the pod did not pack it ({' '.join(pod_said) or 'it said nothing'})"
        moved.failed.update({p: why for p in wanted})

    def _pull_one(self, c: Copy, stage: str, index: int) -> Landed:
        part = console.download(
            self.shell,
            posixpath.join(self.remote_root, c.path),
            self.local_root / stage / str(index),
            self._progress(self.done, c.size),
        )
        return Landed(str(part.relative_to(self.local_root)), staged=True, needs_time=True, needs_mode=True)


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False
