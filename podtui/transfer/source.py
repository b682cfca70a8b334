"""What the named source of a transfer is, on this machine or on the pod: a file, a folder, or something refused.

A symlink given as the source is followed, as `cp -r src/` and rsync do for the source they are named: pulling
`outputs -> runs/run-7` copies run-7's files, under the name `outputs`. Refused at once, before anything is
written on either end (retrying cannot help): a source that does not exist, a symlink to nothing, a symlink
loop, and anything that is neither a regular file nor a folder (a FIFO, which would block the reader forever; a
device such as /dev/zero, which never ends; a socket).
"""

from __future__ import annotations

import base64
import errno
import os
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from podtui.core.ssh.remote import RemoteShell

Kind = Literal["file", "dir"]
ONLY = "podtui copies regular files and folders (and the symlinks inside a folder that stay inside it)"
_SPECIAL = {
    "fifo": "a FIFO (named pipe)",
    "character special file": "a device file",
    "block special file": "a device file",
    "socket": "a socket",
}


class SourceRefused(Exception):
    """The source cannot be copied as it is; the message says why. kind: not_found, link_loop, special,
    unreadable, or probe (the pod's answer about it did not arrive whole: the only kind a retry may fix)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.retryable = kind == "probe"


@dataclass(frozen=True)
class Source:
    kind: Kind
    real: str  # the path that is read: the source itself, or where its symlink leads
    link: str | None = None  # the symlink's own text when the source is one

    @property
    def folder(self) -> bool:
        return self.kind == "dir"


def _special(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return _SPECIAL["fifo"]
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return _SPECIAL["block special file"]
    if stat.S_ISSOCK(mode):
        return _SPECIAL["socket"]
    return "neither a file nor a folder"


def refusal(shown: str, link: str | None, what: str, where: str = "") -> SourceRefused:
    if what == "missing":
        if link is None:
            return SourceRefused(f"{shown} does not exist{where}", "not_found")
        return SourceRefused(
            f"{shown} is a symlink to {link}, which does not exist{where}; nothing to copy", "not_found"
        )
    if what == "loop":
        return SourceRefused(
            f"{shown} is a symlink loop{where} (following {link} leads back to a symlink "
            "already followed); nothing to copy",
            "link_loop",
        )
    via = f"a symlink to {link}, which is " if link is not None else ""
    return SourceRefused(f"{shown} is {via}{what}{where}, not a file or folder: {ONLY}", "special")


def local(path: Path) -> Source:
    """This machine's source (a push)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise refusal(str(path), None, "missing") from None
    except OSError as e:
        raise SourceRefused(f"cannot read {path}: {e.strerror or e}", "unreadable") from None
    link = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
    if link is not None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise refusal(str(path), link, "missing") from None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise refusal(str(path), link, "loop") from None
            raise SourceRefused(
                f"cannot follow the symlink {path} -> {link}: {e.strerror or e}", "unreadable"
            ) from None
    if stat.S_ISDIR(st.st_mode):
        kind: Kind = "dir"
    elif stat.S_ISREG(st.st_mode):
        kind = "file"
        if not os.access(path, os.R_OK):  # found now, before anything is written on the pod
            raise SourceRefused(f"cannot read {path}: Permission denied", "unreadable")
    else:
        raise refusal(str(path), link, _special(st.st_mode))
    return Source(kind, os.path.realpath(path) if link is not None else str(path), link)


def remote(shell: RemoteShell, path: str) -> Source:
    """The pod's source (a pull), in one command: whether it is a symlink and to what, what it leads to, and
    its real path. Names travel as base64: the pod's terminal would mangle a name with control characters."""
    q = shlex.quote(path)
    result = shell.run(
        f'( p={q}; b() {{ printf %s "$1" | base64 -w0; }}; '
        f'if [ -L "$p" ]; then echo "link $(b "$(readlink -- "$p")")"; fi; '
        'if t=$(LC_ALL=C stat -L -c %F -- "$p" 2>&1); then echo "type $(b "$t")"; '
        'else echo "error $(b "$t")"; fi; '
        'if r=$(readlink -f -- "$p" 2>/dev/null); then echo "real $(b "$r")"; fi; echo podtui-probe )',
        timeout_s=60,
    )
    said: dict[str, str] = {}
    for line in result.output.splitlines():
        word, _, value = line.strip().partition(" ")
        if word in ("link", "type", "error", "real"):
            try:
                said[word] = base64.b64decode(value, validate=True).decode("utf-8", "surrogateescape")
            except ValueError:
                said[word] = value
    if "podtui-probe" not in result.output:
        raise SourceRefused(
            f"cannot tell what {path} is on the pod: {result.output.strip()[:200] or 'no answer'}", "probe"
        )
    link = said.get("link")
    if "error" in said:
        error = said["error"]
        if "Too many levels of symbolic links" in error:
            raise refusal(path, link, "loop", " on the pod")
        if "No such file" in error or "Not a directory" in error:
            raise refusal(path, link, "missing", " on the pod")
        raise SourceRefused(f"cannot read {path} on the pod: {error.strip()[:200]}", "unreadable")
    kind_text = said.get("type", "")
    if kind_text == "directory":
        kind: Kind = "dir"
    elif kind_text.startswith("regular"):  # "regular file", "regular empty file"
        kind = "file"
    else:
        raise refusal(
            path, link, _SPECIAL.get(kind_text, f"a {kind_text or 'thing of an unknown kind'}"), " on the pod"
        )
    return Source(kind, (said.get("real") or path) if link is not None else path, link)
