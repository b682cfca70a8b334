"""Folders travel as one archive and are unpacked on arrival (runpodctl itself zips folders).

A plain tar of the folder's contents (`tar -C FOLDER .`): model weights do not compress, and tar is on every pod
image. Packing from inside the folder follows a folder named through a symlink, as `cp -r src/` does. The
archive unpacks into a hidden folder, which is compared with the source (manifest.py) and renamed into place
only whole and verified, so a half-unpacked or unverified folder never sits under the final name.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shlex
import shutil
import tarfile
from pathlib import Path

from podtui.core.ssh.remote import RemoteShell
from podtui.transfer.modes import private_dir, private_file, publish

SUFFIX = ".podtui-tar"
UNPACK = ".podtui-unpack"


class ArchiveError(Exception):
    """A folder could not be packed or unpacked; nothing was put under the final name."""


def local_archive_for(name: str, work: Path) -> Path:
    """The staging archive of the folder sent under `name` (never empty: push takes it from the absolute path)."""
    return work / f"{name}{SUFFIX}"


def pack_local(folder: Path, archive: Path) -> Path:
    """The contents of `folder` (a real folder: a symlink to it is resolved first) into `archive`, mode 0600 in
    a 0700 folder: it holds the user's data."""
    try:
        private_dir(archive.parent)
        with open(private_file(archive), "wb") as f, tarfile.open(fileobj=f, mode="w") as tar:
            tar.add(folder, arcname=".")  # symlinks inside stay symlinks (manifest.refuse checked where they go)
    except (OSError, tarfile.TarError) as e:
        archive.unlink(missing_ok=True)
        raise ArchiveError(f"cannot pack {folder}: {getattr(e, 'strerror', None) or e}") from None
    return archive


def local_staging(final: Path, tag: str) -> Path:
    return final.parent / f".{final.name}.{tag}{UNPACK}"


def _keep_private(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """The data filter (no absolute paths, no .., no links out of the folder, no devices), and the archive's own
    top entry skipped: the unpack folder stays 0700 until it is verified and renamed."""
    if member.name in (".", "./", ""):
        return None
    return tarfile.data_filter(member, dest)


def unpack_local(archive: Path, final: Path, tag: str = "") -> Path:
    """Unpack into a fresh hidden folder next to `final`; return it (the caller verifies it, then commit_local)."""
    staging = local_staging(final, tag)
    shutil.rmtree(staging, ignore_errors=True)
    try:
        private_dir(staging)
        with tarfile.open(archive) as tar:
            tar.extractall(staging, filter=_keep_private)
    except (OSError, tarfile.TarError) as e:
        shutil.rmtree(staging, ignore_errors=True)
        raise ArchiveError(f"cannot unpack into {final}: {e}") from None
    return staging


def commit_local(staging: Path, final: Path, overwrite: bool) -> Path:
    """Rename a verified unpacked folder to its final name."""
    try:
        if os.path.lexists(final):
            if not overwrite:
                raise ArchiveError(f"{final} already exists; podtui does not replace it unless asked")
            if final.is_dir() and not final.is_symlink():
                shutil.rmtree(final)
            else:
                final.unlink()
        staging.rename(final)
    except OSError as e:
        raise ArchiveError(f"cannot put the folder in place as {final}: {e}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    publish(final)
    return final


def pack_remote(shell: RemoteShell, real: str, named: str, tag: str = "") -> str:
    """tar the contents of the pod's folder `real` into an archive next to `named` (the path the user gave; the
    volume has room where the folder is); return the archive's path."""
    named = named.rstrip("/") or "/"
    parent, name = posixpath.split(named)
    if name in ("", ".", ".."):
        raise ArchiveError(f"name the folder itself (e.g. /workspace/outputs), not {named!r}")
    archive = posixpath.join(parent, f".{name}.{tag}{SUFFIX}")
    result = shell.run(f"( umask 077; tar -C {shlex.quote(real)} -cf {shlex.quote(archive)} -- . )", timeout_s=3600)
    if result.exit_code != 0:
        shell.run(f"rm -f -- {shlex.quote(archive)}")
        raise ArchiveError(f"cannot pack {named} on the pod: {result.output.strip()[:300]}")
    return archive


def remote_staging(final: str, tag: str) -> str:
    parent, name = posixpath.split(final.rstrip("/"))
    return posixpath.join(parent, f".{name}.{tag}{UNPACK}")


def unpack_remote(shell: RemoteShell, archive: str, final: str, overwrite: bool, tag: str = "") -> str:
    """Unpack archive into a fresh hidden folder next to `final` on the pod; return that folder."""
    q_final = shlex.quote(final)
    if not overwrite:
        exists = shell.run(
            f"[ -e {q_final} ] || [ -L {q_final} ] && echo exists || echo free", timeout_s=60
        ).output.strip()
        if exists.endswith("exists"):
            raise ArchiveError(f"{final} already exists on the pod; podtui does not replace it unless asked")
    staging = remote_staging(final, tag)
    q_staging = shlex.quote(staging)
    result = shell.run(
        f"( umask 077; rm -rf -- {q_staging} && mkdir -p -- {q_staging} && "
        f"tar -C {q_staging} -xf {shlex.quote(archive)}; s=$?; "
        f"[ $s = 0 ] || rm -rf -- {q_staging}; exit $s )",
        timeout_s=3600,
    )
    if result.exit_code != 0:
        raise ArchiveError(f"cannot unpack into {final} on the pod: {result.output.strip()[:300] or 'tar failed'}")
    return staging


def commit_remote(shell: RemoteShell, staging: str, final: str, overwrite: bool) -> None:
    """Rename a verified unpacked folder on the pod to its final name."""
    q_final, q_staging = shlex.quote(final), shlex.quote(staging)
    replace = f"rm -rf -- {q_final} || exit 1" if overwrite else "echo exists; exit 0"
    result = shell.run(
        f"( if [ -e {q_final} ] || [ -L {q_final} ]; then {replace}; fi; "
        f"mv -T -- {q_staging} {q_final} && echo moved )",
        timeout_s=3600,
    )
    lines = result.output.strip().splitlines()[-1:]
    if lines == ["exists"]:
        raise ArchiveError(f"{final} already exists on the pod; podtui does not replace it unless asked")
    if result.exit_code != 0 or lines != ["moved"]:
        raise ArchiveError(
            f"cannot put the folder in place as {final} on the pod: {result.output.strip()[:300] or 'mv failed'}"
        )


def remove_remote(shell: RemoteShell, path: str) -> None:
    shell.run(f"rm -f -- {shlex.quote(path)}", timeout_s=60)


def remove_remote_tree(shell: RemoteShell, path: str) -> None:
    with contextlib.suppress(Exception):
        shell.run(f"rm -rf -- {shlex.quote(path)}", timeout_s=600)
