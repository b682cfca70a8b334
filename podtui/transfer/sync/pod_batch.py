"""A batch of work on the pod through its shell, whatever the route: lists go up as one gzipped tar in checked
chunks, a bash script works on them in a private folder, and its answers come back from files in checked chunks
(docs/sync.md#ignore-rules). Nothing binary crosses the gateway's terminal raw, no name is ever typed into a
command line, and a tree of 10,000 names costs a few commands, not 10,000."""

from __future__ import annotations

import base64
import binascii
import io
import logging
import re
import shlex
import tarfile
import tempfile
from collections.abc import Mapping
from pathlib import Path

from podtui.core.ssh.remote import CommandResult, RemoteShell
from podtui.transfer.routes import console
from podtui.transfer.routes.console import ConsoleTransferError

log = logging.getLogger(__name__)

# $1 the private folder, $2 the synced folder in base64 (any bytes; the x keeps a trailing newline)
PRELUDE = 'T=$1; R=$(printf %s "$2" | base64 -d; printf x); R=${R%x}; '
_TEMP = re.compile(r"podtui-temp ([A-Za-z0-9+/=]+)")
_PLAIN_TEMP = re.compile(r"/[A-Za-z0-9._/-]+")


class PodBatchError(Exception):
    """The pod could not do a batch, or its answer could not be understood; the message says which."""


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def nul_list(names: list[str]) -> bytes:
    """Names as a NUL-separated list, each with its own bytes (surrogateescape gives back the undecodable ones)."""
    return b"".join(n.encode("utf-8", "surrogateescape") + b"\0" for n in names)


def said(output: str, word: str) -> list[str] | None:
    """The words after `podtui-WORD` on the last line that has it; None when no line does."""
    found = None
    for line in output.splitlines():
        if line.startswith(f"podtui-{word} ") or line == f"podtui-{word}":
            found = line.split()[1:]
    return found


def decoded(text: str) -> str:
    try:
        return base64.b64decode(text, validate=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return ""


class PodTemp:
    """A private folder in the pod's temporary folder for one sync's lists and answers, removed when done."""

    def __init__(self, shell: RemoteShell, root: str) -> None:
        self.shell = shell
        self.root = root
        self.path = ""
        self._puts = 0

    def __enter__(self) -> PodTemp:
        result = self.shell.run(
            't=$(mktemp -d "${TMPDIR:-/tmp}/podtui-sync.XXXXXX") && '
            'printf "podtui-temp %s\\n" "$(printf %s "$t" | base64 -w0)"',
            timeout_s=60,
        )
        m = _TEMP.search(result.output)
        path = decoded(m.group(1)) if m else ""
        if not _PLAIN_TEMP.fullmatch(path):  # it goes into commands as it is: plain characters only
            raise PodBatchError(
                f"cannot make a temporary folder on the pod: {result.output.strip()[-200:] or 'no answer'}"
            )
        self.path = path
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.path:
            return
        try:  # a failure here must not hide the error that brought us here (a dropped link fails this too)
            self.shell.run(f"rm -rf -- {shlex.quote(self.path)}", timeout_s=60)
        except Exception as e:
            log.warning("could not remove %s on the pod: %s", self.path, e)

    def put(self, files: Mapping[str, bytes]) -> None:
        """Each of `files` (name -> bytes) into the folder's `in/`, replacing what was there: one tar, sent in
        chunks each checked by its sha256 (routes.console)."""
        self._puts += 1
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        with tempfile.TemporaryDirectory(prefix="podtui-sync-") as here:
            local = Path(here) / "in.tgz"
            local.write_bytes(buffer.getvalue())
            try:
                part = console.upload(self.shell, local, f"{self.path}/in{self._puts}.tgz")
            except ConsoleTransferError as e:
                raise PodBatchError(f"cannot send podtui's lists to the pod: {e}") from None
        q = shlex.quote(part)
        result = self.shell.run(
            f"rm -rf -- {shlex.quote(self.path)}/in && mkdir -- {shlex.quote(self.path)}/in && "
            f"tar -xzf {q} -C {shlex.quote(self.path)}/in --no-same-owner && rm -f -- {q}",
            timeout_s=120,
        )
        if result.exit_code != 0:
            raise PodBatchError(f"cannot unpack podtui's lists on the pod: {result.output.strip()[-200:]}")

    def run(self, script: str, timeout_s: float) -> CommandResult:
        """`script` in bash (arrays, `read -d ''`), with $T this folder and $R the synced folder."""
        command = (
            f"bash -c {shlex.quote(PRELUDE + script)} podtui-sync {shlex.quote(self.path)} "
            f"{b64(self.root.encode('utf-8', 'surrogateescape'))}"
        )
        return self.shell.run(command, timeout_s=timeout_s)

    def get(self, name: str, size: int) -> bytes:
        """File `name` of this folder (`size` bytes, as the script said), in chunks each checked by its sha256."""
        if size <= 0:
            return b""
        try:
            return console.read_remote(self.shell, f"{self.path}/{name}", size)
        except ConsoleTransferError as e:
            raise PodBatchError(f"cannot read podtui's answer from the pod: {e}") from None
