"""Running transfers in the tests: a queue run to the end, what a transfer may leave behind, a folder as data."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from podtui.transfer.job import TransferJob
from podtui.transfer.part import SUFFIX
from podtui.transfer.queue import TransferQueue

MakeQueue = Callable[..., TransferQueue]
Tree = dict[str, tuple[str, bytes | str]]


def run_all(q: TransferQueue, *jobs: TransferJob, timeout_s: float = 60) -> list[TransferJob]:
    """Queue the jobs, start the queue and return each job as it ended."""
    for j in jobs:
        q.add(j)
    q.start()
    assert q.wait([j.id for j in jobs], timeout_s)
    return [q.get(j.id) for j in jobs]  # type: ignore[misc]


def files_both_ways(ws: Path, tmp: Path, on_pod: int, here: int) -> tuple[Path, Path, Path]:
    """Random bytes to pull (model.safetensors in the pod's workspace `ws`, `on_pod` bytes) and to push
    (up/data.jsonl under `tmp`, `here` bytes), and an empty down/ folder: (ws, the local file, down/)."""
    (ws / "model.safetensors").write_bytes(os.urandom(on_pod))
    local = tmp / "up" / "data.jsonl"
    local.parent.mkdir()
    local.write_bytes(os.urandom(here))
    down = tmp / "down"
    down.mkdir()
    return ws, local, down


def no_part_files(*folders: Path) -> bool:
    """Nothing a transfer works in (part files, receive, unpack and staging folders) is left in `folders`."""
    return not [
        p
        for f in folders
        for p in f.rglob("*")
        if SUFFIX in p.name or "podtui-receive" in p.name or "podtui-unpack" in p.name or p.name.endswith(".podtui-tar")
    ]


def tree(top: Path) -> Tree:
    """Everything under `top`, never following a symlink: files with their bytes, links with their target."""
    found: Tree = {}
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(top))
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(mode):
                found[rel] = ("dir", "")
            elif stat.S_ISREG(mode):
                found[rel] = ("file", path.read_bytes())
            else:
                found[rel] = ("special", str(stat.S_IFMT(mode)))  # never opened: a FIFO would block
    return found


def jobs_in(path: Path) -> list[dict[str, Any]]:
    """The jobs of a history file as written, read as another process would read them."""
    try:
        return list(json.loads(path.read_text())["jobs"])
    except (OSError, ValueError, KeyError):
        return []  # not written yet


def wait_for(condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.05)
