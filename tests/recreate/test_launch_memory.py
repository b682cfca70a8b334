"""What podtui remembers of each pod's launch: the spec read from RunPod's record, credential-looking values never
written (their keys kept) and other values kept even under a key that merely contains KEY or TOKEN, the file 0600,
capped to what can be read back, one memory per file in a process (a forget is not undone by a poll's remember), a
bad file ignored with a warning and replaced, the demo's kept in memory only; and a remembered spec made whole again
from this machine's environment or secret references."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from podtui.core import launch_memory
from podtui.core.api import RunPodApi
from podtui.core.demo_sandbox import SANDBOX_ENV
from podtui.core.gpu import Cloud
from podtui.core.launch_memory import LaunchMemory, NotLaunchable, record_of, spec_of
from podtui.core.paths import Paths
from podtui.core.pod import Pod, PodStatus
from podtui.core.services import Services
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp

TOKEN = "hf_abcdefghijklmnopqrstuvwxyz0123"


def _from_file(paths: Paths) -> tuple[launch_memory.LaunchRecord, ...]:
    """What the file holds, read by a memory of its own (for_paths shares one per file)."""
    return LaunchMemory(paths.data_dir / launch_memory.FILE_NAME).records()


def _pod(pod_id: str = "pod1", name: str = "trainer", **kw: Any) -> Pod:
    fields: dict[str, object] = {
        "id": pod_id,
        "name": name,
        "status": PodStatus.RUNNING,
        "status_raw": "RUNNING",
        "image": "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
        "gpu_count": 2,
        "gpu_name": "NVIDIA GeForce RTX 4090",
        "cloud": "SECURE",
        "container_disk_gb": 30.0,
        "volume_gb": 100.0,
        "volume_mount_path": "/workspace",
        "ports_spec": "8888/http,22/tcp",
        "env": (
            ("HF_HOME", "/workspace/hf"),
            ("HF_TOKEN", TOKEN),
            ("PUBLIC_KEY", "ssh-ed25519 AAAA"),
            (SANDBOX_ENV, "/x"),
        ),
        "location": "EU-RO-1",
        "template": "tpl1",
    }
    fields.update(kw)
    return Pod(**fields)  # type: ignore[arg-type]


def test_spec_of_a_pod() -> None:
    spec = spec_of(_pod())
    assert (spec.name, spec.gpu_type_id, spec.gpu_count, spec.cloud) == (
        "trainer",
        "NVIDIA GeForce RTX 4090",
        2,
        Cloud.SECURE,
    )
    assert (spec.container_gb, spec.volume_gb, spec.volume_mount_path) == (30, 100, "/workspace")
    assert spec.ports == "8888/http,22/tcp" and spec.template_id == "tpl1"
    assert spec.env == (("HF_HOME", "/workspace/hf"), ("HF_TOKEN", TOKEN))  # live values; RunPod's own left out
    assert spec.data_centre_ids == () and spec.network_volume_id is None  # RunPod may place it anywhere
    spec.validate()


def test_a_pod_on_a_network_volume_stays_in_its_data_centre() -> None:
    spec = spec_of(_pod(network_volume="vol1", volume_gb=None, volume_mount_path="/data"))
    assert spec.network_volume_id == "vol1" and spec.volume_gb == 0 and spec.volume_mount_path == "/data"
    assert spec.data_centre_ids == ("EU-RO-1",)
    spec.validate()


@pytest.mark.parametrize(
    ("kw", "said"),
    [({"gpu_count": 0}, "CPU pod"), ({"gpu_name": None}, "which GPU"), ({"image": None}, "which image")],
)
def test_what_podtui_cannot_launch_is_said(kw: dict[str, Any], said: str) -> None:
    with pytest.raises(NotLaunchable, match=said):
        spec_of(_pod(**kw))


def test_a_record_keeps_no_credential_only_its_key() -> None:
    record = record_of(_pod(), 1000.0)
    assert record.spec.env == (("HF_HOME", "/workspace/hf"),) and record.secret_keys == ("HF_TOKEN",)
    assert record.data_centre == "EU-RO-1" and record.status == "RUNNING"


def test_a_record_made_whole_again() -> None:
    record = record_of(_pod(), 1000.0)
    spec, said = record.launch_spec("env", {"HF_TOKEN": "hf_fromhere"})
    assert dict(spec.env) == {"HF_HOME": "/workspace/hf", "HF_TOKEN": "hf_fromhere"}
    assert said == ("HF_TOKEN from this machine's environment",)
    spec, said = record.launch_spec("env", {})
    assert dict(spec.env) == {"HF_HOME": "/workspace/hf"} and said == ("HF_TOKEN left out (not set here)",)
    spec, _ = record.launch_spec("reference", {"HF_TOKEN": "ignored"})
    assert dict(spec.env)["HF_TOKEN"] == "{{ RUNPOD_SECRET_hf_token }}"
    spec, said = record.launch_spec("omit", {"HF_TOKEN": "x"})
    assert "HF_TOKEN" not in dict(spec.env) and said == ("HF_TOKEN left out (--secrets omit)",)


def test_the_file_is_private_and_holds_no_credential(paths: Paths) -> None:
    memory = LaunchMemory.for_paths(paths)
    assert memory.remember([_pod(), _pod("pod2", "other", gpu_count=0)], 1000.0)
    text = memory.path.read_text()  # type: ignore[union-attr]
    assert TOKEN not in text and "HF_TOKEN" in text
    assert stat.S_IMODE(os.stat(memory.path).st_mode) == 0o600  # type: ignore[arg-type]
    again = _from_file(paths)
    assert [r.pod_id for r in again] == ["pod1"]  # the CPU pod cannot be launched by podtui: passed over
    assert again[0] == record_of(_pod(), 1000.0)


def test_newest_first_find_and_forget(paths: Paths) -> None:
    memory = LaunchMemory.for_paths(paths)
    memory.remember([_pod("a", "first")], 100.0)
    memory.remember([_pod("b", "second"), _pod("c", "first")], 200.0)
    assert [r.pod_id for r in memory.records()] == ["c", "b", "a"]
    assert memory.find("a").name == "first" and memory.find("first").pod_id == "c"  # by name: the one seen last
    with pytest.raises(LookupError, match="podtui remembers no pod called or with the id 'zzz'"):
        memory.find("zzz")
    assert memory.forget("c").pod_id == "c"
    assert [r.pod_id for r in _from_file(paths)] == ["b", "a"]


def test_nothing_new_writes_nothing(paths: Paths) -> None:
    memory = LaunchMemory.for_paths(paths)
    assert memory.remember([_pod()], 1000.0)
    assert not memory.remember([_pod()], 1060.0)  # a minute later, unchanged
    assert memory.remember([_pod(status_raw="EXITED", status=PodStatus.EXITED)], 1120.0)  # its status changed
    assert memory.remember([_pod(status_raw="EXITED", status=PodStatus.EXITED)], 1120.0 + 3601)  # an hour later


def test_capped_to_the_pods_seen_last(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch_memory, "MAX_PODS", 3)
    memory = LaunchMemory.for_paths(paths)
    for n in range(5):
        memory.remember([_pod(f"p{n}", f"pod-{n}")], 100.0 + n)
    assert [r.pod_id for r in _from_file(paths)] == ["p4", "p3", "p2"]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"{not json", "it is not JSON"),
        (b'{"pods": {}}', 'it has no "pods" list'),
        (b"\xff\xfe", "it is not JSON"),
    ],
)
def test_an_unreadable_file_is_ignored_with_a_warning_and_replaced(paths: Paths, content: bytes, said: str) -> None:
    path = paths.data_dir / launch_memory.FILE_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    memory = LaunchMemory.for_paths(paths)
    assert memory.records() == ()
    assert memory.warning is not None and said in memory.warning
    memory.remember([_pod()], 1.0)
    assert [r.pod_id for r in _from_file(paths)] == ["pod1"]


def test_entries_that_cannot_be_read_are_skipped_and_said(paths: Paths) -> None:
    memory = LaunchMemory.for_paths(paths)
    memory.remember([_pod()], 1.0)
    assert memory.path is not None
    data = json.loads(memory.path.read_text())
    good = data["pods"][0]
    data["pods"] += [{"pod_id": "x"}, "junk", {**good, "pod_id": "y", "spec": {**good["spec"], "gpu_count": "2"}}]
    memory.path.write_text(json.dumps(data))
    fresh = LaunchMemory(memory.path)
    assert [r.pod_id for r in fresh.records()] == ["pod1"]
    assert fresh.warning is not None and "3 entries in it could not be read" in fresh.warning


def test_a_folder_in_its_place_is_refused_in_words(paths: Paths) -> None:
    path = paths.data_dir / launch_memory.FILE_NAME
    path.mkdir(parents=True)
    memory = LaunchMemory.for_paths(paths)
    assert memory.records() == ()
    assert memory.warning is not None and "ignored" in memory.warning
    trouble = launch_memory.remember_quietly(memory, [_pod()], 1.0)
    assert trouble is not None and "could not remember" in trouble


def test_the_demo_remembers_in_memory_only(paths: Paths, tmp_path: Path) -> None:
    api: RunPodApi = object()  # type: ignore[assignment]  # never called
    demo = Services(api, paths=paths, demo=True)
    memory = LaunchMemory.for_services(demo)
    assert memory.path is None and LaunchMemory.for_services(demo) is memory
    memory.remember([_pod()], 1.0)
    assert [r.pod_id for r in LaunchMemory.for_services(demo).records()] == ["pod1"]
    assert not (paths.data_dir / launch_memory.FILE_NAME).exists()
    other = Services(api, paths=paths, demo=True)
    assert LaunchMemory.for_services(other).records() == ()  # another run of the demo starts afresh
    real = LaunchMemory.for_services(Services(api, paths=paths))
    assert real.path == paths.data_dir / launch_memory.FILE_NAME


def test_values_under_keys_that_only_contain_a_credential_word_are_kept() -> None:
    env = (
        ("TOKENIZERS_PARALLELISM", "false"),
        ("MAX_NEW_TOKENS", "512"),
        ("KEYBOARD", "us"),
        ("AUTHOR", "me"),
        ("USE_AUTH_TOKEN", "true"),
        ("HF_TOKEN", TOKEN),
        ("JUPYTER_PASSWORD", "1234"),
    )
    record = record_of(_pod(env=env), 1.0)
    assert dict(record.spec.env) == {
        "TOKENIZERS_PARALLELISM": "false",
        "MAX_NEW_TOKENS": "512",
        "KEYBOARD": "us",
        "AUTHOR": "me",
        "USE_AUTH_TOKEN": "true",
    }
    assert record.secret_keys == ("HF_TOKEN", "JUPYTER_PASSWORD")


def test_model_names_and_paths_are_kept_and_tokens_of_any_kind_are_not() -> None:
    plain = {
        "MODEL_NAME": "meta-llama/Meta-Llama-3-8B-Instruct",
        "HF_MODEL": "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
        "MODEL_PATH": "/workspace/models/llama-3-8b-instruct",
        "OUTPUT_DIR": "/workspace/outputs/run_2024_lora_final",
        "MAX_NEW_TOKENS": "512",
    }
    secret = {
        "JUPYTER_TOKEN": "12345",
        "CACHE_URL": "redis://:s3cret@cache:6379",
        "NOTE": "AKIAIOSFODNN7EXAMPLE",
        "OPENAIKEY": "abc",
    }
    record = record_of(_pod(env=tuple({**plain, **secret}.items())), 1.0)
    assert dict(record.spec.env) == plain and record.secret_keys == tuple(secret)


def test_one_memory_per_file(paths: Paths, tmp_path: Path) -> None:
    assert LaunchMemory.for_paths(paths) is LaunchMemory.for_paths(paths)
    other = Paths(config_dir=tmp_path / "c2", log_dir=tmp_path / "l2", data_dir=tmp_path / "d2")
    assert LaunchMemory.for_paths(other) is not LaunchMemory.for_paths(paths)


def test_a_forget_is_not_undone_by_a_remember_under_way(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """The app's poll remembers in a thread while the user forgets a pod in the Recreate view: whatever the order,
    the forgotten pod stays forgotten (a memory of its own per caller would write back its stale copy)."""
    LaunchMemory.for_paths(paths).remember([_pod("a", "first"), _pod("b", "second")], 100.0)
    writing, go = threading.Event(), threading.Event()
    write = launch_memory.write_private

    def slow_write(path: Path, text: str) -> None:
        if threading.current_thread().name == "poll" and not writing.is_set():
            writing.set()
            go.wait(10)
        write(path, text)

    monkeypatch.setattr(launch_memory, "write_private", slow_write)
    poll = threading.Thread(
        target=lambda: LaunchMemory.for_paths(paths).remember([_pod("c", "third")], 200.0), name="poll"
    )
    poll.start()
    assert writing.wait(10)  # the poll holds a, b and c, and is writing them
    user = threading.Thread(target=lambda: LaunchMemory.for_paths(paths).forget("a"))
    user.start()
    user.join(0.5)  # with one memory, the forget waits for the write; with two, it would be done by now
    go.set()
    poll.join(10)
    user.join(10)
    assert [r.pod_id for r in _from_file(paths)] == ["c", "b"]


def test_what_is_written_can_be_read_back(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """Big env values: the pods seen longest ago are dropped until the file fits what a read takes."""
    monkeypatch.setattr(launch_memory, "MAX_BYTES", 20_000)
    memory = LaunchMemory.for_paths(paths)
    for n in range(20):
        memory.remember([_pod(f"p{n:02}", f"pod-{n}", env=(("NOTES", "x " * 1000),))], 100.0 + n)
    memory.remember([_pod("huge", "huge", env=(("NOTES", "y " * 15_000),))], 200.0)  # too big alone
    assert memory.path is not None and memory.path.stat().st_size <= 20_000
    fresh = LaunchMemory(memory.path)
    kept = [r.pod_id for r in fresh.records()]
    assert fresh.warning is None and kept[0] == "p19" and "huge" not in kept and "p00" not in kept
    assert kept == sorted(kept, reverse=True) and len(kept) >= 5
    assert [r.pod_id for r in memory.records()] == kept  # what it holds is what was written


@pytest.mark.parametrize(
    "env",
    [
        {"my.var": "1"},  # keys RunPod takes that podtui's rule for typed keys refuses
        {"A-B": "v"},
        {"1ABC": "x"},
        {"camelCase": "x", "A": "line\nbreak", "EMPTY": ""},
        {"BIG": "x " * 20_000},  # longer than podtui sends: its key kept alone
        {"NUL": "a\0b"},
    ],
    ids=["dot", "hyphen", "digit-first", "plain", "too-long", "nul"],
)
def test_every_pod_runpod_lists_is_read_back_and_written_once(paths: Paths, env: dict[str, str]) -> None:
    """Whatever env RunPod took, the record reads back as written: else the pod would be written on every poll and
    never found by a recreate."""
    memory = LaunchMemory.for_paths(paths)
    pod = _pod(env=tuple(env.items()))
    assert memory.remember([pod], 100.0)
    assert not memory.remember([pod], 101.0)  # nothing changed: nothing written
    fresh = LaunchMemory(paths.data_dir / launch_memory.FILE_NAME)
    record = fresh.find("pod1")
    assert fresh.warning is None
    assert dict(record.spec.env) | dict.fromkeys(record.secret_keys, "?") == {
        k: (v if k not in ("BIG", "NUL") else "?") for k, v in env.items()
    }


def test_a_hand_edited_env_is_checked_for_types_nul_and_length_only(paths: Paths) -> None:
    memory = LaunchMemory.for_paths(paths)
    memory.remember([_pod()], 1.0)
    assert memory.path is not None
    data = json.loads(memory.path.read_text())
    good = data["pods"][0]
    data["pods"] = [
        {**good, "pod_id": "dots", "spec": {**good["spec"], "env": {"my.var": "1", "n": 2}}},  # 2: passed over
        {**good, "pod_id": "nul", "spec": {**good["spec"], "env": {"A": "a\u0000b"}}},
        {**good, "pod_id": "long", "spec": {**good["spec"], "env": {"A": "x" * 40_000}}},
    ]
    memory.path.write_text(json.dumps(data))
    fresh = LaunchMemory(memory.path)
    assert [r.pod_id for r in fresh.records()] == ["dots"]
    assert dict(fresh.find("dots").spec.env) == {"my.var": "1"}
    assert fresh.warning is not None and "2 entries in it could not be read" in fresh.warning


async def test_the_app_remembers_what_runpod_sent_not_the_text_made_safe_to_show(
    sim: SimApiServer, make_app: Callable[..., PodtuiApp]
) -> None:
    """The screens get escaped text (docs/architecture.md#text-from-outside); a recreate must send the value itself."""
    from tests.helpers.pilot import loaded, wait_until
    from tests.helpers.sim import DEMO_IDS

    with sim.world.lock:
        sim.world.pods[DEMO_IDS["train"]].env = {"PROMPT": "line one\nline two\tend", "HF_HOME": "/workspace/hf"}
    app = make_app()
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        memory = LaunchMemory.for_services(app.services)
        await wait_until(pilot, lambda: any(r.pod_id == DEMO_IDS["train"] for r in memory.records()))
        record = memory.find(DEMO_IDS["train"])
        assert dict(record.spec.env)["PROMPT"] == "line one\nline two\tend"
