"""Folders travel as one archive and are unpacked on arrival (the issue; runpodctl itself zips folders).

A plain tar: model weights do not compress, and tar is on every pod image. The archive unpacks into a hidden
folder first and is renamed into place only whole, so a half-unpacked folder never sits under the final name.
"""

from __future__ import annotations

import posixpath
import shlex
import shutil
import tarfile
from pathlib import Path

from podtui.core.ssh.remote import RemoteShell

SUFFIX = ".podtui-tar"


class ArchiveError(Exception):
    """A folder could not be packed or unpacked; nothing was put under the final name."""


def local_archive_for(folder: Path, work: Path) -> Path:
    return work / f"{folder.name}{SUFFIX}"


def pack_local(folder: Path, archive: Path) -> Path:
    archive.parent.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(archive, "w") as tar:
            tar.add(folder, arcname=folder.name)
    except OSError as e:
        archive.unlink(missing_ok=True)
        raise ArchiveError(f"cannot pack {folder}: {e.strerror or e}") from None
    return archive


def unpack_local(archive: Path, final: Path, overwrite: bool, tag: str = "") -> Path:
    """Unpack archive (holding one top folder) so that its folder becomes `final`."""
    staging = final.parent / f".{final.name}.{tag}.podtui-unpack"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        with tarfile.open(archive) as tar:
            tops = {m.name.split("/", 1)[0] for m in tar.getmembers()}
            if len(tops) != 1:
                raise ArchiveError(f"the archive of {final.name} holds {len(tops)} top-level entries, not one folder")
            tar.extractall(staging, filter="data")  # refuses absolute paths, .. and links out of the folder
        if final.exists():
            if not overwrite:
                raise ArchiveError(f"{final} already exists; podtui does not replace it unless asked")
            shutil.rmtree(final) if final.is_dir() else final.unlink()
        (staging / tops.pop()).rename(final)
    except (OSError, tarfile.TarError) as e:
        raise ArchiveError(f"cannot unpack into {final}: {e}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def remote_is_dir(shell: RemoteShell, path: str) -> bool:
    result = shell.run(f"if [ -d {shlex.quote(path)} ]; then echo dir; elif [ -e {shlex.quote(path)} ]; then "
                       "echo file; else echo missing; fi", timeout_s=60)
    answer = result.output.strip().splitlines()[-1:] or ["?"]
    if answer == ["missing"]:
        raise ArchiveError(f"{path} does not exist on the pod")
    return answer == ["dir"]


def pack_remote(shell: RemoteShell, folder: str, tag: str = "") -> str:
    """tar the pod's folder next to itself (the volume has room where the folder is); return the archive path."""
    folder = folder.rstrip("/") or "/"
    parent, name = posixpath.split(folder)
    archive = posixpath.join(parent, f".{name}.{tag}{SUFFIX}")
    if name in ("", ".", ".."):
        raise ArchiveError(f"name the folder itself (e.g. /workspace/outputs), not {folder!r}")
    result = shell.run(f"tar -C {shlex.quote(parent or '.')} -cf {shlex.quote(archive)} -- {shlex.quote(name)}",
                       timeout_s=3600)
    if result.exit_code != 0:
        shell.run(f"rm -f -- {shlex.quote(archive)}")
        raise ArchiveError(f"cannot pack {folder} on the pod: {result.output.strip()[:300]}")
    return archive


def unpack_remote(shell: RemoteShell, archive: str, top: str, final: str, overwrite: bool, tag: str = "") -> None:
    """Unpack archive, whose one top folder is `top` (the source folder's name), so that it becomes `final`."""
    parent, name = posixpath.split(final.rstrip("/"))
    staging = posixpath.join(parent, f".{name}.{tag}.podtui-unpack")
    q_final, q_staging = shlex.quote(final), shlex.quote(staging)
    if not overwrite:
        exists = shell.run(f"[ -e {q_final} ] && echo exists || echo free", timeout_s=60).output.strip()
        if exists.endswith("exists"):
            raise ArchiveError(f"{final} already exists on the pod; podtui does not replace it unless asked")
    script = (f"rm -rf {q_staging} && mkdir -p {q_staging} && tar -C {q_staging} -xf {shlex.quote(archive)} "
              + (f" && rm -rf {q_final}" if overwrite else "")
              + f" && mv -T -- {shlex.quote(posixpath.join(staging, top))} {q_final}"
              + f"; s=$?; rm -rf {q_staging}; exit $s")
    result = shell.run(f"( {script} )", timeout_s=3600)
    if result.exit_code != 0:
        raise ArchiveError(f"cannot unpack into {final} on the pod: {result.output.strip()[:300] or 'tar failed'}")


def remove_remote(shell: RemoteShell, path: str) -> None:
    shell.run(f"rm -f -- {shlex.quote(path)}", timeout_s=60)
