"""Where a file stays until its checksum matches: a hidden part file next to its final name, on either end."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from pathlib import Path

SUFFIX = ".podtui-part"
Progress = Callable[[int, int], None]  # (bytes done, bytes in all), as every route reports it


def remote_part(final: str, tag: str = "") -> str:
    """tag: the job's id, so two transfers aimed at the same name never share a part file."""
    head, tail = posixpath.split(final)
    return posixpath.join(head, f".{tail}{'.' + tag if tag else ''}{SUFFIX}")


def local_part(final: Path, tag: str = "") -> Path:
    return final.parent / f".{final.name}{'.' + tag if tag else ''}{SUFFIX}"
