"""runpodctl for the simulator: `send`, `receive` and `version`, byte for byte as docs/runpod-facts.md gives them
(the steps named below are those of its #runpodctl-send), and the pod commands a pod's watchdog may try
(runpodctl_pods.py).

Run as `python -m podtui.sim.runpodctl_standin ARGS` (the wrapper sets PYTHONPATH); stdlib only apart from its
progress bar next door (runpodctl_bar.py). It runs inside a simulated pod's sandbox and on the user's side of
tests. It finds the simulated relay (podtui/sim/relay.py) at $PODTUI_SIM_RELAY and learns from its first answer
the dialect (v1/v2), the progress-bar library, a rate limit and the faults to act out.
Private wire protocol: JSON lines, then the file's raw bytes:

    -> {"hello": "send"|"receive"|"version"}      <- {"dialect", "bar", "rate", "faults"}
    sender   -> {"open": room, "password", "meta"}   <- {"paired": "ip:port"} | {"error": ...}
    receiver -> {"join": room, "password"}           <- {"paired": "ip:port", "meta"} | {"error": ...}
    then, relayed between the two: receiver {"want": bool}, sender {"data": size} and raw bytes (or
    {"error": message}: the receiver's "peer error"), receiver {"done": true}

Every write goes straight to the file descriptor: runpodctl writes partial lines unbuffered, terminal or not
(docs/runpod-facts.md#runpodctl-send).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import re
import signal
import socket
import stat
import sys
import time
from collections.abc import Iterator
from typing import Any, NamedTuple, NoReturn

from podtui.sim.runpodctl_bar import Bar, byte_count
from podtui.sim.runpodctl_pods import pod_command

VERSIONS = {"v1": "v1.14.15", "v2": "v2.7.2"}
RELAY_COUNT = 21  # relay0..relay20.runpod.net (docs/runpod-facts.md#runpodctl-codes)
CHUNK = 32 * 1024  # croc's TCP_BUFFER_SIZE/2
SP33 = " " * 33
RETRY = "please retry 'runpodctl send' to generate a valid code."
# mnemonicode words (lowercase, 3-7 letters, docs/runpod-facts.md#runpodctl-codes); a sample is enough here
_WORD_TEXT = (
    "galileo collect fidel academy acrobat active actor admiral agenda airline alarm album algebra alpine "
    "amazon amber analog angel antenna apollo arctic aroma artist aspect atlas audio axiom balance bambino "
    "banana bandit barcode basic battery binary bingo bonus boxer bravo bronze burger cactus camera canal "
    "canvas canyon carbon cargo casino castle caviar cement center ceramic chamber chaos charlie cherry "
    "cobra comet compact concert control copper cosmos crystal dance decimal delta denmark design detect "
    "diamond digital dragon drama dynamic echo eclipse element elite energy engine episode equator escort "
    "exotic falcon fiber fiesta filter finance flash flute focus forest formula fortune galaxy garden "
    "gemini genius glacier gondola granite guitar harbor harmony helium horizon hotel icon igloo impact "
    "indigo jaguar jargon jazz jumbo jungle karma kayak koala lagoon laser lemon level lobster lotus lunar "
    "magnet mango marble matrix melody meteor metro micro mirage mobile modem motor museum nectar neon "
    "nova oasis ocean omega opera orbit origin oxygen panda panel parade pastel pepper piano pilot pixel "
    "planet plasma polaris prism proton pulse radar radio random rebel robot rocket rodeo safari salmon "
    "samba sardine signal silver sonic spiral static studio sultan sushi tango tempo tiger tornado totem "
    "tractor tropic tulip turbo ultra vanilla velvet venus violin vision vitamin vortex wizard yoga zebra "
    "zodiac"
)
WORDS = tuple(_WORD_TEXT.split())


# --- output --------------------------------------------------------------------------------------------


def write(fd: int, text: str) -> None:
    data = text.encode()
    while data:
        try:
            data = data[os.write(fd, data) :]
        except InterruptedError:
            continue
        except BrokenPipeError:  # Go: a write to a broken pipe on fd 1 or 2 ends the program with SIGPIPE
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGPIPE)
            return
        except OSError:
            return  # nothing more anyone will see


def out(text: str) -> None:
    write(1, text)


def err(text: str) -> None:
    write(2, text)


class Fatal(Exception):
    """Go's log.Fatal: the message (a newline added if missing) on stderr, exit status 1."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def go_log_time() -> str:
    return time.strftime("%Y/%m/%d %H:%M:%S")


def go_quote(text: str) -> str:
    """Go's %q for the strings runpodctl quotes (paths, codes)."""
    escapes = {
        "\\": "\\\\",
        '"': '\\"',
        "\a": "\\a",
        "\b": "\\b",
        "\f": "\\f",
        "\n": "\\n",
        "\r": "\\r",
        "\t": "\\t",
        "\v": "\\v",
    }
    body = "".join(escapes.get(c, f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in text)
    return f'"{body}"'


class Dialect(NamedTuple):
    """The strings that differ between runpodctl v1 (capitalised, croc's own) and v2 (lowercased fork)."""

    name: str
    send_prefix: str
    receive_prefix: str
    sending: str
    receiving: str
    code_is: str
    other_computer: str
    removing: str
    no_files: str
    relay_list_send: str
    relay_list_receive: str
    malformed_code: str
    malformed_relay: str
    relay_index: str
    package: str  # in panic traces


V2 = Dialect(
    "v2",
    "runpod-send: ",
    "runpod-receive: ",
    "sending",
    "receiving",
    "code is:",
    "on the other computer run",
    "removing",
    "no files transferred.",
    "could not get list of relays. please contact support for help!",
    "there was an issue getting the relay list. please try again.",
    "malformed code {code}: expected at least 2 parts separated by dashes, but got {n}. " + RETRY,
    "malformed relay, " + RETRY,
    "relay index {i} not found; " + RETRY,
    "github.com/runpod/runpodctl/cmd/transfer",
)
V1 = Dialect(
    "v1",
    "runpodctl-send: ",
    "runpodctl-receive: ",
    "Sending",
    "Receiving",
    "Code is:",
    "On the other computer run",
    "Removing",
    "No files transferred.",
    "Could not get list of relays. Please contact support for help!",
    "There was an issue getting the relay list. Please try again.",
    "Malformed code {code}: expected at least 2 parts separated by dashes, but got {n}. "
    "Please retry 'runpodctl send' to generate a valid code.",
    "Malformed relay, " + RETRY,
    "Relay index {i} not found; " + RETRY,
    "github.com/runpod/runpodctl/cmd/croc",
)
# what Go's http client reports when raw.githubusercontent.com does not answer; runpodctl logs it first
RELAY_LIST_ERROR = (
    'Get "https://raw.githubusercontent.com/runpod/runpodctl/main/cmd/croc/relays.json": '
    "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
)


# --- talking to the relay ------------------------------------------------------------------------------


class Link:
    """One connection to the simulated relay: JSON lines, then raw bytes."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.rfile = sock.makefile("rb")

    @classmethod
    def connect(cls, address: str | None) -> Link | None:
        if not address or ":" not in address:
            return None
        host, _, port = address.rpartition(":")
        try:
            return cls(socket.create_connection((host, int(port)), timeout=5.0))
        except (OSError, ValueError):
            return None

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall((json.dumps(message) + "\n").encode())

    def recv(self) -> dict[str, Any] | None:
        """The next message, or None when the connection ended."""
        try:
            line = self.rfile.readline()
            return dict(json.loads(line)) if line else None
        except (OSError, ValueError):
            return None

    def read_some(self, n: int) -> bytes:
        return self.rfile.read1(n)

    def addresses(self) -> tuple[str, str]:
        try:
            local, remote = self.sock.getsockname(), self.sock.getpeername()
        except OSError:
            return "127.0.0.1:0", "127.0.0.1:9009"
        return f"{local[0]}:{local[1]}", f"{remote[0]}:{remote[1]}"


class Settings(NamedTuple):
    dialect: Dialect = V2
    old_bar: bool = False
    rate: float | None = None
    faults: frozenset[str] = frozenset()


def hello(link: Link | None, role: str) -> Settings:
    if link is None:
        return Settings()
    try:
        link.sock.settimeout(None)
        link.send({"hello": role})
    except OSError:
        return Settings()
    answer = link.recv() or {}
    rate = answer.get("rate")
    return Settings(
        V1 if answer.get("dialect") == "v1" else V2,
        answer.get("bar") == "v3.8.6",
        float(rate) if rate else None,
        frozenset(answer.get("faults") or ()),
    )


def v1_config_notice(settings: Settings) -> None:
    """v1's root command runs initConfig for every subcommand: with no ~/.runpod/config.toml it says so on
    stdout and writes an empty one, so the notice appears once (docs/runpod-facts.md#runpodctl-send, step 1)."""
    if settings.dialect.name != "v1":
        return
    folder = os.path.join(os.path.expanduser("~"), ".runpod")
    config = os.path.join(folder, "config.toml")
    if os.path.exists(config):
        return
    out("Runpod config file not found, please run `runpodctl config` to create it\n")
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)
        with open(config, "a", encoding="utf-8"):
            pass


def panic(settings: Settings, message: str) -> NoReturn:
    """A Go panic in croc's sendData goroutine: the trace on stderr, exit status 2
    (docs/runpod-facts.md#runpodctl-errors)."""
    pkg = settings.dialect.package
    src = "/home/runner/work/runpodctl/runpodctl/" + pkg.split("runpodctl/", 1)[1]
    err(
        f"panic: {message}\n\ngoroutine 1 [running]:\n"
        f"{pkg}.(*Client).sendData(0xc0001b4000, 0x0)\n\t{src}/croc.go:1568 +0x5a5\n"
        f"created by {pkg}.(*Client).updateState in goroutine 1\n\t{src}/croc.go:1411 +0x6c5\n"
    )
    os._exit(2)


# --- send ------------------------------------------------------------------------------------------------


def random_name() -> str:
    """croc's GetRandomName: a 4-digit pin of digits 0-8, then three mnemonicode words
    (docs/runpod-facts.md#runpodctl-codes)."""
    pin = "".join(random.choice("012345678") for _ in range(4))
    return pin + "-" + "-".join(random.choice(WORDS) for _ in range(3))


def go_walk(root: str) -> Iterator[str]:
    """filepath.Walk's order: depth first, lexical, symlinks not followed; regular files only."""
    try:
        st = os.lstat(root)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode):
        yield root
    elif stat.S_ISDIR(st.st_mode):
        for name in sorted(os.listdir(root)):
            yield from go_walk(os.path.join(root, name))


def zip_directory(destination: str, source: str) -> None:
    """croc's utils.ZipDirectory: stored (no compression), one "Adding" line per file
    (docs/runpod-facts.md#runpodctl-send, step 2)."""
    import zipfile  # only folders need it: every runpodctl call would pay for the import

    err(f"Zipping {source} to {destination}\n")
    base = destination.removesuffix(".zip")
    with zipfile.ZipFile(destination, "w", zipfile.ZIP_DEFLATED, compresslevel=0) as archive:
        for path in go_walk(source):
            zip_path = path.replace(source, base)
            archive.write(path, zip_path)
            err("\r\x1b[2K")
            err(f"\rAdding {zip_path}")
    err("\n")


def file_hash(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def split_code(code: str) -> tuple[str, str]:
    """The relay's room is the code's first part (the 4-digit pin); the rest is the password."""
    room, _, password = code.partition("-")
    return room, password


def stream_file(link: Link, path: str, size: int, settings: Settings, bar: Bar) -> None:
    rate = settings.rate
    chunk = max(1024, min(CHUNK, int(rate / 20))) if rate else CHUNK  # small chunks keep a slow bar moving
    crash_at = size // 2 if "crash" in settings.faults else None
    start, sent = time.monotonic(), 0
    with open(path, "rb") as f:
        while sent < size:
            if crash_at is not None and sent >= crash_at:
                panic(settings, "runtime error: index out of range [3] with length 3")
            data = f.read(min(chunk, size - sent))
            if not data:
                break
            if rate:
                delay = start + (sent + len(data)) / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            try:
                link.sock.sendall(data)
            except OSError as e:  # croc panics when a relayed write fails mid-transfer
                local, remote = link.addresses()
                reason = "broken pipe" if isinstance(e, BrokenPipeError) else "connection reset by peer"
                panic(settings, f"write tcp {local}->{remote}: write: {reason}")
            sent += len(data)
            bar.add(len(data))
    if size == 0:
        bar.add(1)


def collect(path_arg: str, src: str) -> tuple[str, str, bool]:
    """The file to send (name, path) and whether it is a zipped folder to remove afterwards."""
    if not os.path.isdir(src):
        return os.path.basename(src), src, False
    # ZipFolder: the folder travels as NAME.zip, written to the current directory (step 2 of runpodctl send)
    source = os.path.normpath(path_arg)
    name = os.path.basename(source) + ".zip"
    if os.path.exists(name):
        raise Fatal(f"{go_log_time()} {name} file already exists!\n")  # a Go log line, exit 1
    zip_directory(name, source)
    return name, os.path.abspath(name), True


def send(path_arg: str, code_arg: str | None, link: Link | None, settings: Settings) -> int:
    d = settings.dialect
    src = os.path.abspath(path_arg)
    if not os.path.exists(src):
        raise Fatal(d.send_prefix + f"file or folder {go_quote(src)} does not exist")
    if link is None or "relay_list" in settings.faults:
        err(d.send_prefix + RELAY_LIST_ERROR + "\n")  # runpodctl logs the http error first
        raise Fatal(d.send_prefix + d.relay_list_send)
    relay_index = random.randrange(RELAY_COUNT)
    code = f"{code_arg or random_name()}-{relay_index}"
    out(code + "\n")  # step 1: the code on stdout before anything else
    name, path, temp = collect(path_arg, src)
    size = os.path.getsize(path)
    meta = {"name": name, "size": size, "zip": temp, "hash": file_hash(path)}
    # step 3: the "0 files" count is croc's quirk
    err(f"\r{SP33}\r{d.sending} 0 files ({byte_count(size)})")
    err(f"\r{SP33}\r{d.sending} '{name}' ({byte_count(size)})\n")
    if len(code) < 6:
        out("code is too short\n")  # croc.New fails after the code is out: stdout, exit 0
        return 0
    err(f"{d.code_is} {code}\n{d.other_computer}\n\nrunpodctl receive {code}\n")
    if "relay_unreachable" in settings.faults:  # once the code is out, errors go to stdout with exit status 0
        out(
            f"could not connect to relay{relay_index}.runpod.net: comm.NewConnection failed: "
            "dial tcp 203.0.113.10:9009: i/o timeout\n"
        )
        return 0
    problem = relay_send(link, code, meta, path, settings)
    if problem is not None:
        out(problem)  # after the code, croc's errors reach stdout via fmt.Println and it exits 0
        return 0
    if temp:
        out(f"{d.removing} {name}\n")  # step 6
        os.remove(path)
    return 0


def relay_send(link: Link, code: str, meta: dict[str, Any], path: str, settings: Settings) -> str | None:
    """Open the room, wait silently for the receiver (step 5), send: None, or what went wrong."""
    room, password = split_code(code)
    try:
        link.send({"open": room, "password": password, "meta": meta})
    except OSError:
        return "EOF\n"
    paired = link.recv()
    if paired is None or "error" in paired:
        return after_code_error(link, code, paired)
    want = link.recv()
    if want is None:
        return "EOF\n"
    if want.get("want"):
        if "peer_error" in settings.faults:  # the sender cannot read its file; croc tells the receiver why
            problem = f"read {path}: input/output error"
            with contextlib.suppress(OSError):
                link.send({"error": problem})
            return problem + "\n"
        try:
            link.send({"data": meta["size"]})
        except OSError:
            return "EOF\n"
        err(f"\n{settings.dialect.sending} (->{paired['paired']})\n")
        bar = Bar(meta["size"], meta["name"], settings.old_bar, err)
        stream_file(link, path, meta["size"], settings, bar)
        if link.recv() is None:  # the receiver's close message never came
            return "EOF\n"
    return None


def after_code_error(link: Link, code: str, answer: dict[str, Any] | None) -> str:
    if answer is None:
        return "EOF\n"
    if answer["error"] == "expired":  # croc's 3 h read deadline (docs/runpod-facts.md#runpodctl-codes)
        local, remote = link.addresses()
        return f"read tcp {local}->{remote}: i/o timeout\n"
    relay_index = code.rsplit("-", 1)[1]
    return f"could not connect to relay{relay_index}.runpod.net:9009: got bad response: {answer['error']}\n"


# --- receive ---------------------------------------------------------------------------------------------


def ask(prompt: str) -> str:
    """croc's GetInput: the prompt on stderr, a line from stdin (EOF reads as no)."""
    err(prompt)
    try:
        return sys.stdin.readline().strip().lower()
    except (OSError, ValueError):
        return ""


def inside(here: str, name: str, file_path: str) -> bool:
    """Whether a zip entry named `name` (file_path: normalised) lands in the folder `here` (resolved): no `..`, no
    absolute name (join keeps it whole), no drive or backslash root, no link in the folder leading elsewhere.
    The sender may be a pod, and this side may be the user's machine."""
    if ".." in file_path.split(os.sep) or os.path.isabs(name) or name.startswith("\\") or re.match(r"[A-Za-z]:", name):
        return False
    resolved = os.path.realpath(os.path.join(here, file_path))
    return resolved == here or resolved.startswith(here.rstrip(os.sep) + os.sep)


def unzip_directory(archive_path: str) -> None:
    """croc's utils.UnzipDirectory into ".": it asks before overwriting, whatever the Overwrite option."""
    import zipfile

    here = os.path.realpath(".")
    with zipfile.ZipFile(archive_path) as archive:
        for info in archive.infolist():
            file_path = os.path.normpath(os.path.join(".", info.filename))
            err("\r\x1b[2K")
            err(f"\rUnzipping file {file_path}")
            if not inside(here, info.filename, file_path):
                raise Fatal(f"{go_log_time()} Invalid file path {file_path}\n")
            if info.is_dir():
                os.makedirs(file_path, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(file_path) or ".", exist_ok=True)
            if os.path.exists(file_path) and ask(f"\nOverwrite '{file_path}'? (y/N) ") not in ("y", "yes"):
                err(f"skipping '{file_path}'")
                continue
            with archive.open(info) as src, open(file_path, "wb") as dst:
                while block := src.read(1 << 20):
                    dst.write(block)
    err("\n")


def check_code(code: str, d: Dialect) -> None:
    """runpodctl's own checks on the code, then croc's length check (docs/runpod-facts.md#runpodctl-errors)."""
    parts = code.split("-")
    if len(parts) < 2:
        raise Fatal(d.receive_prefix + d.malformed_code.format(code=go_quote(code), n=len(parts)))
    if not re.fullmatch(r"[+-]?\d{1,18}", parts[-1]):  # strconv.Atoi
        raise Fatal(d.receive_prefix + d.malformed_relay)
    index = int(parts[-1])
    if not 0 <= index < RELAY_COUNT:
        raise Fatal(d.receive_prefix + d.relay_index.format(i=index))
    if len(code) < 6:
        raise Fatal(d.receive_prefix + "croc: code is too short")


def already_here(name: str, meta: dict[str, Any]) -> bool:
    try:
        return os.path.getsize(name) == meta["size"] and file_hash(name) == str(meta["hash"])
    except OSError:
        return False


def receive(code: str, link: Link | None, settings: Settings) -> int:
    d = settings.dialect
    if link is None or "relay_list" in settings.faults:
        raise Fatal(d.receive_prefix + d.relay_list_receive)
    check_code(code, d)
    err("connecting...")
    room, password = split_code(code)
    try:
        link.send({"join": room, "password": password})
    except OSError:
        raise Fatal(d.receive_prefix + "croc: receive: could not secure channel") from None
    err("\rsecuring channel...")
    answer = link.recv()
    if answer is None:
        raise Fatal(d.receive_prefix + "croc: receive: could not secure channel")
    if "error" in answer:  # "connecting...\rsecuring channel...runpod-receive: croc: receive: ...", as runpodctl
        raise Fatal(d.receive_prefix + "croc: receive: " + answer["error"])
    meta: dict[str, Any] = answer["meta"]
    name, size = os.path.basename(meta["name"]), int(meta["size"])
    err(f"\r{d.receiving} '{name}' ({byte_count(size)}) \n")  # a space before the newline, as runpodctl
    err(f"\n{d.receiving} (<-{answer['paired']})\n")
    if already_here(name, meta):
        link.send({"want": False})
        err(f"\r{d.no_files}")  # no newline
        return 0
    link.send({"want": True})
    data_header(link, d)
    receive_file(link, name, size, settings)
    with contextlib.suppress(OSError):
        link.send({"done": True})
    if meta.get("zip"):
        unzip_directory(name)
        os.remove(name)
    return 0


def data_header(link: Link, d: Dialect) -> None:
    """The sender's first message after "want": the data follows, or its error (the receiver's "peer error")."""
    try:
        line = link.rfile.readline()
    except OSError:
        line = b""
    if not line:
        raise Fatal(d.receive_prefix + "croc: receive: EOF")
    try:
        message = json.loads(line)
    except ValueError:  # a garbled message: v1's "problem with decoding: ..." (docs/runpod-facts.md#runpodctl-errors)
        first = chr(line[0])  # encoding/json names the byte as a rune: 0xa7 is '§'
        raise Fatal(
            d.receive_prefix + f"problem with decoding: invalid character {go_char(first)} "
            "looking for beginning of value"
        ) from None
    if isinstance(message, dict) and "error" in message:
        raise Fatal(d.receive_prefix + f"peer error: {message['error']}")


def go_char(c: str) -> str:
    """Go's %q for one rune, as encoding/json names an invalid character."""
    return "'" + ("\\'" if c == "'" else c if c.isprintable() else f"\\x{ord(c):02x}") + "'"


def receive_file(link: Link, name: str, size: int, settings: Settings) -> None:
    # croc creates the file at its full size first: a transfer cut short leaves a file of the right size
    # with zeros at the end. The truncate fault keeps only the first half and says nothing.
    keep = size // 2 if "truncate" in settings.faults else size
    with open(name, "r+b" if os.path.exists(name) else "wb") as f:
        f.truncate(size)
        bar = Bar(size, name, settings.old_bar, err)
        got = 0
        while got < size:
            try:
                data = link.read_some(min(CHUNK, size - got))
            except OSError:
                data = b""
            if not data:  # the sender is gone: croc reports its failed read, glued to the last frame
                raise Fatal(settings.dialect.receive_prefix + "croc: receive: EOF")
            if got < keep:
                f.seek(got)
                f.write(data[: keep - got])
            got += len(data)
            bar.add(len(data))
        if size == 0:
            bar.add(1)
        f.truncate(keep)


# --- command line ----------------------------------------------------------------------------------------


def usage_error(message: str) -> int:
    err(f"Error: {message}\nRun 'runpodctl --help' for usage.\n")
    return 1


def parse_args(command: str, rest: list[str]) -> tuple[list[str], str | None] | str:
    """cobra's parsing for send (one flag, --code) and receive: (arguments, code), or the usage error."""
    code: str | None = None
    args: list[str] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        if command == "send" and a in ("--code", "-code"):
            if i + 1 >= len(rest):
                return "flag needs an argument: --code"
            code, i = rest[i + 1], i + 2
            continue
        if command == "send" and a.startswith("--code="):
            code = a.split("=", 1)[1]
        elif a.startswith("-") and a != "-":
            return f"unknown flag: {a}"
        else:
            args.append(a)
        i += 1
    if command == "send" and not args:
        return "requires at least 1 arg(s), only received 0"
    if command == "receive" and len(args) != 1:
        return f"accepts 1 arg(s), received {len(args)}"
    return args, code


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C kills it outright, as it does a Go binary
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command in ("pod", "stop"):  # v2 `pod stop|start|list`, legacy `stop pod ID` (runpodctl_pods.py)
        settings = hello(Link.connect(os.environ.get("PODTUI_SIM_RELAY")), "version")
        status = pod_command(argv, settings.dialect.name == "v1", out, err)
        if status >= 0:
            return status
    if command and command not in ("send", "receive", "version", "--version", "-v"):
        return usage_error(f'unknown command "{command}" for "runpodctl"')
    if not command:
        out(
            "Usage:\n  runpodctl [command]\n\nAvailable Commands:\n  receive     receive files or folders\n"
            "  send        send files or folders\n  version     print the version\n"
        )
        return 0
    parsed = parse_args(command, rest) if command in ("send", "receive") else ([], None)
    if isinstance(parsed, str):
        return usage_error(parsed)
    args, code = parsed
    link = Link.connect(os.environ.get("PODTUI_SIM_RELAY"))
    settings = hello(link, command if command in ("send", "receive") else "version")
    v1_config_notice(settings)
    try:
        if command == "send":
            return send(args[0], code, link, settings)
        if command == "receive":
            return receive(args[0], link, settings)
        out(f"runpodctl {VERSIONS[settings.dialect.name]}\n")
        return 0
    except Fatal as e:
        err(e.message if e.message.endswith("\n") else e.message + "\n")
        return 1
    except OSError as e:  # a file that cannot be read or written: Go's log.Fatalln, never a Python traceback
        reason = (e.strerror or str(e)).lower()
        err(f"{go_log_time()} {f'open {e.filename}: {reason}' if e.filename else reason}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
