"""The console route: a file through the pod's shell, for pods reachable only through RunPod's gateway (a PTY,
no SFTP).

Never one giant heredoc: the terminal's canonical-mode line limit and its buffers silently truncate those, and
a model copied that way arrives corrupted (docs/runpod-facts.md#ssh-gateway). The file goes in chunks, each one
base64 on the wire and checked by its own sha256 on arrival; a chunk that does not match is sent again. The
whole file is verified after.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shlex
from collections.abc import Callable
from pathlib import Path

from podtui.core.ssh.remote import RemoteShell
from podtui.transfer.modes import private_file
from podtui.transfer.part import Progress, local_part, remote_part

UP_CHUNK = 192 * 1024  # bytes of file per command sent
DOWN_CHUNK = 4 << 20
RETRIES = 3
_HASH = re.compile(r"\b([0-9a-f]{64})\b")


class ConsoleTransferError(Exception):
    """A console transfer failed; the message says which chunk and why."""


def upload(
    shell: RemoteShell,
    local: Path,
    remote: str,
    on_progress: Progress | None = None,
    chunk_size: int = UP_CHUNK,
    tag: str = "",
) -> str:
    """Send local to a hidden part file next to remote, chunk by chunk; return the part file's path."""
    part = shlex.quote(remote_part(remote, tag))
    try:
        total = local.stat().st_size
        source = local.open("rb")
    except OSError as e:
        raise ConsoleTransferError(f"cannot read {local}: {e.strerror or e}") from None
    with source:
        _check(shell, f": > {part}", f"cannot create {remote_part(remote, tag)} on the pod")
        done = 0
        while chunk := source.read(chunk_size):
            want = hashlib.sha256(chunk).hexdigest()
            data = base64.encodebytes(chunk)  # lines of 76: well inside the terminal's 4095-byte line limit
            for attempt in range(1, RETRIES + 1):
                # The chunk is read from the terminal, appended and hashed in one pass; a bad one is cut off
                # again and re-sent. head -c takes exactly the bytes sent, so nothing is left for the shell.
                # pipefail: tee passes the chunk on even when writing it fails (a full disk), so the hash alone
                # would call a chunk that never reached the file good
                result = shell.run(
                    f"(set -o pipefail; head -c {len(data)} | base64 -d | tee -a -- {part} | sha256sum)",
                    timeout_s=120,
                    stdin=data,
                )
                got = _HASH.search(result.output)
                if result.exit_code == 0 and got and got.group(1) == want:
                    break
                _check(shell, f"truncate -s {done} -- {part}", "cannot undo a bad chunk")
                if "no space left" in result.output.lower():  # sending it again cannot help
                    raise ConsoleTransferError(
                        f"No space left on the pod for {remote} after {done} bytes: {result.output.strip()[:200]}"
                    )
                if attempt == RETRIES:
                    raise ConsoleTransferError(
                        f"the chunk at byte {done} arrived damaged {RETRIES} times: "
                        f"{result.output.strip()[:200] or 'no output'}"
                    )
            done += len(chunk)
            if on_progress is not None:
                on_progress(done, total)
    return remote_part(remote, tag)


def download(
    shell: RemoteShell,
    remote: str,
    local: Path,
    on_progress: Progress | None = None,
    chunk_size: int = DOWN_CHUNK,
    tag: str = "",
) -> Path:
    """Fetch remote into a hidden part file next to local, chunk by chunk; return the part file's path."""
    quoted = shlex.quote(remote)
    size = _check(shell, f"stat -c %s -- {quoted}", f"{remote} does not exist on the pod").strip()
    if not size.isdigit():
        raise ConsoleTransferError(f"cannot tell the size of {remote}: {size[:200]}")
    total = int(size)
    chunk_size = _fits(shell, chunk_size)
    part = local_part(local, tag)
    local.parent.mkdir(parents=True, exist_ok=True)
    with private_file(part).open("wb") as out:  # 0600 until verified
        for index in range((total + chunk_size - 1) // chunk_size):
            try:
                out.write(_fetch(shell, quoted, index, chunk_size))
            except ConsoleTransferError:
                out.close()
                part.unlink(missing_ok=True)
                raise
            if on_progress is not None:
                on_progress(min((index + 1) * chunk_size, total), total)
    if part.stat().st_size != total:
        part.unlink(missing_ok=True)
        raise ConsoleTransferError(f"{remote} changed while it was copied (expected {total} bytes)")
    return part


def read_remote(
    shell: RemoteShell, remote: str, size: int, chunk_size: int = DOWN_CHUNK, check: Callable[[], None] | None = None
) -> bytes:
    """The first `size` bytes of a file on the pod, in memory, chunk by chunk (each checked by its sha256), so that
    no command's output is larger than a chunk. check: called between chunks (a cancel raises from it)."""
    quoted = shlex.quote(remote)
    chunk_size = _fits(shell, chunk_size)
    chunks = []
    for index in range((size + chunk_size - 1) // chunk_size):
        if check is not None:
            check()
        chunks.append(_fetch(shell, quoted, index, chunk_size))
    data = b"".join(chunks)
    if len(data) != size:
        raise ConsoleTransferError(f"{remote} on the pod has {len(data)} bytes, not {size}")
    return data


def _fits(shell: RemoteShell, chunk_size: int) -> int:
    """A chunk whose base64 (4/3 of it) and sum fit in what the shell keeps of a command's output."""
    return max(1024, min(chunk_size, (shell.max_output_bytes - 1024) // 4 * 3))


def _fetch(shell: RemoteShell, quoted: str, index: int, chunk_size: int) -> bytes:
    for _ in range(RETRIES):
        # one line of base64, then the chunk's sha256 as the pod computed it; the chunk goes through a temporary
        # file, since holding a megabyte of base64 in a shell variable halves the rate
        result = shell.run(
            f't=$(mktemp) && dd if={quoted} bs={chunk_size} skip={index} count=1 2>/dev/null > "$t" && '
            'base64 -w0 "$t"; echo; sha256sum < "$t"; rm -f "$t"',
            timeout_s=120,
        )
        lines = result.output.strip().splitlines()
        chunk = _decode(lines[0]) if len(lines) == 2 else None
        got = _HASH.search(lines[-1]) if lines else None
        if chunk is not None and got and hashlib.sha256(chunk).hexdigest() == got.group(1):
            return chunk
    raise ConsoleTransferError(f"chunk {index} of {quoted} arrived damaged {RETRIES} times")


def finish_remote(shell: RemoteShell, part: str, remote: str, overwrite: bool) -> None:
    flag = "-f" if overwrite else "-n"
    target = shlex.quote(remote)
    quoted_part = shlex.quote(part)
    # -T: onto a folder, mv would move the file into it and call that done; a folder is never replaced
    out = _check(
        shell,
        f"if [ -d {target} ]; then echo folder; else mv -T {flag} -- {quoted_part} {target} && "
        f"if [ -e {quoted_part} ]; then echo kept; else echo moved; fi; fi",
        f"cannot rename {part} to {remote}",
    )
    if out.strip().splitlines()[-1:] == ["folder"]:
        raise ConsoleTransferError(
            f"{remote} is a folder on the pod; podtui does not replace a folder with a file "
            f"(the verified copy is kept as {part})"
        )
    # mv -n succeeds without moving when the target exists: whether the part file is still there says which
    if out.strip().splitlines()[-1:] != ["moved"]:
        raise ConsoleTransferError(
            f"{remote} already exists on the pod; podtui does not replace it unless asked "
            f"(the verified copy is kept as {part})"
        )


def _decode(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        return None


def _check(shell: RemoteShell, command: str, what: str) -> str:
    result = shell.run(command, timeout_s=60)
    if result.exit_code != 0:
        raise ConsoleTransferError(f"{what}: {result.output.strip()[:200] or f'exit status {result.exit_code}'}")
    return result.output
