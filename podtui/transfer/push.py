"""A push: a file or folder from this machine to the pod, checked here before the pod is reached, verified on the
pod before it is put under its final name there."""

from __future__ import annotations

import contextlib
import os
import posixpath
import shlex
import shutil
from pathlib import Path

from podtui.core.ssh.remote import RemoteShell
from podtui.transfer import archive, manifest, source
from podtui.transfer.files import (
    FileRunner,
    followed,
    free_remote,
    no_space_instead,
    room_for,
    transient,
    upload_direct,
    verify_file,
    verify_folder,
)
from podtui.transfer.job import Route, TransferJob
from podtui.transfer.manifest import Manifest, ManifestError
from podtui.transfer.modes import private_dir
from podtui.transfer.part import remote_part
from podtui.transfer.progress import Reporter
from podtui.transfer.routes import console, runpodctl
from podtui.transfer.runner import ReachedPod, TransferContext, TransferFailed
from podtui.transfer.source import Source

LocalSource = tuple[Source, Manifest | None, str]  # the source, a folder's entries, the name it goes under


class FilePush(FileRunner[LocalSource]):
    activity = "pushing {} to"
    changes_pods = "uploads"

    def check_here(self, job: TransferJob) -> LocalSource:
        return _local_source(job)

    def path_on_pod(self, job: TransferJob) -> str:
        return job.target

    def move(
        self,
        job: TransferJob,
        reporter: Reporter,
        remote: ReachedPod,
        route: Route,
        ctx: TransferContext,
        checked: LocalSource,
    ) -> None:
        _push(job, reporter, remote, route, ctx, *checked)


def _remote_final(shell: RemoteShell, target: str, name: str) -> str:
    target = target or "."
    if target.endswith("/"):
        return posixpath.join(target, name)
    is_dir = shell.run(f"[ -d {shlex.quote(target)} ] && echo dir || echo no", timeout_s=60).output.strip()
    return posixpath.join(target, name) if is_dir.endswith("dir") else target


def _local_source(job: TransferJob) -> LocalSource:
    """What a push sends, checked before the pod is reached: the file or folder (through a symlink named as the
    source), a folder's entries, refused if it holds what podtui does not copy or cannot read, and the name it
    goes under: that of the absolute path (`.` is the folder podtui runs in, by its own name), never empty."""
    local = Path(job.source).expanduser()
    name = Path(os.path.abspath(local)).name
    if name in ("", ".", ".."):
        raise TransferFailed(
            f"name the file or folder itself (e.g. ./outputs or ~/model.bin), not {job.source!r}", "bad_source"
        )
    src = source.local(local)
    if not src.folder:
        return src, None, name
    try:
        entries = manifest.scan_local(Path(src.real))
    except ManifestError as e:
        raise TransferFailed(str(e), "unreadable", retryable=transient(str(e))) from None
    manifest.refuse(entries, str(local))
    return src, entries, name


def _push(
    job: TransferJob,
    reporter: Reporter,
    remote: ReachedPod,
    route: Route,
    ctx: TransferContext,
    src: Source,
    entries: Manifest | None,
    name: str,
) -> None:
    shell = remote.shell
    local = Path(job.source).expanduser()
    folder = src.folder
    final = _remote_final(shell, job.target, name)
    with reporter.lock:
        job.folder, job.name, job.final_path = folder, name + ("/" if folder else ""), final
    q = shlex.quote(final)
    there = (
        shell.run(
            f"if [ -d {q} ]; then echo folder; elif [ -e {q} ] || [ -L {q} ]; then echo file; else echo free; fi",
            timeout_s=60,
        )
        .output.strip()
        .splitlines()[-1:]
    )
    if there == ["folder"] and not folder:
        raise TransferFailed(f"{final} is a folder on the pod; podtui does not replace a folder with a file", "exists")
    if there != ["free"] and not job.overwrite:
        raise TransferFailed(f"{final} already exists on the pod; podtui does not replace it unless asked", "exists")
    followed(reporter, str(local), src, name)
    with ctx.claim(f"remote:{job.pod_id}:{final}", f"{final} on the pod"):
        _push_to(job, reporter, remote, route, ctx, src, entries, final)


def _push_to(
    job: TransferJob,
    reporter: Reporter,
    remote: ReachedPod,
    route: Route,
    ctx: TransferContext,
    src: Source,
    entries: Manifest | None,
    final: str,
) -> None:
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
        room_for(size, free_remote(shell, parent), where)
        if parent:  # `push model.bin checkpoints/` makes checkpoints/ if need be, whichever the route; only now that
            # the source is packed and the pod has room: a transfer refused before it starts leaves nothing there
            made = shell.run(f"mkdir -p -- {shlex.quote(parent)}", timeout_s=60)
            if made.exit_code != 0:
                raise TransferFailed(f"cannot make {parent} on the pod: {made.output.strip()[:200]}", "mkdir")
        reporter.progress(0, size)
        if route != "runpodctl":  # runpodctl waits for its code first, and says so itself
            reporter.stage("transferring")
        part = remote_part(final, job.id)
        here: str | None = None  # the checksum of what was sent, when the route took it on the way
        try:
            if route in ("sftp", "openssh"):
                here = upload_direct(job, reporter, remote, route, ctx, sent, final)
            elif route == "console":
                console.upload(shell, sent, final, reporter.progress, tag=job.id)
            else:
                runpodctl.push(
                    shell, sent, final, runpodctl.find_local(ctx.runpodctl) or "runpodctl", reporter, tag=job.id
                )
            if entries is None:
                digest = verify_file(reporter, sent, shell, part, arrived_here=False, here=here)
            else:
                reporter.stage(
                    "verifying", f"unpacking on the pod, then comparing {job.algorithm} of every file on both ends"
                )
                unpacked = archive.unpack_remote(shell, part, final, job.overwrite, job.id)
                try:
                    listed = manifest.scan_remote(shell, unpacked, reporter.check)
                    arrived = manifest.hash_remote(shell, unpacked, listed, job.algorithm, reporter.check)
                    wanted = manifest.hash_local(real, entries, job.algorithm, reporter.check)
                    digest = verify_folder(reporter, wanted, arrived, "on the pod")
                    archive.commit_remote(shell, unpacked, final, job.overwrite)
                finally:
                    archive.remove_remote_tree(shell, unpacked)  # gone already once renamed into place
        except BaseException as e:
            with contextlib.suppress(Exception):
                archive.remove_remote(shell, part)
            no_space_instead(e, lambda: room_for(size, free_remote(shell, parent), where))
            raise
        if entries is not None:
            archive.remove_remote(shell, part)
        else:
            console.finish_remote(shell, part, final, job.overwrite)
        with reporter.lock:
            job.checksum = digest
    finally:
        shutil.rmtree(work, ignore_errors=True)
