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
PID-1 environment is sourced from /etc/rp_environment first.

Output is kept up to a cap (MAX_OUTPUT_BYTES unless the caller says otherwise): past it the oldest bytes go and
the result says how many. The marker a command waits for is searched on the SSH reader thread as output
arrives, each byte once, so a flood neither piles up in memory nor makes the wait rescan it, and a timeout is
noticed on time.
"""

from __future__ import annotations

import base64
import logging
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from podtui.core.api.client import RunPodApi
from podtui.core.pod import Pod
from podtui.core.ssh.connect import Connection, SshSettings, Via, connect_pod
from podtui.core.ssh.errors import RemoteTimeout, ShellClosed, SshError
from podtui.core.ssh.session import ShellSession

log = logging.getLogger(__name__)

_ANSI = re.compile(
    rb"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    rb"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    rb"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS, SOS, PM, APC
    rb"|\x1b[()*+][0-9A-Za-z]"  # charset
    rb"|\x1b[@-Z\\-_=>78]"  # other two-byte escapes
)
CHUNK = 900  # bytes of base64 per typed line
READY_TIMEOUT_S = 20.0  # a pod's shell under load (a big ~/.bashrc, conda init) takes seconds to its prompt
MAX_OUTPUT_BYTES = 64 << 20  # of one command's output kept (the tail); config: run_remote_max_output_mb
MIN_OUTPUT_BYTES = 4096  # a smaller cap could cut a marker in half
OVERLAP = 128  # more than a marker's length: a marker split across two reads is still found
RunVia = Literal["auto", "exec", "pty", "gateway"]


def clean(data: bytes | bytearray) -> str:
    """Terminal output as plain text: escape sequences and carriage returns gone, undecodable bytes marked.
    Each step runs only when it has something to do: each makes a copy, and the output may be the whole cap."""
    if b"\x1b" in data:
        data = _ANSI.sub(b"", data)
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
        if b"\r" in data:
            data = data.replace(b"\r", b"")
    return data.decode("utf-8", errors="replace")


@dataclass
class CommandResult:
    command: str
    output: str  # with on_output, the last max_output_bytes of what went to it
    exit_code: int
    duration_s: float
    dropped_bytes: int = 0  # bytes the command printed that the caller never got (the oldest, past the cap)

    @property
    def truncated(self) -> bool:
        return self.dropped_bytes > 0


@dataclass(frozen=True)
class _Found:
    before: bytearray  # what arrived before the marker, at most the cap
    groups: tuple[bytes | None, ...]
    dropped: int  # bytes dropped before `before`


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.3g} MiB"


class _Buffer:
    """What the shell printed that nobody has taken yet: at most `limit` bytes, the oldest dropped first.

    A reader arms the marker it waits for; feed() searches for it in what arrives (each byte once, plus a
    marker's length of overlap) before anything is dropped, so a marker is never dropped unseen."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, MIN_OUTPUT_BYTES)
        self.data = bytearray()
        self.cond = threading.Condition()
        self.closed = False
        self.dropped = 0  # bytes dropped from the front since the last take
        self._pattern: re.Pattern[bytes] | None = None
        self._searched = 0  # the armed pattern has been searched for in data[:_searched]
        self._found: _Found | None = None

    def feed(self, chunk: bytes) -> None:
        with self.cond:
            self.data += chunk
            if self._pattern is not None and self._found is None:
                self._search()
            over = len(self.data) - self.limit
            if over > 0:
                del self.data[:over]  # from the front of a bytearray: no copy of the rest
                self._searched = max(self._searched - over, 0)
                self.dropped += over
            self.cond.notify_all()

    def _search(self) -> None:
        assert self._pattern is not None
        m = self._pattern.search(self.data, max(self._searched - OVERLAP, 0))
        if m is None:
            self._searched = len(self.data)
            return
        groups, start, end = m.groups(), m.start(), m.end()  # read before the bytearray under them changes
        # hand over what precedes the marker without copying it: the buffer goes on with what follows
        before, self.data = self.data, self.data[end:]
        del before[start:]
        dropped = self.dropped
        over = len(before) - self.limit
        if over > 0:
            del before[:over]
            dropped += over
        self._found = _Found(before, groups, dropped)
        self.dropped, self._searched, self._pattern = 0, 0, None

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    @property
    def found(self) -> _Found | None:
        """The armed pattern's match, once it arrived (everything up to its end has then been consumed)."""
        return self._found

    def arm(self, pattern: re.Pattern[bytes]) -> None:
        """Watch for `pattern` from now on, in what is buffered already and in what arrives."""
        with self.cond:
            self._pattern, self._searched, self._found = pattern, 0, None
            self._search()

    def disarm(self) -> _Found | None:
        with self.cond:
            found, self._found, self._pattern = self._found, None, None
            return found

    def wait_for(self, pattern: re.Pattern[bytes], deadline: float) -> _Found:
        """Wait for `pattern` and consume everything up to its end; raises TimeoutError or ShellClosed."""
        self.arm(pattern)
        try:
            with self.cond:
                while (found := self._found) is None:
                    if self.closed:
                        raise ShellClosed("the remote shell closed")
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError
                    self.cond.wait(min(left, 0.5))
                return found
        finally:
            self.disarm()

    def take(self, end: int | None = None) -> tuple[bytearray, int]:
        """(the first `end` bytes buffered, or all of them; bytes dropped before them)."""
        with self.cond:
            if end is None or end >= len(self.data):
                out, self.data = self.data, bytearray()
            else:
                out = self.data[:end]
                del self.data[:end]
            self._searched = max(self._searched - len(out), 0)
            dropped, self.dropped = self.dropped, 0
            return out, dropped


class _Tail:
    """Streamed output: its last `limit` bytes, and how many bytes were dropped before they could be streamed."""

    def __init__(self, limit: int) -> None:
        self.limit, self.data, self.lost = limit, bytearray(), 0

    def add(self, chunk: bytes | bytearray) -> None:
        self.data += chunk
        over = len(self.data) - self.limit
        if over > 0:
            del self.data[:over]


def _drop_marker_newline(raw: bytearray) -> bytearray:
    """The end marker starts with a newline of podtui's own (so it is always on a line of its own).
    Cut in place: the output may be tens of megabytes."""
    if raw.endswith(b"\r\n"):
        del raw[-2:]
    elif raw.endswith(b"\n"):
        del raw[-1:]
    return raw


def _kept(raw: bytearray, dropped: int) -> tuple[str, int]:
    """The output as text, and the bytes dropped. When its start was dropped, it starts at the next line."""
    if dropped:
        cut = raw.find(b"\n", 0, 1 << 16) + 1
        del raw[:cut]
        dropped += cut
    return clean(raw), dropped


class RemoteShell:
    """Runs commands one by one in one remote shell, so `cd` and exported variables carry over."""

    def __init__(
        self,
        connector: Callable[[], Connection],
        kind: Literal["pty", "exec"] = "pty",
        ready_timeout_s: float = READY_TIMEOUT_S,
        max_output_bytes: int = MAX_OUTPUT_BYTES,
    ) -> None:
        self.kind = kind
        self.nonce = secrets.token_hex(8)
        self._seq = 0
        self._buf = _Buffer(max_output_bytes)
        self.max_output_bytes = self._buf.limit
        self.ready_timeout_s = ready_timeout_s
        self.session = ShellSession(
            connector,
            term="dumb",
            width=250,
            height=50,
            on_output=self._buf.feed,
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
            setup = (
                " unset HISTFILE; HISTCONTROL=ignoreboth; stty -echo 2>/dev/null; unset PROMPT_COMMAND;"
                " PS1=; PS2=; PS0=; PS4=; trap - DEBUG 2>/dev/null; export TERM=dumb PAGER=cat;"
                # an interactive bash says "exit" as it exits; that is not the command's output
                ' exit() { builtin exit "$@" 2>/dev/null; };'
                f" {self._printf('R')}\n"
            )
        else:
            setup = f"[ -r /etc/rp_environment ] && . /etc/rp_environment; {self._printf('R')}\n"
        try:
            self.session.send(setup.encode())
            # banner, .bashrc noise, prompts: all dropped with the marker
            self._buf.wait_for(self._marker(b"R"), time.monotonic() + self.ready_timeout_s)
        except ShellClosed:
            message = self._ended_before_ready()
            self.close()
            raise ShellClosed(message) from None
        except TimeoutError:
            message = (
                f"the shell on {self.label} did not become ready within {self.ready_timeout_s:g} s (it said: "
                f"{self._last_words()}); the pod may be overloaded or its shell stuck: try again, or open a "
                "console (c) to see what it does"
            )
            self.close()
            raise ShellClosed(message) from None
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
            return f"the connection to {self.label} closed before its shell was ready (it said: {said}); try again"
        return (
            f"the shell on {self.label} exited at once with status {status}, before podtui could run anything "
            f"(it said: {said}); its login shell or ~/.bashrc may be broken: open a console (c) to see"
        )

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

    def run(
        self,
        command: str,
        timeout_s: float = 60.0,
        on_output: Callable[[str], None] | None = None,
        stdin: bytes | None = None,
    ) -> CommandResult:
        """stdin: bytes the command reads from its terminal (it must read exactly that many), sent right after
        the command line. Bulk data goes this way rather than inside the command: the shell's line editor
        handles typed commands at a few hundred kB/s, while a program reading the terminal takes much more.
        Keep its lines short (base64 with line breaks): a terminal in canonical mode cuts lines at 4095 bytes.

        Output past max_output_bytes keeps its tail: the result's dropped_bytes says how much went. With
        on_output, everything goes to it unless it falls that far behind."""
        self._seq += 1
        seq = str(self._seq)
        encoded = base64.b64encode(command.encode()).decode()
        lines = [f" __pt_c={encoded[:CHUNK]}"]
        lines += [f" __pt_c+={encoded[i : i + CHUNK]}" for i in range(CHUNK, len(encoded), CHUNK)]
        redirect = "" if stdin is not None else " </dev/null"
        lines.append(
            f' {self._printf("B" + seq)}; eval "$(printf %s "$__pt_c" | base64 -d)"{redirect};'
            f" {self._printf('E' + seq + ':%s', '$?')}"
        )
        started = time.monotonic()
        begin = self._marker(b"B" + seq.encode())
        end = self._marker(b"E" + seq.encode() + rb":(\d+)")
        self.session.send(("\n".join(lines) + "\n").encode() + (stdin or b""))
        deadline = started + timeout_s
        tail = _Tail(self._buf.limit)  # with on_output
        try:
            self._buf.wait_for(begin, deadline)
            if on_output is None:
                found = self._buf.wait_for(end, deadline)
                text, dropped = _kept(_drop_marker_newline(found.before), found.dropped)
                code = found.groups[0]
            else:
                code = self._stream(end, deadline, on_output, tail)
                text, dropped = clean(tail.data), tail.lost
        except ShellClosed:
            # The command ended the shell (`exit 3`, a crash): report its status as the command's, like ssh.
            status = self._exit_status()
            rest, lost = self._buf.take()
            text, lost = _kept(rest, lost + tail.lost)
            if status is None:
                raise ShellClosed(
                    f"the connection to {self.label} dropped while {command!r} was running, after "
                    f"{time.monotonic() - started:.1f} s; it may not have finished on the pod"
                    + self._dropped_note(lost),
                    output=text,
                ) from None
            if on_output is not None and text:
                on_output(text)
            return CommandResult(command, text, status, time.monotonic() - started, lost)
        except TimeoutError:
            rest, lost = self._buf.take()
            partial, lost = _kept(rest, lost + tail.lost)
            usable = self._interrupt()
            raise RemoteTimeout(
                f"{command!r} did not finish within {timeout_s:g} s; "
                + ("it was interrupted (ctrl+c) and the shell is still usable" if usable else "the shell was closed")
                + self._dropped_note(lost),
                output=partial,
                session_usable=usable,
            ) from None
        if dropped:
            log.info(
                "%r printed more than %s: kept the last, %d bytes dropped", command, _mib(self._buf.limit), dropped
            )
        return CommandResult(command, text, int(code or b"0"), time.monotonic() - started, dropped)

    def _dropped_note(self, dropped: int) -> str:
        return (
            f"; {dropped:,} bytes of its output were dropped, past the {_mib(self._buf.limit)} kept" if dropped else ""
        )

    def _stream(
        self, end: re.Pattern[bytes], deadline: float, on_output: Callable[[str], None], tail: _Tail
    ) -> bytes | None:
        """Pass output on as it arrives until the end marker; returns the exit status it carries."""
        buf = self._buf
        buf.arm(end)
        try:
            while True:
                with buf.cond:
                    if buf.found is None and not buf.closed and time.monotonic() < deadline:
                        buf.cond.wait(min(0.2, max(0.0, deadline - time.monotonic())))
                    found = buf.found
                    if found is None:
                        chunk, lost = buf.take(self._safe_cut(buf.data))
                    else:
                        chunk, lost = _drop_marker_newline(found.before), found.dropped
                    closed = buf.closed
                tail.lost += lost
                if chunk:
                    tail.add(chunk)
                    on_output(clean(chunk))
                if found is not None:
                    return found.groups[0]
                if closed:
                    raise ShellClosed("the remote shell closed")
                if time.monotonic() >= deadline:
                    raise TimeoutError
        finally:
            buf.disarm()

    def _safe_cut(self, data: bytearray) -> int:
        """How much output can go out now: all of it, unless it ends in what may be the start of the end
        marker (a newline, then a prefix of `<<PT:nonce:`), which waits for the next read."""
        i = data.rfind(b"\n")
        if i < 0:
            return len(data)
        if not f"<<PT:{self.nonce}:".encode().startswith(bytes(data[i + 1 : i + 7 + len(self.nonce)])):
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
                self._buf.wait_for(self._marker(tag.encode()), time.monotonic() + 5.0)
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
def open_remote(
    pod: Pod,
    settings: SshSettings,
    via: RunVia = "auto",
    ready_timeout_s: float = READY_TIMEOUT_S,
    max_output_bytes: int = MAX_OUTPUT_BYTES,
) -> Iterator[RemoteShell]:
    """A RemoteShell on `pod`. auto: an exec channel over direct SSH when the pod has it, else the gateway's
    PTY. exec: direct SSH only. pty: the PTY path on whichever route answers. gateway: RunPod's gateway.
    max_output_bytes: what each command keeps of its output (the tail)."""
    routes: dict[str, Via] = {"auto": "auto", "exec": "direct", "pty": "auto", "gateway": "gateway"}
    route = routes[via]
    conn = connect_pod(pod, settings, route)
    kind: Literal["pty", "exec"] = "exec" if conn.endpoint.mode == "direct" and via in ("auto", "exec") else "pty"
    shell = RemoteShell(lambda: conn, kind, ready_timeout_s, max_output_bytes)
    try:
        shell.open()
        yield shell
    finally:
        shell.close()


def run_commands(
    shell: RemoteShell, commands: Sequence[str], per_command_timeout: float = 60.0, stop_on_error: bool = True
) -> list[CommandResult]:
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
    max_output_bytes: int | None = None,
) -> tuple[str, int]:
    """Run `commands` in one shell on the pod, return (output, exit_code).

    `output` is every command's cleaned output, in order, exactly as printed; `exit_code` is the last
    command's (after a failing command the rest are skipped unless stop_on_error=False). Raises
    RemoteTimeout, ShellClosed, AuthFailed, HostKeyChanged, Unreachable (all SshError) with a message that
    says what to do.

    Output past max_output_bytes (default: run_remote_max_output_mb in config.toml, 64 MiB) keeps its last
    max_output_bytes characters, after a first line that says how much was dropped.
    """
    from podtui.core.config import load_config
    from podtui.core.paths import Paths
    from podtui.core.ssh.pods import default_settings, lookup_pod

    if max_output_bytes is None:
        max_output_bytes = int(load_config(Paths.default()).run_remote_max_output_mb * (1 << 20))
    pod = lookup_pod(pod_id, api)
    settings = settings or default_settings()
    if key_path is not None:
        settings.key_path = Path(key_path).expanduser()
    output, dropped, code = "", 0, 0
    with open_remote(
        pod, settings, via, ready_timeout_s=min(READY_TIMEOUT_S, per_command_timeout), max_output_bytes=max_output_bytes
    ) as shell:
        for command in commands:
            result = shell.run(command, per_command_timeout)
            output += result.output
            dropped += result.dropped_bytes
            over = len(output) - shell.max_output_bytes  # characters, as near to bytes as text allows
            if over > 0:
                output, dropped = output[over:], dropped + over
            code = result.exit_code
            if stop_on_error and code != 0:
                break
    if dropped:
        log.warning(
            "run_remote on %s: the output passed %s; the first %d bytes were dropped",
            pod.id,
            _mib(shell.max_output_bytes),
            dropped,
        )
        output = (
            f"[podtui: output truncated: the first {dropped:,} bytes were dropped, "
            f"the last {_mib(shell.max_output_bytes)} kept]\n"
        ) + output
    return output, code
