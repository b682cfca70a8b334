"""A pull: a file or folder from the pod to this machine, verified before it is put under its final name, and
recorded as it landed, so that a "then terminate" can check it is still there as verified."""

from __future__ import annotations

import contextlib
import os
import posixpath
import secrets
import shutil
import stat
from pathlib import Path
from typing import Any

from podtui.transfer import archive, manifest, source
from podtui.transfer.files import (
    FileRunner,
    download_direct,
    followed,
    free_local,
    no_space_instead,
    remote_size,
    room_for,
    verify_file,
    verify_folder,
)
from podtui.transfer.job import Route, TransferJob
from podtui.transfer.manifest import Manifest, ManifestError
from podtui.transfer.part import local_part
from podtui.transfer.progress import Reporter
from podtui.transfer.routes import console, runpodctl, sftp
from podtui.transfer.runner import ReachedPod, TransferContext, TransferFailed
from podtui.transfer.source import Source


class FilePull(FileRunner[None]):
    activity = "pulling {} from"

    def check_here(self, job: TransferJob) -> None:
        return None  # the source is on the pod: looked at once it is reached

    def path_on_pod(self, job: TransferJob) -> str:
        return job.source

    def move(
        self,
        job: TransferJob,
        reporter: Reporter,
        remote: ReachedPod,
        route: Route,
        ctx: TransferContext,
        checked: None,
    ) -> None:
        _pull(job, reporter, remote, route, ctx)

    def landed(self, job: TransferJob) -> bool:
        return landed(job)


def _file_as_landed(st: os.stat_result) -> dict[str, Any]:
    return {"kind": "file", "size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino, "dev": st.st_dev}


def _folder_as_landed(entries: Manifest) -> dict[str, Any]:
    return {"kind": "folder", "entries": len(entries), "shape": manifest.shape(entries)}


def landed(job: TransferJob) -> bool:
    """Whether a verified download is still where it was put, as it was verified: checked again before a pod is
    terminated after it. A file: the same one (inode), not written since (size, mtime); a folder: the same names,
    kinds, sizes and link targets (listed, no file read). A symlink, or anything else there now, is not it."""
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


def _pull(job: TransferJob, reporter: Reporter, remote: ReachedPod, route: Route, ctx: TransferContext) -> None:
    shell = remote.shell
    source_path = job.source.rstrip("/") or "/"
    top = posixpath.basename(source_path)
    if top in ("", ".", ".."):
        raise TransferFailed(
            f"name the file or folder itself (e.g. outputs/ or /workspace/model.bin), not {job.source!r}", "bad_source"
        )
    src = source.remote(shell, source_path)
    entries = None
    if src.folder:  # refused before anything is packed or written
        entries = manifest.scan_remote(shell, src.real, reporter.check)
        manifest.refuse(entries, source_path)
    final = Path(job.target or ".").expanduser()
    if job.target.endswith("/") or final.is_dir():  # "ckpts/" means into that folder, made (later) if need be
        final = final / top
    with ctx.claim(f"local:{final.resolve()}", str(final)):
        _pull_to(job, reporter, remote, route, ctx, source_path, src, entries, final)


def _pull_to(
    job: TransferJob,
    reporter: Reporter,
    remote: ReachedPod,
    route: Route,
    ctx: TransferContext,
    source_path: str,
    src: Source,
    entries: Manifest | None,
    final: Path,
) -> None:
    shell = remote.shell
    top = posixpath.basename(source_path)
    with reporter.lock:
        job.folder, job.name, job.final_path = src.folder, top + ("/" if src.folder else ""), str(final)
        job.landed_as = None
    if os.path.lexists(final) and not job.overwrite:
        raise TransferFailed(f"{final} already exists; podtui does not replace it unless asked", "exists")
    followed(reporter, source_path, src, top)
    packed = archive.pack_remote(shell, src.real, source_path, job.id) if src.folder else None
    sent = packed or src.real
    part = local_part(final, job.id)
    size = remote_size(shell, sent)
    where = f"on this machine for {final.name} in {final.parent}"
    digest = ""
    landed_as: dict[str, Any] | None = None
    try:
        room_for(size, free_local(final.parent), where)
        try:  # after the checks; the folders the user asked for get the umask's mode, as mkdir -p gives them
            final.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise TransferFailed(f"cannot make {final.parent}: {e.strerror or e}", "mkdir") from None
        reporter.progress(0, size)
        if route != "runpodctl":  # runpodctl waits for its code first, and says so itself
            reporter.stage("transferring")
        here: str | None = None  # the checksum of what arrived, when the route took it on the way
        if route in ("sftp", "openssh"):
            here = download_direct(job, reporter, remote, route, ctx, sent, final)
        elif route == "console":
            console.download(shell, sent, final, reporter.progress, tag=job.id)
        else:
            # A podtui killed mid-transfer leaves its receiver running (its own session) in the old staging folder:
            # clear those, and use a new one, so a retry never shares a file with it.
            for old in final.parent.glob(f".podtui-receive-{job.id}*"):
                shutil.rmtree(old, ignore_errors=True)
            staging = final.parent / f".podtui-receive-{job.id}-{secrets.token_hex(4)}"
            try:
                runpodctl.pull(
                    shell, sent, staging, runpodctl.find_local(ctx.runpodctl) or "runpodctl", reporter
                ).replace(part)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        if entries is None:
            digest = verify_file(reporter, part, shell, sent, arrived_here=True, here=here)
        else:
            reporter.stage("verifying", f"unpacking, then comparing {job.algorithm} of every file on both ends")
            unpacked = archive.unpack_local(part, final, job.id)
            try:
                arrived = manifest.hash_local(unpacked, manifest.scan_local(unpacked), job.algorithm, reporter.check)
                wanted = manifest.hash_remote(shell, src.real, entries, job.algorithm, reporter.check)
                digest = verify_folder(reporter, wanted, arrived, "here")
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
        no_space_instead(e, lambda: room_for(size, free_local(final.parent), where))
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
