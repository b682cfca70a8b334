"""One console: a pod's PTY shell feeding a terminal emulator, with reconnects that keep the scrollback.

The SSH reader thread feeds the emulator directly, so a flood is parsed at the engine's speed and never queues up
in memory; the widget is told "something changed" at most once per frame it draws.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import paramiko

from podtui.console.emulator import Emulator
from podtui.console.engines import make_emulator
from podtui.console.replies import ReplyPump
from podtui.core.api import ApiError, RunPodApi
from podtui.core.api.client import find_pod
from podtui.core.pod import Pod
from podtui.core.secret import write_private
from podtui.core.ssh.connect import Connection, SshSettings, connect_pod
from podtui.core.ssh.errors import ShellClosed, SshError
from podtui.core.ssh.session import ShellSession, State
from podtui.core.visible import visible

log = logging.getLogger(__name__)

# Leave whatever the program had set (alternate screen, mouse reporting, hidden cursor, colours) before writing
# a gap marker, so the marker lands in the scrollback and the user gets a normal screen back.
_RESET_MODES = (
    b"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l"
    b"\x1b[?1l\x1b>\x1b[?25h\x1b[<u\x1b[0m\x1b7\x1b[r\x1b8"
)  # DECSTBM homes the cursor: save, restore


class ConsoleLink:
    def __init__(
        self,
        connector: Callable[[], Connection],
        label: str,
        *,
        cols: int = 100,
        rows: int = 30,
        scrollback: int = 10_000,
        engine: str | None = None,
        reconnect_attempts: int = 6,
        first_retry_s: float = 0.5,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.label = visible(label)  # a pod's name: it titles the tab, and notes and markers quote it
        self.replies = ReplyPump(self._send_raw)
        self.emulator: Emulator = make_emulator(cols, rows, scrollback, on_reply=self.replies.reply, engine=engine)
        self.session = ShellSession(connector, width=cols, height=rows, on_output=self._output, on_state=self._on_state)
        self.reconnect_attempts = reconnect_attempts
        self.first_retry_s = first_retry_s
        self.clock = clock
        self.state: State = "closed"
        self.detail = ""
        self.on_change: Callable[[], None] | None = None  # called from any thread; must be cheap and thread-safe
        self.on_input: Callable[[], None] | None = None  # called on the event loop when input is sent
        self._pending = threading.Event()
        self._closed_by_user = False
        self._reconnecting = False
        self._dropped_at: float | None = None
        self.gaps = 0
        self._typed_on_connect: bytes | None = None

    # --- what the widget shows ----------------------------------------------------------------------

    @property
    def title(self) -> str:
        state = f"reconnecting {visible(self.detail)}" if self.state == "reconnecting" else self.state
        return f"{self.label} · {state}"

    def take_change(self) -> bool:
        """True once per burst of changes; the widget calls it before drawing a frame."""
        was = self._pending.is_set()
        self._pending.clear()
        return was

    def _changed(self) -> None:
        if not self._pending.is_set():
            self._pending.set()
            if self.on_change is not None:
                self.on_change()

    # --- the shell ----------------------------------------------------------------------------------

    def open(self) -> None:
        """Connect; blocking, so call it from a worker thread."""
        self._closed_by_user = False
        try:
            self.session.open()
        except SshError as e:
            self._write_marker(f"could not connect: {e}", "31")
            raise

    def _output(self, data: bytes) -> None:
        self.emulator.feed(data)
        self._changed()

    def _on_state(self, state: State, detail: str) -> None:
        if self._closed_by_user:
            self.state, self.detail = "closed", "closed by podtui"
            return
        previous, (self.state, self.detail) = self.state, (state, detail)
        if state == "connected" and self._typed_on_connect is not None:
            data, self._typed_on_connect = self._typed_on_connect, None
            # once the shell has printed its prompt; session.send, as on_input belongs to the event loop
            timer = threading.Timer(0.5, self._send_raw, args=(data,))
            timer.daemon = True
            timer.start()
        if state == "connected" and self._reconnecting:
            gap = self.clock() - (self._dropped_at or self.clock())
            self._write_marker(f"reconnected after {gap:.1f} s", "32")
        # only a shell that was up can drop: a first connect that fails is reported by open(), never retried
        if state == "closed" and previous == "connected" and not self._closed_by_user and not self._reconnecting:
            if self.session.exit_status is not None:
                self._write_marker(f"the shell exited with status {self.session.exit_status}", "2")
            else:
                self._dropped()
        self._changed()

    def _dropped(self) -> None:
        self._dropped_at = self.clock()
        self.gaps += 1
        self._write_marker(
            f"connection lost at {time.strftime('%H:%M:%S', time.localtime(self._dropped_at))}; "
            "reconnecting (output from the gap is not shown)",
            "33",
        )
        self._reconnecting = True
        threading.Thread(target=self._reconnect, daemon=True, name="console-reconnect").start()

    def _reconnect(self) -> None:
        try:
            self.session.reconnect(attempts=self.reconnect_attempts, first_delay_s=self.first_retry_s)
        except Exception as e:  # SshError, or anything the connector raises: this thread must not die loudly
            if not isinstance(e, SshError):
                log.exception("reconnecting %s failed", self.label)
            if not self._closed_by_user:
                self._write_marker(f"gave up reconnecting: {e}", "31")
            self.state, self.detail = "closed", str(e)
        else:
            self.session.resize(self.emulator.cols, self.emulator.rows)
        finally:
            self._reconnecting = False
            self._changed()

    def reconnect_now(self) -> None:
        """The user asked: open a fresh shell even though the last one ended."""
        if self._reconnecting or self.session.alive:
            return
        self._dropped_at = self.clock()
        self._reconnecting = True
        threading.Thread(target=self._reconnect, daemon=True, name="console-reconnect").start()

    def _write_marker(self, text: str, color: str) -> None:
        # leaving the alternate screen restores the cursor saved on entering it, so only when it is on
        leave_alt = b"\x1b[?1049l" if self.emulator.modes().alt_screen else b""
        # the text quotes errors from outside: made visible, so the emulator takes none of it as a sequence
        self.emulator.feed(leave_alt + _RESET_MODES + f"\r\n\x1b[{color}m── {visible(text)} ──\x1b[0m\r\n".encode())
        self._changed()

    def send(self, data: bytes) -> bool:
        if self.on_input is not None:
            self.on_input()  # someone is using the pod: it is not idle
        try:
            self.session.send(data)
        except ShellClosed:
            return False
        return True

    def _send_raw(self, data: bytes) -> None:
        with contextlib.suppress(ShellClosed):
            self.session.send(data)

    def type_when_connected(self, text: str) -> None:
        """Type `text` at the prompt, without Enter: the person reads it and decides (the doctor's fixes)."""
        data = text.replace("\r", " ").replace("\n", " ").encode()  # never an Enter: the person presses it
        if self.state == "connected":
            self.send(data)
        else:
            self._typed_on_connect = data

    def resize(self, cols: int, rows: int) -> None:
        self.emulator.resize(cols, rows)
        try:
            self.session.resize(max(cols, 2), max(rows, 1))
        except (OSError, EOFError, paramiko.SSHException) as e:  # a dead link: a reconnect sends the size again
            log.info("resize not sent: %s", e)

    def close(self) -> None:
        self._typed_on_connect = None
        self._closed_by_user = True
        self.replies.close()
        self.session.close()

    def save(self, path: Path) -> Path:
        """The scrollback and screen as plain text, made visible: the file is read with cat and less, and the
        cells can hold what a terminal acts on (a bidi control, DEL)."""
        path = path.expanduser()
        write_private(path, visible(self.emulator.text(), lines=True) + "\n")
        return path


def pod_connector(
    pod: Pod, settings: Callable[[], SshSettings], api: RunPodApi | None = None
) -> Callable[[], Connection]:
    """Connect to the pod as it is now: a pod that restarted may have a new address or port."""

    def connect() -> Connection:
        current = pod
        if api is not None:
            try:
                current = find_pod(api, pod.id)
            except ApiError as e:  # keep the last known address; the connect attempt says what is wrong
                log.info("could not refresh %s before connecting: %s", pod.id, e)
        return connect_pod(current, settings())

    return connect
