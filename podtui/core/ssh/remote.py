"""Running commands on a pod from a script, through RunPod's PTY-only gateway or a direct exec channel.

Over the gateway there is only an interactive shell, so podtui drives it into a known state and frames
every command with markers carrying a per-session random nonce:

    <<PT:nonce:B7>>          (printed just before command 7 runs)
    ...the command's output...
    <<PT:nonce:E7:rc>>       (printed after it, with its exit status)

Nothing depends on the user's prompt, .bashrc or banner: everything outside the markers is dropped.
The marker text never appears in what podtui types (printf assembles it from a format and the nonce as
separate arguments), so the terminal's echo of a command can never be mistaken for a marker. Commands
travel base64-encoded in lines under 1,000 bytes, far below the tty's 4,096-byte canonical line limit,
and run with stdin from /dev/null so they cannot swallow the next marker line.

Over direct SSH the same framing runs through an exec channel into `bash -s` (no tty, no echo); the pod's
PID-1 environment is sourced from /etc/rp_environment first (facts: SSH modes).
"""

from __future__ import annotations

import base64
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from podtui.core.api.client import RunPodApi
from podtui.core.pod import Pod
from podtui.core.ssh.connect import Connection, SshSettings, Via, connect_pod
from podtui.core.ssh.errors import RemoteTimeout, ShellClosed, SshError
from podtui.core.ssh.session import ShellSession

_ANSI = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    rb"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS, SOS, PM, APC
    rb"|\x1b[()*+][0-9A-Za-z]"  # charset
    rb"|\x1b[@-Z\\-_=>78]"  # other two-byte escapes
)
CHUNK = 900  # bytes of base64 per typed line
READY_TIMEOUT_S = 20.0  # a pod's shell under load (a big ~/.bashrc, conda init) takes seconds to its prompt
RunVia = Literal["auto", "exec", "pty", "gateway"]


def clean(data: bytes) -> str:
    """Terminal output as plain text: escape sequences and carriage returns gone, undecodable bytes marked."""
    text = _ANSI.sub(b"", data).replace(b"\r\n", b"\n").replace(b"\r", b"")
    return text.decode("utf-8", errors="replace")


@dataclass
class CommandResult:
    command: str
    output: str
    exit_code: int
    duration_s: float


@dataclass(frozen=True)
class _Found:
    start: int
    end: int
    groups: tuple[bytes | None, ...]


@dataclass
class _Buffer:
    data: bytearray = field(default_factory=bytearray)
    cond: threading.Condition = field(default_factory=threading.Condition)
    closed: bool = False

    def feed(self, chunk: bytes) -> None:
        with self.cond:
            self.data += chunk
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def wait_for(self, pattern: re.Pattern[bytes], deadline: float) -> _Found:
        searched = 0  # only search what arrived since, plus a marker's length: large outputs stay linear
        with self.cond:
            while True:
                m = pattern.search(self.data, max(0, searched - 128))
                searched = len(self.data)
                if m:
                    # a match on a bytearray reads the live buffer: copy what is needed before it changes
                    return _Found(m.start(), m.end(), m.groups())
                if self.closed:
                    raise ShellClosed("the remote shell closed")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                self.cond.wait(min(left, 0.5))

    def take(self, end: int) -> bytes:
        with self.cond:
            out = bytes(self.data[:end])
            del self.data[:end]
            return out


def _drop_marker_newline(raw: bytes) -> bytes:
    """The end marker starts with a newline of podtui's own (so it is always on a line of its own)."""
    if raw.endswith(b"\r\n"):
        return raw[:-2]
    return raw[:-1] if raw.endswith(b"\n") else raw


class RemoteShell:
    """Runs commands one by one in one remote shell, so `cd` and exported variables carry over."""

    def __init__(self, connector: Callable[[], Connection], kind: Literal["pty", "exec"] = "pty",
                 ready_timeout_s: float = READY_TIMEOUT_S) -> None:
        self.kind = kind
        self.nonce = secrets.token_hex(8)
        self._seq = 0
        self._buf = _Buffer()
        self.ready_timeout_s = ready_timeout_s
        self.session = ShellSession(
            connector, term="dumb", width=250, height=50, on_output=self._buf.feed,
            on_state=lambda state, _detail: self._buf.close() if state == "closed" else None,
            channel_kind=kind,
            exec_command="bash --noprofile --norc -s 2>&1" if kind == "exec" else "",
        )

    def _marker(self, tag: bytes) -> re.Pattern[bytes]:
        return re.compile(rb"<<PT:" + self.nonce.encode() + rb":" + tag + rb">>\r?\n")

    def _printf(self, tag: str, *args: str) -> str:
        return f"printf '\\n<<PT:%s:{tag}>>\\n' {self.nonce} {' '.join(args)}".rstrip()

    def open(self) -> RemoteShell:
        self.session.open()
        if self.kind == "pty":
            self._settle()
            # Leading spaces and no HISTFILE keep podtui's lines out of the pod's shell history.
            setup = (" unset HISTFILE; HISTCONTROL=ignoreboth; stty -echo 2>/dev/null; unset PROMPT_COMMAND;"
                     " PS1=; PS2=; PS0=; PS4=; trap - DEBUG 2>/dev/null; export TERM=dumb PAGER=cat;"
                     # an interactive bash says "exit" as it exits; that is not the command's output
                     ' exit() { builtin exit "$@" 2>/dev/null; };'
                     f" {self._printf('R')}\n")
        else:
            setup = f"[ -r /etc/rp_environment ] && . /etc/rp_environment; {self._printf('R')}\n"
        try:
            self.session.send(setup.encode())
            ready = self._buf.wait_for(self._marker(b"R"), time.monotonic() + self.ready_timeout_s)
        except ShellClosed:
            message = self._ended_before_ready()
            self.close()
            raise ShellClosed(message) from None
        except TimeoutError:
            message = (f"the shell on {self.label} did not become ready within {self.ready_timeout_s:g} s (it said: "
                       f"{self._last_words()}); the pod may be overloaded or its shell stuck: try again, or open a "
                       "console (c) to see what it does")
            self.close()
            raise ShellClosed(message) from None
        self._buf.take(ready.end)  # banner, .bashrc noise, prompts: all dropped
        return self

    @property
    def label(self) -> str:
        conn = self.session.connection
        return conn.endpoint.label if conn is not None else "the pod"

    def _last_words(self) -> str:
        """The last line the shell printed before it failed, for the message (banner and prompts included)."""
        with self._buf.cond:
            text = clean(bytes(self._buf.data[-2000:]))
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        return repr(lines[-1][:200]) if lines else "nothing"

    def _ended_before_ready(self) -> str:
        said = self._last_words()
        status = self._exit_status()
        if status is None:
            return (f"the connection to {self.label} closed before its shell was ready (it said: {said}); "
                    "try again")
        return (f"the shell on {self.label} exited at once with status {status}, before podtui could run anything "
                f"(it said: {said}); its login shell or ~/.bashrc may be broken: open a console (c) to see")

    def _settle(self, quiet_s: float = 0.2, max_s: float = 3.0) -> None:
        """Let the banner and .bashrc finish before typing, so nothing they run reads our first line."""
        end = time.monotonic() + max_s
        last = -1
        while time.monotonic() < end:
            with self._buf.cond:
                size = len(self._buf.data)
                if size == last and size > 0:
                    return
                last = size
                self._buf.cond.wait(quiet_s)

    def run(self, command: str, timeout_s: float = 60.0, on_output: Callable[[str], None] | None = None,
            stdin: bytes | None = None) -> CommandResult:
        """stdin: bytes the command reads from its terminal (it must read exactly that many), sent right after
        the command line. Bulk data goes this way rather than inside the command: the shell's line editor
        handles typed commands at a few hundred kB/s, while a program reading the terminal takes much more.
        Keep its lines short (base64 with line breaks): a terminal in canonical mode cuts lines at 4095 bytes."""
        self._seq += 1
        seq = str(self._seq)
        encoded = base64.b64encode(command.encode()).decode()
        lines = [f" __pt_c={encoded[:CHUNK]}"]
        lines += [f" __pt_c+={encoded[i:i + CHUNK]}" for i in range(CHUNK, len(encoded), CHUNK)]
        redirect = "" if stdin is not None else " </dev/null"
        lines.append(f" {self._printf('B' + seq)}; eval \"$(printf %s \"$__pt_c\" | base64 -d)\"{redirect};"
                     f" {self._printf('E' + seq + ':%s', '$?')}")
        started = time.monotonic()
        begin = self._marker(b"B" + seq.encode())
        end = self._marker(b"E" + seq.encode() + rb":(\d+)")
        self.session.send(("\n".join(lines) + "\n").encode() + (stdin or b""))
        deadline = started + timeout_s
        try:
            self._buf.take(self._buf.wait_for(begin, deadline).end)
            if on_output is None:
                found = self._buf.wait_for(end, deadline)
                raw = _drop_marker_newline(self._buf.take(found.end)[: found.start])
                code = found.groups[0]
            else:
                raw, code = self._stream(end, deadline, on_output)
        except ShellClosed:
            # The command ended the shell (`exit 3`, a crash): report its status as the command's, like ssh.
            status = self._exit_status()
            if status is None:
                partial = clean(self._buf.take(len(self._buf.data)))
                raise ShellClosed(
                    f"the connection to {self.label} dropped while {command!r} was running, after "
                    f"{time.monotonic() - started:.1f} s; it may not have finished on the pod",
                    output=partial) from None
            text = clean(self._buf.take(len(self._buf.data)))
            if on_output is not None and text:
                on_output(text)
            return CommandResult(command, text, status, time.monotonic() - started)
        except TimeoutError:
            partial = clean(self._buf.take(len(self._buf.data)))
            usable = self._interrupt()
            raise RemoteTimeout(
                f"{command!r} did not finish within {timeout_s:g} s; "
                + ("it was interrupted (ctrl+c) and the shell is still usable" if usable
                   else "the shell was closed"),
                output=partial, session_usable=usable) from None
        return CommandResult(command, clean(raw), int(code or b"0"), time.monotonic() - started)

    def _stream(self, end: re.Pattern[bytes], deadline: float, on_output: Callable[[str], None]
                ) -> tuple[bytes, bytes | None]:
        collected = bytearray()
        while True:
            with self._buf.cond:
                m = end.search(self._buf.data)
                if m is None and not self._buf.closed and time.monotonic() < deadline:
                    self._buf.cond.wait(min(0.2, max(0.0, deadline - time.monotonic())))
                    m = end.search(self._buf.data)
                code = None
                if m is not None:
                    code = m.group(1)
                    chunk = _drop_marker_newline(bytes(self._buf.data[: m.start()]))
                    del self._buf.data[: m.end()]
                else:
                    cut = self._safe_cut(self._buf.data)
                    chunk = bytes(self._buf.data[:cut])
                    del self._buf.data[:cut]
                closed = self._buf.closed
            if chunk:
                collected += chunk
                on_output(clean(chunk))
            if m is not None:
                return bytes(collected), code
            if closed:
                raise ShellClosed("the remote shell closed")
            if time.monotonic() >= deadline:
                raise TimeoutError

    def _safe_cut(self, data: bytearray) -> int:
        """How much output can go out now: all of it, unless it ends in what may be the start of the end
        marker (a newline, then a prefix of `<<PT:nonce:`), which waits for the next read."""
        i = data.rfind(b"\n")
        if i < 0:
            return len(data)
        if not f"<<PT:{self.nonce}:".encode().startswith(bytes(data[i + 1:])[: len(self.nonce) + 6]):
            return len(data)
        return i - 1 if i > 0 and data[i - 1] == 0x0D else i

    def _exit_status(self) -> int | None:
        channel = self.session.channel
        if channel is None:
            return self.session.exit_status
        deadline = time.monotonic() + 2.0
        while not channel.exit_status_ready() and time.monotonic() < deadline:
            time.sleep(0.02)
        status = channel.recv_exit_status() if channel.exit_status_ready() else -1
        return None if status == -1 else status

    def _interrupt(self) -> bool:
        """After a timeout: ctrl+c, then check the shell answers again. Close it if it does not."""
        if self.kind == "pty" and self.session.alive:
            try:
                self._seq += 1
                tag = "S" + str(self._seq)
                self.session.send(b"\x03")
                time.sleep(0.1)
                self.session.send(f"\n {self._printf(tag)}\n".encode())
                self._buf.take(self._buf.wait_for(self._marker(tag.encode()), time.monotonic() + 5.0).end)
                return True
            except (TimeoutError, SshError):
                pass
        self.close()
        return False

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> RemoteShell:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def open_remote(pod: Pod, settings: SshSettings, via: RunVia = "auto",
                ready_timeout_s: float = READY_TIMEOUT_S) -> Iterator[RemoteShell]:
    """A RemoteShell on `pod`. auto: an exec channel over direct SSH when the pod has it, else the gateway's
    PTY. exec: direct SSH only. pty: the PTY path on whichever route answers. gateway: RunPod's gateway."""
    routes: dict[str, Via] = {"auto": "auto", "exec": "direct", "pty": "auto", "gateway": "gateway"}
    route = routes[via]
    conn = connect_pod(pod, settings, route)
    kind: Literal["pty", "exec"] = "exec" if conn.endpoint.mode == "direct" and via in ("auto", "exec") else "pty"
    shell = RemoteShell(lambda: conn, kind, ready_timeout_s)
    try:
        shell.open()
        yield shell
    finally:
        shell.close()


def run_commands(shell: RemoteShell, commands: Sequence[str], per_command_timeout: float = 60.0,
                 stop_on_error: bool = True) -> list[CommandResult]:
    results = []
    for command in commands:
        result = shell.run(command, per_command_timeout)
        results.append(result)
        if stop_on_error and result.exit_code != 0:
            break
    return results


def run_remote(
    pod_id: str,
    key_path: str | Path | None = None,
    commands: Sequence[str] = (),
    per_command_timeout: float = 60.0,
    *,
    via: RunVia = "auto",
    stop_on_error: bool = True,
    api: RunPodApi | None = None,
    settings: SshSettings | None = None,
) -> tuple[str, int]:
    """The field guide's contract: run `commands` in one shell on the pod, return (output, exit_code).

    `output` is every command's cleaned output, in order, exactly as printed; `exit_code` is the last
    command's (after a failing command the rest are skipped unless stop_on_error=False). Raises
    RemoteTimeout, ShellClosed, AuthFailed, HostKeyChanged, Unreachable (all SshError) with a message that
    says what to do.
    """
    from podtui.core.ssh.pods import default_settings, lookup_pod

    pod = lookup_pod(pod_id, api)
    settings = settings or default_settings()
    if key_path is not None:
        settings.key_path = Path(key_path).expanduser()
    with open_remote(pod, settings, via, ready_timeout_s=min(READY_TIMEOUT_S, per_command_timeout)) as shell:
        results = run_commands(shell, commands, per_command_timeout, stop_on_error)
    output = "".join(r.output for r in results)
    return output, results[-1].exit_code if results else 0
