"""The simulated market's bookkeeping: a pod's GPUs leave the pool while it runs and come back when it stops or
is terminated; a resumed pod takes them again, or is refused the way RunPod refuses when they are gone."""

from __future__ import annotations

import pytest

from podtui.sim.gpu_market import NO_STOCK
from podtui.sim.world import RESUME_NO_GPUS, SimError, World

R4090 = "NVIDIA GeForce RTX 4090"


def spec(count: int = 8) -> dict[str, object]:
    return {
        "gpuTypeId": R4090,
        "gpuCount": count,
        "cloudType": "COMMUNITY",
        "imageName": "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04",
    }


@pytest.fixture
def world() -> World:
    return World(balance=1000, spend_limit=1000)


def test_terminate_gives_the_gpus_back(world: World) -> None:
    # review: creating 8 of 10 free 4090s, terminating, then creating again was refused for lack of stock
    free = world.gpu_types[R4090].free
    assert free["COMMUNITY"] == 10
    pod = world.create(spec())
    assert free["COMMUNITY"] == 2
    world.terminate(pod.id)
    assert free["COMMUNITY"] == 10
    world.create(spec())
    assert free["COMMUNITY"] == 2


def test_stop_gives_them_back_and_resume_takes_them_again(world: World) -> None:
    free = world.gpu_types[R4090].free
    pod = world.create(spec())
    world.stop(pod.id)
    assert free["COMMUNITY"] == 10
    world.resume(pod.id, 8)
    assert free["COMMUNITY"] == 2
    world.stop(pod.id)
    world.terminate(pod.id)  # a stopped pod holds nothing: terminating it gives nothing back twice
    assert free["COMMUNITY"] == 10


def test_resume_is_refused_when_the_gpus_were_taken(world: World) -> None:
    free = world.gpu_types[R4090].free
    pod = world.create(spec())
    world.stop(pod.id)
    other = world.create(spec(4))
    with pytest.raises(SimError, match="not enough free GPUs"):
        world.resume(pod.id, 8)
    assert str(RESUME_NO_GPUS).startswith("There are not enough free GPUs")
    assert free["COMMUNITY"] == 6 and world.pods[pod.id].status == "EXITED"
    world.terminate(other.id)
    world.resume(pod.id, 8)
    assert free["COMMUNITY"] == 2
    with pytest.raises(SimError, match="no longer any instances"):
        world.create(spec(4))
    assert NO_STOCK.startswith("There are no longer")


def test_running_out_of_money_gives_the_gpus_back(world: World) -> None:
    world.create(spec())
    world.set_balance(0.0001)
    world.clock.advance(3600)
    world.advance()
    assert world.gpu_types[R4090].free["COMMUNITY"] == 10
