"""Moving a file or folder between this machine and a pod (push.py, pull.py): what the two share.

One transfer from start to verified: reach the pod, pick the route, move the bytes, compare checksums on both
ends, and only then put the file under its final name. Folders go as one archive, unpacked on arrival into a
hidden folder, and verified by what arrived: every file's checksum and the set of entries (manifest.py).

A symlink named as the source is followed; FIFOs, devices, sockets, dangling links, loops and symlinks leading
out of a folder are refused before anything is written (source.py, manifest.py).

The routes, in the order `auto` tries them: when the pod has direct SSH, OpenSSH's `ssh` where this machine has
it (the fastest: docs/bulk-transfers.md#the-openssh-route), else SFTP through podtui's own client, which also
takes over when OpenSSH cannot start; runpodctl when both ends have it; the console (chunked base64 through the
pod's shell) when neither is available: the gateway gives only a PTY shell, no SFTP
(docs/runpod-facts.md#ssh-gateway).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import stat
from abc import abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Generic, TypeVar

from podtui.core import units
from podtui.core.demo_sandbox import transfer_path_refusal
from podtui.core.ssh.errors import SshError
from podtui.core.ssh.remote import RemoteShell
from podtui.transfer import leftovers, manifest
from podtui.transfer.archive import ArchiveError
from podtui.transfer.checksum import ChecksumError, local_digest, remote_digest
from podtui.transfer.job import Route, TransferJob
from podtui.transfer.manifest import FolderRefused, Manifest, ManifestError
from podtui.transfer.progress import Reporter, TransferCancelled
from podtui.transfer.routes import openssh, runpodctl, sftp
from podtui.transfer.routes.console import ConsoleTransferError
from podtui.transfer.routes.openssh import OpensshError, OpensshRefused, OpensshUnavailable
from podtui.transfer.routes.runpodctl import RunpodctlError
from podtui.transfer.routes.sftp import SftpError
from podtui.transfer.runner import ReachedPod, TransferContext, TransferFailed, TransferRunner, reach
from podtui.transfer.source import Source, SourceRefused

Checked = TypeVar("Checked")


class FileRunner(TransferRunner, Generic[Checked]):
    """A push or a pull: what is checked here before the pod is reached, the path on the pod the demo's sandbox
    must allow, and the move itself; the rest (reaching the pod, the route, what a failure means) is shared."""

    @abstractmethod
    def check_here(self, job: TransferJob) -> Checked:
        """What this machine can refuse before the pod is reached; raises SourceRefused or FolderRefused."""

    @abstractmethod
    def path_on_pod(self, job: TransferJob) -> str:
        """The path the job reads or writes on the pod."""

    @abstractmethod
    def move(
        self,
        job: TransferJob,
        reporter: Reporter,
        remote: ReachedPod,
        route: Route,
        ctx: TransferContext,
        checked: Checked,
    ) -> None:
        """Move, verify and put in place; raises the route's own errors, or TransferFailed."""

    def run(self, job: TransferJob, reporter: Reporter, ctx: TransferContext) -> None:
        with refusals():
            checked = self.check_here(job)  # refused before the pod is reached
        try:
            pod = ctx.lookup(job.pod_id)
        except Exception as e:  # an API error of any kind: say it, and let a retry ask again
            raise TransferFailed(f"cannot look up pod {job.pod_id}: {e}", "api", retryable=True) from None
        with reporter.lock:
            job.pod_name = pod.name
        if (refusal := transfer_path_refusal(pod, self.path_on_pod(job))) is not None:
            raise TransferFailed(refusal, "not_isolated")
        with reach(pod, ctx.ssh_settings()) as remote:
            _clean_pod(reporter, remote.shell)
            route = _choose(job, remote, ctx)
            with reporter.lock:
                job.route = route
            reporter.note(f"{job.direction} via {route} over {remote.conn.endpoint.label}")
            try:
                with refusals():
                    self.move(job, reporter, remote, route, ctx, checked)
            except ManifestError as e:  # one the pod's listing could not be understood from is not sent again
                raise TransferFailed(str(e), type(e).__name__, retryable=e.retryable and transient(str(e))) from None
            except OpensshRefused as e:  # the user must act (podtui ssh forget), as when podtui's client refuses
                raise TransferFailed(str(e), "auth") from None
            except OpensshUnavailable as e:  # --via openssh: no SFTP fallback was asked for
                raise TransferFailed(f"{e}; --via sftp uses podtui's own SSH client", "no_openssh") from None
            except (SftpError, OpensshError, ConsoleTransferError, ArchiveError, ChecksumError) as e:
                raise TransferFailed(str(e), type(e).__name__, retryable=transient(str(e))) from None
            except RunpodctlError as e:  # its kind says whether the relay may do better; a full disk it does not know
                raise TransferFailed(str(e), str(e.kind), retryable=e.retryable and transient(str(e))) from None


@contextmanager
def refusals() -> Iterator[None]:
    """A source podtui does not copy fails at once, and is not retried: nothing about it changes by itself (but a
    pod whose answer about it was lost may answer next time: SourceRefused.retryable)."""
    try:
        yield
    except SourceRefused as e:
        raise TransferFailed(str(e), e.kind, retryable=e.retryable) from None
    except FolderRefused as e:
        raise TransferFailed(str(e), "refused") from None


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


def _choose(job: TransferJob, remote: ReachedPod, ctx: TransferContext) -> Route:
    choice = job.route_choice
    local_rpc = runpodctl.find_local(ctx.runpodctl)
    if choice == "sftp" and not remote.direct:
        raise TransferFailed(
            "SFTP needs direct SSH, and this pod is reachable only through RunPod's gateway, "
            "which allows no SFTP; use --via runpodctl or --via console",
            "no_sftp",
        )
    if choice == "openssh" and not remote.direct:
        raise TransferFailed(
            "OpenSSH's ssh needs direct SSH, and this pod is reachable only through RunPod's gateway, "
            "which runs no commands; use --via runpodctl or --via console",
            "no_openssh",
        )
    if choice == "openssh" and not openssh.available():
        raise TransferFailed(
            "OpenSSH's ssh is not installed on this machine (or not on PATH); --via sftp uses podtui's own client",
            "no_openssh",
        )
    if choice == "runpodctl" or (choice == "auto" and not remote.direct and local_rpc):
        if local_rpc is None:
            if choice == "runpodctl":
                raise TransferFailed("runpodctl is not installed on this machine (or not on PATH)", "no_runpodctl")
        elif runpodctl.remote_available(remote.shell):
            return "runpodctl"
        elif choice == "runpodctl":
            raise TransferFailed("runpodctl is not installed on the pod", "no_runpodctl")
    if choice == "auto":
        if remote.direct:
            return "openssh" if openssh.available() else "sftp"
        return "console"
    return choice  # sftp, openssh or console, checked above


# -- direct SSH: OpenSSH, or podtui's own SFTP --------------------------------------------------------------


def upload_direct(
    job: TransferJob, reporter: Reporter, remote: ReachedPod, route: Route, ctx: TransferContext, sent: Path, final: str
) -> str | None:
    """An upload over direct SSH into the part file next to `final`: through OpenSSH, or SFTP when that is the
    route or OpenSSH could not start (the job's route then says sftp). Returns the checksum of what was sent when the
    route took it on the way (OpenSSH does), else None."""
    if route == "openssh":
        try:
            moved = openssh.upload(
                remote.conn, ctx.ssh_settings(), sent, final, reporter.progress, job.id, job.algorithm
            )
            return moved.digest
        except OpensshUnavailable as e:
            _fall_back(job, reporter, e)
    sftp.upload(remote.conn, sent, final, reporter.progress, tag=job.id)
    return None


def download_direct(
    job: TransferJob, reporter: Reporter, remote: ReachedPod, route: Route, ctx: TransferContext, sent: str, final: Path
) -> str | None:
    """A download over direct SSH into the part file next to `final`, as upload_direct: returns the checksum of
    what arrived when the route took it on the way, else None."""
    if route == "openssh":
        try:
            with reporter.lock:
                size = job.total_bytes
            moved = openssh.download(
                remote.conn, ctx.ssh_settings(), sent, final, reporter.progress, job.id, job.algorithm, size
            )
            return moved.digest
        except OpensshUnavailable as e:
            _fall_back(job, reporter, e)
    sftp.download(remote.conn, sent, final, reporter.progress, tag=job.id)
    return None


def _fall_back(job: TransferJob, reporter: Reporter, why: OpensshUnavailable) -> None:
    """OpenSSH could not start (not a failure of the transfer itself): SFTP takes over, unless the user asked for
    OpenSSH by name."""
    if job.route_choice == "openssh":
        raise why
    reporter.note(f"OpenSSH could not start ({why}); SFTP through podtui's own client takes over")
    with reporter.lock:
        job.route = "sftp"


def transient(message: str) -> bool:
    """Worth another try: a dropped link or damaged data; not a missing file, an existing target or a full disk.
    Case does not matter: Go's runpodctl says "no space left on device", coreutils "No space left on device"."""
    permanent = (
        "does not exist",
        "already exists",
        "permission denied",
        "no such file",
        "not a folder",
        "is a folder",
        "name the folder",
        "no space left",
    )
    lowered = message.lower()
    return not any(p in lowered for p in permanent)


# -- room on either end -------------------------------------------------------------------------------------


def free_remote(shell: RemoteShell, folder: str) -> int | None:
    """Free bytes where `folder` is (or will be: the nearest folder above it that exists)."""
    result = shell.run(
        f'p={shlex.quote(folder or ".")}; while [ ! -d "$p" ] && [ "$p" != / ] && '
        '[ "$p" != . ]; do p=$(dirname -- "$p"); done; df -Pk -- "$p" 2>/dev/null | tail -n 1',
        timeout_s=60,
    )
    fields = result.output.split()
    return int(fields[3]) * 1024 if result.exit_code == 0 and len(fields) >= 6 and fields[3].isdigit() else None


def free_local(folder: Path) -> int | None:
    """Free bytes where `folder` is (or will be: the nearest folder above it that exists)."""
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def room_for(needed: int | None, free: int | None, where: str) -> None:
    """Before any byte moves, and again after an attempt failed: a full disk is said in plain words, and not
    retried (trying again cannot free it)."""
    if needed is not None and free is not None and needed > free:
        raise TransferFailed(
            f"No space left {where}: it needs {units.size(needed)} and only {units.size(free)} "
            "is free; free some space (or pick another folder), then retry",
            "no_space",
        )


def no_space_instead(error: BaseException, check: Callable[[], None]) -> None:
    """After a failed attempt: when the disk is what ran out, raise that instead of the route's own words (SFTP
    says only "size mismatch in put", runpodctl may lead with the far side's broken pipe)."""
    if isinstance(error, TransferFailed) and error.kind == "no_space":
        return
    if isinstance(error, Exception) and not isinstance(error, TransferCancelled):
        with contextlib.suppress(SshError, OSError):
            check()


# -- verifying what arrived ---------------------------------------------------------------------------------


def remote_size(shell: RemoteShell, path: str) -> int | None:
    out = shell.run(f"stat -c %s -- {shlex.quote(path)}", timeout_s=60).output.strip()
    return int(out) if out.isdigit() else None


def verify_file(
    reporter: Reporter, local: Path, shell: RemoteShell, remote: str, arrived_here: bool, here: str | None = None
) -> str:
    """One file: the copy that arrived (a part file, here for a download, on the pod for an upload) must be a
    plain file, not a symlink, and its checksum equal to the source's. here: the local file's checksum when the
    route took it as the bytes went (the OpenSSH route), so the file is not read again."""
    job = reporter.job
    reporter.stage("verifying", f"comparing {job.algorithm} on both ends")
    if arrived_here:
        if not stat.S_ISREG(os.lstat(local).st_mode):
            raise TransferFailed(
                f"what arrived as {local} is not a plain file; it was discarded", "checksum", retryable=True
            )
    else:
        q = shlex.quote(remote)
        plain = shell.run(f"[ -f {q} ] && [ ! -L {q} ] && echo plain || echo other", timeout_s=60).output.strip()
        if not plain.endswith("plain"):
            raise TransferFailed(
                f"what arrived as {remote} on the pod is not a plain file; it was discarded", "checksum", retryable=True
            )
    if here is None:
        here = local_digest(local, job.algorithm, on_progress=lambda _done: reporter.check())  # a cancel stops it
    there = remote_digest(shell, remote, job.algorithm)
    if here != there:
        size_here = local.stat().st_size
        size_there = remote_size(shell, remote)
        raise TransferFailed(
            f"{job.algorithm} mismatch: {here[:12]}… here ({size_here} bytes), {there[:12]}… on "
            f"the pod ({size_there} bytes); the damaged copy was discarded",
            "checksum",
            retryable=True,
        )
    reporter.note(f"{job.algorithm} {here} on both ends")
    return here


def verify_folder(reporter: Reporter, wanted: Manifest, arrived: Manifest, where: str) -> str:
    """A folder is verified by what arrived: the same entries, every file's checksum equal to the source's."""
    job = reporter.job
    differs = manifest.summary(wanted, arrived)
    if differs is not None:
        raise TransferFailed(
            f"the folder that arrived {where} is not the source's ({differs}); the copy was discarded",
            "checksum",
            retryable=True,
        )
    reporter.note(f"{job.algorithm} of every file matches on both ends: {manifest.counts(wanted)}")
    return manifest.digest(wanted, job.algorithm)


def followed(reporter: Reporter, shown: str, src: Source, name: str) -> None:
    if src.link is not None:
        reporter.note(
            f"{shown} is a symlink to {src.link}: copying the {'folder' if src.folder else 'file'} it "
            f"leads to ({src.real}), as {name}"
        )
