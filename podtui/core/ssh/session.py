"""A PTY shell on a pod: output delivered by a reader thread, input, resize, drop detection, reconnect.

The console pane and run_remote both sit on this.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Literal

import paramiko

from podtui.core.ssh.connect import Connection
from podtui.core.ssh.errors import AuthFailed, HostKeyChanged, ShellClosed, SshError

log = logging.getLogger(__name__)
State = Literal["connecting", "connected", "reconnecting", "closed"]
READ_CHUNK = 1 << 20  # whatever is buffered, up to 1 MiB: a flood arrives in few, large pieces
BATCH_MAX = 1 << 20
BULK_BYTES = 16384
BULK_PAUSE_S = 0.002


class ShellSession:
    def __init__(
        self,
        connector: Callable[[], Connection],
        *,
        term: str = "xterm-256color",
        width: int = 120,
        height: int = 40,
        on_output: Callable[[bytes], None] | None = None,
        on_state: Callable[[State, str], None] | None = None,
        channel_kind: Literal["pty", "exec"] = "pty",
        exec_command: str = "",
    ) -> None:
        self._connector = connector
        self.term, self.width, self.height = term, width, height
        self.on_output = on_output
        self.on_state = on_state
        self.channel_kind = channel_kind
        self.exec_command = exec_command
        self.connection: Connection | None = None
        self.channel: paramiko.Channel | None = None
        self.state: State = "closed"
        self.exit_status: int | None = None
        self._reader: threading.Thread | None = None
        self._closing = False
        self._lock = threading.Lock()

    # --- lifecycle -----------------------------------------------------------------------------------

    def _set_state(self, state: State, detail: str = "") -> None:
        self.state = state
        if self.on_state is not None:
            self.on_state(state, detail)

    def open(self) -> ShellSession:
        self._closing = False
        self._set_state("connecting")
        try:
            self._attach(self._connector())
        except BaseException:
            self._set_state("closed")
            raise
        return self

    def _attach(self, connection: Connection) -> None:
        try:
            channel = connection.transport.open_session()
            if self.channel_kind == "pty":
                channel.get_pty(term=self.term, width=self.width, height=self.height)
                channel.invoke_shell()
            else:
                channel.exec_command(self.exec_command)
        except (paramiko.SSHException, EOFError, OSError) as e:
            connection.close()
            why = str(e) or type(e).__name__
            raise ShellClosed(f"{connection.endpoint.label} would not open a shell: {why}") from None
        with self._lock:
            self.connection, self.channel = connection, channel
            self.exit_status = None
        # "connected" is announced before the first byte is read, so a listener can mark the spot first
        self._set_state("connected", connection.endpoint.label)
        self._reader = threading.Thread(target=self._read, args=(channel,), name="ssh-reader", daemon=True)
        self._reader.start()

    def _read(self, channel: paramiko.Channel) -> None:
        try:
            while True:
                data = channel.recv(READ_CHUNK)
                if not data:
                    break
                if channel.recv_ready():
                    data = self._batch(channel, data)
                if self.on_output is not None:
                    self.on_output(data)
                if len(data) >= BULK_BYTES:
                    # Bulk output (a flood, not keystroke echoes): let it pile up for a moment, so the next
                    # batch is larger and the transport thread runs meanwhile.
                    time.sleep(BULK_PAUSE_S)
        except (OSError, EOFError, paramiko.SSHException) as e:
            log.info("shell read ended: %s", e)
        if channel.exit_status_ready():
            status = channel.recv_exit_status()
            self.exit_status = None if status == -1 else status  # -1: paramiko's "none was sent"
        with self._lock:
            mine = channel is self.channel
        if mine and not self._closing:
            self._set_state(
                "closed",
                "the connection dropped" if self.exit_status is None else f"the shell exited ({self.exit_status})",
            )

    @staticmethod
    def _batch(channel: paramiko.Channel, first: bytes) -> bytes:
        # In a flood, hand the listener one large batch rather than many small chunks: each call into a
        # native parser gives up the GIL and waits to get it back, so fewer calls parse a flood faster.
        parts, size = [first], len(first)
        while size < BATCH_MAX and channel.recv_ready():
            more = channel.recv(READ_CHUNK)
            if not more:
                break
            parts.append(more)
            size += len(more)
        return b"".join(parts)

    @property
    def alive(self) -> bool:
        ch = self.channel
        return ch is not None and not ch.closed and self.connection is not None and self.connection.active

    def reconnect(self, attempts: int = 5, first_delay_s: float = 0.5, max_delay_s: float = 8.0) -> None:
        """Drop what is left of the old connection and open a new one, backing off between tries."""
        self._teardown()
        self._closing = False
        delay = first_delay_s
        last: SshError | None = None
        for n in range(1, attempts + 1):
            self._set_state("reconnecting", str(n))
            try:
                self._attach(self._connector())
                return
            except (AuthFailed, HostKeyChanged) as e:  # trying again cannot help: say so at once
                self._set_state("closed", str(e))
                raise
            except SshError as e:
                last = e
                log.info("reconnect %d failed: %s", n, e)
                time.sleep(delay)
                delay = min(delay * 2, max_delay_s)
        self._set_state("closed", str(last))
        raise ShellClosed(f"could not reconnect after {attempts} tries: {last}")

    def _teardown(self) -> None:
        with self._lock:
            channel, connection = self.channel, self.connection
            self.channel = self.connection = None
        # closing a channel sends a message: on a dead connection that raises, and there is nothing to save
        if channel is not None:
            with contextlib.suppress(OSError, EOFError, paramiko.SSHException):
                channel.close()
        if connection is not None:
            with contextlib.suppress(OSError, EOFError, paramiko.SSHException):
                connection.close()

    def close(self) -> None:
        self._closing = True
        self._teardown()
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout=2)
        self._set_state("closed", "closed by podtui")

    # --- I/O -------------------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        channel = self.channel
        if channel is None or channel.closed:
            raise ShellClosed("the connection is closed")
        try:
            channel.sendall(data)
        except (OSError, EOFError, paramiko.SSHException) as e:
            raise ShellClosed(f"the connection was lost ({str(e) or type(e).__name__})") from None

    def resize(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        channel = self.channel
        if channel is not None and not channel.closed and self.channel_kind == "pty":
            channel.resize_pty(width=width, height=height)
