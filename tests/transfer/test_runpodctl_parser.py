"""runpodctl's output, as docs/runpod-facts.md gives it, parsed into events: both dialects, both bar libraries,
split at every byte boundary, and every error classified."""

from __future__ import annotations

import pytest

from podtui.transfer.runpodctl_output import RunpodctlParser, TransferEvent, classify, go_duration, parse

SP33, CODE = " " * 33, "8338-galileo-collect-fidel-3"
BAR0 = "\rmodel.safetensors   0% |" + " " * 20 + "| ( 0 B/52 MB) [0s:0s]"
BAR16 = "\r" + " " * 66 + "\r\rmodel.safetensors  16% |███" + " " * 17 + "| (8.8/52 MB, 22 MB/s) [0s:1s]"
BAR100 = "\r" + " " * 74 + "\r\rmodel.safetensors 100% |████████████████████| (52/52 MB, 26 MB/s)\n"

V2_SEND = (
    f"{CODE}\n"  # stdout first here; the two streams interleave in any order in a PTY
    f"\r{SP33}\rsending 0 files (50.0 MB)\r{SP33}\rsending 'model.safetensors' (50.0 MB)\n"
    f"code is: {CODE}\non the other computer run\n\nrunpodctl receive {CODE}\n"
    f"\nsending (->198.51.100.23:40312)\n{BAR0}{BAR16}{BAR100}"
)
V2_RECEIVE = (
    "connecting...\rsecuring channel...\rreceiving 'model.safetensors' (50.0 MB) \n\n"
    f"receiving (<-203.0.113.7:53412)\n{BAR0}{BAR16}{BAR100}"
)
V1_SEND = (
    "Runpod config file not found, please run `runpodctl config` to create it\n"
    f"{CODE}\n\r{SP33}\rSending 'model.safetensors' (50.0 MB)\n"
    f"Code is: {CODE}\nOn the other computer run\n\nrunpodctl receive {CODE}\n"
    f"\nSending (->198.51.100.23:40312)\n{BAR0}{BAR16}{BAR100}"
)
# progressbar v3.8.6 (runpodctl <= v1.14.4): starts with \r\r\r, base-1024 sizes, "%0.3f MB/s", "5B" unspaced
OLD_BAR = (
    "\r\r\rReceiving 'weights.bin' (10.0 MB) \n\r\r\rweights.bin   0% |" + " " * 20 + "| (5B/10.0 MB) [0s:0s]"
    "\r\rweights.bin  50% |██████████          | (5.0 MB/10.0 MB, 2.500 MB/s) [2s:2s]"
    "\r\rweights.bin 100% |████████████████████| (10.0 MB/10.0 MB, 2.500 MB/s)\n"
)
FOLDER_SEND = (
    f"{CODE}\nZipping outputs to outputs.zip\n"
    "\r\x1b[2K\rAdding outputs/a.txt\r\x1b[2K\rAdding outputs/b.txt\n"
    f"\r{SP33}\rsending 'outputs.zip' (1.2 kB)\ncode is: {CODE}\non the other computer run\n\n"
    f"runpodctl receive {CODE}\n\nsending (->198.51.100.23:40312)\n"
    "\routputs.zip 100% |████████████████████| (1.2/1.2 kB)\nremoving outputs.zip\n"
)
STREAMS = {"v2 send": V2_SEND, "v2 receive": V2_RECEIVE, "v1 send": V1_SEND, "old bar": OLD_BAR, "folder": FOLDER_SEND}


def kinds(events: list[TransferEvent]) -> list[str]:
    return [e.kind for e in events]


def frame_by_frame(text: str) -> list[TransferEvent]:
    """Fed as a PTY delivers a live transfer: each frame in its own read."""
    p = RunpodctlParser()
    pieces = text.replace("\r\r", "\r\x00\r").split("\x00")  # cut between frames, after each blanking run
    return [e for piece in pieces for e in p.feed(piece)] + p.close()


def test_v2_send() -> None:
    events = frame_by_frame(V2_SEND)
    assert kinds(events) == ["code", "file", "progress", "progress", "progress", "done"]
    assert events[0].code == CODE
    assert (events[1].name, events[1].size_bytes) == ("model.safetensors", 52_428_800)
    p16 = events[3]
    assert (p16.percent, p16.done_bytes, p16.total_bytes, p16.rate_bytes_per_s, p16.eta_s) == (
        16.0,
        8_800_000,
        52_000_000,
        22_000_000,
        1.0,
    )
    assert events[2].rate_bytes_per_s is None  # a rate of 0 is not printed
    assert events[4].percent == 100.0 and events[4].done_bytes == events[4].total_bytes == 52_428_800


def test_frames_superseded_within_one_chunk_are_skipped() -> None:
    events = parse(V2_SEND)  # all at once: only the newest frame of the run counts
    assert kinds(events) == ["code", "file", "progress", "done"] and events[2].percent == 100.0


def test_v2_receive_and_v1_send_give_the_same_story() -> None:
    assert kinds(frame_by_frame(V2_RECEIVE)) == ["file", "progress", "progress", "progress", "done"]
    assert kinds(frame_by_frame(V1_SEND)) == ["code", "file", "progress", "progress", "progress", "done"]


def test_old_progress_bar_library() -> None:
    events = frame_by_frame(OLD_BAR)
    assert kinds(events) == ["file", "progress", "progress", "progress", "done"]
    half = events[2]
    assert half.done_bytes == 5 * 1024**2 and half.total_bytes == 10 * 1024**2
    assert half.rate_bytes_per_s == round(2.5 * 1024**2) and half.eta_s == 2.0
    assert events[1].done_bytes == 5


def test_folder_send_is_one_archive() -> None:
    events = parse(FOLDER_SEND)
    assert kinds(events) == ["code", "file", "progress", "done"]
    assert events[1].name == "outputs.zip" and events[1].size_bytes == round(1.2 * 1024)


def same_story(events: list[TransferEvent], whole: list[TransferEvent]) -> None:
    """However the stream is cut, the same events come out; only how many progress frames were read differs."""
    assert [e for e in events if e.kind != "progress"] == [e for e in whole if e.kind != "progress"]
    progress = [e for e in events if e.kind == "progress"]
    assert progress[-1:] == [e for e in whole if e.kind == "progress"][-1:]
    assert [e.percent for e in progress] == sorted(e.percent or 0 for e in progress)


@pytest.mark.parametrize("name", list(STREAMS))
def test_split_at_every_byte_boundary(name: str) -> None:
    data = STREAMS[name].encode()
    whole = parse(data)
    for i in range(len(data) + 1):
        p = RunpodctlParser()
        same_story(p.feed(data[:i]) + p.feed(data[i:]) + p.close(), whole)


@pytest.mark.parametrize("name", list(STREAMS))
def test_one_byte_at_a_time(name: str) -> None:
    data = STREAMS[name].encode()
    p = RunpodctlParser()
    events = [e for i in range(len(data)) for e in p.feed(data[i : i + 1])] + p.close()
    same_story(events, parse(data))
    frames = data.count(b"% |")
    assert len([e for e in events if e.kind == "progress"]) == frames  # fed this slowly, every frame is seen


def test_an_error_written_straight_after_a_bar_frame() -> None:
    """A sender that dies mid-transfer: the receiver's Go log line follows the last frame with no newline."""
    stream = (V2_RECEIVE.split(BAR16)[0] + BAR16 + "runpod-receive: croc: receive: EOF\n").encode()
    whole = parse(stream)
    assert kinds(whole) == ["file", "progress", "error"]
    assert (whole[-1].error_kind, whole[-1].message) == ("crash", "croc: receive: EOF")
    for i in range(len(stream) + 1):
        p = RunpodctlParser()
        events = p.feed(stream[:i]) + p.feed(stream[i:]) + p.close()
        assert [e for e in events if e.kind == "error"] == [whole[-1]]


def test_escape_sequences_split_across_chunks() -> None:
    p = RunpodctlParser()
    events = (
        p.feed(b"\x1b[0;31")
        + p.feed(b";1m[error]\t\x1b[0m2026/08/24 10:00:00 croc: receive: room not ")
        + p.feed(b"ready\n")
        + p.close()
    )
    assert [(e.kind, e.error_kind) for e in events] == [("error", "room_not_ready")]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("runpod-receive: there was an issue getting the relay list. please try again.\n", "relay_list"),
        (
            'runpod-receive: malformed code "X": expected at least 2 parts separated by dashes, but got 1. please retry\n',  # noqa: E501
            "bad_code",
        ),
        ("runpod-receive: malformed relay, please retry\n", "bad_code"),
        ("runpod-receive: relay index 42 not found; please retry\n", "bad_code"),
        ("runpod-receive: croc: code is too short\n", "bad_code"),
        ("connecting...\rsecuring channel...runpod-receive: croc: receive: room not ready\n", "room_not_ready"),
        (
            "runpodctl-receive: croc: receive: room (secure channel) not ready, maybe peer disconnected\n",
            "room_not_ready",
        ),
        ("runpod-receive: croc: receive: password mismatch\n", "password_mismatch"),
        ("runpod-receive: could not secure channel\n", "password_mismatch"),
        (
            "runpod-receive: could not connect to relay3.runpod.net: comm.NewConnection failed: dial tcp "
            "203.0.113.10:9009: i/o timeout\n",
            "relay_unreachable",
        ),
        (
            "runpod-receive: could not connect to relay3.runpod.net: dial tcp: lookup relay3.runpod.net: no such host\n",  # noqa: E501
            "relay_unreachable",
        ),
        ("runpod-receive: got bad response: room full\n", "room_not_ready"),
        ("runpod-receive: peer error: something odd\n", "peer_error"),
        ('runpod-receive: peer error: file or folder "/x" does not exist\n', "peer_error"),
        ("runpodctl-receive: problem with decoding: unexpected EOF\n", "crash"),
        ('runpod-send: file or folder "/workspace/nope.bin" does not exist\n', "not_found"),
        ("runpod-send: could not get list of relays. please contact support for help!\n", "relay_list"),
        (
            f"{CODE}\ncould not connect to relay7.runpod.net: comm.NewConnection failed: dial tcp 203.0.113.10:9009: "
            "i/o timeout\n",
            "relay_unreachable",
        ),  # after the code: stdout, no prefix, exit 0
        ("2026/08/24 10:00:00 outputs.zip file already exists!\n", "already_exists"),
        ("connecting...\rsecuring channel...\rno files transferred.", "already_exists"),  # no newline at all
        ('{"error":"croc: receive: room not ready"}\n', "room_not_ready"),
        (
            "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n",
            "crash",
        ),
    ],
)
def test_every_error_in_the_facts_is_classified(text: str, kind: str) -> None:
    errors = [e for e in parse(text) if e.kind == "error"]
    assert [e.error_kind for e in errors] == [kind]
    assert errors[0].message


def test_warnings_are_not_errors() -> None:
    assert parse("\x1b[0;33m[warn]\t\x1b[0m2026/08/24 10:00:00 something to note\n") == []


def test_classify_and_durations() -> None:
    assert classify("whatever else") == "unknown"
    assert go_duration("0s") == 0 and go_duration("1m5s") == 65 and go_duration("1h2m3s") == 3723
    assert go_duration("250ms") == 0.25


def test_garbage_never_raises() -> None:
    import random

    rng = random.Random(3)
    p = RunpodctlParser()
    for _ in range(500):
        p.feed(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))))
    p.close()


def test_carriage_returns_later_in_a_new_stream_do_not_mean_the_old_bar() -> None:
    p = RunpodctlParser()
    p.feed("receiving 'a.bin' (10.0 MB) \n")
    events = p.feed("\r\r\ra.bin  50% |██████████          | (5.0/10 MB, 2.5 MB/s) [2s:2s]\r")
    assert events[-1].done_bytes == 5_000_000  # base 1000: progressbar v3.14.3


def test_old_bar_is_recognised_even_when_its_first_carriage_returns_arrive_apart() -> None:
    p = RunpodctlParser()
    events = p.feed("\r") + p.feed("\r\rw.bin  50% |██████████          | (5.0 MB/10.0 MB) [2s:2s]\r")
    assert events[-1].done_bytes == 5 * 1024**2
