"""The simulator's runpodctl and its relay, as real processes in temporary folders: every byte checked against
docs/runpod-facts.md (the runpodctl sections: versions, codes, send, receive, progress, errors), and every fault."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import open_remote
from podtui.sim.relay import FAULT_KINDS, SimRelay, install_runpodctl
from podtui.sim.runpodctl_bar import byte_count, humanize
from podtui.sim.runpodctl_standin import RELAY_LIST_ERROR, Fatal, unzip_directory
from podtui.sim.simulator import Simulator
from podtui.transfer.runpodctl_output import RunpodctlParser, TransferEvent
from tests.helpers.sim import DEMO_IDS

SP33 = " " * 33
CODE = re.compile(r"^[0-8]{4}(-[a-z]{3,7}){3}-\d{1,2}$")  # docs/runpod-facts.md#runpodctl-codes
BAR = re.compile(  # the pattern of docs/runpod-facts.md#runpodctl-progress: every frame of both bar libraries
    r"(?P<pct>\d{1,3})% \|(?P<bar>[^|]*)\| \((?P<cur>\s?[\d.]+)(?: ?(?P<cunit>[kMGTPE]?B))?/(?P<tot>\s?[\d.]+)"
    r" ?(?P<tunit>[kMGTPE]?B)(?:, (?:(?P<rate>[\d.]+) (?P<runit>[kMGTPE]?B)/s)?)?\)"
    r"(?: \[(?P<el>[\dhms.]+):(?P<eta>[\dhms.]+)\])?"
)
SIZE = 300_000
V2_HEADER = (
    "\r{sp}\rsending 0 files ({size})\r{sp}\rsending '{name}' ({size})\n"
    "code is: {code}\non the other computer run\n\nrunpodctl receive {code}\n"
)


class Rig:
    """A relay, the stand-in installed against it, and a sending and a receiving folder."""

    def __init__(self, root: Path, relay: SimRelay) -> None:
        self.relay = relay
        self.exe = install_runpodctl(root / "bin", relay.address)
        self.send_dir, self.recv_dir = root / "send", root / "recv"
        for d in (self.send_dir, self.recv_dir):
            d.mkdir()
        self.env = dict(os.environ)  # HOME is the test's own (conftest's isolated_home)
        self.data = os.urandom(SIZE)
        (self.send_dir / "data.bin").write_bytes(self.data)

    def send(self, *args: str) -> Process:
        return Process([str(self.exe), "send", *args], self.send_dir, self.env)

    def receive(self, code: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [str(self.exe), "receive", code],
            cwd=cwd or self.recv_dir,
            env=self.env,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=20,
        )

    def transfer(self, *args: str) -> tuple[Process, subprocess.CompletedProcess[bytes], str]:
        sender = self.send(*args)
        code = sender.code()
        assert self.relay.wait_for_sender(code)
        receiver = self.receive(code)
        sender.wait()
        return sender, receiver, code


class Process:
    """A running stand-in whose stdout and stderr are collected as they come."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.stdout, self.stderr = bytearray(), bytearray()
        self._readers = [
            threading.Thread(target=self._drain, args=(s, b), daemon=True)
            for s, b in ((self.proc.stdout, self.stdout), (self.proc.stderr, self.stderr))
        ]
        for t in self._readers:
            t.start()

    @staticmethod
    def _drain(stream: object, into: bytearray) -> None:
        while chunk := os.read(stream.fileno(), 65536):  # type: ignore[attr-defined]
            into += chunk

    def code(self, timeout_s: float = 10.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            found = [ln for ln in self.stdout.decode().splitlines() if re.fullmatch(r"\S+-\d{1,2}", ln)]
            if found:
                return found[0]
            time.sleep(0.01)
        raise AssertionError(f"no code: {bytes(self.stdout)!r} {bytes(self.stderr)!r}")

    def wait(self, timeout_s: float = 20.0) -> int:
        rc = self.proc.wait(timeout_s)
        for t in self._readers:
            t.join(5)
        for s in (self.proc.stdout, self.proc.stderr):
            assert s is not None
            s.close()
        return rc

    @property
    def rc(self) -> int | None:
        return self.proc.returncode

    def err(self) -> str:
        return self.stderr.decode()

    def out(self) -> str:
        return self.stdout.decode()


@pytest.fixture
def relay() -> Iterator[SimRelay]:
    r = SimRelay(rate_bytes_per_s=3_000_000).start()  # ~0.1 s a transfer: a few bar frames, a fast test
    yield r
    r.stop()


@pytest.fixture
def rig(tmp_path: Path, relay: SimRelay) -> Rig:
    return Rig(tmp_path, relay)


def frames(stream: str, name: str, old: bool = False) -> list[str]:
    """The bar frames in a stream, checked as progressbar redraws them (docs/runpod-facts.md#runpodctl-progress):
    each frame after "\\r", each redraw blanked first with "\\r" + as many spaces as the widest frame so far + "\\r";
    the last frame at 100% with no [elapsed:eta], then "\\n"."""
    assert stream.endswith("\n")
    body = stream[:-1]
    if old:  # v3.8.6 blanks with zero spaces before its first frame: its bar starts "\r\r\r"
        assert body.startswith("\r\r\r")
        body = body[2:]
    assert re.fullmatch(r"\r[^\r]+(?:\r +\r\r[^\r]+)*", body), repr(body)
    found, widest = [], 0
    for m in re.finditer(r"(?:\r( +)\r)?\r([^\r]+)", body):
        assert len(m.group(1) or "") == widest
        frame = m.group(2)
        assert frame.startswith(name) and BAR.fullmatch(frame[len(name) :].lstrip(" ")), frame
        widest = max(widest, len(frame))
        found.append(frame)
    assert all("[" in f for f in found[:-1]) and "100% |" + "█" * 20 + "|" in found[-1] and "[" not in found[-1]
    percents = [int(f[len(name) :].split("%")[0]) for f in found]
    assert percents == sorted(percents)
    return found


def events(*streams: bytes) -> list[TransferEvent]:
    """Parsed as a terminal would deliver a live transfer: a read after every carriage return."""
    parser = RunpodctlParser()
    pieces = [p for s in streams for p in re.split(rb"(?<=\r)", bytes(s)) if p]
    return [e for p in pieces for e in parser.feed(p)] + parser.close()


# --- transfers -------------------------------------------------------------------------------------------


def test_file_v2_bytes_and_events(rig: Rig) -> None:
    sender, receiver, code = rig.transfer("data.bin")
    assert (sender.rc, receiver.returncode) == (0, 0)
    assert CODE.match(code) and sender.out() == code + "\n" and receiver.stdout == b""
    assert (rig.recv_dir / "data.bin").read_bytes() == rig.data

    size = byte_count(SIZE)
    assert size == "293.0 kB"  # base 1024 in the header lines (docs/runpod-facts.md#runpodctl-send, step 3)
    head = V2_HEADER.format(sp=SP33, size=size, name="data.bin", code=code)
    err = sender.err()
    assert err.startswith(head)
    m = re.match(r"\nsending \(->127\.0\.0\.1:\d+\)\n", err[len(head) :])
    assert m
    sent = frames(err[len(head) + m.end() :], "data.bin")
    assert sent[0] == "data.bin   0% |" + " " * 20 + "| ( 0 B/300 kB) [0s:0s]"  # the blank frame, always
    assert sent[-1].startswith("data.bin 100% |" + "█" * 20 + "| (300/300 kB, ")

    rerr = receiver.stderr.decode()
    m = re.match(
        r"connecting\.\.\.\rsecuring channel\.\.\.\rreceiving 'data\.bin' \(293\.0 kB\) \n"
        r"\nreceiving \(<-127\.0\.0\.1:\d+\)\n",
        rerr,
    )
    assert m
    frames(rerr[m.end() :], "data.bin")

    s_events = events(sender.stdout, sender.stderr)
    assert [e.kind for e in s_events if e.kind != "progress"] == ["code", "file", "done"]
    assert s_events[0].code == code and s_events[1].size_bytes == round(293.0 * 1024)
    r_events = events(receiver.stdout, receiver.stderr)
    assert [e.kind for e in r_events if e.kind != "progress"] == ["file", "done"]
    progress = [e for e in r_events if e.kind == "progress"]
    assert progress[0].percent == 0 and progress[-1].percent == 100


def test_v1_dialect(rig: Rig) -> None:
    rig.relay.dialect = "v1"
    sender, receiver, code = rig.transfer("data.bin")
    assert (sender.rc, receiver.returncode) == (0, 0)
    # docs/runpod-facts.md#runpodctl-send, step 1: v1's notice on stdout before the code, once (it writes the
    # config file)
    assert sender.out() == f"Runpod config file not found, please run `runpodctl config` to create it\n{code}\n"
    assert receiver.stdout == b""
    head = (
        f"\r{SP33}\rSending 0 files (293.0 kB)\r{SP33}\rSending 'data.bin' (293.0 kB)\n"
        f"Code is: {code}\nOn the other computer run\n\nrunpodctl receive {code}\n"
    )
    assert sender.err().startswith(head) and "\nSending (->127.0.0.1:" in sender.err()
    assert receiver.stderr.startswith(
        b"connecting...\rsecuring channel...\rReceiving 'data.bin' (293.0 kB) \n\nReceiving (<-127.0.0.1:"
    )
    assert [e.kind for e in events(sender.stdout, sender.stderr) if e.kind != "progress"] == ["code", "file", "done"]
    assert (rig.recv_dir / "data.bin").read_bytes() == rig.data
    # docs/runpod-facts.md#runpodctl-versions: v1's log prefixes
    assert (
        rig.receive("1234-no-such-room-3").stderr
        == b"connecting...\rsecuring channel...runpodctl-receive: croc: receive: room not ready\n"
    )
    assert (
        rig.receive("1234-x").stderr
        == b"runpodctl-receive: Malformed relay, please retry 'runpodctl send' to generate a valid code.\n"
    )
    missing = rig.send("nope")
    assert missing.wait() == 1 and missing.err().startswith("runpodctl-send: file or folder ")


def test_folder_is_zipped_sent_and_unzipped(rig: Rig) -> None:
    folder = rig.send_dir / "outputs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("alpha\n")
    (folder / "sub" / "b.txt").write_text("beta\n")
    sender, receiver, code = rig.transfer("outputs")
    assert (sender.rc, receiver.returncode) == (0, 0)
    # docs/runpod-facts.md#runpodctl-send, steps 2 and 6
    assert sender.out() == f"{code}\nremoving outputs.zip\n"
    assert sender.err().startswith(
        "Zipping outputs to outputs.zip\n\r\x1b[2K\rAdding outputs/a.txt"
        "\r\x1b[2K\rAdding outputs/sub/b.txt\n\r" + SP33 + "\rsending 0 files ("
    )
    assert "\rsending 'outputs.zip' (" in sender.err()
    assert receiver.stderr.decode().endswith(
        "\r\x1b[2K\rUnzipping file outputs/a.txt\r\x1b[2K\rUnzipping file outputs/sub/b.txt\n"
    )
    assert (rig.recv_dir / "outputs" / "a.txt").read_text() == "alpha\n"
    assert (rig.recv_dir / "outputs" / "sub" / "b.txt").read_text() == "beta\n"
    assert not (rig.send_dir / "outputs.zip").exists() and not (rig.recv_dir / "outputs.zip").exists()
    assert [e.kind for e in events(sender.stdout, sender.stderr) if e.kind != "progress"] == ["code", "file", "done"]


@pytest.mark.parametrize(
    "name",
    [
        "{outside}/abs.txt",
        "../escape.txt",
        "a/../../escape.txt",
        "C:/drive.txt",
        "c:drive.txt",
        "\\\\server\\share.txt",
        "\\rooted.txt",
        "link/through.txt",
    ],
)
def test_a_zip_never_writes_outside_the_working_folder(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sender may be a pod (it reaches the relay on 127.0.0.1), and the receiver the user's own machine: an
    entry's name that is absolute, has a drive or a backslash root, climbs out, or goes through a link already in
    the folder is refused, and nothing lands outside."""
    here, outside = tmp_path / "here", tmp_path / "outside"
    here.mkdir()
    outside.mkdir()
    (here / "link").symlink_to(outside)
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("fine.txt", "fine\n")
        z.writestr(name.format(outside=outside), "pwned\n")
    monkeypatch.chdir(here)
    with pytest.raises(Fatal, match="Invalid file path"):
        unzip_directory(str(archive))
    assert list(outside.iterdir()) == [] and not (tmp_path / "escape.txt").exists()
    assert sorted(p.name for p in here.iterdir()) == ["fine.txt", "link"]


def test_folder_receive_asks_before_overwriting(rig: Rig) -> None:
    folder = rig.send_dir / "outputs"
    folder.mkdir()
    (folder / "a.txt").write_text("new\n")
    (rig.recv_dir / "outputs").mkdir()
    (rig.recv_dir / "outputs" / "a.txt").write_text("old\n")
    _, receiver, _ = rig.transfer("outputs")
    # docs/runpod-facts.md#runpodctl-receive: a folder receive prompts per existing file; EOF on stdin -> skipping
    assert receiver.stderr.decode().endswith(
        "\rUnzipping file outputs/a.txt\nOverwrite 'outputs/a.txt'? (y/N) skipping 'outputs/a.txt'\n"
    )
    assert (rig.recv_dir / "outputs" / "a.txt").read_text() == "old\n"


def test_identical_file_already_there(rig: Rig) -> None:
    (rig.recv_dir / "data.bin").write_bytes(rig.data)
    sender, receiver, _ = rig.transfer("data.bin")
    assert (sender.rc, receiver.returncode) == (0, 0)
    assert receiver.stderr.endswith(b"\rno files transferred.")  # docs/runpod-facts.md#runpodctl-receive: no newline
    assert "% |" not in sender.err()


def test_send_with_own_code(rig: Rig) -> None:
    sender = rig.send("data.bin", "--code", "4242-galileo-apollo")
    code = sender.code()
    # with --code X the printed code is X-R (docs/runpod-facts.md#runpodctl-codes)
    assert re.fullmatch(r"4242-galileo-apollo-\d{1,2}", code)
    assert rig.relay.wait_for_sender(code)
    assert rig.receive(code).returncode == 0 and sender.wait() == 0


def test_old_progress_bar_library(rig: Rig) -> None:
    rig.relay.bar = "v3.8.6"
    rig.relay.rate_bytes_per_s = 1_000_000  # long enough for a frame before the last
    _, receiver, _ = rig.transfer("data.bin")
    rerr = receiver.stderr.decode()
    bar = rerr[rerr.index(")\n", rerr.index("receiving (<-")) + 2 :]
    found = frames(bar, "data.bin", old=True)
    assert len(found) >= 2
    # docs/runpod-facts.md#runpodctl-progress: v3.8.6 sizes base 1024 labelled kB, "%0.3f kB/s"/"MB/s", the comma
    # always there
    assert re.search(r"\(\d+/293 kB, \d+\.\d{3} [kM]B/s\)", found[-1])
    evs = [e for e in events(receiver.stdout, receiver.stderr) if e.kind == "progress"]
    assert evs[0].percent < 100 and evs[0].total_bytes == 293 * 1024  # the parser knew the old library
    assert humanize(5, old=True) == (" 5", "B") and humanize(5, old=False) == (" 5", " B")


# --- faults ----------------------------------------------------------------------------------------------


def test_stale_code(rig: Rig) -> None:
    rig.relay.fail_next("stale_code")
    sender = rig.send("data.bin")
    code = sender.code()
    assert rig.relay.wait_for_sender(code)
    stale = rig.receive(code)
    assert stale.returncode == 1
    assert stale.stderr == b"connecting...\rsecuring channel...runpod-receive: croc: receive: room not ready\n"
    assert [e.error_kind for e in events(stale.stderr)] == ["room_not_ready"]
    assert rig.receive(code).returncode == 0 and sender.wait() == 0  # the fault was used up


def test_relay_unreachable_exits_0_with_the_message_on_stdout(rig: Rig) -> None:
    rig.relay.fail_next("relay_unreachable")
    sender = rig.send("data.bin")
    assert sender.wait() == 0
    code = sender.code()
    relay_index = code.rsplit("-", 1)[1]
    assert sender.out() == (
        f"{code}\ncould not connect to relay{relay_index}.runpod.net: comm.NewConnection "
        "failed: dial tcp 203.0.113.10:9009: i/o timeout\n"
    )
    assert sender.err() == V2_HEADER.format(sp=SP33, size="293.0 kB", name="data.bin", code=code)
    assert rig.relay.waiting_rooms() == []
    assert [e.error_kind for e in events(sender.stdout) if e.kind == "error"] == ["relay_unreachable"]


def test_truncate_is_silent(rig: Rig) -> None:
    rig.relay.fail_next("truncate")
    sender, receiver, _ = rig.transfer("data.bin")
    assert (sender.rc, receiver.returncode) == (0, 0)
    assert (rig.recv_dir / "data.bin").read_bytes() == rig.data[: SIZE // 2]
    assert [e.kind for e in events(receiver.stderr) if e.kind != "progress"] == ["file", "done"]


def test_crash_mid_transfer(rig: Rig) -> None:
    rig.relay.fail_next("crash")
    sender, receiver, _ = rig.transfer("data.bin")
    # mid-transfer a Go panic, exit 2 (docs/runpod-facts.md#runpodctl-errors)
    assert (sender.rc, receiver.returncode) == (2, 1)
    assert "panic: runtime error: " in sender.err() and "\n\ngoroutine 1 [running]:\n" in sender.err()
    assert receiver.stderr.endswith(b"runpod-receive: croc: receive: EOF\n")
    assert [e.error_kind for e in events(sender.stdout, sender.stderr) if e.kind == "error"] == ["crash"]
    got = (rig.recv_dir / "data.bin").read_bytes()
    assert len(got) == SIZE and got != rig.data  # croc sizes the file first: the tail stays zeros


def test_peer_error(rig: Rig) -> None:
    rig.relay.fail_next("peer_error")
    sender, receiver, _ = rig.transfer("data.bin")
    assert (sender.rc, receiver.returncode) == (0, 1)  # after the code the sender prints and exits 0
    problem = f"read {rig.send_dir / 'data.bin'}: input/output error"
    assert sender.out().endswith(f"\n{problem}\n")
    assert receiver.stderr.endswith(f"runpod-receive: peer error: {problem}\n".encode())
    assert [e.error_kind for e in events(receiver.stderr) if e.kind == "error"] == ["peer_error"]
    assert not (rig.recv_dir / "data.bin").exists()


def test_garbled_message_is_a_decoding_problem(rig: Rig) -> None:
    rig.relay.fail_next("decoding")
    sender, receiver, _ = rig.transfer("data.bin")
    assert receiver.returncode == 1
    assert receiver.stderr.endswith(
        "runpod-receive: problem with decoding: invalid character '§' looking for beginning of value\n".encode()
    )
    assert [e.error_kind for e in events(receiver.stderr) if e.kind == "error"] == ["crash"]
    # the receiver hung up: the sender's relayed write fails (a Go panic) or, all written, its wait ends in EOF
    assert (sender.rc == 2 and "panic: write tcp" in sender.err()) or (
        sender.rc == 0 and sender.out().endswith("\nEOF\n")
    ), (sender.rc, sender.out(), sender.err()[-300:])
    assert not (rig.recv_dir / "data.bin").exists()


def test_slow_link(rig: Rig) -> None:
    rig.relay.fail_next("slow", rate_bytes_per_s=500_000)
    start = time.monotonic()
    sender, receiver, _ = rig.transfer("data.bin")
    assert (sender.rc, receiver.returncode) == (0, 0)
    took = time.monotonic() - start
    assert took >= 0.5
    last = [e for e in events(receiver.stderr) if e.kind == "progress"][-1]
    assert last.rate_bytes_per_s is not None and 300_000 <= last.rate_bytes_per_s <= 600_000
    rerr = receiver.stderr.decode()
    shown = frames(rerr[rerr.index(")\n", rerr.index("receiving (<-")) + 2 :], "data.bin")
    # a throttle of 100 ms, plus the final frame (docs/runpod-facts.md#runpodctl-progress)
    assert 4 <= len(shown) <= took / 0.1 + 2


def test_relay_list(rig: Rig) -> None:
    rig.relay.fail_next("relay_list", times=2)
    sender = rig.send("data.bin")
    assert sender.wait() == 1 and sender.out() == ""
    assert sender.err() == (
        f"runpod-send: {RELAY_LIST_ERROR}\n"
        "runpod-send: could not get list of relays. please contact support for help!\n"
    )
    receiver = rig.receive("1234-galileo-collect-fidel-3")
    assert receiver.returncode == 1
    assert receiver.stderr == b"runpod-receive: there was an issue getting the relay list. please try again.\n"
    assert [e.error_kind for e in events(receiver.stderr)] == ["relay_list"]


def test_password_mismatch(rig: Rig) -> None:
    sender = rig.send("data.bin", "--code", "5678-galileo-collect-fidel")
    code = sender.code()
    assert rig.relay.wait_for_sender(code)
    wrong = rig.receive("5678-other-words-here-" + code.rsplit("-", 1)[1])
    assert wrong.returncode == 1
    assert wrong.stderr == b"connecting...\rsecuring channel...runpod-receive: croc: receive: password mismatch\n"
    assert rig.receive(code).returncode == 0 and sender.wait() == 0  # the sender still waits for the right one


def test_expired_room(rig: Rig) -> None:
    rig.relay.room_ttl_s = 0.3
    sender = rig.send("data.bin")
    code = sender.code()
    assert rig.relay.wait_for_sender(code)
    time.sleep(0.5)
    late = rig.receive(code)
    assert late.returncode == 1 and late.stderr.endswith(b"croc: receive: room not ready\n")
    assert sender.wait() == 0 and re.search(r"\nread tcp [\d.:]+->[\d.:]+: i/o timeout\n$", sender.out())


def test_existing_zip(rig: Rig) -> None:
    (rig.send_dir / "outputs").mkdir()
    (rig.send_dir / "outputs.zip").write_bytes(b"old")
    sender = rig.send("outputs")
    assert sender.wait() == 1
    assert CODE.match(sender.out().strip())
    assert re.fullmatch(r"\d{4}/\d\d/\d\d \d\d:\d\d:\d\d outputs\.zip file already exists!\n", sender.err())
    assert [e.error_kind for e in events(sender.stderr)] == ["already_exists"]


def test_missing_path(rig: Rig) -> None:
    sender = rig.send("nope.bin")
    assert sender.wait() == 1 and sender.out() == ""
    assert sender.err() == f'runpod-send: file or folder "{rig.send_dir / "nope.bin"}" does not exist\n'


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (
            "nodashes",
            'malformed code "nodashes": expected at least 2 parts separated by dashes, but got 1. '
            "please retry 'runpodctl send' to generate a valid code.",
        ),
        ("1234-abc-x", "malformed relay, please retry 'runpodctl send' to generate a valid code."),
        ("1234-abc-42", "relay index 42 not found; please retry 'runpodctl send' to generate a valid code."),
        ("12-3", "croc: code is too short"),
    ],
)
def test_malformed_codes(rig: Rig, code: str, message: str) -> None:
    r = rig.receive(code)
    assert r.returncode == 1 and r.stderr.decode() == f"runpod-receive: {message}\n"
    assert [e.error_kind for e in events(r.stderr)] == ["bad_code"]


def test_unknown_fault_is_refused(relay: SimRelay) -> None:
    with pytest.raises(ValueError, match="unknown relay fault"):
        relay.fail_next("gremlins")
    assert set(FAULT_KINDS) == {
        "stale_code",
        "relay_unreachable",
        "truncate",
        "crash",
        "slow",
        "relay_list",
        "room_full",
        "password_mismatch",
        "secure_channel",
        "peer_error",
        "decoding",
    }
    relay.fail_next("crash")
    relay.clear_faults()


# --- disconnects and threads -----------------------------------------------------------------------------


def test_sender_killed_while_waiting_frees_the_room(rig: Rig) -> None:
    sender = rig.send("data.bin")
    code = sender.code()
    assert rig.relay.wait_for_sender(code)
    sender.proc.send_signal(signal.SIGKILL)
    sender.wait()
    deadline = time.monotonic() + 5
    while rig.relay.waiting_rooms() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert rig.relay.waiting_rooms() == []
    assert rig.receive(code).stderr.endswith(b"room not ready\n")


def test_receiver_that_drops_makes_the_sender_fail(rig: Rig) -> None:
    rig.relay.rate_bytes_per_s = 150_000  # two seconds of sending: the receiver is killed early on
    sender = rig.send("data.bin")
    code = sender.code()
    assert rig.relay.wait_for_sender(code)
    receiver = Process([str(rig.exe), "receive", code], rig.recv_dir, rig.env)
    deadline = time.monotonic() + 10
    while b"% |" not in receiver.stderr and time.monotonic() < deadline:
        time.sleep(0.01)
    receiver.proc.kill()
    receiver.wait()
    assert sender.wait(timeout_s=5) == 2  # croc panics when a relayed write fails
    assert re.search(
        r"panic: write tcp [\d.:]+->[\d.:]+: write: (broken pipe|connection reset by peer)\n", sender.err()
    )


def test_no_thread_outlives_stop(tmp_path: Path) -> None:
    relay = SimRelay(rate_bytes_per_s=3_000_000).start()
    rig = Rig(tmp_path, relay)
    rig.transfer("data.bin")
    waiting = rig.send("data.bin")
    assert relay.wait_for_sender(waiting.code())
    relay.stop()
    assert waiting.wait() == 0  # the relay went away: croc's read error on stdout, exit 0
    assert [t.name for t in threading.enumerate() if t.name.startswith("sim-relay")] == []


def test_version(rig: Rig) -> None:
    run = lambda: subprocess.run([str(rig.exe), "version"], env=rig.env, capture_output=True, timeout=10)  # noqa: E731
    assert run().stdout == b"runpodctl v2.7.2\n"
    rig.relay.dialect = "v1"
    assert (
        run().stdout == b"Runpod config file not found, please run `runpodctl config` to create it\n"
        b"runpodctl v1.14.15\n"
    )
    assert run().stdout == b"runpodctl v1.14.15\n"


# --- on a simulated pod ----------------------------------------------------------------------------------


def test_a_simulated_pod_has_runpodctl(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    with open_remote(pod, ssh_settings) as sh:
        assert sh.run("command -v runpodctl && runpodctl version").output.endswith("\nrunpodctl v2.7.2\n")

    # a file sent from the pod's /workspace arrives here through the simulator's relay
    machine = full_sim.gateway.machine(full_sim.world.pods[DEMO_IDS["idle"]])
    (machine.workspace / "result.txt").write_text("from the pod\n")
    proc = machine.spawn_exec("runpodctl send result.txt")
    assert proc.stdout is not None
    code = proc.stdout.readline().decode().strip()
    assert full_sim.relay.wait_for_sender(code)
    local = install_runpodctl(tmp_path / "local-bin", full_sim.relay.address)
    r = subprocess.run([str(local), "receive", code], cwd=tmp_path, capture_output=True, timeout=20)
    assert r.returncode == 0 and proc.wait(10) == 0
    assert (tmp_path / "result.txt").read_text() == "from the pod\n"
    for s in (proc.stdout, proc.stderr, proc.stdin):
        if s is not None:
            s.close()
