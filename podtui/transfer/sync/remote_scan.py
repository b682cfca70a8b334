"""The pod's folder listed in one command: `find -printf` with NUL-separated fields, its `.gitignore` files in a tar,
the files it cannot read; written to files on the pod and read back in checked chunks, then the same rules applied
here as to the local folder (docs/sync.md#ignore-rules)."""

from __future__ import annotations

import io
import posixpath
import tarfile
from collections.abc import Callable

from podtui.transfer.sync.ignore import IgnoreRules
from podtui.transfer.sync.pod_batch import PodBatchError, PodTemp, decoded, said
from podtui.transfer.sync.tree import STAGE_PREFIX, Node, Scan, ancestors, parse_time, stays_inside

LIST_TIMEOUT_S = 600.0
_KINDS = {"p": "a FIFO (named pipe)", "c": "a device file", "b": "a device file", "s": "a socket"}


def _script(gitignore: bool) -> str:
    prune = f"\\( -path './{STAGE_PREFIX}*'" + (" -o -name .git" if gitignore else "") + " \\) -prune -o"
    gitignores = (
        f"find . -mindepth 1 {prune} -type f -name .gitignore -print0 2>/dev/null | "
        'tar --null --no-recursion -T - -czf "$T/g" 2>/dev/null'
        if gitignore
        else ': > "$T/g"'
    )
    return (
        'if [ ! -e "$R" ] && [ ! -L "$R" ]; then echo "podtui-root missing"; exit 0; fi; '
        'if [ ! -d "$R" ]; then echo "podtui-root notdir"; exit 0; fi; '
        'cd -- "$R" 2>/dev/null || { echo "podtui-root unreadable"; exit 0; }; '
        'echo "podtui-root dir"; '
        f'find . -mindepth 1 {prune} -printf \'%y %s %T@ %m %P\\0%l\\0\' > "$T/l" 2> "$T/e"; rc=$?; '
        f"{gitignores}; "
        f"find . -mindepth 1 {prune} -type f ! -readable -printf '%P\\0' > \"$T/u\" 2>/dev/null; "
        'echo "podtui-scan $rc $(stat -c %s -- "$T/l") $(stat -c %s -- "$T/g") $(stat -c %s -- "$T/u") '
        '$(head -c 2000 -- "$T/e" | base64 -w0)"'
    )


def scan_remote(
    temp: PodTemp, own: IgnoreRules, by: IgnoreRules | None = None, check: Callable[[], None] | None = None
) -> Scan:
    """List the pod's folder (temp.root). own, by: as scan.scan_local."""
    result = temp.run(_script(own.gitignore), LIST_TIMEOUT_S)
    root = said(result.output, "root")
    if root == ["missing"]:
        return Scan(missing=True)
    if root == ["notdir"]:
        raise PodBatchError(f"{temp.root} on the pod is a file, not a folder")
    if root == ["unreadable"]:
        raise PodBatchError(f"cannot enter {temp.root} on the pod: permission denied")
    answer = said(result.output, "scan")
    if answer is None or len(answer) < 4 or not all(w.isdigit() for w in answer[:4]):
        raise PodBatchError(
            f"cannot list {temp.root} on the pod: {result.output.strip()[-200:] or f'exit {result.exit_code}'}"
        )
    rc, sizes = int(answer[0]), [int(w) for w in answer[1:4]]
    errors = decoded(answer[4]) if len(answer) > 4 else ""
    listing = temp.get("l", sizes[0])
    if check is not None:
        check()
    packed = temp.get("g", sizes[1])
    unreadable = {n.decode("utf-8", "surrogateescape") for n in temp.get("u", sizes[2]).split(b"\0") if n}
    scan = Scan(incomplete=f"find said: {errors.strip()[:200]}" if rc != 0 else "")
    for folder, text in _gitignores(packed).items():
        own.add_gitignore(folder, text)
    _fill(scan, _entries(listing, temp.root), unreadable, by or own)
    return scan


def _gitignores(packed: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    if not packed:
        return found
    try:
        with tarfile.open(fileobj=io.BytesIO(packed), mode="r:gz") as tar:
            for member in tar:
                f = tar.extractfile(member) if member.isfile() and member.size <= 1 << 20 else None
                if f is None:
                    continue
                name = member.name.removeprefix("./")
                found[posixpath.dirname(name)] = f.read().decode("utf-8", "surrogateescape")
    except (tarfile.TarError, EOFError, OSError) as e:
        raise PodBatchError(f"the pod's .gitignore files arrived unreadable: {e}") from None
    return found


def _entries(listing: bytes, root: str) -> dict[str, tuple[str, int, int, int, str]]:
    """path -> (find's kind letter, size, mtime ns, mode, symlink target)."""
    parts = listing.split(b"\0")
    if len(parts) % 2 != 1 or parts[-1] != b"":
        raise PodBatchError(f"the pod's listing of {root} ends in the middle of an entry")
    out = {}
    for i in range(0, len(parts) - 1, 2):
        head = parts[i].split(b" ", 4)
        try:
            kind, size, mtime, mode = head[0].decode(), int(head[1]), parse_time(head[2].decode()), int(head[3], 8)
        except (ValueError, IndexError, UnicodeDecodeError):
            raise PodBatchError(
                f"the pod's listing of {root} could not be understood (entry {i // 2 + 1}: {parts[i][:80]!r}); "
                "its find may print another format than GNU's"
            ) from None
        path = head[4].decode("utf-8", "surrogateescape") if len(head) == 5 else ""
        if path:
            out[path] = (
                kind,
                size,
                mtime,
                mode,
                parts[i + 1].decode("utf-8", "surrogateescape") if kind == "l" else "",
            )
    return out


def _fill(
    scan: Scan, entries: dict[str, tuple[str, int, int, int, str]], unreadable: set[str], rules: IgnoreRules
) -> None:
    """The listing through the rules: an ignored folder is left out with everything under it, once."""
    dropped: set[str] = set()
    links: dict[str, str] = {}
    for path in sorted(entries):
        if any(a in dropped for a in ancestors(path)):
            continue
        kind, size, mtime, mode, target = entries[path]
        if rules.ignored(path, kind == "d"):
            scan.ignored += 1
            dropped.add(path)
            continue
        if kind == "d":
            scan.tree[path] = Node("dir", mode=mode)
        elif kind == "f":
            scan.tree[path] = Node("file", size, mtime, mode, readable=path not in unreadable)
        elif kind == "l":
            links[path] = target
        else:
            scan.skipped.append((path, f"{_KINDS.get(kind, 'a special file')}: not copied"))
    for path, target in links.items():
        if stays_inside(links, path):
            scan.tree[path] = Node("link", target=target)
        else:
            scan.skipped.append((path, f"a symlink out of the folder ({target}): not followed"))
