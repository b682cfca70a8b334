"""`REMOTE[:LOCAL]` as typed, and the forwards remembered per pod name: 0600, replaced whole, a damaged file ignored
with a warning and never a crash (docs/forwarding.md#remembered-forwards)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from podtui.core.forward_memory import ForwardMemory, PortSpec, SpecError, parse_specs
from podtui.core.paths import Paths


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("8888", (8888, 8888)),
        ("8888:9999", (8888, 9999)),
        ("8888:0", (8888, 0)),
        (" 22 ", (22, 22)),
        ("65535", (65535, 65535)),
    ],
)
def test_specs(text: str, spec: tuple[int, int]) -> None:
    parsed = PortSpec.parse(text)
    assert (parsed.remote, parsed.local) == spec
    assert PortSpec.parse(parsed.text) == parsed


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("0", "the pod's port must be from 1 to 65535, not 0"),
        ("65536", "the pod's port must be from 1 to 65535, not 65536"),
        ("8888:70000", "the local port must be from 0 to 65535, not 70000"),
        ("http", "not REMOTE[:LOCAL]: the pod's port must be a number"),
        ("8888:", "the local port must be a number"),
        (":8888", "the pod's port must be a number"),
        ("-1", "the pod's port must be a number"),
        ("8888:99:1", "the local port must be a number"),
        ("٨٨٨٨", "the pod's port must be a number"),  # digits, but not ASCII ones
        ("\x1b[2J", "'\\\\x1b[2J'"),  # said harmlessly
    ],
)
def test_spec_mistakes_are_said(text: str, said: str) -> None:
    with pytest.raises(SpecError) as e:
        PortSpec.parse(text)
    assert said in str(e.value)


def test_one_local_port_twice_is_refused() -> None:
    with pytest.raises(SpecError, match="local port 8888 is asked for twice"):
        parse_specs(["8888", "9999:8888"])
    assert [s.local for s in parse_specs(["8888:0", "9999:0"])] == [0, 0]  # any free port, twice: fine


def test_remembered_per_pod_in_a_private_file(paths: Paths) -> None:
    memory = ForwardMemory.for_paths(paths)
    assert memory.path == paths.data_dir / "forwards.json"
    assert memory.load() == {} and memory.warning is None  # no file yet
    memory.remember("llama-lora-3090", [PortSpec(8888, 8888), PortSpec(6006, 0)])
    memory.remember("eval-a100", [PortSpec(7860, 7860)])
    memory.remember("llama-lora-3090", [PortSpec(8888, 9000)])  # the same pod port again: replaced
    assert stat.S_IMODE(memory.path.stat().st_mode) == 0o600
    again = ForwardMemory.for_paths(paths)
    assert again.for_pod("llama-lora-3090") == [PortSpec(6006, 0), PortSpec(8888, 9000)]
    assert again.for_pod("eval-a100") == [PortSpec(7860, 7860)]
    assert again.for_pod("nobody") == []
    again.forget("llama-lora-3090", 6006)
    assert again.for_pod("llama-lora-3090") == [PortSpec(8888, 9000)]
    again.forget("eval-a100")
    assert set(again.load()) == {"llama-lora-3090"}
    assert not [p for p in memory.path.parent.iterdir() if p.name.endswith(".tmp")]  # written whole, then renamed


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"\xff\xfe",
        b"[1, 2]",
        b'{"pods": ["a"]}',
        b"",
    ],
)
def test_a_damaged_file_is_ignored_with_a_warning(paths: Paths, content: bytes) -> None:
    memory = ForwardMemory.for_paths(paths)
    memory.path.parent.mkdir(parents=True)
    memory.path.write_bytes(content)
    assert memory.load() == {}
    assert memory.warning is not None and "ignored" in memory.warning and str(memory.path) in memory.warning
    memory.remember("pod", [PortSpec(8888, 8888)])  # the next save replaces it
    assert ForwardMemory.for_paths(paths).for_pod("pod") == [PortSpec(8888, 8888)]


def test_a_bad_entry_is_skipped_and_the_rest_kept(paths: Paths) -> None:
    memory = ForwardMemory.for_paths(paths)
    memory.path.parent.mkdir(parents=True)
    pods = {
        "good": [{"remote": 8888, "local": 0}],
        "out-of-range": [{"remote": 70000, "local": 1}],
        "wrong-type": [{"remote": "8888", "local": 1}],
        "a-bool": [{"remote": True, "local": 1}],
        "not-a-list": {"remote": 1},
    }
    memory.path.write_text(json.dumps({"version": 1, "pods": pods}))
    assert memory.load() == {"good": [PortSpec(8888, 0)]}
    assert memory.warning is not None and "4 pod entries in it could not be read" in memory.warning


def test_a_fifo_is_never_opened(paths: Paths) -> None:
    memory = ForwardMemory.for_paths(paths)
    memory.path.parent.mkdir(parents=True)
    os.mkfifo(memory.path)  # opening it to read would wait for a writer forever
    assert memory.load() == {}
    assert memory.warning is not None and "FIFO" in memory.warning


def test_a_folder_that_cannot_be_written_is_an_oserror(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    memory = ForwardMemory(blocked / "forwards.json")  # its folder would be a file
    with pytest.raises(OSError):
        memory.remember("pod", [PortSpec(1, 1)])
