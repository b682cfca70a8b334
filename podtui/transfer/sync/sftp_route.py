"""The SFTP route: direct SSH without rsync on one end. One file after another over podtui's own SSH connection
into the destination's working folder; verified and renamed into place afterwards (docs/sync.md#routes)."""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Callable
from pathlib import Path

import paramiko

from podtui.core.ssh.connect import Connection
from podtui.transfer.sync.plan import POD_UMASK, Copy, arrival_mode
from podtui.transfer.sync.route import Landed, LinkLost, Moved
from podtui.transfer.sync.state import SyncListener
from podtui.transfer.sync.tree import parent


def _b(path: str) -> bytes:
    """A pod path as SFTP carries it: its own bytes (paramiko would refuse an undecodable name as text)."""
    return path.encode("utf-8", "surrogateescape")


class SftpRoute:
    name = "sftp"

    def __init__(
        self,
        conn: Connection,
        local_root: Path,
        remote_root: str,
        pull: bool,
        listener: SyncListener,
        check: Callable[[], None],
    ) -> None:
        self.conn, self.local_root, self.remote_root, self.pull = conn, local_root, remote_root, pull
        self.listener, self.check = listener, check

    def cancel(self) -> None:
        """A cancel is seen between files and in the progress callback (check raises)."""

    def copy(self, items: list[Copy], stage: str) -> Moved:
        moved = Moved()
        if not items:
            return moved
        try:
            client = paramiko.SFTPClient.from_transport(self.conn.transport)
        except (paramiko.SSHException, EOFError, OSError) as e:
            raise LinkLost(f"SFTP did not open: {str(e) or type(e).__name__}") from None
        if client is None:
            raise LinkLost("SFTP did not open")
        total = sum(c.size for c in items)
        before = 0
        folders: dict[str, int] = {}
        try:
            for c in items:
                self.check()
                self.listener.file_started(c.path, c.size)

                def progress(done: int, _size: int, base: int = before) -> None:
                    self.check()
                    self.listener.progress(base + done, total)

                try:
                    moved.landed[c.path] = (
                        self._get(client, c, stage, len(moved.landed), progress)
                        if self.pull
                        else self._put(client, c, stage, folders, progress)
                    )
                except OSError as e:
                    if not self.conn.transport.is_active():
                        raise LinkLost(f"the connection dropped while copying {c.path}: {e}") from None
                    moved.failed[c.path] = f"SFTP: {e.strerror or e}"
                except (paramiko.SSHException, EOFError) as e:
                    raise LinkLost(f"the connection dropped while copying {c.path}: {e or type(e).__name__}") from None
                before += c.size
                self.listener.progress(before, total)
        finally:
            with contextlib.suppress(OSError, paramiko.SSHException, EOFError):
                client.close()
        return moved

    def _put(
        self,
        client: paramiko.SFTPClient,
        c: Copy,
        stage: str,
        folders: dict[str, int],
        progress: Callable[[int, int], None],
    ) -> Landed:
        folder = parent(c.path)
        if folder not in folders:
            folders[folder] = len(folders)
            client.mkdir(_b(posixpath.join(self.remote_root, stage, f"d{folders[folder]}")), 0o700)
        where = f"{stage}/d{folders[folder]}/{posixpath.basename(c.path)}"
        target = _b(posixpath.join(self.remote_root, where))
        client.put(str(self.local_root / c.path), target, callback=progress, confirm=True)
        client.chmod(target, arrival_mode(c, POD_UMASK))
        return Landed(where, staged=True, group=True, needs_time=True)

    def _get(
        self, client: paramiko.SFTPClient, c: Copy, stage: str, index: int, progress: Callable[[int, int], None]
    ) -> Landed:
        where = f"{stage}/{index}"
        client.get(_b(posixpath.join(self.remote_root, c.path)), str(self.local_root / where), callback=progress)
        return Landed(where, staged=True, needs_time=True, needs_mode=True)
