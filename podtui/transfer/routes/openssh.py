"""The OpenSSH route (pods with direct SSH): OpenSSH's own `ssh` carries the bytes, `cat` on the pod reads or
writes them, podtui watches, hashes and reports (docs/bulk-transfers.md#the-openssh-route).

paramiko decrypts every packet in Python; OpenSSH does it in C, so a large file moves at the link's speed. An
upload's source file is ssh's stdin itself: podtui never touches those bytes on their way, and follows how far ssh
has read (the offset the two share), hashing up to there. A download comes out of ssh's stdout into podtui, which
skips whatever the pod's shell printed before the file (a ~/.bashrc's welcome: the command says where the file
begins), then hashes and writes each chunk once. Either way the local checksum is ready when the last byte is, and
progress is reported as it goes. The argv comes from core/ssh/openssh.py: podtui's key, its pinned host key with
StrictHostKeyChecking=yes, BatchMode, no ssh_config of the user's. As with SFTP, a file is written under a hidden
part name and renamed only once verified; the caller verifies and renames.

Who is to blame when it fails: the remote command first writes a line to stderr, so podtui knows whether ssh got
as far as running it on the pod. When it did not, OpenSSH itself could not start (OpensshUnavailable: SFTP can
take over), unless it refused the pod's host key (OpensshRefused: never worked around). Once it did, a failure is
the transfer's own: a missing file, a full disk, a dropped connection (OpensshError), told from what the pod said
after that line only (a ~/.bashrc's own complaints come before it).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import select
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from podtui.core.ssh import openssh
from podtui.core.ssh.connect import Connection, SshSettings
from podtui.core.ssh.errors import SshError, SshKeyError
from podtui.core.visible import visible
from podtui.transfer.checksum import Algorithm
from podtui.transfer.modes import private_file
from podtui.transfer.part import Progress, local_part, remote_part

STARTED = "podtui-openssh-started"  # what the remote command says first, on stderr: ssh reached the pod
BEGIN = "podtui-openssh-data"  # a download's stdout: the file's bytes begin after this word, a token and a newline
_CHUNK = 1 << 20
_POLL_S = 0.05  # how often podtui reports progress and looks at the cancel switch
_SAID_MAX = 8192  # of ssh's and the pod's stderr, what is kept for the message
_NOISE_MAX = 1 << 20  # what the pod's shell may print on stdout before a download's file begins
_HOST_KEY = ("host key verification failed", "remote host identification has changed", "host key for")


class _Hasher(Protocol):
    def update(self, data: bytes | memoryview, /) -> None: ...

    def hexdigest(self) -> str: ...


class OpensshError(Exception):
    """A transfer through OpenSSH failed after ssh reached the pod; nothing was left under the final name."""


class OpensshUnavailable(OpensshError):
    """OpenSSH is not installed, or ssh did not get as far as running the command on the pod: another route (SFTP
    over podtui's own client) can take over."""


class OpensshRefused(OpensshError):
    """ssh refused the pod's host key (not the one podtui pinned): refused as podtui's own client refuses it."""


@dataclass(frozen=True)
class Moved:
    """What a route call moved: the part file (a local path for a download, a path on the pod for an upload),
    the bytes, and the checksum of the bytes on this machine, taken as they went."""

    part: str
    size: int
    digest: str


def available() -> bool:
    return shutil.which(openssh.SSH) is not None


def upload(
    conn: Connection,
    settings: SshSettings,
    local: Path,
    remote: str,
    on_progress: Progress | None = None,
    tag: str = "",
    algorithm: Algorithm = "sha256",
) -> Moved:
    """Send `local` to a hidden part file next to `remote` on the pod. On failure the part file may remain on the
    pod: the caller removes it with its shell (push.py does, whatever the route)."""
    part = remote_part(remote, tag)
    command = f"printf '%s\\n' {STARTED} >&2; exec cat > {shlex.quote(part)}"
    argv = _argv(conn, settings, command)
    try:
        source = local.open("rb")
    except FileNotFoundError:
        raise OpensshError(f"{local} does not exist") from None
    except OSError as e:
        raise OpensshError(f"cannot read {local}: {e.strerror or e}") from None
    with source:
        fd = source.fileno()
        start = os.fstat(fd)
        total = start.st_size
        hasher = hashlib.new(algorithm)
        hashed = 0

        def follow() -> int:
            # ssh's stdin is this very open file, so they share one offset: how far ssh has read, ended or not
            nonlocal hashed
            try:
                hashed = _hash_range(fd, hasher, hashed, os.lseek(fd, 0, os.SEEK_CUR))
            except OSError as e:
                raise OpensshError(f"cannot read {local}: {e.strerror or e}") from None
            return hashed

        run = _Run(argv, _start_s(settings), stdin=source, stdout=subprocess.DEVNULL)
        run.watch(follow, total, on_progress)
        said = run.said()
        if run.returncode != 0 or not run.started:
            raise _failure(run, said, f"uploading {local}", f"the folder for {remote} does not exist on the pod")
        if hashed != os.lseek(fd, 0, os.SEEK_CUR) or _changed(local, start):
            # written while ssh read it (where both had read already, the checksums would agree with each other and
            # not with the file): another attempt sends it as it is then
            raise OpensshError(f"{local} changed while it was being sent; nothing was kept")
    return Moved(part, hashed, hasher.hexdigest())


def download(
    conn: Connection,
    settings: SshSettings,
    remote: str,
    local: Path,
    on_progress: Progress | None = None,
    tag: str = "",
    algorithm: Algorithm = "sha256",
    total: int | None = None,
) -> Moved:
    """Fetch `remote` into a hidden part file next to `local` (0600 until verified), hashing each chunk as it is
    written. The size for the progress is `total`, else the pod's, sent with the line that says ssh got there
    (either grows with what arrived). A failed or cancelled download leaves no part file."""
    q = shlex.quote(remote)
    begin = f"{BEGIN}-{secrets.token_hex(8)}"  # nothing printed before the command can know it
    command = (
        f"printf '%s %s\\n' {STARTED} \"$(stat -L -c %s -- {q} 2>/dev/null)\" >&2; "
        f"printf '%s\\n' {begin}; exec cat -- {q}"
    )
    argv = _argv(conn, settings, command)
    part = local_part(local, tag)
    local.parent.mkdir(parents=True, exist_ok=True)
    private_file(part)  # 0600 until verified: writing into it keeps its mode
    hasher = hashlib.new(algorithm)
    try:
        with part.open("r+b", buffering=0) as sink:

            def write(data: memoryview) -> None:
                try:
                    while data:
                        data = data[sink.write(data) or 0 :]
                except OSError as e:  # a full disk here: ssh is killed, the part file removed
                    raise OpensshError(f"cannot write {local.name} in {local.parent}: {e.strerror or e}") from None

            run = _Run(argv, _start_s(settings), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
            size = run.receive((begin + "\n").encode(), hasher, write, total, on_progress)
        said = run.said()
        if run.returncode != 0 or not run.began:
            raise _failure(run, said, f"downloading {remote}", f"{remote} does not exist on the pod")
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return Moved(str(part), size, hasher.hexdigest())


def _argv(conn: Connection, settings: SshSettings, command: str) -> list[str]:
    if not available():
        raise OpensshUnavailable("OpenSSH's `ssh` is not installed (or not on PATH)")
    try:
        return openssh.batch_argv(conn, settings, command)
    except (SshError, SshKeyError) as e:  # a key file others can read, a path ssh cannot be given
        raise OpensshUnavailable(str(e)) from None


def _start_s(settings: SshSettings) -> float:
    """How long ssh may take to run the command on the pod. Its ConnectTimeout covers the TCP connection and the
    server's first words only, and ServerAliveInterval a session that has begun: a pod that stalls between the two
    (key exchange, login, the shell's start-up) would hold ssh for ever."""
    return 3 * settings.connect_timeout_s + 5


def _hash_range(fd: int, hasher: _Hasher, pos: int, upto: int) -> int:
    """Hash the file `fd` from `pos` to `upto` (without moving its offset); returns how far it got (short of
    `upto` when the file is shorter now)."""
    while pos < upto:
        chunk = os.pread(fd, min(_CHUNK, upto - pos), pos)
        if not chunk:
            break
        hasher.update(chunk)
        pos += len(chunk)
    return pos


def _changed(path: Path, before: os.stat_result) -> bool:
    """Whether `path` is another file now, or was written since `before` (its size or modification time)."""
    try:
        now = os.stat(path)
    except OSError:
        return True
    same = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns)
    return same != (before.st_dev, before.st_ino, before.st_size, before.st_mtime_ns)


def _widen(fd: int) -> None:
    """A pipe of 1 MiB rather than 64 KiB (Linux): fewer wake-ups for ssh and podtui at hundreds of MB/s."""
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setsize is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, setsize, _CHUNK)


class _Run:
    """One ssh process: started with the user's environment less RunPod's keys and secrets (ssh_env), its stderr
    read by a thread of its own (what ssh and the pod said, and whether the pod was reached), ended on any error
    of podtui's own: a cancel kills it."""

    def __init__(self, argv: list[str], start_s: float, stdin: IO[bytes] | int, stdout: int) -> None:
        self.argv = argv
        self._start_by = time.monotonic() + start_s
        self._start_s = start_s
        self.started = False  # the pod ran the command (its first line on stderr came)
        self.began = False  # a download's file began on stdout
        self.remote_size: int | None = None
        self.returncode: int | None = None
        self._before = bytearray()  # stderr before the started line: ssh's own words, or a ~/.bashrc's
        self._after = bytearray()  # stderr after it: the command's
        try:
            self.proc = subprocess.Popen(
                argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=openssh.ssh_env()
            )  # a download's stdout is read from its descriptor only, never through the file object's buffer
        except OSError as e:  # gone from PATH since, or not runnable
            raise OpensshUnavailable(f"cannot run {argv[0]}: {e.strerror or e}") from None
        self._reader = threading.Thread(target=self._read_stderr, name="openssh-stderr", daemon=True)
        self._reader.start()

    def _read_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        marker = STARTED.encode()
        while line := stream.readline(_SAID_MAX):  # bounded: a pod's stderr may be anything
            at = -1 if self.started else line.find(marker)  # anywhere: what came before may not end its line
            if at >= 0:
                self.remote_size = int(size) if (size := line[at + len(marker) :].strip()).isdigit() else None
                _keep(self._before, line[:at] + b"\n" if at else b"")
                self.started = True
            else:
                _keep(self._after if self.started else self._before, line)

    def _report(self, done: int, total: int | None, on_progress: Progress | None) -> None:
        """Progress, also while ssh connects (a cancel is noticed there too): the total never below what is done.
        Raises OpensshUnavailable when ssh has not run the command on the pod in time (the caller kills it)."""
        if not (self.started or self.began) and time.monotonic() > self._start_by:
            raise OpensshUnavailable(f"ssh did not run podtui's command on the pod within {self._start_s:.0f} s")
        if on_progress is not None:
            size = total if total is not None else self.remote_size
            on_progress(done, done if size is None else max(size, done))

    def watch(self, follow: Callable[[], int], total: int | None, on_progress: Progress | None) -> int:
        """Until ssh ends: every _POLL_S, how far it got (follow() hashes up to there), reported as progress;
        the report raises when the transfer is cancelled, and ssh is killed."""
        done = 0
        try:
            while True:
                ended = self.proc.poll() is not None
                done = follow()
                self._report(done, total, on_progress)
                if ended:
                    break
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(_POLL_S)
        except BaseException:
            self.kill()
            raise
        self.returncode = self.proc.wait()
        return done

    def receive(
        self,
        begin: bytes,
        hasher: _Hasher,
        write: Callable[[memoryview], None],
        total: int | None,
        on_progress: Progress | None,
    ) -> int:
        """ssh's stdout until it ends: what comes before `begin` skipped, each chunk after it hashed and written
        once; progress every _POLL_S (the report raises on a cancel, and ssh is killed). Returns the bytes."""
        stdout = self.proc.stdout
        assert stdout is not None
        fd = stdout.fileno()
        _widen(fd)
        buf = bytearray(_CHUNK)
        view = memoryview(buf)
        noise = bytearray()
        done = 0
        last = 0.0
        try:
            while True:
                if select.select([fd], [], [], _POLL_S)[0]:
                    n = os.readv(fd, [view])
                    if not n:
                        break  # ssh closed its stdout: it is ending
                    data = view[:n]
                    if not self.began:
                        noise += data
                        at = noise.find(begin)
                        if at < 0:
                            if len(noise) > _NOISE_MAX:
                                raise OpensshError(
                                    f"the pod's shell printed more than {_NOISE_MAX} bytes before the file began"
                                )
                            continue
                        self.began = True
                        data = memoryview(bytes(noise[at + len(begin) :]))
                        noise.clear()
                    hasher.update(data)
                    write(data)
                    done += len(data)
                if time.monotonic() - last >= _POLL_S:
                    self._report(done, total, on_progress)
                    last = time.monotonic()
            while True:
                try:
                    self.returncode = self.proc.wait(_POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    self._report(done, total, on_progress)
            self._report(done, total, on_progress)
        except BaseException:
            self.kill()
            raise
        return done

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.proc.wait()
        self._reader.join(timeout=5)

    def said(self) -> str:
        """What the command wrote on stderr once it ran, else what ssh (or the pod's shell) wrote before it; once
        ssh has ended; safe to show."""
        self._reader.join(timeout=5)
        return visible((self._after if self.started else self._before).decode(errors="replace").strip(), lines=True)


def _keep(said: bytearray, line: bytes) -> None:
    if len(said) < _SAID_MAX:
        said += line[: _SAID_MAX - len(said)]


def _failure(run: _Run, said: str, doing: str, missing: str) -> OpensshError:
    """ssh ended with a failure, or without running the command: whose, and in words."""
    lowered = said.lower()
    last = said.splitlines()[-1] if said else f"ssh exited with status {run.returncode}"
    if not run.started:
        if any(w in lowered for w in _HOST_KEY):
            return OpensshRefused(
                f"ssh refused the pod's host key: it is not the one podtui pinned ({last}); podtui does not "
                "connect to a pod whose key changed during its run (see `podtui ssh forget`)"
            )
        if run.returncode == 0:  # ssh got in, and the pod's shell ended by itself
            return OpensshUnavailable(
                f"the pod's shell ended before podtui's command ran ({last}; does its ~/.bashrc exit?)"
            )
        return OpensshUnavailable(f"ssh did not reach the pod ({last})")
    if run.returncode == 255:  # ssh's own status: the connection, not the command
        return OpensshError(f"{doing} failed: the connection to the pod was lost ({last})")
    if "no such file or directory" in lowered:
        return OpensshError(missing)
    return OpensshError(f"{doing} failed on the pod: {last}")
