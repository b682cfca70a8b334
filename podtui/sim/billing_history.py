"""A past for a simulated account: a month of earlier pod runs, the current pods' own runs since they were made,
and the network volumes' storage since they were made, written into the world's usage record (billing.py) so that
REST v2's billing routes answer what a real user's month looks like (docs/spend.md#the-simulators-billing).

Everything comes from the world's seed and the day the clock is on: the same seed and day give the same past. The
runs are billed with the same rates the World bills now (billing.pod_rates), and the past ends where the World's
own billing begins (World.billed_until), so the record runs on without a gap or an overlap. The balance is not
touched: it is what the account holds now, after that past.
"""

from __future__ import annotations

import calendar
import dataclasses
import random
import string
import time
from dataclasses import dataclass
from typing import Literal

from podtui.sim import billing
from podtui.sim.sim_pod import SimPod
from podtui.sim.volumes import SimVolume
from podtui.sim.world import World

DAY = 86400.0
HOUR = 3600.0
DAYS = 30  # how far back the earlier pods go
Story = Literal["long", "short", "sessions", "overnight"]


@dataclass(frozen=True)
class PastPod:
    """A pod the account had earlier this month and terminated."""

    name: str
    gpu_type: str  # a GPU's display name, or a CPU flavour
    gpu_count: int  # 0: a CPU pod
    cost_per_hr: float
    story: Story  # a long fine-tune, a short experiment, work sessions over days, left running overnight
    container_disk_gb: int = 20
    volume_gb: int = 50


# Names and GPUs of the kind a fine-tuning user rents (prices as demo.GPU_PRICES, docs/runpod-facts.md#choosing-a-gpu)
PAST_PODS = (
    PastPod("llama3-8b-sft", "A100 80GB PCIe", 1, 1.64, "long", 40, 100),
    PastPod("mistral-7b-dpo", "H100 80GB HBM3", 1, 2.99, "long", 40, 100),
    PastPod("whisper-ft-a5000", "RTX A5000", 1, 0.27, "long"),
    PastPod("qwen2-lora-4090", "RTX 4090", 1, 0.40, "sessions"),
    PastPod("llama-lora-3090-v1", "RTX 3090", 1, 0.22, "sessions"),
    PastPod("jupyter-4090", "RTX 4090", 1, 0.40, "overnight"),
    PastPod("sdxl-try-3090", "RTX 3090", 1, 0.22, "short"),
    PastPod("vllm-bench-l40s", "L40S", 1, 0.86, "short"),
    PastPod("eval-harness-a100", "A100 80GB PCIe", 1, 1.64, "short"),
    PastPod("sweep-pilot-h100x2", "H100 80GB HBM3", 2, 5.98, "short", 50, 200),
    PastPod("gemma-2b-sft-3090", "RTX 3090", 1, 0.22, "short"),
    PastPod("llava-eval-4090", "RTX 4090", 1, 0.40, "short"),
    PastPod("flux-lora-a5000", "RTX A5000", 1, 0.27, "long"),
    PastPod("tokenize-cpu", "cpu3c", 0, 0.24, "short", 20, 0),
)
# a volume the account made for a while and deleted: still in billing, by id
SCRATCH_GB = 40


def give_past(world: World, days: int = DAYS, past_pods: tuple[PastPod, ...] = PAST_PODS) -> None:
    """Write the account's past into `world`'s usage record, up to where the World's own billing starts: `past_pods`
    over the last `days` days (each account its own list and length of month)."""
    with world.lock:
        until = world.billed_until
        rng = random.Random(f"billing-history:{world.seed}:{int(until // DAY)}")
        today = until - until % DAY
        for pod in sorted(world.pods.values(), key=lambda p: p.id):
            _current_pod(world.usage, pod, until, rng)
        for past in past_pods:
            _past_pod(world.usage, past, today, until, days, rng)
        for volume in sorted(world.volumes.values(), key=lambda v: v.id):
            _volume(world.usage, volume, today, until, rng)
        scratch = SimVolume(_id(rng, 10), "scratch", SCRATCH_GB, "EU-RO-1")
        made = today - rng.randint(days * 2 // 3, days - 2) * DAY + rng.uniform(9, 18) * HOUR
        world.usage.volume_phase(scratch, made, min(until, made + rng.uniform(5, 9) * DAY))


def _id(rng: random.Random, length: int) -> str:
    return "".join(rng.choices(string.ascii_lowercase + string.digits, k=length))


def _phase(usage: billing.Usage, pod: SimPod, status: str, start: float, end: float) -> None:
    usage.pod_phase(dataclasses.replace(pod, status=status), start, end)


def stopped_at(pod: SimPod) -> float | None:
    """When an exited pod stopped, read from its lastStatusChange ("Exited by user: Sat Nov 28 2026 ...")."""
    _, _, text = pod.last_status_change.partition(": ")
    try:
        return float(calendar.timegm(time.strptime(text, "%a %b %d %Y %H:%M:%S GMT+0000 (Coordinated Universal Time)")))
    except ValueError:
        return None


def _current_pod(usage: billing.Usage, pod: SimPod, until: float, rng: random.Random) -> None:
    """A pod the account has now, billed since it was made: running since its run began; a stopped one ran from
    when it was made, stopped, ran again from its last start until it stopped, and has kept its volume since."""
    made = pod.created_at if pod.created_at is not None else until
    if pod.status in billing.BILLED and pod.started_at is not None:
        if made < pod.started_at:
            _phase(usage, pod, "EXITED", made, pod.started_at)
        _phase(usage, pod, pod.status, min(pod.started_at, until), until)
    elif pod.status in billing.STOPPED and pod.last_started_at is not None and made < until:
        last = min(pod.last_started_at, until)
        stopped = stopped_at(pod)
        if stopped is None or not last < stopped <= until:
            stopped = min(until, last + rng.uniform(2, 10) * HOUR)
        if made < last:
            first_end = min(last, made + rng.uniform(2, 6) * HOUR)
            _phase(usage, pod, "RUNNING", made, first_end)
            _phase(usage, pod, pod.status, first_end, last)
        _phase(usage, pod, "RUNNING", last, stopped)
        _phase(usage, pod, pod.status, stopped, until)


def _runs(story: Story, day: float, rng: random.Random) -> tuple[list[tuple[float, float]], float]:
    """The runs (start, end) of a pod whose story begins on `day`, and how long it was kept stopped afterwards."""
    if story == "long":  # a fine-tune started in the morning, through the night: checkpoints kept a day or two
        start = day + rng.uniform(8, 14) * HOUR
        return [(start, start + rng.uniform(9, 20) * HOUR)], rng.uniform(8, 40) * HOUR
    if story == "overnight":  # a notebook left running from the evening until the next morning
        start = day + rng.uniform(17, 21) * HOUR
        return [(start, day + DAY + rng.uniform(8, 10.5) * HOUR)], 0.0
    if story == "sessions":  # a few working sessions on consecutive days, stopped between them
        runs = []
        for i in range(rng.randint(2, 4)):
            start = day + i * DAY + rng.uniform(9, 15) * HOUR
            runs.append((start, start + rng.uniform(1, 5) * HOUR))
        return runs, rng.uniform(2, 20) * HOUR
    start = day + rng.uniform(9, 19) * HOUR  # an experiment of an afternoon, terminated when done
    return [(start, start + rng.uniform(0.3, 3) * HOUR)], 0.0


def _past_pod(usage: billing.Usage, past: PastPod, today: float, until: float, days: int, rng: random.Random) -> None:
    day = today - rng.randint(2 if past.story == "short" else 4, days - 1) * DAY
    runs, kept = _runs(past.story, day, rng)
    pod = SimPod(
        id=_id(rng, 14),
        name=past.name,
        gpu_type=past.gpu_type,
        gpu_count=past.gpu_count,
        cost_per_hr=past.cost_per_hr,
        container_disk_gb=past.container_disk_gb,
        volume_gb=past.volume_gb,
        cpu_flavor=past.gpu_type if not past.gpu_count else None,
    )
    ends = [*(s for s, _ in runs[1:]), runs[-1][1] + kept]
    for (start, end), next_start in zip(runs, ends, strict=True):
        if start >= until:
            return
        _phase(usage, pod, "RUNNING", start, min(end, until))
        _phase(usage, pod, "EXITED", min(end, until), min(next_start, until))


def _volume(usage: billing.Usage, volume: SimVolume, today: float, until: float, rng: random.Random) -> None:
    """Billed since it was made, some weeks ago; a large one was made at half its size and grown since."""
    made = min(until, today - rng.randint(10, 40) * DAY + rng.uniform(9, 19) * HOUR)
    if volume.size_gb >= 100 and rng.random() < 0.7:
        grown = rng.uniform(made, until)
        usage.volume_phase(dataclasses.replace(volume, size_gb=max(10, volume.size_gb // 2)), made, grown)
        made = grown
    usage.volume_phase(volume, made, until)
