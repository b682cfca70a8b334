"""runpodctl send/receive output, as events: the code, the file, progress, done, and classified errors.

Every fact here comes from the "runpodctl" sections of docs/runpod-facts.md: two dialects (v1 capitalised, v2
lowercase; matched case-insensitively), two progress-bar libraries (progressbar v3.14.3: base-1000 sizes,
"22 MB/s"; v3.8.6: base-1024 sizes, "%0.3f kB/s", "5B" with no space), frames redrawn with "\\r" and
blanked with spaces, colour codes only in log lines, and errors on stderr with a `runpod(ctl)-send|receive: `
prefix, except after the code is printed, when send reports on stdout and exits 0.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["code", "file", "progress", "done", "error"]
ErrorKind = Literal[
    "peer_error",
    "room_not_ready",
    "relay_unreachable",
    "relay_list",
    "bad_code",
    "not_found",
    "password_mismatch",
    "already_exists",
    "crash",
    "unknown",
]


@dataclass(frozen=True)
class TransferEvent:
    kind: Kind
    code: str | None = None
    name: str | None = None
    size_bytes: int | None = None
    percent: float | None = None
    done_bytes: int | None = None
    total_bytes: int | None = None
    rate_bytes_per_s: float | None = None
    eta_s: float | None = None
    error_kind: ErrorKind | None = None
    message: str | None = None


# "NNNN-word-word-word-R"; a code given with --code X prints as X-R, so accept any word count >= 1
# (docs/runpod-facts.md#runpodctl-codes).
CODE_RE = re.compile(r"\b[0-8]{4}(?:-[a-z]{3,7}){1,3}-\d{1,2}\b")
_CODE_LINE = re.compile(r"^(?:code is:\s*)?(" + CODE_RE.pattern + r")\s*$", re.I)
_RECEIVE_HINT = re.compile(r"^runpodctl receive (" + CODE_RE.pattern + r")\s*$", re.I)
_FILE = re.compile(
    r"^(?:sending|receiving) (?:'(?P<name>.*)'|(?P<count>[1-9]\d*) files|(?P<pair>.+ and .+?)) "
    r"\((?P<size>[\d.]+) ?(?P<unit>[kMGTPE]?B)\)\s*$",
    re.I,
)
# The pattern of docs/runpod-facts.md#runpodctl-progress, matching every frame of both bar libraries.
_BAR = re.compile(
    r"(?P<pct>\d{1,3})% \|(?P<bar>[^|]*)\| \((?P<cur>\s?[\d.]+)(?: ?(?P<cunit>[kMGTPE]?B))?/(?P<tot>\s?[\d.]+)"
    r" ?(?P<tunit>[kMGTPE]?B)(?:, (?:(?P<rate>[\d.]+) (?P<runit>[kMGTPE]?B)/s)?)?\)"
    r"(?: \[(?P<el>[\dhms.]+):(?P<eta>[\dhms.]+)\])?"
)
_PREFIXED = re.compile(r"runpod(?:ctl)?-(?:send|receive): (?P<msg>.*)$", re.I)
_GO_LOG = re.compile(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} (?P<msg>.*)$")
_LOGGER = re.compile(r"^\[error\]\s*(?P<msg>.*)$", re.I)  # schollz/logger; its [warn] lines are not failures
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_DURATION = re.compile(r"(?:(?P<h>[\d.]+)h)?(?:(?P<m>[\d.]+)m(?!s))?(?:(?P<s>[\d.]+)s)?(?:(?P<ms>[\d.]+)ms)?$")
_UNITS = "BkMGTPE"

# (error kind, phrases that mark it), first match wins; each phrase is from docs/runpod-facts.md#runpodctl-errors.
_ERRORS: list[tuple[ErrorKind, tuple[str, ...]]] = [
    ("peer_error", ("peer error",)),  # first: the far side's words would otherwise read as this side's failure
    ("room_not_ready", ("room not ready", "room (secure channel) not ready", "room full")),
    ("relay_list", ("getting the relay list", "list of relays")),
    ("bad_code", ("malformed code", "malformed relay", "code is too short", "not found; ")),
    (
        "relay_unreachable",
        ("could not connect to relay", "i/o timeout", "connection refused", "no such host", "newconnection failed"),
    ),
    ("not_found", ("does not exist",)),
    ("password_mismatch", ("password mismatch", "could not secure channel")),
    ("already_exists", ("already exists", "no files transferred")),
    ("crash", ("panic:", "goroutine ", "problem with decoding", "broken pipe", ": eof", "unexpected eof")),
]


def strip_escapes(text: str) -> str:
    """runpodctl's text without colour codes and other escape sequences."""
    return _ANSI.sub("", text)


def classify(message: str) -> ErrorKind:
    low = message.lower()
    if re.search(r"relay index \d+ not found", low):
        return "bad_code"
    for kind, phrases in _ERRORS:
        if any(p in low for p in phrases):
            return kind
    return "unknown"


def _size(number: str, unit: str | None, base: int) -> int:
    power = _UNITS.index(unit[0]) if unit and unit != "B" else 0
    return round(float(number) * float(base) ** power)


def go_duration(text: str) -> float | None:
    m = _DURATION.match(text)
    if not m or not text:
        return None
    h, mins, s, ms = (float(m.group(g) or 0) for g in ("h", "m", "s", "ms"))
    return h * 3600 + mins * 60 + s + ms / 1000


class RunpodctlParser:
    """Feed runpodctl's output (stdout, stderr or both, as it arrives) and get events back.

    Progress is reported as of the newest bar frame in each chunk fed: frames it superseded are skipped.

    Chunks may split anywhere, inside an escape sequence or a UTF-8 character included. Call `close()` at
    the end of the stream: a last message with no newline ("no files transferred.") is only complete then.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""  # text not yet ended by \r or \n
        self._code: str | None = None
        self._file: tuple[str | None, int | None] | None = None
        self._last_progress: TransferEvent | None = None
        self._done = False
        self._old_bar = False  # progressbar v3.8.6: base-1024 sizes
        self._head = ""  # the stream's first characters
        self._panic: list[str] | None = None

    # --- input ----------------------------------------------------------------------------------------

    def feed(self, data: bytes | str) -> list[TransferEvent]:
        text = data if isinstance(data, str) else self._decoder.decode(data)
        if len(self._head) < 3:  # v3.8.6 begins its stream with three carriage returns
            self._head += text[:3]
            self._old_bar = self._old_bar or self._head.startswith("\r\r\r")
        buf = self._pending + text
        cut = self._safe_end(buf)
        buf, self._pending = buf[:cut], buf[cut:]
        events: list[TransferEvent] = []
        lines = buf.split("\n")  # str.split scans at C speed; a flood of frames has few lines, many \r
        rest = lines.pop().split("\r")
        self._pending = rest.pop() + self._pending  # the unfinished piece, then any held-back escape
        bar: str | None = None
        for line in [*lines, None]:  # None: the \r-ended pieces after the last newline
            parts = rest if line is None else line.split("\r")
            last = len(parts) - 1
            for j, segment in enumerate(parts):
                newline = line is not None and j == last
                if not segment or segment.isspace():
                    continue  # the runs of spaces that blank the previous frame: nothing to read
                if "% |" in segment:
                    if not newline:
                        # a bar frame, redrawn every 100 ms: a later frame supersedes it, so only the newest
                        # of a run is parsed, which keeps the parser fast however the output is chunked
                        bar = segment
                        continue
                elif bar is not None:
                    self._segment(bar, False, events)
                bar = None
                self._segment(segment, newline, events)
        if bar is not None:
            self._segment(bar, False, events)
        return events

    def close(self) -> list[TransferEvent]:
        events: list[TransferEvent] = []
        rest = self._pending + (self._decoder.decode(b"", final=True))
        self._pending = ""
        if rest:
            self._segment(rest, True, events)
        if self._panic is not None:
            events.append(self._error("\n".join(self._panic)))
            self._panic = None
        return events

    @staticmethod
    def _safe_end(buf: str) -> int:
        """Where complete text ends: an escape sequence cut off at the end waits for the next chunk."""
        esc = buf.rfind("\x1b")
        if esc < 0 or _ANSI.match(buf, esc) or len(buf) - esc > 64:
            return len(buf)
        return esc

    # --- one segment of text between two \r or \n ------------------------------------------------------

    def _segment(self, raw: str, ended_by_newline: bool, events: list[TransferEvent]) -> None:
        line = _ANSI.sub("", raw).strip(" \t")
        if not line:
            return
        if self._panic is not None:
            self._panic.append(line)
            return
        if line.startswith("panic:") or line.startswith("goroutine "):
            self._panic = [line]  # a Go crash: the trace follows, reported as one error at close()
            return
        m = _BAR.search(line)
        if m:
            # Go's log writes an error straight after the last frame, with no newline before it
            tail = line[m.end() :].strip()
            self._progress(m, ended_by_newline and not tail, events)
            if tail:
                self._segment(tail, ended_by_newline, events)
            return
        for pattern in (_PREFIXED, _GO_LOG, _LOGGER):
            found = pattern.search(line)
            if found:  # runpodctl writes these only for errors
                events.append(self._error(found.group("msg").strip()))
                return
        if line.startswith("{"):
            try:
                payload = json.loads(line)
            except ValueError:
                payload = None
            if isinstance(payload, dict) and isinstance(payload.get("error"), str):
                events.append(self._error(payload["error"]))  # newer builds: JSON errors on stderr
                return
        code = _CODE_LINE.match(line) or _RECEIVE_HINT.match(line)
        if code:
            if code.group(1) != self._code:
                self._code = code.group(1)
                events.append(TransferEvent("code", code=self._code))
            return
        f = _FILE.match(line)
        if f:
            name = f.group("name") or (f"{f.group('count')} files" if f.group("count") else f.group("pair"))
            size = _size(f.group("size"), f.group("unit"), 1024)  # the header sizes are base 1024 in both
            if (name, size) != self._file:
                self._file = (name, size)
                events.append(TransferEvent("file", name=name, size_bytes=size))
            return
        low = line.lower()
        if low.startswith("no files transferred"):
            events.append(self._error(line))
        elif classify(line) in ("relay_unreachable", "already_exists", "room_not_ready", "crash"):
            # after the code, send prints errors on stdout with no prefix (and exits 0)
            events.append(self._error(line))

    def _error(self, message: str) -> TransferEvent:
        return TransferEvent("error", error_kind=classify(message), message=message)

    def _progress(self, m: re.Match[str], ended_by_newline: bool, events: list[TransferEvent]) -> None:
        if m.group("rate") and "." in m.group("rate") and len(m.group("rate").split(".")[1]) == 3:
            self._old_bar = True  # "%0.3f kB/s" is v3.8.6's rate format
        if not self._old_bar and m.group("cunit") == "B" and re.search(r"\dB/", m.group(0)):
            self._old_bar = True  # "5B" with no space
        base = 1024 if self._old_bar else 1000
        tunit = m.group("tunit")
        total = _size(m.group("tot").strip(), tunit, base)
        done = _size(m.group("cur").strip(), m.group("cunit") or tunit, base)
        if self._file and self._file[1] and int(m.group("pct")) == 100:
            done = total = self._file[1]  # the header's size is exact to a tenth; the bar rounds more
        rate = _size(m.group("rate"), m.group("runit"), base) if m.group("rate") else None
        eta = go_duration(m.group("eta")) if m.group("eta") else (0.0 if int(m.group("pct")) >= 100 else None)
        event = TransferEvent(
            "progress",
            name=self._file[0] if self._file else None,
            percent=float(m.group("pct")),
            done_bytes=done,
            total_bytes=total,
            rate_bytes_per_s=rate,
            eta_s=eta,
        )
        if event != self._last_progress:  # a throttled bar redraws the same frame; report changes only
            self._last_progress = event
            events.append(event)
        if int(m.group("pct")) >= 100 and ended_by_newline and not self._done:
            self._done = True
            events.append(TransferEvent("done", name=event.name, size_bytes=total))


def parse(data: bytes | str) -> list[TransferEvent]:
    """Every event in a complete stream."""
    parser = RunpodctlParser()
    return parser.feed(data) + parser.close()
