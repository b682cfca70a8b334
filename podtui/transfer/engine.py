"""One transfer from start to verified: reach the pod, pick the way, move the bytes, compare checksums on both
ends, and only then put the file under its final name. Folders go as one archive, unpacked on arrival into a
hidden folder, and verified by what arrived: every file's checksum and the set of entries (manifest.py).

A symlink named as the source is followed; FIFOs, devices, sockets, dangling links, loops and symlinks leading
out of a folder are refused before anything is written (source.py, manifest.py).

The ways, in the order `auto` tries them: SFTP when the pod has direct SSH (fast); runpodctl when both ends
have it; the console (chunked base64 through the pod's shell) when neither is available (facts: the gateway
gives only a PTY shell, no SFTP).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import secrets
import shlex
import shutil
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podtui.core import units
from podtui.core.demo_sandbox import transfer_path_refusal
from podtui.core.pod import Pod
from podtui.core.ssh.connect import Connection, SshSettings, connect_pod
from podtui.core.ssh.errors import AuthFailed, HostKeyChanged, SshError, SshKeyError
from podtui.core.ssh.remote import RemoteShell
from podtui.transfer import archive, console_path, leftovers, manifest, runpodctl_path, sftp, source
from podtui.transfer.archive import ArchiveError
from podtui.transfer.checksum import ChecksumError, local_digest, remote_digest
from podtui.transfer.console_path import ConsoleTransferError
from podtui.transfer.job import TransferJob, Way
from podtui.transfer.manifest import FolderRefused, Manifest, ManifestError
from podtui.transfer.modes import private_dir
from podtui.transfer.part import local_part, remote_part
from podtui.transfer.progress import Reporter, TransferCancelled
from podtui.transfer.runpodctl_path import RunpodctlError
from podtui.transfer.sftp import SftpError
from podtui.transfer.source import Source, SourceRefused


class TransferFailed(Exception):
    def __init__(self, message: str, kind: str = "failed", retryable: bool = False) -> None:
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable


@dataclass
class TransferContext:
    lookup: Callable[[str], Pod]  # pod id -> the pod as the API sees it now
    ssh_settings: Callable[[], SshSettings]
    work_dir: Path  # where folders are packed before an upload
    runpodctl: str | None = None  # this machine's runpodctl; None: the one on PATH
    # the Hugging Face token hub jobs hand to the pod, asked for when a job starts (never kept in the job); none
    # unless the caller gives one: a token found on this machine never reaches a pod (a simulated one) by default
    hf_token: Callable[[], str | None] = field(default=lambda: None)
    hf_endpoint: Callable[[], str] = field(default=lambda: _default_hf_endpoint())  # asked again after a refusal
    # final names being written right now: two transfers never race for one name
    claims: set[str] = field(default_factory=set)
    claims_lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def claim(self, key: str, label: str) -> Iterator[None]:
        with self.claims_lock:
            if key in self.claims:
                raise TransferFailed(f"another transfer is writing {label} right now; this one waits its turn",
                                     "busy", retryable=True)
            self.claims.add(key)
        try:
            yield
        finally:
            with self.claims_lock:
                self.claims.discard(key)


@dataclass
class _Pod:
    conn: Connection
    shell: RemoteShell

    @property
    def direct(self) -> bool:
        return self.conn.endpoint.mode == "direct"


@contextmanager
def reach(pod: Pod, settings: SshSettings) -> Iterator[_Pod]:
    try:
        conn = connect_pod(pod, settings, "auto")
    except (AuthFailed, HostKeyChanged, SshKeyError) as e:  # trying again changes nothing: the user must act
        raise TransferFailed(f"cannot log in to {pod.name}: {e}", "auth") from None
    except SshError as e:
        raise TransferFailed(f"cannot reach {pod.name}: {e}", "unreachable", retryable=True) from None
    shell = RemoteShell(lambda: conn, "exec" if conn.endpoint.mode == "direct" else "pty")
    try:
        shell.open()
        yield _Pod(conn, shell)
    except SshError as e:  # the message may name the pod already ("the connection to X dropped while ...")
        said = str(e) if pod.name in str(e) else f"the connection to {pod.name} failed: {e}"
        raise TransferFailed(said, "connection", retryable=True) from None
    finally:
        shell.close()
        conn.close()


def _default_hf_endpoint() -> str:
    import os

    from podtui.core.hf.repo import DEFAULT_ENDPOINT

    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def execute(job: TransferJob, reporter: Reporter, ctx: TransferContext) -> None:
    """Run the job to verified; raises TransferFailed (or TransferCancelled) otherwise."""
    if job.direction == "hub":
        from podtui.transfer import hub

        return hub.execute(job, reporter, ctx)
    with _refusals():
        local = _local_source(job) if job.direction == "push" else None  # refused before the pod is reached
    try:
        pod = ctx.lookup(job.pod_id)
    except Exception as e:  # an API error of any kind: say it, and let a retry ask again
        raise TransferFailed(f"cannot look up pod {job.pod_id}: {e}", "api", retryable=True) from None
    with reporter.lock:
        job.pod_name = pod.name
    if (refusal := transfer_path_refusal(pod, job.source if job.direction == "pull" else job.target)) is not None:
        raise TransferFailed(refusal, "not_isolated")
    with reach(pod, ctx.ssh_settings()) as remote:
        _clean_pod(reporter, remote.shell)
        way = _choose(job, remote, ctx)
        with reporter.lock:
            job.way = way
        reporter.note(f"{job.direction} via {way} over {remote.conn.endpoint.label}")
        try:
            with _refusals():
                if local is None:
                    _pull(job, reporter, remote, way, ctx)
                else:
                    _push(job, reporter, remote, way, ctx, *local)
        except ManifestError as e:  # one the pod's listing could not be understood from is not sent again
            raise TransferFailed(str(e), type(e).__name__, retryable=e.retryable and _transient(str(e))) from None
        except (SftpError, ConsoleTransferError, ArchiveError, ChecksumError) as e:
            raise TransferFailed(str(e), type(e).__name__, retryable=_transient(str(e))) from None
        except RunpodctlError as e:  # its kind says whether the relay may do better; a full disk it does not know
            raise TransferFailed(str(e), str(e.kind), retryable=e.retryable and _transient(str(e))) from None


@contextmanager
def _refusals() -> Iterator[None]:
    """A source podtui does not copy fails at once, and is not retried: nothing about it changes by itself (but a
    pod whose answer about it was lost may answer next time: SourceRefused.retryable)."""
    try:
        yield
    except SourceRefused as e:
        raise TransferFailed(str(e), e.kind, retryable=e.retryable) from None
    except FolderRefused as e:
        raise TransferFailed(str(e), "refused") from None


def _file_as_landed(st: os.stat_result) -> dict[str, Any]:
    return {"kind": "file", "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino, "dev": st.st_dev}


def _folder_as_landed(entries: Manifest) -> dict[str, Any]:
    return {"kind": "folder", "entries": len(entries), "shape": manifest.shape(entries)}


def landed(job: TransferJob) -> bool:
    """Whether a verified download is still where it was put, as it was verified: checked again before a pod is
    terminated after it. A file: the same one (inode), not written since (size, mtime); a folder: the same names,
    kinds, sizes and link targets (listed, no file read). A symlink, or anything else there now, is not it."""
    if job.direction != "pull":
        return True
    record = job.landed_as
    if not job.final_path or not isinstance(record, dict):
        return False  # nothing recorded at commit: podtui cannot tell it is still as verified
    try:
        st = os.lstat(job.final_path)
        if record.get("kind") == "folder":
            return stat.S_ISDIR(st.st_mode) and _folder_as_landed(manifest.scan_local(Path(job.final_path))) == record
    except (OSError, ManifestError):
        return False
    return record.get("kind") == "file" and stat.S_ISREG(st.st_mode) and _file_as_landed(st) == record


def _clean_pod(reporter: Reporter, shell: RemoteShell) -> None:
    """Stop what an earlier attempt left running on the pod (a podtui killed while runpodctl waited there)."""
    with reporter.lock:
        entries = [e for e in reporter.job.leftovers if e.get("where") == "pod"]
    command = leftovers.pod_cleanup_command(entries)
    if command is None:
        return
    if shell.run(command, timeout_s=60).exit_code == 0:
        for entry in entries:
            reporter.forget(entry)
        pids = ", ".join(str(e.get("pid")) for e in entries)
        reporter.note(f"stopped what an earlier attempt left running on the pod (runpodctl {pids})")


def _transient(message: str) -> bool:
    """Worth another try: a dropped link or damaged data; not a missing file, an existing target or a full disk.
    Case does not matter: Go's runpodctl says "no space left on device", coreutils "No space left on device"."""
    permanent = ("does not exist", "already exists", "permission denied", "no such file", "not a folder",
                 "is a folder", "name the folder", "no space left")
    lowered = message.lower()
    return not any(p in lowered for p in permanent)


def _free_remote(shell: RemoteShell, folder: str) -> int | None:
    """Free bytes where `folder` is (or will be: the nearest folder above it that exists)."""
    result = shell.run(f"p={shlex.quote(folder or '.')}; while [ ! -d \"$p\" ] && [ \"$p\" != / ] && "
                       "[ \"$p\" != . ]; do p=$(dirname -- \"$p\"); done; df -Pk -- \"$p\" 2>/dev/null | tail -n 1",
                       timeout_s=60)
    fields = result.output.split()
    return int(fields[3]) * 1024 if result.exit_code == 0 and len(fields) >= 6 and fields[3].isdigit() else None


def _free_local(folder: Path) -> int | None:
    """Free bytes where `folder` is (or will be: the nearest folder above it that exists)."""
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def _room_for(needed: int | None, free: int | None, where: str) -> None:
    """Before any byte moves, and again after an attempt failed: a full disk is said in plain words, and not
    retried (trying again cannot free it)."""
    if needed is not None and free is not None and needed > free:
        raise TransferFailed(f"No space left {where}: it needs {units.size(needed)} and only {units.size(free)} "
                             "is free; free some space (or pick another folder), then retry", "no_space")


def _no_space_instead(error: BaseException, check: Callable[[], None]) -> None:
    """After a failed attempt: when the disk is what ran out, raise that instead of the way's own words (SFTP says
    only "size mismatch in put", runpodctl may lead with the far side's broken pipe)."""
    if isinstance(error, TransferFailed) and error.kind == "no_space":
        return
    if isinstance(error, Exception) and not isinstance(error, TransferCancelled):
        with contextlib.suppress(SshError, OSError):
            check()


def _choose(job: TransferJob, remote: _Pod, ctx: TransferContext) -> Way:
    local_rpc = runpodctl_path.find_local(ctx.runpodctl)
    if job.via == "sftp" and not remote.direct:
        raise TransferFailed("SFTP needs direct SSH, and this pod is reachable only through RunPod's gateway, "
                             "which allows no SFTP; use --via runpodctl or --via console", "no_sftp")
    if job.via == "runpodctl" or (job.via == "auto" and not remote.direct and local_rpc):
        if local_rpc is None:
            if job.via == "runpodctl":
                raise TransferFailed("runpodctl is not installed on this machine (or not on PATH)", "no_runpodctl")
        elif runpodctl_path.remote_available(remote.shell):
            return "runpodctl"
        elif job.via == "runpodctl":
            raise TransferFailed("runpodctl is not installed on the pod", "no_runpodctl")
    if job.via == "auto":
        return "sftp" if remote.direct else "console"
    return job.via  # sftp or console, checked above


def _remote_size(shell: RemoteShell, path: str) -> int | None:
    out = shell.run(f"stat -c %s -- {shlex.quote(path)}", timeout_s=60).output.strip()
    return int(out) if out.isdigit() else None


def _verify(reporter: Reporter, local: Path, shell: RemoteShell, remote: str, arrived_here: bool) -> str:
    """One file: the copy that arrived (a part file, here for a download, on the pod for an upload) must be a
    plain file, not a symlink, and its checksum equal to the source's."""
    job = reporter.job
    reporter.stage("verifying", f"comparing {job.algorithm} on both ends")
    if arrived_here:
        if not stat.S_ISREG(os.lstat(local).st_mode):
            raise TransferFailed(f"what arrived as {local} is not a plain file; it was discarded", "checksum",
                                 retryable=True)
    else:
        q = shlex.quote(remote)
        plain = shell.run(f"[ -f {q} ] && [ ! -L {q} ] && echo plain || echo other", timeout_s=60).output.strip()
        if not plain.endswith("plain"):
            raise TransferFailed(f"what arrived as {remote} on the pod is not a plain file; it was discarded",
                                 "checksum", retryable=True)
    here = local_digest(local, job.algorithm, on_progress=lambda _done: reporter.check())  # a cancel stops it
    there = remote_digest(shell, remote, job.algorithm)
    if here != there:
        size_here = local.stat().st_size
        size_there = _remote_size(shell, remote)
        raise TransferFailed(f"{job.algorithm} mismatch: {here[:12]}… here ({size_here} bytes), {there[:12]}… on "
                             f"the pod ({size_there} bytes); the damaged copy was discarded", "checksum",
                             retryable=True)
    reporter.note(f"{job.algorithm} {here} on both ends")
    return here


def _folder_matches(reporter: Reporter, wanted: Manifest, arrived: Manifest, where: str) -> str:
    """A folder is verified by what arrived: the same entries, every file's checksum equal to the source's."""
    job = reporter.job
    differs = manifest.summary(wanted, arrived)
    if differs is not None:
        raise TransferFailed(f"the folder that arrived {where} is not the source's ({differs}); the copy was "
                             "discarded", "checksum", retryable=True)
    reporter.note(f"{job.algorithm} of every file matches on both ends: {manifest.counts(wanted)}")
    return manifest.digest(wanted, job.algorithm)


def _followed(reporter: Reporter, shown: str, src: Source, name: str) -> None:
    if src.link is not None:
        reporter.note(f"{shown} is a symlink to {src.link}: copying the {'folder' if src.folder else 'file'} it "
                      f"leads to ({src.real}), as {name}")


def _pull(job: TransferJob, reporter: Reporter, remote: _Pod, way: Way, ctx: TransferContext) -> None:
    shell = remote.shell
    source_path = job.source.rstrip("/") or "/"
    top = posixpath.basename(source_path)
    if top in ("", ".", ".."):
        raise TransferFailed(f"name the file or folder itself (e.g. outputs/ or /workspace/model.bin), not "
                             f"{job.source!r}", "bad_source")
    src = source.remote(shell, source_path)
    entries = None
    if src.folder:  # refused before anything is packed or written
        entries = manifest.scan_remote(shell, src.real, reporter.check)
        manifest.refuse(entries, source_path)
    final = Path(job.target or ".").expanduser()
    if job.target.endswith("/") or final.is_dir():  # "ckpts/" means into that folder, made (later) if need be
        final = final / top
    with ctx.claim(f"local:{final.resolve()}", str(final)):
        _pull_to(job, reporter, remote, way, ctx, source_path, src, entries, final)


def _pull_to(job: TransferJob, reporter: Reporter, remote: _Pod, way: Way, ctx: TransferContext, source_path: str,
             src: Source, entries: Manifest | None, final: Path) -> None:
    shell = remote.shell
    top = posixpath.basename(source_path)
    with reporter.lock:
        job.folder, job.name, job.final_path = src.folder, top + ("/" if src.folder else ""), str(final)
        job.landed_as = None
    if os.path.lexists(final) and not job.overwrite:
        raise TransferFailed(f"{final} already exists; podtui does not replace it unless asked", "exists")
    _followed(reporter, source_path, src, top)
    packed = archive.pack_remote(shell, src.real, source_path, job.id) if src.folder else None
    sent = packed or src.real
    part = local_part(final, job.id)
    size = _remote_size(shell, sent)
    where = f"on this machine for {final.name} in {final.parent}"
    digest = ""
    landed_as: dict[str, Any] | None = None
    try:
        _room_for(size, _free_local(final.parent), where)
        try:  # after the checks; the folders the user asked for get the umask's mode, as mkdir -p gives them
            final.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise TransferFailed(f"cannot make {final.parent}: {e.strerror or e}", "mkdir") from None
        reporter.progress(0, size)
        if way != "runpodctl":  # runpodctl waits for its code first, and says so itself
            reporter.stage("transferring")
        if way == "sftp":
            sftp.download(remote.conn, sent, final, reporter.progress, tag=job.id)
        elif way == "console":
            console_path.download(shell, sent, final, reporter.progress, tag=job.id)
        else:
            # A podtui killed mid-transfer leaves its receiver running (its own session) in the old staging folder:
            # clear those, and use a new one, so a retry never shares a file with it.
            for old in final.parent.glob(f".podtui-receive-{job.id}*"):
                shutil.rmtree(old, ignore_errors=True)
            staging = final.parent / f".podtui-receive-{job.id}-{secrets.token_hex(4)}"
            try:
                runpodctl_path.pull(shell, sent, staging, runpodctl_path.find_local(ctx.runpodctl) or "runpodctl",
                                    reporter).replace(part)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        if entries is None:
            digest = _verify(reporter, part, shell, sent, arrived_here=True)
        else:
            reporter.stage("verifying", f"unpacking, then comparing {job.algorithm} of every file on both ends")
            unpacked = archive.unpack_local(part, final, job.id)
            try:
                arrived = manifest.hash_local(unpacked, manifest.scan_local(unpacked), job.algorithm, reporter.check)
                wanted = manifest.hash_remote(shell, src.real, entries, job.algorithm, reporter.check)
                digest = _folder_matches(reporter, wanted, arrived, "here")
                part.unlink(missing_ok=True)
                archive.commit_local(unpacked, final, job.overwrite)
                landed_as = _folder_as_landed(arrived)
            finally:
                shutil.rmtree(unpacked, ignore_errors=True)  # gone already once renamed into place
    except BaseException as e:
        part.unlink(missing_ok=True)  # never a half or unverified file lying about
        if packed:
            with contextlib.suppress(Exception):
                archive.remove_remote(shell, packed)
        _no_space_instead(e, lambda: _room_for(size, _free_local(final.parent), where))
        raise
    try:  # verified: a clash now keeps the verified part file, and says where it is
        if entries is None:
            sftp.finish_local(part, final, job.overwrite)
            landed_as = _file_as_landed(os.lstat(final))
        with reporter.lock:
            job.checksum, job.landed_as = digest, landed_as
    finally:
        if packed:
            with contextlib.suppress(Exception):
                archive.remove_remote(shell, packed)


def _remote_final(shell: RemoteShell, target: str, name: str) -> str:
    target = target or "."
    if target.endswith("/"):
        return posixpath.join(target, name)
    is_dir = shell.run(f"[ -d {shlex.quote(target)} ] && echo dir || echo no", timeout_s=60).output.strip()
    return posixpath.join(target, name) if is_dir.endswith("dir") else target


def _local_source(job: TransferJob) -> tuple[Source, Manifest | None, str]:
    """What a push sends, checked before the pod is reached: the file or folder (through a symlink named as the
    source), a folder's entries, refused if it holds what podtui does not copy or cannot read, and the name it
    goes under: that of the absolute path (`.` is the folder podtui runs in, by its own name), never empty."""
    local = Path(job.source).expanduser()
    name = Path(os.path.abspath(local)).name
    if name in ("", ".", ".."):
        raise TransferFailed(f"name the file or folder itself (e.g. ./outputs or ~/model.bin), not {job.source!r}",
                             "bad_source")
    src = source.local(local)
    if not src.folder:
        return src, None, name
    try:
        entries = manifest.scan_local(Path(src.real))
    except ManifestError as e:
        raise TransferFailed(str(e), "unreadable", retryable=_transient(str(e))) from None
    manifest.refuse(entries, str(local))
    return src, entries, name


def _push(job: TransferJob, reporter: Reporter, remote: _Pod, way: Way, ctx: TransferContext, src: Source,
          entries: Manifest | None, name: str) -> None:
    shell = remote.shell
    local = Path(job.source).expanduser()
    folder = src.folder
    final = _remote_final(shell, job.target, name)
    with reporter.lock:
        job.folder, job.name, job.final_path = folder, name + ("/" if folder else ""), final
    q = shlex.quote(final)
    there = shell.run(f"if [ -d {q} ]; then echo folder; elif [ -e {q} ] || [ -L {q} ]; then echo file; "
                      "else echo free; fi", timeout_s=60).output.strip().splitlines()[-1:]
    if there == ["folder"] and not folder:
        raise TransferFailed(f"{final} is a folder on the pod; podtui does not replace a folder with a file", "exists")
    if there != ["free"] and not job.overwrite:
        raise TransferFailed(f"{final} already exists on the pod; podtui does not replace it unless asked", "exists")
    _followed(reporter, str(local), src, name)
    with ctx.claim(f"remote:{job.pod_id}:{final}", f"{final} on the pod"):
        _push_to(job, reporter, remote, way, ctx, src, entries, final)


def _push_to(job: TransferJob, reporter: Reporter, remote: _Pod, way: Way, ctx: TransferContext, src: Source,
             entries: Manifest | None, final: str) -> None:
    shell = remote.shell
    parent = posixpath.dirname(final)
    name = posixpath.basename(final)
    work = ctx.work_dir / job.id
    real = Path(src.real)
    try:
        if entries is not None:
            private_dir(ctx.work_dir, existing=True)  # the staging archive holds the user's data
            sent = archive.pack_local(real, archive.local_archive_for(job.name.rstrip("/"), work))
        else:
            sent = real
        size = sent.stat().st_size
        where = f"on the pod for {name} in {parent or 'its home folder'}"
        _room_for(size, _free_remote(shell, parent), where)
        if parent:  # `push model.bin checkpoints/` makes checkpoints/ if need be, whichever the way; only now that
            # the source is packed and the pod has room: a transfer refused before it starts leaves nothing there
            made = shell.run(f"mkdir -p -- {shlex.quote(parent)}", timeout_s=60)
            if made.exit_code != 0:
                raise TransferFailed(f"cannot make {parent} on the pod: {made.output.strip()[:200]}", "mkdir")
        reporter.progress(0, size)
        if way != "runpodctl":  # runpodctl waits for its code first, and says so itself
            reporter.stage("transferring")
        part = remote_part(final, job.id)
        try:
            if way == "sftp":
                sftp.upload(remote.conn, sent, final, reporter.progress, tag=job.id)
            elif way == "console":
                console_path.upload(shell, sent, final, reporter.progress, tag=job.id)
            else:
                runpodctl_path.push(shell, sent, final, runpodctl_path.find_local(ctx.runpodctl) or "runpodctl",
                                    reporter, tag=job.id)
            if entries is None:
                digest = _verify(reporter, sent, shell, part, arrived_here=False)
            else:
                reporter.stage("verifying", f"unpacking on the pod, then comparing {job.algorithm} of every file on "
                               "both ends")
                unpacked = archive.unpack_remote(shell, part, final, job.overwrite, job.id)
                try:
                    listed = manifest.scan_remote(shell, unpacked, reporter.check)
                    arrived = manifest.hash_remote(shell, unpacked, listed, job.algorithm, reporter.check)
                    wanted = manifest.hash_local(real, entries, job.algorithm, reporter.check)
                    digest = _folder_matches(reporter, wanted, arrived, "on the pod")
                    archive.commit_remote(shell, unpacked, final, job.overwrite)
                finally:
                    archive.remove_remote_tree(shell, unpacked)  # gone already once renamed into place
        except BaseException as e:
            with contextlib.suppress(Exception):
                archive.remove_remote(shell, part)
            _no_space_instead(e, lambda: _room_for(size, _free_remote(shell, parent), where))
            raise
        if entries is not None:
            archive.remove_remote(shell, part)
        else:
            console_path.finish_remote(shell, part, final, job.overwrite)
        with reporter.lock:
            job.checksum = digest
    finally:
        shutil.rmtree(work, ignore_errors=True)
