"""The demo account: a handful of pods in the states a RunPod user meets every day, with the network volumes,
templates and secrets such an account has (docs/runpod-facts.md#network-volumes, docs/runpod-facts.md#templates),
and a month of billing behind it (billing_history.py, docs/spend.md#the-simulators-billing)."""

from __future__ import annotations

import random
import string

from podtui.sim.billing_history import give_past
from podtui.sim.clock import SimClock
from podtui.sim.image import BROKEN_IMAGE
from podtui.sim.sim_pod import status_time
from podtui.sim.templates import SimTemplate
from podtui.sim.volumes import SimVolume
from podtui.sim.world import SimPod, World

# 2026-11-30 09:00 UTC: a fixed instant for screenshots and snapshot tests.
SCREENSHOT_EPOCH = 1796029200.0

# how long notebook-4090 ran on its last start before it was stopped: 13h14m03s
NOTEBOOK_RAN_S = 13 * 3600 + 14 * 60 + 3

# $/hr figures in line with RunPod's (3090 ~$0.22, 4090 ~$0.40, A100/H100 for 7B+): docs/runpod-facts.md#choosing-a-gpu.
GPU_PRICES = {
    "RTX 3090": 0.22,
    "RTX 4090": 0.40,
    "RTX A5000": 0.27,
    "A100 80GB PCIe": 1.64,
    "H100 80GB HBM3": 2.99,
    "L40S": 0.86,
}


def demo_pods() -> list[tuple[SimPod, float]]:
    """(pod, how long ago it started, in seconds)."""
    return [
        (
            SimPod(
                id="q7x2m9fk4r8t1a",
                name="llama-lora-3090",
                gpu_type="RTX 3090",
                gpu_count=1,
                cost_per_hr=0.22,
                pattern="training",
                host_suffix="6f3a91c2",
                direct_ssh_port=40122,
                env={
                    "HF_HOME": "/workspace/hf",
                    "HF_TOKEN": "hf_demoDemoDemoDemoDemoDemo0000",
                    "WANDB_PROJECT": "llama-lora",
                },
            ),
            2 * 3600 + 17 * 60 + 42,
        ),
        (
            SimPod(
                id="b3n8v1c6z0p5we",
                name="eval-a100",
                gpu_type="A100 80GB PCIe",
                gpu_count=1,
                cost_per_hr=1.64,
                pattern="idle",
                host_suffix="0d9e7b14",
                location="US-TX-3",
                image="runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
                network_volume="models-vol",
            ),
            5 * 3600 + 3 * 60 + 9,
        ),
        (
            SimPod(
                id="k5d0r2t9y7u3io",
                name="notebook-4090",
                gpu_type="RTX 4090",
                gpu_count=1,
                cost_per_hr=0.40,
                pattern="bursty",
                status="EXITED",
                host_suffix="a1b2c3d4",
                location="EU-RO-1",
            ),
            0,
        ),
        (
            SimPod(
                id="h1j4k8l2m6n0pq",
                name="sweep-h100x2",
                gpu_type="H100 80GB HBM3",
                gpu_count=2,
                cost_per_hr=5.98,
                pattern="training",
                status="CREATED",
                host_suffix="77e1c0aa",
                location="US-KS-2",
                volume_gb=200,
                container_disk_gb=50,
                locked=True,  # a long sweep nobody should stop by accident: REST v2 refuses stop and restart
            ),
            0,
        ),
        (
            SimPod(
                id="w9e3r5t7y1u2io",
                name="data-prep-a5000",
                gpu_type="RTX A5000",
                gpu_count=1,
                cost_per_hr=0.27,
                pattern="bursty",
                host_suffix="5c4b3a29",
                direct_ssh_port=40222,
                location="EU-SE-1",
                image=BROKEN_IMAGE,
            ),
            41 * 60 + 5,
        ),  # the doctor's bad case
    ]


def demo_volumes() -> list[SimVolume]:
    """eval-a100 works on `models` in its data centre; the other two wait for pods."""
    return [
        SimVolume("models-vol", "models", 50, "US-TX-3", "STANDARD"),
        SimVolume("d8k2x9m4qa", "datasets", 200, "EU-RO-1", "STANDARD"),
        SimVolume("c4p7n1v8ks", "checkpoints", 100, "US-KS-2", "HIGH_PERFORMANCE"),
    ]


def demo_templates() -> list[SimTemplate]:
    """Two of the account's own: a fine-tuning setup whose tokens are the account's secrets, and a vLLM server."""
    return [
        SimTemplate(
            "lt7r2m9x4k",
            "lora-finetune",
            "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
            disk=30,
            volume_gb=50,
            ports=["8888/http", "22/tcp"],
            env={
                "HF_HOME": "/workspace/hf",
                "HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}",
                "WANDB_API_KEY": "{{ RUNPOD_SECRET_wandb_key }}",
                "WANDB_PROJECT": "llama-lora",
            },
        ),
        SimTemplate(
            "vs3k8p1q6n",
            "vllm-serve",
            "vllm/vllm-openai:v0.6.3",
            args="--model Qwen/Qwen2.5-7B-Instruct --max-model-len 8192",
            disk=40,
            volume_gb=60,
            ports=["8000/http", "22/tcp"],
            env={"HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}"},
            start_jupyter=False,
        ),
    ]


# the demo account's secrets: made-up values that look like the real thing
DEMO_SECRETS = {"hf_token": "hf_demoSecretSecretSecret0000", "wandb_key": "wandb_demo_0123456789abcdef0123456789abcdef"}


def demo_world(clock: SimClock | None = None, boot_s: float = 20.0, restart_s: float = 0.0) -> World:
    """restart_s: how long a restart keeps a pod STARTING (0: at once, as the tests' worlds do)."""
    world = World(clock=clock, balance=23.87, spend_limit=80.0, boot_s=boot_s, restart_s=restart_s)
    world.volumes = {v.id: v for v in demo_volumes()}
    world.templates = {t.id: t for t in demo_templates()}
    world.secrets = dict(DEMO_SECRETS)
    # the stopped pod: made three days ago, started again two days ago and stopped that evening (on
    # SCREENSHOT_EPOCH: Sat Nov 28 at 22:14:03)
    add_pods(world, demo_pods(), made_days_ago=3, started_days_ago=2, ran_s=NOTEBOOK_RAN_S)
    give_past(world)
    return world


def add_pods(
    world: World, pods: list[tuple[SimPod, float]], made_days_ago: int, started_days_ago: int, ran_s: float
) -> None:
    """A demo account's pods on its clock: a running one started `age` seconds ago; a stopped one made and last
    started so many days ago and stopped `ran_s` after that, its status saying when from the clock, so that
    its billing history agrees on any clock."""
    now = world.clock.now()
    for pod, age in pods:
        if pod.status == "RUNNING":
            pod.started_at = now - age
        elif pod.status == "EXITED":
            pod.created_at = now - made_days_ago * 86400
            pod.last_started_at = now - started_days_ago * 86400
            pod.last_status_change = f"Exited by user: {status_time(pod.last_started_at + ran_s)}"
        world.add(pod)


def large_world(count: int, clock: SimClock | None = None, seed: int = 1) -> World:
    """Many pods, for the benchmarks: a mix of every state and pattern."""
    rng = random.Random(seed)
    world = World(clock=clock, balance=5000.0, spend_limit=10000.0)
    now = world.clock.now()
    gpus = list(GPU_PRICES)
    for i in range(count):
        gpu = rng.choice(gpus)
        n = rng.choice([1, 1, 1, 2, 4, 8])
        status = rng.choice(["RUNNING", "RUNNING", "RUNNING", "EXITED", "CREATED"])
        pid = "".join(rng.choices(string.ascii_lowercase + string.digits, k=14))
        pod = SimPod(
            id=pid,
            name=f"job-{i:04d}-{gpu.split()[0].lower()}",
            gpu_type=gpu,
            gpu_count=n,
            cost_per_hr=round(GPU_PRICES[gpu] * n, 3),
            status=status,
            pattern=rng.choice(["training", "idle", "bursty"]),
            host_suffix=f"{rng.getrandbits(32):08x}",
        )
        if status == "RUNNING":
            pod.started_at = now - rng.randrange(60, 3 * 86400)
        world.add(pod)
    return world
