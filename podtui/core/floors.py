"""Installed versions of what podtui needs, checked against the floors podtui's own package metadata declares.

An older runpod SDK or huggingface_hub than podtui was written for does not fail cleanly: runpod before 1.8.1
takes no key per call, and every call would end in a message that blames RunPod. The check reads versions from
package metadata (no import) and says which package to upgrade. The floors are written once, in pyproject.toml.
"""

from __future__ import annotations

import functools
import re

_NAME = re.compile(r"^\s*([A-Za-z0-9_.-]+)")
_AT_LEAST = re.compile(r">=\s*([0-9][0-9.]*)")


class InstallTooOld(RuntimeError):
    """A package podtui depends on is installed at a version below podtui's floor. str(e) says what to run."""


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


@functools.cache
def floor(package: str) -> tuple[int, ...] | None:
    """The lowest version podtui declares for `package`, from its installed metadata (None when not declared)."""
    from importlib import metadata  # read when a floor is checked, not by every importer (a few ms)

    try:
        requires = metadata.requires("podtui") or []
    except metadata.PackageNotFoundError:  # run from a source tree without being installed
        return None
    wanted = _normalise(package)
    for line in requires:
        spec = line.split(";")[0]
        name, at_least = _NAME.match(spec), _AT_LEAST.search(spec)
        if name and at_least and _normalise(name.group(1)) == wanted:
            return _version(at_least.group(1))
    return None


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def require(package: str) -> None:
    """Raise InstallTooOld when `package` is installed below podtui's floor for it."""
    need = floor(package)
    if need is None:
        return
    from importlib import metadata

    try:
        have_text = metadata.version(package)
    except metadata.PackageNotFoundError:
        return  # not installed at all: the import that follows says so in its own words
    if _version(have_text) < need:
        want = ".".join(map(str, need))
        raise InstallTooOld(
            f"{package} {have_text} is installed, but podtui needs {want} or newer: "
            f"run `pip install -U '{package}>={want}'`"
        )
