"""The runpodctl route: `send` on one end prints a one-time code, `receive CODE` on the other fetches.

Pod to laptop: on the pod `nohup runpodctl send FILE > LOG 2>&1 &`, the code read from that log, then
`runpodctl receive CODE` here. Laptop to pod: the mirror image. Progress comes from the side running here;
the pod's log is watched for its errors. receive has no destination flag (files land in its working directory),
so each receive runs in a fresh hidden folder (docs/runpod-facts.md#runpodctl-receive); after the code is
printed, send reports errors on stdout and exits 0, so exit statuses alone prove nothing
(docs/runpod-facts.md#runpodctl-errors); codes live about 3 hours, so a retry makes a new one
(docs/runpod-facts.md#runpodctl-codes).
"""

from __future__ import annotations

import base64
import contextlib
import os
import posixpath
import secrets
import shlex
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from podtui.core.ssh.remote import RemoteShell
from podtui.transfer import leftovers
from podtui.transfer.modes import private_dir
from podtui.transfer.part import remote_part
from podtui.transfer.progress import Reporter
from podtui.transfer.runpodctl_output import ErrorKind, RunpodctlParser, TransferEvent, strip_escapes

# password_mismatch too: podtui reads the code itself, so a mismatch is the channel's fault, and a fresh code helps
RETRYABLE: frozenset[str] = frozenset(
    {"room_not_ready", "relay_unreachable", "relay_list", "crash", "unknown", "password_mismatch", "peer_error"}
)
CODE_TIMEOUT_S = 90.0  # a sender that has not printed its code by now is not going to
WATCH_EVERY_S = 1.0
FINISH_TIMEOUT_S = 120.0  # the far side ends a moment after the near side; wait this long at most
# The sender prints its code before it opens its room on the relay, so a receiver that starts at once can
# find no room yet ("room not ready"); while the sender still waits, the same code is tried again.
JOIN_TRIES, JOIN_PAUSE_S = 4, 1.0
TAIL_BYTES = 2000


class RunpodctlError(Exception):
    def __init__(self, message: str, kind: ErrorKind | str = "unknown") -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE


def find_local(explicit: str | None = None) -> str | None:
    """runpodctl on this machine: the configured one, else the first on PATH."""
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    return shutil.which("runpodctl")


def remote_available(shell: RemoteShell) -> bool:
    return (
        shell.run("command -v runpodctl >/dev/null 2>&1 && echo yes || echo no", timeout_s=30)
        .output.strip()
        .endswith("yes")
    )


@dataclass
class _Outcome:
    """What a runpodctl process said, from every stream it was read from."""

    code: str | None = None
    error: TransferEvent | None = None
    done: bool = False
    events: list[TransferEvent] = field(default_factory=list)

    def take(self, events: list[TransferEvent]) -> None:
        for e in events:
            if e.kind == "code" and self.code is None:
                self.code = e.code
            elif e.kind == "error" and self.error is None:
                self.error = e
            elif e.kind == "done":
                self.done = True
        self.events.extend(events)

    def fail(self, who: str, far: _Outcome | None = None) -> None:
        """Raise if this side failed; when the far side failed too, its error is the cause and leads."""
        if self.error is None:
            return
        here = f"runpodctl on {who}: {_first_line(self.error.message)}"
        # a full disk here is the cause, whatever the far side then says (its broken pipe)
        if far is not None and far.error is not None and "no space left" not in here.lower():
            raise RunpodctlError(
                f"runpodctl on the pod: {_first_line(far.error.message)} ({here})", far.error.error_kind or "unknown"
            )
        raise RunpodctlError(here, self.error.error_kind or "unknown")


def _said(raw: bytes) -> str:
    """The last thing a runpodctl printed, as plain text."""
    text = strip_escapes(raw.decode(errors="replace")).replace("\r", "\n")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " / ".join(lines[-3:])[:300] or "nothing"


def _first_line(message: str | None) -> str:
    return (message or "").strip().splitlines()[0] if (message or "").strip() else "failed"


class _RemoteProcess:
    """A runpodctl started with nohup on the pod; its log is read as raw bytes (base64, so the PTY's line
    discipline cannot touch the \\r frames) and fed to a parser."""

    def __init__(self, shell: RemoteShell, reporter: Reporter, workdir: str, args: str) -> None:
        self.shell = shell
        self.reporter = reporter
        self.leftover: dict[str, Any] | None = None
        # one log per attempt: a runpodctl left running by a podtui that was killed keeps writing to its own
        self.log = f"/tmp/podtui-runpodctl-{reporter.job.id}-{secrets.token_hex(4)}.log"
        self.workdir = workdir
        self.parser = RunpodctlParser()
        self.outcome = _Outcome()
        self.offset = 0
        self.tail = b""  # the last bytes of its log, to quote when it fails in a way the parser does not know
        # the braces put only runpodctl in the background, so $! is its own pid (not a subshell's, whose death
        # would leave runpodctl running when podtui stops it)
        result = shell.run(
            f"( mkdir -p -- {shlex.quote(workdir)} && cd -- {shlex.quote(workdir)} && "
            f"{{ nohup runpodctl {args} > {self.log} 2>&1 < /dev/null & echo pid=$!; }} )",
            timeout_s=60,
        )
        pid = [ln[4:] for ln in result.output.splitlines() if ln.startswith("pid=")]
        if result.exit_code != 0 or not pid or not pid[0].isdigit():
            raise RunpodctlError(f"could not start runpodctl on the pod: {result.output.strip()[:300]}")
        self.pid = pid[0]
        self.leftover = leftovers.on_pod(self.pid, self.log)
        reporter.remember(self.leftover)

    def poll(self) -> bool:
        """Read what the log gained; return whether the process still runs."""
        result = self.shell.run(
            f"tail -c +{self.offset + 1} -- {self.log} 2>/dev/null | base64 -w0; echo; "
            f"kill -0 {self.pid} 2>/dev/null && echo running || echo ended",
            timeout_s=60,
        )
        lines = result.output.strip().splitlines()
        if lines and len(lines) >= 2:
            with contextlib.suppress(ValueError):
                data = base64.b64decode(lines[-2], validate=True)
                self.offset += len(data)
                self.tail = (self.tail + data)[-TAIL_BYTES:]
                self.outcome.take(self.parser.feed(data))
        running = bool(lines) and lines[-1] == "running"
        if not running:
            self.outcome.take(self.parser.close())
        return running

    def settle(self, timeout_s: float = 3.0) -> None:
        """Read the log until the process has ended or reported an error (it may be dying right now)."""
        end = time.monotonic() + timeout_s
        while self.poll() and self.outcome.error is None and time.monotonic() < end:
            time.sleep(0.2)

    def wait(self, reporter: Reporter, timeout_s: float) -> None:
        end = time.monotonic() + timeout_s
        while self.poll():
            reporter.check()
            if time.monotonic() > end:
                raise RunpodctlError("runpodctl on the pod did not finish", "unknown")
            time.sleep(0.3)

    def stop(self) -> None:
        """Kill it if it still runs, and remove its log."""
        with contextlib.suppress(Exception):
            if (
                self.shell.run(f"kill {self.pid} 2>/dev/null; rm -f -- {self.log}", timeout_s=30).exit_code == 0
                and self.leftover is not None
            ):
                self.reporter.forget(self.leftover)  # else the next attempt tries again


class _LocalProcess:
    def __init__(self, runpodctl: str, args: list[str], cwd: Path, reporter: Reporter) -> None:
        self.reporter = reporter
        self.outcome = _Outcome()
        self._lock = threading.Lock()
        self.tail = b""
        try:
            self.proc = subprocess.Popen(
                [runpodctl, *args],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as e:
            raise RunpodctlError(f"cannot run {runpodctl}: {e.strerror or e}") from None
        self.leftover = leftovers.here(self.proc.pid)
        reporter.remember(self.leftover)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        # the code goes to stdout, the bar to stderr, late errors to stdout: each stream its own parser
        # (docs/runpod-facts.md#runpodctl-send)
        self.readers = [
            threading.Thread(target=self._read, args=(stream,), daemon=True, name="runpodctl-read")
            for stream in (self.proc.stdout, self.proc.stderr)
        ]
        for t in self.readers:
            t.start()

    def _read(self, stream: IO[bytes]) -> None:
        parser = RunpodctlParser()
        while chunk := stream.read1(65536):  # type: ignore[attr-defined]  # a BufferedReader
            with self._lock:
                self.tail = (self.tail + chunk)[-TAIL_BYTES:]
            self._take(parser.feed(chunk))
        self._take(parser.close())

    def _take(self, events: list[TransferEvent]) -> None:
        with self._lock:
            self.outcome.take(events)
        for e in events:
            if e.kind == "progress" and e.total_bytes:
                # the bar rounds sizes to two or three digits; the exact size, known already, is kept
                exact = self.reporter.job.total_bytes or e.total_bytes
                done = min(exact, round(exact * (e.done_bytes or 0) / e.total_bytes))
                with contextlib.suppress(Exception):  # a cancel is noticed by the waiting loop instead
                    self.reporter.progress(done, exact, e.rate_bytes_per_s, e.eta_s)
            elif e.kind == "error" and e.message:
                self.reporter.note(f"runpodctl here: {e.message}")

    def running(self) -> bool:
        return self.proc.poll() is None

    def finish(self, timeout_s: float = 10.0) -> int:
        try:
            code = self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self.proc.wait()
        self._done_reading(timeout_s)
        return code

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, 9)

    def close(self) -> None:
        """Kill it if it still runs; either way it is no longer this job's to clean up."""
        if self.running():
            self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        self._done_reading(5.0)

    def _done_reading(self, timeout_s: float) -> None:
        for t in self.readers:
            t.join(timeout_s)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None and not any(t.is_alive() for t in self.readers):
                stream.close()
        self.reporter.forget(self.leftover)


def pull(shell: RemoteShell, remote: str, staging: Path, runpodctl: str, reporter: Reporter) -> Path:
    """Pod -> here. Returns the received file, inside `staging` (a fresh folder of its own)."""
    parent, name = posixpath.split(remote)
    sender = _RemoteProcess(shell, reporter, parent or ".", f"send {shlex.quote('./' + name)}")
    local: _LocalProcess | None = None
    try:
        reporter.stage("waiting_for_code", "runpodctl send started on the pod")
        code = _wait_for_code(sender, reporter)
        private_dir(staging)  # what arrives is the owner's only until verified
        reporter.stage("transferring", f"runpodctl receive {code[:4]}-… here")
        for attempt in range(1, JOIN_TRIES + 1):
            local = _LocalProcess(runpodctl, ["receive", code], staging, reporter)
            if not _watch(local, sender, reporter):
                local.kill()
                local.finish()
                sender.outcome.fail("the pod")
                raise RunpodctlError("runpodctl send on the pod ended before the transfer did", "unknown")
            status = local.finish()
            if not _join_again(local.outcome, attempt, sender.poll()):
                break
            reporter.note(f"no room for the code yet; receiving again in {JOIN_PAUSE_S:g} s")
            time.sleep(JOIN_PAUSE_S)
        assert local is not None  # the loop ran at least once
        if local.outcome.error is not None and local.outcome.error.error_kind != "room_not_ready":
            sender.settle()  # a receiver that lost its sender says little ("EOF"); the sender's log says why
        local.outcome.fail("this machine", sender.outcome)
        sender.wait(reporter, FINISH_TIMEOUT_S)
        sender.outcome.fail("the pod")
        received = staging / name
        if status != 0 or not received.is_file() or received.is_symlink():
            raise RunpodctlError(f"runpodctl receive ended with status {status} and no {name}", "unknown")
        os.chmod(received, 0o600)  # it leaves the private folder as a part file
        return received
    finally:
        if local is not None:
            local.close()
        sender.stop()
        with reporter.lock:
            reporter.job.code = None


def push(shell: RemoteShell, local_file: Path, remote: str, runpodctl: str, reporter: Reporter, tag: str = "") -> str:
    """Here -> pod. Returns the part file on the pod that holds what arrived (see part.remote_part)."""
    parent = posixpath.dirname(remote) or "."
    # per attempt, for the same reason as the log (a killed podtui's receiver may still write to the old one);
    # the folders of attempts a killed podtui never cleared go first (their runpodctl is stopped by now)
    prefix = posixpath.join(parent, f".podtui-receive-{reporter.job.id}-")
    shell.run(f"rm -rf -- {shlex.quote(prefix)}*", timeout_s=60)
    staging = prefix + secrets.token_hex(4)
    # "./NAME": a name that starts with a dash is not taken for a flag (runpodctl sends the base name)
    sender = _LocalProcess(runpodctl, ["send", f"./{local_file.name}"], local_file.parent, reporter)
    receiver: _RemoteProcess | None = None
    try:
        reporter.stage("waiting_for_code", "runpodctl send started here")
        end = time.monotonic() + CODE_TIMEOUT_S
        while sender.outcome.code is None:
            reporter.check()
            sender.outcome.fail("this machine")
            if not sender.running() and sender.outcome.code is None:
                sender.finish()
                sender.outcome.fail("this machine")
                raise RunpodctlError(f"runpodctl send ended without printing a code: {_said(sender.tail)}", "no_code")
            if time.monotonic() > end:
                raise RunpodctlError(f"runpodctl send printed no code within {CODE_TIMEOUT_S:g} s", "unknown")
            time.sleep(0.05)
        code = sender.outcome.code
        _show_code(reporter, code)
        reporter.stage("transferring", f"runpodctl receive {code[:4]}-… on the pod")
        for attempt in range(1, JOIN_TRIES + 1):
            receiver = _RemoteProcess(shell, reporter, staging, f"receive {shlex.quote(code)}")
            if _watch(sender, receiver, reporter):
                break
            receiver.stop()  # it failed: what it said is read already
            if not _join_again(receiver.outcome, attempt, sender.running()):
                sender.kill()
                receiver.outcome.fail("the pod")
                raise RunpodctlError("runpodctl receive on the pod ended before the transfer did", "unknown")
            reporter.note(f"no room for the code yet; receiving again in {JOIN_PAUSE_S:g} s")
            time.sleep(JOIN_PAUSE_S)
        assert receiver is not None  # the loop ran at least once
        sender.finish()
        if sender.outcome.error is not None:
            receiver.settle()  # a sender that lost its receiver says little (a broken pipe); the receiver says why
        sender.outcome.fail("this machine", receiver.outcome)
        receiver.wait(reporter, FINISH_TIMEOUT_S)
        receiver.outcome.fail("the pod")
        part = remote_part(remote, tag)
        moved = shell.run(
            f"mv -f -- {shlex.quote(posixpath.join(staging, local_file.name))} {shlex.quote(part)}", timeout_s=60
        )
        if moved.exit_code != 0:
            raise RunpodctlError(f"nothing arrived on the pod: {moved.output.strip()[:200]}", "unknown")
        return part
    finally:
        sender.close()
        if receiver is not None:
            receiver.stop()
        shell.run(f"rm -rf -- {shlex.quote(staging)}", timeout_s=60)
        with reporter.lock:
            reporter.job.code = None


def _wait_for_code(sender: _RemoteProcess, reporter: Reporter) -> str:
    end = time.monotonic() + CODE_TIMEOUT_S
    while True:
        running = sender.poll()
        sender.outcome.fail("the pod")
        if sender.outcome.code is not None:
            _show_code(reporter, sender.outcome.code)
            return sender.outcome.code
        if not running:
            raise RunpodctlError(
                f"runpodctl send on the pod ended without printing a code: {_said(sender.tail)}", "no_code"
            )
        if time.monotonic() > end:
            raise RunpodctlError(f"runpodctl send on the pod printed no code within {CODE_TIMEOUT_S:g} s", "unknown")
        reporter.check()
        time.sleep(0.3)


def _join_again(receiver: _Outcome, attempt: int, sender_waits: bool) -> bool:
    return (
        receiver.error is not None
        and receiver.error.error_kind == "room_not_ready"
        and sender_waits
        and attempt < JOIN_TRIES
    )


def _show_code(reporter: Reporter, code: str) -> None:
    with reporter.lock:
        reporter.job.code = code
    reporter.note(f"one-time code {code[:4]}-… (valid about 3 hours)")


def _watch(local: _LocalProcess, remote: _RemoteProcess, reporter: Reporter) -> bool:
    """Until the local side ends: check for a cancel, and read the pod's log every second. False as soon as the
    pod's side has failed or ended before the transfer did (the local side would wait for it forever)."""
    last = 0.0
    while local.running():
        if reporter.cancel.is_set():
            local.kill()
            reporter.check()
        if time.monotonic() - last >= WATCH_EVERY_S:
            last = time.monotonic()
            running = remote.poll()
            if remote.outcome.error is not None or (not running and not remote.outcome.done):
                return False
        time.sleep(0.05)
    return True
