"""The SFTP route (pods with direct SSH): a file written under a temporary name, renamed once verified.

A download never lands on the final name until its checksum matches the pod's, and never replaces an
existing file unless asked; an upload likewise. The source is never touched.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import paramiko

from podtui.core.ssh.connect import Connection
from podtui.transfer.modes import private_file, publish
from podtui.transfer.part import Progress, local_part, remote_part


class SftpError(Exception):
    """An SFTP transfer failed; nothing was left under the final name."""


def _sftp(conn: Connection) -> paramiko.SFTPClient:
    try:
        client = paramiko.SFTPClient.from_transport(conn.transport)
    except (paramiko.SSHException, EOFError, OSError) as e:
        raise SftpError(f"{conn.endpoint.label} has no SFTP: {str(e) or type(e).__name__}") from None
    if client is None:
        raise SftpError(f"{conn.endpoint.label} has no SFTP")
    return client


def _close(client: paramiko.SFTPClient) -> None:
    # on a connection already lost, closing raises EOFError, which would hide the error that says why
    with contextlib.suppress(OSError, paramiko.SSHException, EOFError):
        client.close()


def _why(e: BaseException) -> str:
    """paramiko's words for a lost connection ("Server connection dropped: ", "Socket is closed") said plainly."""
    text = str(e).strip().rstrip(":").strip() or type(e).__name__
    lost = ("connection dropped", "socket is closed", "connection reset", "broken pipe", "eof")
    if isinstance(e, EOFError) or any(w in text.lower() for w in lost):
        return f"the connection to the pod was lost ({text})"
    return text


def download(conn: Connection, remote: str, local: Path, on_progress: Progress | None = None, tag: str = "") -> Path:
    """Fetch remote into a hidden part file next to local; return the part file's path."""
    part = local_part(local, tag)
    local.parent.mkdir(parents=True, exist_ok=True)
    private_file(part)  # 0600 until verified: get() writes into it and keeps its mode
    client = _sftp(conn)
    try:
        client.get(remote, str(part), callback=on_progress, prefetch=True)
    except FileNotFoundError:
        part.unlink(missing_ok=True)
        raise SftpError(f"{remote} does not exist on the pod") from None
    except (OSError, paramiko.SSHException, EOFError) as e:
        part.unlink(missing_ok=True)
        raise SftpError(f"downloading {remote} failed: {_why(e)}") from None
    finally:
        _close(client)
    return part


def upload(conn: Connection, local: Path, remote: str, on_progress: Progress | None = None, tag: str = "") -> str:
    """Send local to a hidden part file next to remote; return the part file's remote path."""
    part = remote_part(remote, tag)
    client = _sftp(conn)
    try:
        client.put(str(local), part, callback=on_progress, confirm=True)
    except FileNotFoundError:
        raise SftpError(f"{local} does not exist, or the folder for {remote} does not exist on the pod") from None
    except (OSError, paramiko.SSHException, EOFError) as e:
        with contextlib.suppress(OSError, paramiko.SSHException, EOFError):
            client.remove(part)
        raise SftpError(f"uploading {local} failed: {_why(e)}") from None
    finally:
        _close(client)
    return part


def finish_remote(conn: Connection, part: str, remote: str, overwrite: bool) -> None:
    """Rename a verified upload to its final name."""
    client = _sftp(conn)
    try:
        if not overwrite:
            with contextlib.suppress(FileNotFoundError):
                client.stat(remote)
                raise SftpError(f"{remote} already exists on the pod; podtui does not replace it unless asked")
        client.posix_rename(part, remote)
    except (OSError, paramiko.SSHException, EOFError) as e:
        raise SftpError(f"renaming {part} to {remote} failed: {str(e) or type(e).__name__}") from None
    finally:
        _close(client)


def finish_local(part: Path, local: Path, overwrite: bool) -> Path:
    """Rename a verified download to its final name."""
    if local.is_dir():
        raise SftpError(
            f"{local} is a folder; podtui does not replace a folder with a file (the verified copy is kept as {part})"
        )
    if local.exists() and not overwrite:
        raise SftpError(
            f"{local} already exists; podtui does not replace it unless asked (the verified copy is kept as {part})"
        )
    part.replace(local)
    publish(local)  # verified and in place: the mode any new file of the user's gets
    return local
