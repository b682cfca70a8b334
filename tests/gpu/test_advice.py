"""Advice on the simulated catalogue: the usual choices (docs/runpod-facts.md#choosing-a-gpu) come out, in stock
first, with the reasons."""

from __future__ import annotations

import dataclasses

import pytest

from podtui.core.api import V2Api
from podtui.core.gpu import GpuCatalogue, GpuType, Method, Stock, advise, estimate
from podtui.core.gpu.advice import KINDS
from podtui.core.gpu.catalogue import Cloud


@pytest.fixture
def catalogue(api: V2Api) -> GpuCatalogue:
    return api.gpu_types()


def test_1b_lora_picks_the_3090_over_the_4090(catalogue: GpuCatalogue) -> None:
    a = advise(catalogue, estimate(1e9, Method.LORA))
    assert a.best is not None and (a.best.label, a.best.kind, a.best.price_per_hr) == ("1x RTX 3090", "community", 0.22)
    community = [o.gpu.display_name for o in a.by_kind["community"]]
    assert community.index("RTX 3090") < community.index("RTX 4090")
    text = "\n".join(a.explanation)
    assert "RTX 4090 ($0.40/hr)" in text and "minutes, not hours" in text and "~45% cheaper" in text
    assert "overkill below 7B" in text
    assert "NVIDIA GeForce RTX 3090" in a.recommended_ids and "NVIDIA H100 80GB HBM3" not in a.recommended_ids


def test_7b_full_fine_tune_needs_two_80_gb_cards(catalogue: GpuCatalogue) -> None:
    a = advise(catalogue, estimate(7e9, Method.FULL))
    assert a.best is not None and a.best.count == 2 and a.best.gpu.memory_gb == 80
    assert a.best.gpu.display_name == "A100 80GB PCIe"
    # nothing smaller than 80 GB is split across GPUs, however cheap 8 x RTX 3090 would be
    for kind in KINDS:
        assert {o.gpu.memory_gb for o in a.by_kind[kind]} == {80}
    assert "spot" not in a.by_kind and not any("Spot" in line for line in a.explanation)  # no spot pods in v2
    text = "\n".join(a.explanation)
    assert "7B+ training" in text and "FSDP or DeepSpeed ZeRO-3" in text


def test_in_stock_first_even_when_dearer(catalogue: GpuCatalogue) -> None:
    # H100 SXM has no community stock: its secure offer ranks above the unavailable cheaper one
    a = advise(catalogue, estimate(7e9, Method.FULL), count=2)
    community = a.by_kind["community"]
    order = [o.stock.order for o in community]
    assert order == sorted(order)
    gone = next(o for o in community if o.gpu.display_name == "H100 SXM")
    assert gone.stock is Stock.NONE and community[-1] is gone


def test_cheapest_out_of_stock_is_named(catalogue: GpuCatalogue) -> None:
    # a catalogue where the cheapest fit has no stock at all
    r3090 = catalogue.find("RTX 3090")
    empty = GpuType(r3090.id, r3090.display_name, 24, None, 0.10, stock={(Cloud.COMMUNITY, 1): Stock.NONE})
    a = advise(GpuCatalogue((empty, catalogue.find("RTX A5000"))), estimate(1e9, Method.LORA))
    assert a.best is not None and a.best.gpu.display_name == "RTX A5000"
    assert any("RTX 3090 on community cloud would be $0.10/hr but has no stock" in line for line in a.explanation)


def test_unknown_stock_ranks_between_free_and_none(catalogue: GpuCatalogue) -> None:
    r3090, a5000, r4090 = catalogue.find("RTX 3090"), catalogue.find("RTX A5000"), catalogue.find("RTX 4090")
    unknown = dataclasses.replace(r3090, stock={(Cloud.COMMUNITY, 1): Stock.UNKNOWN})
    gone = dataclasses.replace(a5000, community_price=0.05, stock={(Cloud.COMMUNITY, 1): Stock.NONE})
    a = advise(GpuCatalogue((gone, unknown, r4090)), estimate(1e9, Method.LORA), count=1)
    assert [o.gpu.display_name for o in a.by_kind["community"]] == ["RTX 4090", "RTX 3090", "RTX A5000"]
    assert a.best is not None and a.best.gpu.display_name == "RTX 4090"
    # only RTX 4090's stock is known to be free; without it, the best is one whose stock is not known
    b = advise(GpuCatalogue((gone, unknown)), estimate(1e9, Method.LORA), count=1)
    assert b.best is not None and b.best.stock is Stock.UNKNOWN
    assert "RunPod did not say whether it is free right now" in b.explanation[1]
    assert "RTX A5000 on community cloud would be $0.05/hr but has no stock" not in "\n".join(b.explanation)


def test_nothing_fits_says_what_to_try(catalogue: GpuCatalogue) -> None:
    a = advise(catalogue, estimate(70e9, Method.FULL))
    assert a.best is None and a.by_kind["community"] == ()
    assert "Try QLoRA" in a.explanation[-1]
    q = advise(catalogue, estimate(70e9, Method.QLORA))
    assert q.best is not None and q.best.count == 1 and q.best.gpu.memory_gb == 80


def test_inference_of_70b_splits_with_tensor_parallelism(catalogue: GpuCatalogue) -> None:
    a = advise(catalogue, estimate(70e9, Method.INFERENCE))
    assert a.best is not None and a.best.count == 4  # 168 GB: powers of two of 80 GB cards
    assert any("--tensor-parallel-size 4" in line for line in a.explanation)


def test_a_forced_count(catalogue: GpuCatalogue) -> None:
    a = advise(catalogue, estimate(7e9, Method.LORA), count=2)
    assert a.best is not None and a.best.count == 2 and a.best.label == "2x RTX 3090"
    assert a.best.price_per_hr == pytest.approx(0.44)
