"""The rsync route: direct SSH, rsync on both ends. rsync runs through OpenSSH with podtui's key and pinned host key,
and copies exactly the files podtui's plan lists (`--files-from - --from0`), so `.gitignore` means what podtui
says; progress is read from `--info=progress2` (docs/sync.md#routes)."""

from __future__ import annotations

import functools
import os
import posixpath
import re
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from podtui.core.pod import Pod
from podtui.core.ssh import openssh
from podtui.core.ssh.connect import SshSettings
from podtui.transfer.sync.plan import Copy
from podtui.transfer.sync.pod_batch import nul_list
from podtui.transfer.sync.route import Landed, LinkLost, Moved
from podtui.transfer.sync.state import SyncListener

RSYNC = "rsync"
# rsync's exit statuses for a link that failed or broke (its own table; 255: ssh could not connect or was cut)
LINK_LOST = {10: "socket I/O", 12: "protocol data stream", 30: "timeout", 35: "timeout", 255: "ssh"}
# `--info=progress2`'s bytes so far, grouped by `,` or, in a locale whose decimal mark is a comma (de_DE), by `.`
_PROGRESS = re.compile(rb"^\s*(\d[\d,.]*)\s+\d+%")
_FILE = b"podtui-file "
_ESCAPE = re.compile(rb"\\#([0-7]{3})")


MIN_VERSION = (3, 1, 0)  # --info=progress2 came with 3.1.0, --protect-args (-s) with 3.0.0
_VERSION = re.compile(r"\bversion\s+v?(\d+)\.(\d+)(?:\.(\d+))?")


def rsync_version(said: str) -> tuple[int, int, int] | None:
    """The version `rsync --version` names: `rsync  version 3.2.7  protocol version 31`; macOS's openrsync says
    `openrsync: protocol version 29` then `rsync version 2.6.9 compatible`."""
    m = _VERSION.search(said)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


@functools.cache
def _usable(path: str) -> bool:
    try:
        said = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    version = rsync_version(said)
    return version is not None and version >= MIN_VERSION


def local_rsync() -> str | None:
    """This machine's rsync, when it is one podtui can drive (3.1 or later: macOS's own rsync 2.6.9 and openrsync
    have neither --info=progress2 nor --protect-args, and the sync then goes by SFTP)."""
    path = shutil.which(RSYNC)
    return path if path is not None and _usable(path) else None


def rsync_shell(pod: Pod, settings: SshSettings) -> tuple[str, str]:
    """rsync's `-e` value (OpenSSH's ssh with podtui's key and pinned host key, docs/ssh-out.md#host-keys) and the
    host to name in rsync's HOST:PATH (the `-e` value says where it really is). Connects once: podtui's client
    pins the host key on first use and proves the key works."""
    return openssh.rsync_shell(pod, settings), openssh.RSYNC_HOST


def progress_bytes(line: bytes) -> int | None:
    """The bytes copied so far, from a line of rsync's `--info=progress2`; None for any other line."""
    m = _PROGRESS.match(line)
    return int(re.sub(rb"\D", b"", m.group(1))) if m else None


def _unescape(name: bytes) -> str:
    """rsync's %n with its `\\#ooo` escapes (controls and bytes above 127) turned back into the bytes."""
    return _ESCAPE.sub(lambda m: bytes([int(m.group(1), 8)]), name).decode("utf-8", "surrogateescape")


class RsyncRoute:
    name = "rsync"

    def __init__(
        self,
        shell_e: str,
        destination: str,
        local_root: Path,
        remote_root: str,
        pull: bool,
        listener: SyncListener,
        environ: dict[str, str],
        check: Callable[[], None],
    ) -> None:
        self.shell_e, self.destination = shell_e, destination
        self.local_root, self.remote_root, self.pull = local_root, remote_root, pull
        self.listener, self.environ, self.check = listener, environ, check
        self.process: subprocess.Popen[bytes] | None = None
        self.said: list[str] = []
        self.code = 0  # rsync's exit status

    def argv(self, stage: str) -> list[str]:
        """stage: the working folder, relative to the destination folder."""
        # absolute: rsync takes `a:b/` (a colon before any slash) for a host's folder
        here = os.path.abspath(self.local_root)
        local = here.rstrip("/") + "/"
        scratch = os.path.join(here, stage) if self.pull else posixpath.join(self.remote_root, stage)
        remote = f"{self.destination}:{self.remote_root.rstrip('/')}/"
        return [
            local_rsync() or RSYNC,
            "-s",  # the remote path goes to the far rsync as it is, never through its shell's word splitting
            "-ltE",  # symlinks as links (none are listed), times to the nanosecond, the executable bit
            "-I",  # podtui's plan decided what to copy: no second opinion from rsync's own size-and-time check
            "--no-implied-dirs",  # the folders were made before; leave their times alone
            # its files being written live in podtui's working folder, not beside their final names: a pod that
            # stops leaves nothing there (docs/sync.md#failures)
            f"--temp-dir={scratch}",
            "--files-from=-",
            "--from0",
            "--info=progress2",
            "--out-format=podtui-file %n",
            "-e",
            self.shell_e,
            *((remote, local) if self.pull else (local, remote)),
        ]

    def cancel(self) -> None:
        process = self.process
        if process is not None and process.poll() is None:
            process.terminate()

    def copy(self, items: list[Copy], stage: str) -> Moved:
        """Copy `items` to their final names (rsync writes each under a temporary name and renames it when whole)."""
        moved = Moved()
        if not items:
            return moved
        total = sum(c.size for c in items)
        sizes = {c.path: c.size for c in items}
        self.process = subprocess.Popen(
            self.argv(stage),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.environ,
            start_new_session=True,  # ctrl+c reaches podtui, which ends rsync itself
        )
        process = self.process
        errors = bytearray()
        feeder = threading.Thread(target=self._feed, args=(process, nul_list([c.path for c in items])), daemon=True)
        reader = threading.Thread(target=lambda: errors.extend(process.stderr.read() if process.stderr else b""))
        reader.daemon = True
        feeder.start()
        reader.start()
        assert process.stdout is not None
        pending = b""
        while chunk := os.read(process.stdout.fileno(), 65536):
            pending += chunk
            *lines, pending = re.split(rb"[\r\n]", pending)
            for line in lines:
                if line.startswith(_FILE):
                    path = _unescape(line[len(_FILE) :])
                    self.listener.file_started(path, sizes.get(path, 0))
                elif (done := progress_bytes(line)) is not None:
                    self.listener.progress(min(done, total), total)
        code = process.wait()
        reader.join(5)
        feeder.join(5)
        self.said = [ln for ln in errors.decode("utf-8", "replace").splitlines() if ln.strip()]
        self.check()  # a cancel raises here, whatever status the ended rsync gave (a cut ssh says 255)
        if code in LINK_LOST:
            raise LinkLost(f"rsync lost the connection ({LINK_LOST[code]}): {self._words()}")
        # any other status: rsync may have stopped part way (a full disk is 11), and what it finished is in place,
        # whole; every file is verified one by one, and those it did not copy fail with its words
        self.code = code
        if code == 0:
            self.listener.progress(total, total)
        for c in items:
            moved.landed[c.path] = Landed(c.path)
        return moved

    def _words(self) -> str:
        return "; ".join(self.said[-3:])[:400] or "nothing on stderr"

    def why_missing(self) -> str:
        """What to say of a file rsync did not put in place (or left as it was)."""
        status = f"exit status {self.code}: " if self.code not in (0, 23, 24) else ""
        return f"rsync did not copy it ({status}{self._words()})"

    @staticmethod
    def _feed(process: subprocess.Popen[bytes], data: bytes) -> None:
        assert process.stdin is not None
        try:
            process.stdin.write(data)
            process.stdin.close()
        except OSError:  # rsync ended early: its exit status says why
            pass
