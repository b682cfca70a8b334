"""The cheapest GPU types that fit a job, per cloud, in stock first, and why.

The trade-offs (docs/runpod-facts.md#choosing-a-gpu): for a small model (up to 1-2B) and LoRA, an RTX 3090 at
~$0.22/hr beats an RTX 4090 at ~$0.40/hr: both have 24 GB, the 4090's faster tensor cores save minutes, not hours
(~45% cheaper for ~5% less speed). The A100 (40/80 GB) and H100 are for fine-tuning 7B+ models; below that they
are overkill. Cost per hour decides; speed is mentioned, not priced in. Pods are on demand on either cloud: REST
v2 has no spot pods (docs/runpod-facts.md#rest-v2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from podtui.core.gpu.catalogue import Cloud, GpuCatalogue, GpuType, Stock
from podtui.core.gpu.vram import VramEstimate, params_label

Kind = Literal["community", "secure"]
KINDS: tuple[Kind, ...] = ("community", "secure")
ON_DEMAND: dict[Cloud, Kind] = {Cloud.COMMUNITY: "community", Cloud.SECURE: "secure"}
MULTI_GPU_COUNTS = (2, 4, 8)
# When one GPU is not enough, only the big cards are split: sharded training moves every weight and gradient
# between the GPUs on each step, and across many small PCIe cards that traffic, not the maths, sets the pace.
MULTI_GPU_MIN_VRAM_GB = 80
BIG_MODEL_PARAMS = 7e9  # A100/H100 pay off from 7B up (docs/runpod-facts.md#choosing-a-gpu)
TIGHT = 0.9  # more than 90% of the memory used: little room for a larger batch


@dataclass(frozen=True)
class Option:
    gpu: GpuType
    count: int
    kind: Kind
    per_gpu_hr: float
    stock: Stock
    need_gb: float

    @property
    def price_per_hr(self) -> float:
        return self.per_gpu_hr * self.count

    @property
    def vram_gb(self) -> int:
        return self.gpu.memory_gb * self.count

    @property
    def tight(self) -> bool:
        return self.need_gb > TIGHT * self.vram_gb

    @property
    def label(self) -> str:
        return f"{self.count}x {self.gpu.display_name}"

    def as_json(self) -> dict[str, object]:
        return {
            "gpu_type_id": self.gpu.id,
            "gpu": self.gpu.display_name,
            "count": self.count,
            "cloud": self.kind,
            "price_per_hr": round(self.price_per_hr, 4),
            "vram_gb": self.vram_gb,
            "stock": self.stock.value,  # RunPod's availability level, or UNKNOWN
        }


def _rank(o: Option) -> tuple[int, float, int, int]:
    # in stock first, then stock not known, then none; within each the cheapest
    return (o.stock.order, o.price_per_hr, o.count, -o.gpu.memory_gb)


@dataclass(frozen=True)
class Advice:
    need: VramEstimate
    by_kind: dict[Kind, tuple[Option, ...]]
    best: Option | None  # the cheapest option in stock (or, failing that, at all)
    explanation: tuple[str, ...] = field(default=())

    @property
    def recommended_ids(self) -> set[str]:
        """GPU types worth highlighting: the best and the runners-up within 25% of its price."""
        if self.best is None:
            return set()
        limit = self.best.price_per_hr * 1.25
        return {
            o.gpu.id
            for kind in ON_DEMAND.values()
            for o in self.by_kind[kind]
            if o.stock.available and o.price_per_hr <= limit
        }

    def option_for(self, gpu_id: str) -> Option | None:
        """The advised way to use this GPU type for the job: its count and its cheapest cloud (in stock first);
        None when it does not fit."""
        if self.best is not None and self.best.gpu.id == gpu_id:
            return self.best
        mine = [o for kind in ON_DEMAND.values() for o in self.by_kind[kind] if o.gpu.id == gpu_id]
        return min(mine, key=_rank) if mine else None

    def count_for(self, gpu_id: str) -> int | None:
        """GPUs of this type one pod needs for the job (None: it does not fit)."""
        option = self.option_for(gpu_id)
        return option.count if option is not None else None


def count_needed(gpu: GpuType, need_gb: float, count: int | None = None) -> int | None:
    """How many of this GPU the job needs on one pod, or None when it cannot fit."""
    cap = gpu.max_count or 8
    if count is not None:
        return count if count <= cap and need_gb <= gpu.memory_gb * count else None
    if need_gb <= gpu.memory_gb:
        return 1
    if gpu.memory_gb < MULTI_GPU_MIN_VRAM_GB:
        return None
    return next((n for n in MULTI_GPU_COUNTS if n <= cap and need_gb <= gpu.memory_gb * n), None)


def options(catalogue: GpuCatalogue, need: VramEstimate, count: int | None = None) -> dict[Kind, tuple[Option, ...]]:
    out: dict[Kind, list[Option]] = {k: [] for k in KINDS}
    for gpu in catalogue.types:
        n = count_needed(gpu, need.total_gb, count)
        if n is None:
            continue
        for cloud, kind in ON_DEMAND.items():
            price = gpu.price(cloud)
            if price is not None:
                out[kind].append(Option(gpu, n, kind, price, gpu.stock_for(cloud, n), need.total_gb))
    return {k: tuple(sorted(v, key=_rank)) for k, v in out.items()}


def advise(catalogue: GpuCatalogue, need: VramEstimate, count: int | None = None) -> Advice:
    by_kind = options(catalogue, need, count)
    on_demand = sorted(by_kind["community"] + by_kind["secure"], key=_rank)
    best = on_demand[0] if on_demand else None
    return Advice(need, by_kind, best, tuple(_explain(need, by_kind, on_demand, best, count)))


def _money(per_hr: float) -> str:
    return f"${per_hr:.2f}/hr"


def _explain(
    need: VramEstimate,
    by_kind: dict[Kind, tuple[Option, ...]],
    on_demand: list[Option],
    best: Option | None,
    count: int | None,
) -> list[str]:
    lines = [f"{need.title} needs about {need.total_gb:.1f} GB of GPU memory."]
    if best is None:
        what = f"{count} GPUs" if count else "one pod (up to 8 GPUs)"
        lines.append(
            f"Nothing on RunPod's list fits that in {what}. "
            + (
                "Try QLoRA (4-bit base weights) or a smaller model."
                if need.method.trains
                else "Try 8-bit or 4-bit weights, or a smaller model."
            )
        )
        return lines
    stock = (
        ""
        if best.stock.available
        else " (RunPod did not say whether it is free right now)"
        if best.stock is Stock.UNKNOWN
        else " (no GPU of any fitting type is free right now: this one has no stock)"
    )
    lines.append(
        f"Cheapest that fits: {best.label} ({best.vram_gb} GB) on {best.kind} cloud at "
        f"{_money(best.price_per_hr)}, {_money(best.price_per_hr * 24).removesuffix('/hr')} a day{stock}."
    )
    cheaper_gone = [o for o in on_demand if o.stock is Stock.NONE and o.price_per_hr < best.price_per_hr]
    if cheaper_gone and best.stock.available:
        o = cheaper_gone[0]
        lines.append(f"{o.label} on {o.kind} cloud would be {_money(o.price_per_hr)} but has no stock now.")
    # The same memory for more money: the 3090 over the 4090.
    dearer = [
        o
        for o in on_demand
        if o.stock.available
        and o.gpu.memory_gb == best.gpu.memory_gb
        and o.count == best.count
        and o.kind == best.kind
        and o.gpu.id != best.gpu.id
        and o.price_per_hr > best.price_per_hr
    ][:3]
    if dearer:
        names = " or ".join(f"{o.gpu.display_name} ({_money(o.price_per_hr)})" for o in dearer)
        savings = [1 - best.price_per_hr / o.price_per_hr for o in dearer]
        spread = f"{savings[0]:.0%}" if len(savings) == 1 else f"{min(savings):.0%}-{max(savings):.0%}"
        line = f"Why not {names}? Same {best.gpu.memory_gb} GB per GPU, and {best.gpu.display_name} is {spread} cheaper"
        if need.params < BIG_MODEL_PARAMS:
            line += "; a faster card saves minutes, not hours, on a small model and a few epochs."
        else:
            line += "; a faster card pays off only if it cuts the run's time by more than that."
        if "3090" in best.gpu.display_name and any("4090" in o.gpu.display_name for o in dearer):
            line += " The 3090 is ~45% cheaper than a 4090 for ~5% less speed."
        lines.append(line)
    big = [o for o in on_demand if _datacentre(o.gpu)]
    if need.params < BIG_MODEL_PARAMS and big and not _datacentre(best.gpu):
        lines.append(
            f"A100 and H100 also fit but are overkill below 7B: from "
            f"{_money(min(o.price_per_hr for o in big))} for speed and memory a "
            f"{params_label(need.params)} model does not need."
        )
    if need.params >= BIG_MODEL_PARAMS and need.method.trains and _datacentre(best.gpu):
        lines.append("7B+ training is what the A100 (40/80 GB) and H100 are worth their price for.")
    if best.count > 1 and count is None:
        how = (
            f"serve it with tensor parallelism (vLLM --tensor-parallel-size {best.count})"
            if not need.method.trains
            else "shard it with FSDP or DeepSpeed ZeRO-3"
        )
        lines.append(
            f"One GPU is not enough: podtui splits a model only across {MULTI_GPU_MIN_VRAM_GB} GB cards, so "
            f"the fewest GPUs share it (they exchange weights and activations all the time); {how}."
        )
    if best.tight:
        lines.append(
            f"That uses over {TIGHT:.0%} of {best.vram_gb} GB: keep the batch size and sequence length "
            "small, or pick the next size up."
        )
    return lines


def _datacentre(gpu: GpuType) -> bool:
    name = gpu.display_name.upper()
    return "A100" in name or "H100" in name or "H200" in name
