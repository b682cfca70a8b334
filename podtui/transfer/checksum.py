"""Checksums on both ends of a transfer: locally with hashlib, on the pod with coreutils through a RemoteShell.

sha256 by default; sha1 and md5 too, for people who compare md5 sums by hand.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # the job model imports this module; it should not load paramiko
    from podtui.core.ssh.remote import RemoteShell

Algorithm = Literal["sha256", "sha1", "md5"]
ALGORITHMS: tuple[Algorithm, ...] = ("sha256", "sha1", "md5")
_HEX_LEN = {"sha256": 64, "sha1": 40, "md5": 32}
_CHUNK = 1 << 20


class ChecksumError(Exception):
    """A checksum could not be computed; the message says where and why."""


def local_digest(path: Path, algorithm: Algorithm = "sha256", on_progress: Callable[[int], None] | None = None) -> str:
    h = hashlib.new(algorithm)
    done = 0
    try:
        with path.open("rb") as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
                done += len(chunk)
                if on_progress is not None:
                    on_progress(done)
    except OSError as e:
        raise ChecksumError(f"cannot read {path}: {e.strerror or e}") from None
    return h.hexdigest()


def remote_digest(shell: RemoteShell, path: str, algorithm: Algorithm = "sha256", timeout_s: float = 600.0) -> str:
    """`sha256sum` (or sha1sum, md5sum) on the pod; a large model file takes a while, hence the long timeout."""
    result = shell.run(f"{algorithm}sum -- {shlex.quote(path)}", timeout_s=timeout_s)
    line = result.output.strip().splitlines()[-1] if result.output.strip() else ""
    m = re.match(rf"\\?([0-9a-f]{{{_HEX_LEN[algorithm]}}})\s", line + " ")
    if result.exit_code != 0 or m is None:
        raise ChecksumError(f"{algorithm}sum of {path} on the pod failed: {result.output.strip() or 'no output'}")
    return m.group(1)
