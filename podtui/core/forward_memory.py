"""Which of a pod's ports are forwarded here, as a person types them (`REMOTE[:LOCAL]`) and as podtui remembers them
per pod name (docs/forwarding.md#remembered-forwards). No SSH here: a dialog can parse and the TUI can read the
memory without loading paramiko.

The memory is one small JSON file in podtui's data folder, 0600 and replaced whole (`secret.write_private`), so a
crash mid-write leaves the old one. A file that cannot be read or parsed is ignored with a warning (`warning`, and
the log), never a crash; the next save replaces it. Two podtuis saving at once: the last one wins, which for a
list of ports a person can retype is enough."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from podtui.core.paths import Paths
from podtui.core.secret import write_private
from podtui.core.user_files import Unusable, read_json_member
from podtui.core.visible import visible

log = logging.getLogger(__name__)

FILE_NAME = "forwards.json"
MAX_BYTES = 1 << 20  # a few hundred pods with a few ports each is a few kB
MAX_PODS = 500  # past this, the pods remembered longest ago are dropped on save (a terminated pod never says so)
MAX_PER_POD = 32


class SpecError(ValueError):
    """A `REMOTE[:LOCAL]` that is not one; the message says what is wrong in words."""


@dataclass(frozen=True)
class PortSpec:
    """A forward as asked for: the pod's port, and the local port on 127.0.0.1 (0: any free one)."""

    remote: int
    local: int

    @classmethod
    def parse(cls, text: str) -> PortSpec:
        """`8888` (local 8888 too), `8888:9999`, `8888:0` (any free local port)."""
        remote_text, sep, local_text = text.strip().partition(":")
        remote = _port(remote_text, "the pod's port", text, low=1)
        local = _port(local_text, "the local port", text, low=0) if sep else remote
        return cls(remote, local)

    @property
    def text(self) -> str:
        return str(self.remote) if self.local == self.remote else f"{self.remote}:{self.local}"

    def as_json(self) -> dict[str, int]:
        return {"remote": self.remote, "local": self.local}


def _port(word: str, what: str, whole: str, low: int) -> int:
    if not word.strip().isdecimal() or not word.strip().isascii():
        raise SpecError(f"{visible(whole)!r} is not REMOTE[:LOCAL]: {what} must be a number from {low} to 65535")
    value = int(word)
    if not low <= value <= 65535:
        raise SpecError(f"{visible(whole)!r}: {what} must be from {low} to 65535, not {value}")
    return value


def parse_specs(texts: Iterable[str]) -> list[PortSpec]:
    """Every spec parsed; two forwards on one local port (other than 0) are refused here, before anything binds."""
    specs = [PortSpec.parse(t) for t in texts]
    seen: set[int] = set()
    for spec in specs:
        if spec.local and spec.local in seen:
            raise SpecError(f"local port {spec.local} is asked for twice")
        seen.add(spec.local)
    return specs


class ForwardMemory:
    """pod name -> the forwards last asked for on it, in `path` (`for_paths` gives podtui's own)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.warning: str | None = None  # why the file was ignored at the last load, in words

    @classmethod
    def for_paths(cls, paths: Paths) -> ForwardMemory:
        return cls(paths.data_dir / FILE_NAME)

    def load(self) -> dict[str, list[PortSpec]]:
        """Everything remembered; {} when there is no file or it is unusable (then `warning` says why)."""
        self.warning = None
        try:
            pods = read_json_member(self.path, "pods", dict, MAX_BYTES)
        except Unusable as e:
            return self._ignored(str(e))
        if pods is None:
            return {}
        out: dict[str, list[PortSpec]] = {}
        skipped = 0
        for name, entries in pods.items():
            specs = _specs(entries)
            if specs is None:
                skipped += 1
            elif specs:
                out[name] = specs[:MAX_PER_POD]
        if skipped:
            self._warn(f"{skipped} pod entr{'y' if skipped == 1 else 'ies'} in it could not be read and were skipped")
        return out

    def for_pod(self, name: str) -> list[PortSpec]:
        return self.load().get(name, [])

    def remember(self, name: str, specs: Iterable[PortSpec]) -> None:
        """Add these to the pod's forwards; one already there for the same pod port is replaced."""
        everything = self.load()
        new = list(specs)
        kept = [s for s in everything.get(name, []) if all(s.remote != n.remote for n in new)]
        everything.pop(name, None)  # re-added last: the most recently used pods are kept past MAX_PODS
        everything[name] = (kept + new)[-MAX_PER_POD:]
        self._save(everything)

    def forget(self, name: str, remote: int | None = None) -> None:
        """Forget the pod's forward of `remote`, or all of the pod's when None."""
        everything = self.load()
        if name not in everything:
            return
        left = [] if remote is None else [s for s in everything[name] if s.remote != remote]
        if left:
            everything[name] = left
        else:
            del everything[name]
        self._save(everything)

    def _save(self, everything: dict[str, list[PortSpec]]) -> None:
        pods = dict(list(everything.items())[-MAX_PODS:])
        data = {"version": 1, "pods": {name: [s.as_json() for s in specs] for name, specs in pods.items()}}
        write_private(self.path, json.dumps(data, indent=1, ensure_ascii=True) + "\n")

    def _ignored(self, why: str) -> dict[str, list[PortSpec]]:
        self._warn(f"ignored: {why}")
        return {}

    def _warn(self, what: str) -> None:
        self.warning = f"the remembered forwards in {visible(str(self.path))}: {visible(what)}"
        log.warning("%s", self.warning)


def _specs(entries: object) -> list[PortSpec] | None:
    """One pod's entries, or None when they are not a list of {remote, local} with ports in range."""
    if not isinstance(entries, list):
        return None
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            return None
        remote, local = entry.get("remote"), entry.get("local", entry.get("remote"))
        if (
            not (isinstance(remote, int) and isinstance(local, int))
            or isinstance(remote, bool)
            or isinstance(local, bool)
        ):
            return None
        if not (1 <= remote <= 65535 and 0 <= local <= 65535):
            return None
        out.append(PortSpec(remote, local))
    return out
