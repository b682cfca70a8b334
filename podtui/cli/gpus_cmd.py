"""`podtui gpus`: RunPod's GPU types with VRAM, prices and stock; with --model, the VRAM a job needs and the
cheapest GPUs that fit."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from podtui.cli.output import write_table
from podtui.cli.session import UsageError, open_session
from podtui.core.gpu import Advice, Cloud, GpuCatalogue, GpuType, Method, advise, estimate, parse_params
from podtui.core.gpu.advice import KINDS
from podtui.core.gpu.vram import PRECISION_BYTES
from podtui.core.paths import Paths
from podtui.core.services import Services


def fill_parser(p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui gpus`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    p.description = (
        "RunPod's GPU types with VRAM, community/secure $/hr and stock (RunPod's availability: "
        "high, medium, low, none; unknown when RunPod did not say), and the data centres where each is free. "
        "With --model, estimate the GPU memory the "
        "job needs and recommend the cheapest GPUs that fit."
    )
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument("--model", metavar="SIZE", help="model size in parameters: 350M, 1.5B, 7B, 70B")
    p.add_argument(
        "--method", choices=[m.value for m in Method], default="lora", help="what you will do with it (default lora)"
    )
    p.add_argument(
        "--precision",
        choices=list(PRECISION_BYTES),
        help="weights precision (default: fp16 for inference, bf16 for lora/full, 4bit for qlora)",
    )
    p.add_argument("--count", type=int, metavar="N", help="GPUs per pod: prices and stock for N GPUs (1-8)")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    with open_session(demo, paths) as session:
        return cmd_gpus(session, args.model, args.method, args.precision, args.count, args.json)


def cmd_gpus(
    session: Services,
    model: str | None,
    method: str,
    precision: str | None,
    count: int | None,
    as_json: bool,
    out: TextIO | None = None,
) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    if count is not None and not 1 <= count <= 8:
        raise UsageError("--count must be from 1 to 8")
    need = estimate(parse_params(model), Method(method), precision) if model else None
    catalogue = session.api.gpu_types()
    advice = advise(catalogue, need, count) if need is not None else None
    if as_json:
        json.dump(_json(catalogue, advice, count), out, indent=2)
        out.write("\n")
        return 0
    _table(catalogue, advice, count, out)
    for problem in catalogue.problems:
        sys.stderr.write(f"podtui: {problem}\n")
    return 0


def _count(gpu: GpuType, advice: Advice | None, count: int | None) -> int:
    """GPUs a row's prices and stock are for: --count, else what the job needs on that type, else one."""
    return count or (advice.count_for(gpu.id) if advice else None) or 1


def _price(gpu: GpuType, cloud: Cloud, n: int) -> str:
    p = gpu.price(cloud)
    return "—" if p is None else f"{p * n:.2f}"


def _table(catalogue: GpuCatalogue, advice: Advice | None, count: int | None, out: TextIO) -> None:
    marked = advice.recommended_ids if advice else set()
    rows = [("", "GPU", "VRAM", "GPUS", "COMMUNITY$/HR", "SECURE$/HR", "STOCK C/S", "ID")]
    for g in catalogue.types:
        n = _count(g, advice, count)
        stock = f"{g.stock_for(Cloud.COMMUNITY, n).label}/{g.stock_for(Cloud.SECURE, n).label}"
        vram = f"{g.memory_gb} GB" if n == 1 else f"{g.memory_gb * n} GB ({n}x{g.memory_gb})"
        rows.append(
            (
                "*" if g.id in marked else "",
                g.display_name,
                vram,
                str(n),
                _price(g, Cloud.COMMUNITY, n),
                _price(g, Cloud.SECURE, n),
                stock,
                g.id,
            )
        )
    write_table(out, rows)
    what = (
        f"for {count} GPUs"
        if count
        else "for the GPUS column's count: what the job needs on that type"
        if advice
        else "for one GPU"
    )
    out.write(f"\nprices ($/hr) and stock are {what}\n\nwhere each is free now, by data centre:\n")
    where = [("GPU", "COMMUNITY", "SECURE")]
    for g in catalogue.types:
        n = _count(g, advice, count)
        where.append((g.display_name, g.where_words(Cloud.COMMUNITY, n, 4), g.where_words(Cloud.SECURE, n, 4)))
    write_table(out, where)
    if advice is None:
        out.write("\nwhich one fits? podtui gpus --model 7B --method lora|qlora|full|inference\n")
        return
    out.write("\n" + "\n".join(advice.need.lines()) + "\n\n")
    for kind in KINDS:
        top = advice.by_kind[kind][:3]
        if top:
            out.write(
                f"{kind + ':':<11}"
                + "; ".join(f"{o.label} ${o.price_per_hr:.2f}/hr ({o.stock.label})" for o in top)
                + "\n"
            )
    out.write("\n" + "\n".join(advice.explanation) + "\n")
    if advice.best is not None:
        b = advice.best
        out.write(f'\ncreate it: podtui create --gpu "{b.gpu.display_name}" --count {b.count} --cloud {b.kind}\n')


def _json(catalogue: GpuCatalogue, advice: Advice | None, count: int | None) -> dict[str, Any]:
    # prices are per GPU; "gpu_count" is the count "stock" and "data_centres" are for (--count, else what the
    # job needs, else 1); stock is RunPod's availability level (HIGH, MEDIUM, LOW, NONE) or UNKNOWN
    types = [
        {
            "id": g.id,
            "display_name": g.display_name,
            "memory_gb": g.memory_gb,
            "max_count": {c.label: g.max_count_for(c) for c in Cloud},
            "community_price": g.community_price,
            "secure_price": g.secure_price,
            "gpu_count": (n := _count(g, advice, count)),
            "stock": {c.label: g.stock_for(c, n).value for c in Cloud},
            "data_centres": {
                c.label: {d.id: d.stock.value for d in g.data_centres_for(c, n)}
                for c in Cloud
                if g.price(c) is not None
            },
        }
        for g in catalogue.types
    ]
    result: dict[str, Any] = {"gpu_count": count, "gpu_types": types, "problems": list(catalogue.problems)}
    if advice is not None:
        result["estimate"] = advice.need.as_json()
        result["advice"] = {
            "best": advice.best.as_json() if advice.best else None,
            **{kind: [o.as_json() for o in opts[:5]] for kind, opts in advice.by_kind.items()},
            "explanation": list(advice.explanation),
        }
    return result
