"""What a folder holds, entry by entry: every file with its size and checksum, every subfolder, every symlink
with its target. A folder transfer is verified by comparing the source's manifest with the manifest of what
arrived, unpacked, before it is renamed into place: the same set of entries, each file's checksum equal. So a
folder that arrived as a link, empty, short of a file or with a damaged one is never called verified.

What a folder may hold, as rsync -a and cp -r copy it: files, folders, and relative symlinks that stay inside
the folder, kept as symlinks (resolved the way the kernel would, through the folder's other symlinks). Refused
before anything moves (retrying cannot help): a symlink to an absolute path or out of the folder (on the other
end it would point at something else, or at nothing), FIFOs, devices and sockets; here, a file podtui cannot read.

On the pod, the listing and the checksums of a folder of any size are written to files in a private folder
(mktemp -d) and read back in chunks, each checked by its own sha256 (routes.console.read_remote): a command's output
is kept only up to a cap (run_remote), which a few hundred thousand names would pass. That folder is removed
afterwards however the listing went, as long as the connection lasts.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import os
import posixpath
import re
import shlex
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from podtui.core.ssh.errors import RemoteTimeout
from podtui.core.ssh.remote import RemoteShell
from podtui.transfer.checksum import Algorithm, local_digest
from podtui.transfer.routes.console import ConsoleTransferError, read_remote

log = logging.getLogger(__name__)
HASH_BYTES_PER_S = 20e6  # a slow disk's hashing speed, for the pod command's time limit
MAX_HOPS = 40  # symlinks followed while resolving one, as Linux's own limit
SHOWN = 5  # problems or differences named in a message
_KINDS = {
    "f": "file",
    "d": "folder",
    "l": "symlink",
    "p": "FIFO (named pipe)",
    "c": "device file",
    "b": "device file",
    "s": "socket",
    "D": "door",
}
_HEX_LEN = {"sha256": 64, "sha1": 40, "md5": 32}


class ManifestError(Exception):
    """A folder could not be listed or checked; the message says where and why. retryable: whether another
    attempt may do better (a listing podtui cannot make sense of will not: the bytes are not sent again)."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(message)
        self.retryable = retryable


class FolderRefused(Exception):
    """The folder holds what podtui does not copy; the message names it."""


@dataclass(frozen=True)
class Entry:
    kind: str  # find's %y letter: f file, d folder, l symlink, p FIFO, c/b device, s socket
    size: int = 0  # files only
    digest: str = ""  # files: the checksum; symlinks: the target, as written

    def describe(self) -> str:
        return _KINDS.get(self.kind, "special file")


Manifest = dict[str, Entry]  # path inside the folder ("a/b.bin") -> its entry


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")  # as os.fsdecode does here: both ends' names compare equal


# -- listing ---------------------------------------------------------------------------------------------


def scan_local(top: Path) -> Manifest:
    """Every entry under `top` (not following symlinks), files without their checksums yet."""
    entries: Manifest = {}
    pending = [""]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(top / rel if rel else top) as it:
                found = list(it)
        except OSError as e:
            raise ManifestError(f"cannot list {top / rel}: {e.strerror or e}") from None
        for d in found:
            path = f"{rel}/{d.name}" if rel else d.name
            try:
                mode = d.stat(follow_symlinks=False).st_mode
                if stat.S_ISLNK(mode):
                    entries[path] = Entry("l", 0, os.readlink(d.path))
                elif stat.S_ISDIR(mode):
                    entries[path] = Entry("d")
                    pending.append(path)
                elif stat.S_ISREG(mode):
                    if not os.access(d.path, os.R_OK):  # found now, before anything is written on either end
                        raise PermissionError(13, "Permission denied")
                    entries[path] = Entry("f", d.stat(follow_symlinks=False).st_size)
                else:
                    kind = (
                        "p"
                        if stat.S_ISFIFO(mode)
                        else "c"
                        if stat.S_ISCHR(mode)
                        else "b"
                        if stat.S_ISBLK(mode)
                        else "s"
                        if stat.S_ISSOCK(mode)
                        else "?"
                    )
                    entries[path] = Entry(kind)
            except OSError as e:
                raise ManifestError(f"cannot read {d.path}: {e.strerror or e}") from None
    return entries


def hash_local(top: Path, entries: Manifest, algorithm: Algorithm, check: Callable[[], None] | None = None) -> Manifest:
    """`entries` with each file's checksum. check: called as it reads (a cancel raises from it)."""
    done: Manifest = {}
    for path, e in entries.items():
        if e.kind == "f":
            digest = local_digest(top / path, algorithm, on_progress=(lambda _n: check()) if check else None)
            size = (top / path).stat().st_size
            done[path] = Entry("f", size, digest)
        else:
            done[path] = e
    return done


_MARK = re.compile(r"podtui-(scan|sums) (\d+)((?: \d+)+) ([A-Za-z0-9+/=]+) ([A-Za-z0-9+/=]*)")
# a private folder on the pod for one listing; its path travels as base64, like every name, and is said at once,
# so that it is removed even when the script fails before its last line
_STAGE = (
    't=$(mktemp -d "${TMPDIR:-/tmp}/podtui-list.XXXXXX") || exit 4; '
    'echo "podtui-stage $(printf %s "$t" | base64 -w0)"; '
)
_STAGED_AT = re.compile(r"podtui-stage ([A-Za-z0-9+/=]+)")
_STAGE_PREFIX = "podtui-list."
LIST_TIMEOUT_S = 600.0
CLEANUP_TIMEOUT_S = 60.0
_SAID = '$(printf %s "$t" | base64 -w0) $(head -c 2000 -- "$t/e" | base64 -w0)'


@dataclass(frozen=True)
class _Staged:
    rc: int
    sizes: list[int]
    folder: str
    errors: str


@contextmanager
def _staged(shell: RemoteShell, top: str, what: str, script: str, timeout_s: float) -> Iterator[_Staged]:
    """Run `script` in `top` on the pod with $t a private folder for its files; yield what its last line said
    (podtui-WORD RC SIZE... FOLDER ERRORS), and remove the folder afterwards, whatever happened (as long as the
    connection lasts: a dropped one cannot, and the error that dropped it is the one raised)."""
    try:
        result = shell.run(f"( cd -- {shlex.quote(top)} || exit 3; {_STAGE}{script} )", timeout_s=timeout_s)
    except RemoteTimeout as e:  # interrupted: the folder it made may be there
        if e.session_usable:
            _remove_stage(shell, _stage_said(e.output))
        raise
    folder = _stage_said(result.output)
    try:
        m = _MARK.search(result.output)
        if m is None:
            said = result.output.strip()[-200:] or f"exit status {result.exit_code}, no output"
            raise ManifestError(f"cannot {what} {top} on the pod: {said}")
        try:
            listed = base64.b64decode(m.group(4), validate=True).decode("utf-8", "surrogateescape")
            errors = _name(base64.b64decode(m.group(5), validate=True)).strip()
        except (binascii.Error, ValueError):
            raise ManifestError(f"cannot {what} {top} on the pod: its answer was damaged on the way") from None
        folder = listed if _is_stage(listed) else folder
        yield _Staged(int(m.group(2)), [int(n) for n in m.group(3).split()], listed, errors)
    finally:
        _remove_stage(shell, folder)


def _is_stage(folder: str) -> bool:
    return posixpath.basename(folder).startswith(_STAGE_PREFIX)


def _stage_said(output: str) -> str | None:
    """The staging folder the script made, as its first line said; None when it said none (or not one of ours)."""
    m = _STAGED_AT.search(output)
    if m is None:
        return None
    try:
        folder = base64.b64decode(m.group(1), validate=True).decode("utf-8", "surrogateescape")
    except (binascii.Error, ValueError):
        return None
    return folder if _is_stage(folder) else None


def _remove_stage(shell: RemoteShell, folder: str | None) -> None:
    """Remove a staging folder on the pod; a failure is logged, never raised: it would replace the error that
    brought us here (a dropped connection fails this too), and a listing that worked stays good."""
    if folder is None:
        return
    try:
        shell.run(f"rm -rf -- {shlex.quote(folder)}", timeout_s=CLEANUP_TIMEOUT_S)
    except Exception as e:
        log.warning("could not remove %s on the pod: %s", folder, e)


def _fetched(shell: RemoteShell, path: str, size: int, top: str, check: Callable[[], None] | None) -> bytes:
    try:
        return read_remote(shell, path, size, check=check)
    except ConsoleTransferError as e:
        raise ManifestError(f"cannot read the listing of {top} from the pod: {e}") from None


def _unreadable(top: str, why: str) -> ManifestError:
    """A listing that arrived intact (each chunk checked) but that podtui cannot make sense of: another attempt
    would get the same, so the transfer is not retried."""
    return ManifestError(
        f"the pod's listing of {top} could not be understood ({why}); nothing was put in place. "
        "The pod's find or coreutils may print another format than GNU's",
        retryable=False,
    )


def scan_remote(shell: RemoteShell, top: str, check: Callable[[], None] | None = None) -> Manifest:
    """Every entry under the pod's folder `top`, as find lists it (not following symlinks). check: called between
    the chunks read (a cancel raises from it)."""
    script = (
        'find . -mindepth 1 -printf \'%y %s %P\\0%l\\0\' > "$t/l" 2> "$t/e"; rc=$?; '
        f'echo "podtui-scan $rc $(stat -c %s -- "$t/l") {_SAID}"'
    )
    with _staged(shell, top, "list", script, LIST_TIMEOUT_S) as staged:
        if staged.rc != 0:
            raise ManifestError(f"cannot list {top} on the pod: {staged.errors[:200] or 'find failed'}")
        listing = _fetched(shell, f"{staged.folder}/l", staged.sizes[0], top, check)
    parts = listing.split(b"\0")
    if len(parts) % 2 != 1 or parts[-1] != b"":
        raise _unreadable(top, f"it ends in the middle of an entry, after {len(parts) // 2} entries")
    entries: Manifest = {}
    for i in range(0, len(parts) - 1, 2):
        head = parts[i].split(b" ", 2)
        if len(head) != 3 or len(head[0]) != 1 or not head[1].isdigit() or not head[2]:
            raise _unreadable(top, f"entry {i // 2 + 1} is not a kind, a size and a name: {parts[i][:80]!r}")
        letter, path = head[0].decode("ascii", "replace"), _name(head[2])
        if letter == "l":
            entries[path] = Entry("l", 0, _name(parts[i + 1]))
        elif letter == "f":
            entries[path] = Entry("f", int(head[1]))
        else:
            entries[path] = Entry(letter)
    return entries


def hash_remote(
    shell: RemoteShell, top: str, entries: Manifest, algorithm: Algorithm, check: Callable[[], None] | None = None
) -> Manifest:
    """`entries` with each file's checksum, computed on the pod in one command (files in find's order, sums in
    the same order: names are matched by position, never parsed out of the tool's output)."""
    total = sum(e.size for e in entries.values() if e.kind == "f")
    script = (
        'find . -mindepth 1 -type f -print0 > "$t/f" 2> "$t/e"; '
        f'xargs -0 -r {algorithm}sum -- < "$t/f" > "$t/s" 2>> "$t/e"; rc=$?; '
        f'echo "podtui-sums $rc $(stat -c %s -- "$t/f") $(stat -c %s -- "$t/s") {_SAID}"'
    )
    with _staged(shell, top, f"compute {algorithm}sum in", script, 120 + total / HASH_BYTES_PER_S) as staged:
        if staged.rc != 0 or len(staged.sizes) != 2:
            raise ManifestError(
                f"{algorithm}sum in {top} on the pod failed: {staged.errors[:200] or f'exit status {staged.rc}'}"
            )
        names = _fetched(shell, f"{staged.folder}/f", staged.sizes[0], top, check)
        sums = _fetched(shell, f"{staged.folder}/s", staged.sizes[1], top, check)
    files = [_name(n[2:] if n.startswith(b"./") else n) for n in names.split(b"\0")[:-1]]
    pattern = re.compile(rb"^\\?([0-9a-f]{%d}) " % _HEX_LEN[algorithm])
    digests = [m.group(1).decode() if (m := pattern.match(line)) else None for line in sums.split(b"\n")[: len(files)]]
    if len(digests) != len(files) or None in digests:
        bad = next((i for i, d in enumerate(digests) if d is None), len(digests))
        raise _unreadable(
            top,
            f"{algorithm}sum gave {len(digests)} lines for {len(files)} files, and line {bad + 1} "
            "is not a checksum and a name",
        )
    done = {p: e for p, e in entries.items() if e.kind != "f"}
    listed = {p for p, e in entries.items() if e.kind == "f"}
    if set(files) != listed:
        raise ManifestError(f"{top} changed on the pod while it was read (files came and went)")
    for path, digest in zip(files, digests, strict=True):
        done[path] = Entry("f", entries[path].size, str(digest))
    return done


# -- what may be copied ----------------------------------------------------------------------------------


def stays_inside(entries: Manifest, path: str) -> bool:
    """Whether the relative symlink at `path` resolves inside the folder, through the folder's own symlinks as
    the kernel would (`self -> .` then `x -> self/../y` leaves it). A loop among them stays inside."""
    stack = path.split("/")[:-1]
    pending = entries[path].digest.split("/")
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
        e = entries.get(here)
        if e is not None and e.kind == "l":
            hops += 1
            if hops > MAX_HOPS:
                return True  # a loop: no file outside is ever reached through it
            if e.digest.startswith("/"):
                return False
            pending = e.digest.split("/") + pending  # relative to the folder holding that link
            continue
        stack.append(part)
    return True


def problems(entries: Manifest) -> list[str]:
    found = []
    for path in sorted(entries):
        e = entries[path]
        if e.kind == "l" and e.digest.startswith("/"):
            found.append(f"{path} is a symlink to an absolute path ({e.digest})")
        elif e.kind == "l" and not stays_inside(entries, path):
            found.append(f"{path} is a symlink out of the folder ({e.digest})")
        elif e.kind not in ("f", "d", "l"):
            found.append(f"{path} is a {e.describe()}")
    return found


def refuse(entries: Manifest, shown: str) -> None:
    """Raise FolderRefused when the folder holds anything podtui does not copy."""
    found = problems(entries)
    if found:
        more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
        raise FolderRefused(
            f"{shown} holds what podtui does not copy: {'; '.join(found[:SHOWN])}{more}. podtui "
            "copies files, folders and symlinks that stay inside the folder (kept as symlinks); "
            "a FIFO, device, socket or a symlink leading out of the folder would not arrive as "
            "it is. Remove or replace them, then retry"
        )


# -- comparing -------------------------------------------------------------------------------------------


def differences(source: Manifest, arrived: Manifest) -> list[str]:
    found = []
    for path in sorted(source.keys() | arrived.keys()):
        want, got = source.get(path), arrived.get(path)
        if got is None:
            found.append(f"{path} missing")
        elif want is None:
            found.append(f"{path} not in the source")
        elif want.kind != got.kind:
            found.append(f"{path} is a {got.describe()}, not a {want.describe()}")
        elif want.kind == "f" and want.size != got.size:
            found.append(f"{path} has {got.size} bytes, not {want.size}")
        elif want != got:
            found.append(f"{path} differs" if want.kind == "f" else f"{path} points to {got.digest}, not {want.digest}")
    return found


def summary(source: Manifest, arrived: Manifest) -> str | None:
    """None when the two match; else a message naming the first differences."""
    found = differences(source, arrived)
    if not found:
        return None
    more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    return f"{len(found)} differences: {'; '.join(found[:SHOWN])}{more}"


def digest(entries: Manifest, algorithm: Algorithm = "sha256") -> str:
    """One checksum standing for the whole folder (the queue's checksum column): over every entry, sorted."""
    h = hashlib.new(algorithm)
    for path in sorted(entries):
        e = entries[path]
        h.update(f"{e.kind}\0{e.size}\0{e.digest}\0{path}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def shape(entries: Manifest) -> str:
    """A checksum of what a folder holds that reading no file can tell: every entry's path and kind, each file's
    size and each symlink's target. What a verified folder is recorded as, to check it is still so (pull.landed)."""
    h = hashlib.sha256()
    for path in sorted(entries):
        e = entries[path]
        h.update(
            f"{e.kind}\0{e.size if e.kind == 'f' else 0}\0{e.digest if e.kind == 'l' else ''}\0{path}\0".encode(
                "utf-8", "surrogateescape"
            )
        )
    return h.hexdigest()


def counts(entries: Manifest) -> str:
    n = {k: sum(1 for e in entries.values() if e.kind == k) for k in ("f", "d", "l")}
    size = sum(e.size for e in entries.values() if e.kind == "f")
    links = f", {n['l']} symlinks" if n["l"] else ""
    return f"{n['f']} files ({size} bytes), {n['d']} folders{links}"
