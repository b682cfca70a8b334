"""A terminal session's relay (pod_enter.py's PodTerminal) between the outer terminal (the gateway's, sshd's) and the
pod's own: a paste far larger than a terminal's buffers reaches a program that writes while it reads, whichever
side is slower; the pod's process ending while a job it left keeps writing still ends the session; a hang-up of
the outer terminal still reaches the pod while a paste waits. Then the same paste end to end, over the gateway's
shell and direct SSH (`ssh -t`)."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import tty
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings, connect, endpoints_for
from podtui.sim.pod_view import ENTER
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS, machine, needs_sshd

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pod terminals are Linux's"),
    pytest.mark.timeout(180),
]  # a relay that deadlocks again fails here instead of hanging the run

# The relay alone, on this machine (no container: what is tried is the bytes' way, not the pod's walls).
RELAY = f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("pod_enter", {str(ENTER)!r})
pod_enter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pod_enter)
sys.exit(pod_enter.run_in_pod(sys.argv[1:], True, "/"))
"""
LINE = b"y" * 79 + b"\n"
WAIT_S = 60.0  # for a condition to hold: a guard against hanging, never a measure


def until(condition: Callable[[], bool], timeout_s: float = WAIT_S) -> bool:
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


@dataclass
class Outer:
    """The outer terminal (raw, as the gateway makes it) and the relay behind it."""

    master: int
    proc: subprocess.Popen[bytes]
    output: bytearray = field(default_factory=bytearray)

    def read_all(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: the relay is gone
                return
            if not data:
                return
            self.output += data


@pytest.fixture
def relay() -> Iterator[Callable[..., Outer]]:
    started: list[Outer] = []

    def start(*command: str) -> Outer:
        master, slave = os.openpty()
        tty.setraw(slave)
        proc = subprocess.Popen(
            [sys.executable, "-c", RELAY, *command], stdin=slave, stdout=slave, stderr=slave, start_new_session=True
        )
        os.close(slave)
        outer = Outer(master, proc)
        threading.Thread(target=outer.read_all, daemon=True).start()
        started.append(outer)
        return outer

    yield start
    for outer in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(outer.proc.pid, signal.SIGKILL)
        outer.proc.wait()
        with contextlib.suppress(OSError):
            os.close(outer.master)


def test_a_paste_far_larger_than_the_terminals_buffers_reaches_a_program_that_writes_as_it_reads(
    relay: Callable[..., Outer],
) -> None:
    """cat writes each line back while the paste still comes: with a blocking relay, cat blocked on its output,
    the relay on cat's full input, and the session hung for good (about 30 KB in)."""
    outer = relay("sh", "-c", "stty -echo; echo READY; cat; echo DONE")
    assert until(lambda: b"READY\r\n" in outer.output), bytes(outer.output)
    paste = LINE * 12_500  # 1 MB
    # written from a thread of its own while another reads, as a terminal does
    threading.Thread(target=_write_all, args=(outer.master, paste + b"\x04"), daemon=True).start()
    expected = b"READY\r\n" + paste.replace(b"\n", b"\r\n") + b"DONE\r\n"
    assert until(lambda: len(outer.output) >= len(expected)), (len(outer.output), len(expected))
    assert outer.proc.wait(WAIT_S) == 0
    assert bytes(outer.output) == expected  # every byte, in order


def test_a_paste_into_an_interactive_bash_comes_back_whole(relay: Callable[..., Outer]) -> None:
    tag = secrets.token_hex(4)
    outer = relay("bash", "--norc", "--noprofile", "-i")
    _write_all(outer.master, f"PS1=; echo READY-$((6*7))-{tag}\r".encode())
    assert until(lambda: f"READY-42-{tag}".encode() in outer.output), bytes(outer.output)
    # 80 KB of commands that do nothing, each echoed by readline as it reads it; the last one answers
    typed = (b": " + b"y" * 77 + b"\r") * 1_000 + f"echo END-$((6*7))-{tag}\r".encode()
    threading.Thread(target=_write_all, args=(outer.master, typed), daemon=True).start()
    assert until(lambda: f"END-42-{tag}".encode() in outer.output), len(outer.output)


def test_a_job_left_writing_after_the_process_ended_does_not_hold_the_session(relay: Callable[..., Outer]) -> None:
    tag = secrets.token_hex(4)
    # the job ignores the hang-up its session's end sends its process group; it is writing when the shell ends
    outer = relay(
        "sh", "-c", f"trap '' HUP; yes left-{tag} & while grep -q 'wchar: 0$' /proc/$!/io; do :; done; echo started"
    )
    try:
        assert outer.proc.wait(WAIT_S) == 0  # it used to pass on the job's output for ever
        assert b"started" in outer.output
    finally:
        _kill(f"left-{tag}")
    assert until(lambda: not _host_processes(f"left-{tag}"))


# What the relay passes on once the pod's process ended, from a terminal that never runs dry (/dev/zero: a job
# left writing faster than it is read) to an fd 1 that takes everything, or nothing.
DRAIN = f"""
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("pod_enter", {str(ENTER)!r})
pod_enter = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pod_enter)
terminal = object.__new__(pod_enter.PodTerminal)
terminal.master = os.open("/dev/zero", os.O_RDONLY | os.O_NONBLOCK)
os.set_blocking(1, False)
terminal._drain(bytearray())
os.write(2, b"drained")
"""


@pytest.mark.parametrize("reader", [True, False], ids=["read", "never-read"])
def test_what_is_passed_on_after_the_process_ended_is_bounded(reader: bool) -> None:
    from podtui.sim.pod_enter import DRAIN_BYTES

    out_r, out_w = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", DRAIN], stdout=out_w, stderr=subprocess.PIPE)
    os.close(out_w)
    try:
        got = 0
        if reader:
            while data := os.read(out_r, 65536):
                got += len(data)
        _, err = proc.communicate(timeout=WAIT_S)
        assert err == b"drained" and proc.returncode == 0
        assert got == (DRAIN_BYTES if reader else 0)  # never-read: it gave up waiting for fd 1
    finally:
        os.close(out_r)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_hang_up_reaches_the_pod_while_a_paste_waits(relay: Callable[..., Outer]) -> None:
    """The pod's program takes nothing (its terminal's input and the relay's buffer fill up), and ignores
    SIGHUP: the relay still sees the outer terminal hang up, and hangs the pod's terminal up in turn."""
    outer = relay(
        sys.executable,
        "-c",
        "import os, select, signal; signal.signal(signal.SIGHUP, signal.SIG_IGN); "
        "print('READY', flush=True); p = select.poll(); p.register(0, 0); "
        "p.poll(); os._exit(7)",
    )  # only its terminal's hang-up wakes it
    assert until(lambda: b"READY" in outer.output), bytes(outer.output)
    os.set_blocking(outer.master, False)
    while _write_some(outer.master, LINE * 50):  # until everything between here and the program is full
        time.sleep(0.05)
    os.close(outer.master)
    assert outer.proc.wait(WAIT_S) == 7


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view[:65536]) :]


def _write_some(fd: int, data: bytes) -> int:
    """Write to a non-blocking `fd` until it takes no more; how much it took."""
    written = 0
    with contextlib.suppress(BlockingIOError):
        while True:
            written += os.write(fd, data)
    return written


def _host_processes(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if text.encode() in (entry / "cmdline").read_bytes().replace(b"\0", b" "):
                found.append(int(entry.name))
    return found


def _kill(text: str) -> None:
    for pid in _host_processes(text):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# --- end to end: a paste over SSH into a pod's shell --------------------------------------------------------


@pytest.mark.parametrize(
    "key, via",
    [
        pytest.param("idle", "gateway", id="gateway"),
        pytest.param("train", "direct", id="direct-ssh-t", marks=needs_sshd),
    ],
)
def test_a_large_paste_over_ssh_reaches_the_pod_whole(
    key: str, via: str, full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    """200 KB typed into `tee` (which writes it back as it reads it) in an interactive shell, as `ssh -t` and
    the gateway's shell do: the file gets all of it, and the shell answers afterwards."""
    pod = sim_api.fetch_snapshot().find(DEMO_IDS[key])
    assert pod is not None
    workspace = machine(full_sim, key).workspace
    (workspace / "pasted").unlink(missing_ok=True)
    conn = connect(endpoints_for(pod, ssh_settings, via)[0], ssh_settings)  # type: ignore[arg-type]
    try:
        chan = conn.transport.open_session()
        chan.get_pty(term="xterm", width=120, height=40)
        chan.invoke_shell()
        got = bytearray()

        def read() -> None:
            with contextlib.suppress(OSError, EOFError):
                while data := chan.recv(65536):
                    got.extend(data)

        threading.Thread(target=read, daemon=True).start()
        assert until(lambda: b"/workspace#" in got), bytes(got)
        chan.sendall(b"tee /workspace/pasted\r")
        target = workspace / "pasted"
        # pasted once tee runs: typed ahead while the shell still reads its line, Enter is not yet turned into a
        # newline by the terminal (readline has that off), as in any terminal
        assert until(target.exists)
        paste = (b"y" * 79 + b"\r") * 2_500  # as a terminal sends Enter
        threading.Thread(target=chan.sendall, args=(paste,), daemon=True).start()
        assert until(lambda: target.exists() and target.stat().st_size == len(paste)), (
            target.stat().st_size if target.exists() else None,
            len(got),
        )
        chan.sendall(b"\x04echo after-$((6*7))\r")  # ctrl-D ends tee
        assert until(lambda: b"after-42" in got), bytes(got[-300:])
        assert target.read_bytes() == paste.replace(b"\r", b"\n")
    finally:
        conn.close()
