"""The simulated world kept in a folder (podtui/sim/state.py): saved whole and private, loaded as it was (times moved
on by how long no simulator ran), a file it cannot read refused and left alone, one simulator per folder. No client
here: the World and the files directly."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from podtui.sim.clock import SimClock
from podtui.sim.demo import SCREENSHOT_EPOCH, demo_world
from podtui.sim.state import StateError, StateFolder, WorldKeeper, world_from_record, world_record
from podtui.sim.world import RESUME_NO_GPUS, SimError, World
from tests.helpers.sim import DEMO_IDS

SPEC = {"gpuTypeId": "NVIDIA GeForce RTX 3090", "gpuCount": 2, "imageName": "runpod/pytorch:2.4.0", "name": "mine"}


def reloaded(world: World, later_s: float = 0.0) -> World:
    """`world` saved, and loaded `later_s` after."""
    record = json.loads(json.dumps(world_record(world)))
    return world_from_record(record, SimClock(start=record["saved_at"] + later_s, frozen=True))


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_world_comes_back_as_it_was_saved() -> None:
    world = demo_world()
    world.set_pub_key("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHsim tester")
    world.spend_limit = 42.0
    world.stop(DEMO_IDS["train"])
    back = reloaded(world)
    assert {p.id: dataclasses.asdict(p) for p in back.pods.values()} == {
        p.id: dataclasses.asdict(p) for p in world.pods.values()
    }
    assert back.pods[DEMO_IDS["train"]].status == "EXITED"
    assert back.pub_key == world.pub_key and back.spend_limit == 42.0
    assert back.balance == pytest.approx(world.balance, abs=1e-3)


def test_the_world_stands_still_while_no_simulator_runs() -> None:
    world = demo_world(SimClock(start=SCREENSHOT_EPOCH, frozen=True))
    pod = world.pods[DEMO_IDS["train"]]
    uptime = world.clock.now() - (pod.started_at or 0)
    balance = world.balance
    back = reloaded(world, later_s=3 * 86400)  # three days off
    again = back.pods[DEMO_IDS["train"]]
    assert back.clock.now() - (again.started_at or 0) == pytest.approx(uptime)
    back.advance()
    assert back.balance == pytest.approx(balance, abs=0.01)  # three days of every pod's burn would be far more
    assert back.pods[DEMO_IDS["starting"]].status == "CREATED"  # still booting, not booted long ago


def test_the_gpus_a_stopped_pod_gave_back_are_still_others_after_a_restart() -> None:
    world = World(balance=100.0, spend_limit=100.0)
    pod = world.create(SPEC)
    world.stop(pod.id)
    gpu = world.gpu_types[SPEC["gpuTypeId"]]
    free = dict(gpu.free)
    back = reloaded(world)
    assert dict(back.gpu_types[SPEC["gpuTypeId"]].free) == free and back.gpu_types[gpu.id].stock == gpu.stock
    centre = world.pods[pod.id].location
    took = back.gpu_types[gpu.id].free_in("COMMUNITY", centre)
    back.gpu_types[gpu.id].take("COMMUNITY", centre, took)  # rented to others meanwhile
    with pytest.raises(SimError, match=RESUME_NO_GPUS):
        back.resume(pod.id, 2)


def test_a_pod_with_direct_ssh_keeps_it_when_its_sshd_was_not_listening() -> None:
    world = demo_world()
    pod = world.pods[DEMO_IDS["train"]]
    pod.direct_ssh_port = None  # a simulator clears it until the pod's sshd listens
    back = world_from_record(json.loads(json.dumps(world_record(world, direct={pod.id}))))
    assert back.pods[pod.id].direct_ssh_port is not None
    assert back.pods[DEMO_IDS["idle"]].direct_ssh_port is None  # the gateway's pod stays the gateway's


def test_saved_files_are_private_and_the_key_stays(tmp_path: Path) -> None:
    folder = StateFolder(tmp_path / "state").open()
    try:
        assert folder.load_world() is None
        key = folder.api_key()
        folder.save_world(demo_world())
        assert mode(folder.world_file) == 0o600 and mode(folder.key_file) == 0o600
        assert mode(folder.folder) == 0o700
        assert folder.api_key() == key
        loaded = folder.load_world()
        assert loaded is not None and set(loaded.pods) == set(DEMO_IDS.values())
        assert [p.name for p in folder.folder.iterdir() if p.name.startswith(".")] == []  # no temporary left
    finally:
        folder.close()


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[]",
        '{"version": 99}',
        "",
        pytest.param("corrupt-pod", id="a pod's field of the wrong type"),
        pytest.param("missing-pod-field", id="a pod without its name"),
        pytest.param("path-id", id="a pod id that is a path"),
        pytest.param("huge-time", id="a time past any date"),
        pytest.param("nan-time", id="a time that is not a number"),
    ],
)
def test_a_world_it_cannot_read_is_refused_and_left_as_it_is(tmp_path: Path, text: str) -> None:
    folder = StateFolder(tmp_path / "state").open()
    try:
        if text in ("corrupt-pod", "missing-pod-field", "path-id", "huge-time", "nan-time"):
            record = world_record(demo_world())
            first = record["pods"][0]
            if text == "corrupt-pod":
                first["gpu_count"] = "two"
            elif text == "missing-pod-field":
                del first["name"]
            elif text == "path-id":
                first["id"] = "../../etc"  # it names the pod's folder
            else:
                first["created_at"] = 1e308 if text == "huge-time" else float("nan")
            text = json.dumps(record)
        folder.world_file.write_text(text)
        with pytest.raises(StateError, match=r"world\.json is not a simulated world.*left as it is"):
            folder.load_world()
        assert folder.world_file.read_text() == text
    finally:
        folder.close()


def test_a_fifo_in_place_of_the_world_is_refused_without_waiting(tmp_path: Path) -> None:
    folder = StateFolder(tmp_path / "state").open()
    try:
        os.mkfifo(folder.world_file)
        with pytest.raises(StateError, match="not a regular file"):
            folder.load_world()
    finally:
        folder.close()


def test_a_key_file_that_holds_no_key_is_refused_and_left(tmp_path: Path) -> None:
    folder = StateFolder(tmp_path / "state").open()
    try:
        folder.key_file.write_text("not a key at all\n")
        with pytest.raises(StateError, match="does not hold an API key"):
            folder.api_key()
        assert folder.key_file.read_text() == "not a key at all\n"
    finally:
        folder.close()


def test_one_simulator_per_folder(tmp_path: Path) -> None:
    first = StateFolder(tmp_path / "state").open()
    try:
        with pytest.raises(StateError, match="another podtui sim"):
            StateFolder(tmp_path / "state").open()
    finally:
        first.close()
    StateFolder(tmp_path / "state").open().close()  # free again once the first let go


def test_a_state_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("mine")
    with pytest.raises(StateError, match="is not a folder"):
        StateFolder(tmp_path / "state").open()


def test_the_keeper_saves_a_change_at_once_and_the_last_state_when_it_stops(tmp_path: Path) -> None:
    folder = StateFolder(tmp_path / "state").open()
    world = demo_world()
    keeper = WorldKeeper(world, folder, every_s=3600).start()  # nothing periodic within this test

    def saved_status(pod_id: str) -> str:
        pods = json.loads(folder.world_file.read_text())["pods"]
        return str(next(p["status"] for p in pods if p["id"] == pod_id))

    try:
        assert saved_status(DEMO_IDS["train"]) == "RUNNING"
        world.stop(DEMO_IDS["train"])  # announced: saved without waiting for the period
        end = time.monotonic() + 10
        while saved_status(DEMO_IDS["train"]) != "EXITED":
            assert time.monotonic() < end, "the stop was not saved"
            time.sleep(0.05)
        world.pods[DEMO_IDS["idle"]].name = "renamed"  # not announced: saved by the last save
    finally:
        keeper.stop()
        folder.close()
    names = {p["id"]: p["name"] for p in json.loads(folder.world_file.read_text())["pods"]}
    assert names[DEMO_IDS["idle"]] == "renamed"
    assert mode(folder.world_file) == 0o600


def test_the_folders_of_pods_that_are_gone_go_and_nothing_else(tmp_path: Path) -> None:
    folder = StateFolder(tmp_path / "state").open()
    world = demo_world()
    world.terminate(DEMO_IDS["bursty"])
    pods = folder.folder / "pods"
    try:
        for name in (DEMO_IDS["train"], DEMO_IDS["bursty"], "gone0000000000"):
            for sub in ("workspace", ".rootfs"):
                (pods / name / sub).mkdir(parents=True)
        (pods / "notes").mkdir()  # not laid out as a pod's: not the simulator's to remove
        assert folder.forget_gone_pods(world) == sorted([DEMO_IDS["bursty"], "gone0000000000"])
        assert sorted(p.name for p in pods.iterdir()) == sorted([DEMO_IDS["train"], "notes"])
    finally:
        folder.close()


def test_volumes_templates_secrets_and_stock_come_back() -> None:
    world = demo_world(restart_s=4.0)
    world.secrets["extra"] = "s3cret"
    world.volumes["d8k2x9m4qa"].size_gb = 300
    world.templates["lt7r2m9x4k"].env["NEW"] = "1"
    pod = world.create(SPEC | {"dataCenterIds": ["EU-SE-1"]})
    back = reloaded(world)
    assert back.secrets == world.secrets and back.restart_s == 4.0
    assert back.volumes == world.volumes and back.templates == world.templates
    gpu = back.gpu_types[SPEC["gpuTypeId"]]
    assert gpu.stock == world.gpu_types[SPEC["gpuTypeId"]].stock and gpu.free_in("COMMUNITY", "EU-SE-1") == 14
    assert back.pods[pod.id].location == "EU-SE-1"
    back.stop(pod.id)
    assert gpu.free_in("COMMUNITY", "EU-SE-1") == 16  # given back where it was taken


def test_a_world_saved_before_volumes_and_data_centres_is_read() -> None:
    record = json.loads(json.dumps(world_record(demo_world())))
    for kind in ("secrets", "volumes", "templates", "restart_s"):
        del record[kind]
    record["market"] = {"NVIDIA GeForce RTX 3090": {"COMMUNITY": 60, "SECURE": 16}}  # totals per cloud
    back = world_from_record(record)
    assert back.volumes == {} and back.templates == {} and back.secrets == {} and back.restart_s == 0
    assert dict(back.gpu_types["NVIDIA GeForce RTX 3090"].free) == {"COMMUNITY": 60, "SECURE": 16}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"secrets": {"a": 1}}, "'secrets'"),
        ({"volumes": {"id": "x"}}, "'volumes'"),
        ({"volumes": [{"id": "x", "name": "n", "size_gb": "big", "data_centre": "EU-RO-1"}]}, "volumes 0"),
        ({"volumes": [{"id": "x", "name": "n", "data_centre": "EU-RO-1"}]}, "incomplete"),
        ({"volumes": [{"id": "x", "name": "n", "size_gb": 10, "data_centre": "MOON-1"}]}, "no data center"),
        ({"templates": [{"id": "t", "name": "n", "image": "i", "env": {"A": 2}}]}, "templates 0"),
        ({"templates": [{"id": "t", "name": "n", "image": "i"}, {"id": "t", "name": "m", "image": "i"}]}, "twice"),
        ({"market": {"NVIDIA GeForce RTX 3090": {"COMMUNITY": {"EU-RO-1": "x"}}}}, "wrong type"),
        ({"restart_s": -1}, "'restart_s'"),
    ],
)
def test_a_bad_account_record_is_refused_in_words(change: dict[str, Any], said: str) -> None:
    record = json.loads(json.dumps(world_record(demo_world()))) | change
    with pytest.raises(StateError, match=re.escape(said)):
        world_from_record(record)
