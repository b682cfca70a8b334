"""Running syncs in the tests: one pod of the simulator, its workspace on this machine, a sync run to its end, and
a folder as data (bytes, links, times, modes) to compare both ends by."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from podtui.core.api import V2Api
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings
from podtui.sim.pod_view import namespaces_work
from podtui.sim.simulator import Simulator
from podtui.transfer.sync.run import SyncRun
from podtui.transfer.sync.state import SyncListener, SyncResult, SyncSpec
from tests.helpers.sim import find_pod, needs_sshd, pod_workspace

Listing = dict[str, tuple[str, Any]]
needs_namespaces = pytest.mark.skipif(
    not namespaces_work(), reason="a pod lacks rsync only in a container of its own (Linux namespaces)"
)
# the routes, as `route` parameters: rsync and SFTP need the direct pod's sshd; SFTP a pod without rsync
RSYNC = pytest.param("rsync", marks=needs_sshd)
SFTP = pytest.param("sftp", marks=[needs_sshd, needs_namespaces])
CONSOLE = "console"


@dataclass
class Syncer:
    sim: Simulator
    api: V2Api
    settings: SshSettings
    pod_name: str
    route: str

    @property
    def pod(self) -> Pod:
        return find_pod(self.api, self.pod_name)

    @property
    def workspace(self) -> Path:
        """The pod's /workspace, on this machine."""
        return pod_workspace(self.sim, self.api, self.pod_name)

    def run_of(self, local: Path, remote: str = "proj", listener: SyncListener | None = None, **kw: Any) -> SyncRun:
        spec = SyncSpec(self.pod.id, local, remote, **kw)
        return SyncRun(spec, lambda ref: find_pod(self.api, ref), lambda: self.settings, listener)

    def sync(self, local: Path, remote: str = "proj", listener: SyncListener | None = None, **kw: Any) -> SyncResult:
        return self.run_of(local, remote, listener, **kw).run()


def listing(top: Path, times: bool = True) -> Listing:
    """Everything under `top` but podtui's working folders, never following a symlink: files with their bytes,
    executable bit and (times=True) modification time in ns, links with their target, folders."""
    found: Listing = {}
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not (folder == str(top) and d.startswith(".podtui-sync-"))]
        for name in dirs + files:
            path = Path(folder) / name
            rel = os.path.relpath(path, top)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = ("dir", None)
            else:
                found[rel] = ("file", (path.read_bytes(), bool(st.st_mode & 0o100), st.st_mtime_ns if times else 0))
    return found


def no_leftovers(top: Path) -> bool:
    """No working folder of podtui's at the top, no part file anywhere."""
    return not [p for p in top.rglob("*") if p.name.startswith(".podtui-sync-") or ".podtui-part" in p.name]
