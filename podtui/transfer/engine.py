"""One transfer from start to verified: reach the pod, pick the way, move the bytes, compare checksums on both
ends, and only then put the file under its final name. Folders go as one archive, unpacked on arrival.

The ways, in the order `auto` tries them: SFTP when the pod has direct SSH (fast); runpodctl when both ends
have it; the console (chunked base64 through the pod's shell) when neither is available (facts: the gateway
gives only a PTY shell, no SFTP).
"""

from __future__ import annotations

import contextlib
import posixpath
import secrets
import shlex
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from podtui.core import units
from podtui.core.pod import Pod
from podtui.core.ssh.connect import Connection, SshSettings, connect_pod
from podtui.core.ssh.errors import AuthFailed, HostKeyChanged, SshError, SshKeyError
from podtui.core.ssh.remote import RemoteShell
from podtui.transfer import archive, console_path, leftovers, runpodctl_path, sftp
from podtui.transfer.archive import ArchiveError
from podtui.transfer.checksum import ChecksumError, local_digest, remote_digest
from podtui.transfer.console_path import ConsoleTransferError
from podtui.transfer.job import TransferJob, Way
from podtui.transfer.part import local_part, remote_part
from podtui.transfer.progress import Reporter, TransferCancelled
from podtui.transfer.runpodctl_path import RunpodctlError
from podtui.transfer.sftp import SftpError


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
    try:
        pod = ctx.lookup(job.pod_id)
    except Exception as e:  # an API error of any kind: say it, and let a retry ask again
        raise TransferFailed(f"cannot look up pod {job.pod_id}: {e}", "api", retryable=True) from None
    with reporter.lock:
        job.pod_name = pod.name
    with reach(pod, ctx.ssh_settings()) as remote:
        _clean_pod(reporter, remote.shell)
        way = _choose(job, remote, ctx)
        with reporter.lock:
            job.way = way
        reporter.note(f"{job.direction} via {way} over {remote.conn.endpoint.label}")
        try:
            if job.direction == "pull":
                _pull(job, reporter, remote, way, ctx)
            else:
                _push(job, reporter, remote, way, ctx)
        except (SftpError, ConsoleTransferError, ArchiveError, ChecksumError) as e:
            raise TransferFailed(str(e), type(e).__name__, retryable=_transient(str(e))) from None
        except RunpodctlError as e:  # its kind says whether the relay may do better; a full disk it does not know
            raise TransferFailed(str(e), str(e.kind), retryable=e.retryable and _transient(str(e))) from None


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
    result = shell.run(f"df -Pk -- {shlex.quote(folder or '.')} 2>/dev/null | tail -n 1", timeout_s=60)
    fields = result.output.split()
    return int(fields[3]) * 1024 if result.exit_code == 0 and len(fields) >= 6 and fields[3].isdigit() else None


def _free_local(folder: Path) -> int | None:
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


def _verify(reporter: Reporter, local: Path, shell: RemoteShell, remote: str) -> str:
    job = reporter.job
    reporter.stage("verifying", f"comparing {job.algorithm} on both ends")
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


def _pull(job: TransferJob, reporter: Reporter, remote: _Pod, way: Way, ctx: TransferContext) -> None:
    shell = remote.shell
    source = job.source.rstrip("/") or "/"
    top = posixpath.basename(source)
    if top in ("", ".", ".."):
        raise TransferFailed(f"name the file or folder itself (e.g. outputs/ or /workspace/model.bin), not "
                             f"{job.source!r}", "bad_source")
    folder = archive.remote_is_dir(shell, source)
    final = Path(job.target or ".").expanduser()
    if job.target.endswith("/") or final.is_dir():  # "ckpts/" means into that folder, made if need be
        final.mkdir(parents=True, exist_ok=True)
        final = final / top
    with ctx.claim(f"local:{final.resolve()}", str(final)):
        _pull_to(job, reporter, remote, way, ctx, source, top, folder, final)


def _pull_to(job: TransferJob, reporter: Reporter, remote: _Pod, way: Way, ctx: TransferContext, source: str,
             top: str, folder: bool, final: Path) -> None:
    shell = remote.shell
    with reporter.lock:
        job.folder, job.name, job.final_path = folder, top + ("/" if folder else ""), str(final)
    if final.exists() and not job.overwrite:
        raise TransferFailed(f"{final} already exists; podtui does not replace it unless asked", "exists")
    packed = archive.pack_remote(shell, source, job.id) if folder else None
    src = packed or source
    part = local_part(final, job.id)
    size = _remote_size(shell, src)
    where = f"on this machine for {final.name} in {final.parent}"
    try:
        _room_for(size, _free_local(final.parent), where)
        reporter.progress(0, size)
        if way != "runpodctl":  # runpodctl waits for its code first, and says so itself
            reporter.stage("transferring")
        if way == "sftp":
            sftp.download(remote.conn, src, final, reporter.progress, tag=job.id)
        elif way == "console":
            console_path.download(shell, src, final, reporter.progress, tag=job.id)
        else:
            # A podtui killed mid-transfer leaves its receiver running (its own session) in the old staging folder:
            # clear those, and use a new one, so a retry never shares a file with it.
            for old in final.parent.glob(f".podtui-receive-{job.id}*"):
                shutil.rmtree(old, ignore_errors=True)
            staging = final.parent / f".podtui-receive-{job.id}-{secrets.token_hex(4)}"
            try:
                runpodctl_path.pull(shell, src, staging, runpodctl_path.find_local(ctx.runpodctl) or "runpodctl",
                                    reporter).replace(part)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        digest = _verify(reporter, part, shell, src)
    except BaseException as e:
        part.unlink(missing_ok=True)  # never a half or unverified file lying about
        if packed:
            with contextlib.suppress(Exception):
                archive.remove_remote(shell, packed)
        _no_space_instead(e, lambda: _room_for(size, _free_local(final.parent), where))
        raise
    try:  # verified: a clash now keeps the verified part file, and says where it is
        if folder:
            archive.unpack_local(part, final, job.overwrite, job.id)
            part.unlink(missing_ok=True)
        else:
            sftp.finish_local(part, final, job.overwrite)
        with reporter.lock:
            job.checksum = digest
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


def _push(job: TransferJob, reporter: Reporter, remote: _Pod, way: Way, ctx: TransferContext) -> None:
    shell = remote.shell
    local = Path(job.source).expanduser()
    if not local.exists():
        raise TransferFailed(f"{local} does not exist", "not_found")
    folder = local.is_dir()
    final = _remote_final(shell, job.target, local.name)
    with reporter.lock:
        job.folder, job.name, job.final_path = folder, local.name + ("/" if folder else ""), final
    there = shell.run(f"if [ -d {shlex.quote(final)} ]; then echo folder; elif [ -e {shlex.quote(final)} ]; then "
                      "echo file; else echo free; fi", timeout_s=60).output.strip().splitlines()[-1:]
    if there == ["folder"] and not folder:
        raise TransferFailed(f"{final} is a folder on the pod; podtui does not replace a folder with a file", "exists")
    if there != ["free"] and not job.overwrite:
        raise TransferFailed(f"{final} already exists on the pod; podtui does not replace it unless asked", "exists")
    with ctx.claim(f"remote:{job.pod_id}:{final}", f"{final} on the pod"):
        _push_to(job, reporter, remote, way, ctx, local, folder, final)


def _push_to(job: TransferJob, reporter: Reporter, remote: _Pod, way: Way, ctx: TransferContext, local: Path,
             folder: bool, final: str) -> None:
    shell = remote.shell
    parent = posixpath.dirname(final)
    if parent:  # `push model.bin checkpoints/` makes checkpoints/ when it is not there yet, whichever the way
        made = shell.run(f"mkdir -p -- {shlex.quote(parent)}", timeout_s=60)
        if made.exit_code != 0:
            raise TransferFailed(f"cannot make {parent} on the pod: {made.output.strip()[:200]}", "mkdir")
    work = ctx.work_dir / job.id
    try:
        src = archive.pack_local(local, archive.local_archive_for(local, work)) if folder else local
        size = src.stat().st_size
        where = f"on the pod for {posixpath.basename(final)} in {parent or 'its home folder'}"
        _room_for(size, _free_remote(shell, parent), where)
        reporter.progress(0, size)
        if way != "runpodctl":  # runpodctl waits for its code first, and says so itself
            reporter.stage("transferring")
        part = remote_part(final, job.id)
        try:
            if way == "sftp":
                sftp.upload(remote.conn, src, final, reporter.progress, tag=job.id)
            elif way == "console":
                console_path.upload(shell, src, final, reporter.progress, tag=job.id)
            else:
                runpodctl_path.push(shell, src, final, runpodctl_path.find_local(ctx.runpodctl) or "runpodctl",
                                    reporter, tag=job.id)
            digest = _verify(reporter, src, shell, part)
        except BaseException as e:
            with contextlib.suppress(Exception):
                archive.remove_remote(shell, part)
            _no_space_instead(e, lambda: _room_for(size, _free_remote(shell, parent), where))
            raise
        if folder:
            archive.unpack_remote(shell, part, local.name, final, job.overwrite, job.id)
            archive.remove_remote(shell, part)
        else:
            console_path.finish_remote(shell, part, final, job.overwrite)
        with reporter.lock:
            job.checksum = digest
    finally:
        shutil.rmtree(work, ignore_errors=True)
