"""gpuTypes through the real SDK against the simulator, and parsing that skips a malformed entry but keeps the rest."""

from __future__ import annotations

import json
from typing import Any

import pytest

from podtui.core.api import ApiResponseError, SdkApi
from podtui.core.gpu import Cloud, Stock, parse_gpu_types
from podtui.sim.server import SimApiServer


def good(gid: str = "NVIDIA GeForce RTX 3090", **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": gid,
        "displayName": gid.split()[-2] + " " + gid.split()[-1],
        "memoryInGb": 24,
        "securePrice": 0.43,
        "communityPrice": 0.22,
        "secureSpotPrice": 0.2,
        "communitySpotPrice": 0.11,
        "maxGpuCount": 8,
        "community1": {"stockStatus": "High"},
        "secure1": {"stockStatus": "Low"},
    }
    entry.update(extra)
    return entry


def test_the_simulated_catalogue_through_the_sdk(api: SdkApi, sim: SimApiServer) -> None:
    cat = api.gpu_types()
    assert cat.problems == ()
    names = [g.display_name for g in cat.types]
    assert {"RTX 3090", "RTX 4090", "RTX A5000", "L40S", "A100 PCIe 40GB", "A100 80GB PCIe", "H100 SXM"} <= set(names)
    r3090, r4090 = cat.find("rtx 3090"), cat.find("NVIDIA GeForce RTX 4090")
    assert (r3090.memory_gb, r3090.community_price, r4090.community_price) == (24, 0.22, 0.40)
    for g in cat.types:  # secure dearer than community, spot cheapest
        if g.secure_price and g.community_price:
            assert g.secure_price > g.community_price
            assert g.spot_price is not None and g.spot_price < g.community_price
    assert r4090.stock_for(Cloud.SECURE) is Stock.NONE  # some stock is out
    assert cat.find("H100 SXM").stock_for(Cloud.COMMUNITY) is Stock.NONE
    assert cat.find("A100 PCIe 40GB").community_price is None  # secure only: RunPod answers 0, not free
    # stock depends on how many GPUs one machine must have free
    h100 = cat.find("H100 PCIe")
    assert h100.stock_for(Cloud.COMMUNITY, 1) is Stock.LOW and h100.stock_for(Cloud.COMMUNITY, 4) is Stock.NONE
    assert h100.stock_for(Cloud.COMMUNITY, 3) is Stock.NONE  # judged by the 4-GPU answer
    # one round trip, lowestPrice asked per cloud and count
    query = sim.requests[-1]
    assert query.count("lowestPrice(") == 8 and "stockStatus" in query


def test_find_by_partial_name_and_ambiguity(api: SdkApi) -> None:
    cat = api.gpu_types()
    assert cat.find("L40S").id == "NVIDIA L40S"
    assert cat.find("a6000").display_name == "RTX A6000"
    with pytest.raises(LookupError, match="several"):
        cat.find("H100")
    with pytest.raises(LookupError, match="no GPU type 'RTX 9090'"):
        cat.find("RTX 9090")


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ("not an object", "not an object"),
        ({"displayName": "X", "memoryInGb": 24}, "no id"),
        (good("NVIDIA X Y", memoryInGb="24"), "memoryInGb"),
        (good("NVIDIA X Y", memoryInGb=True), "memoryInGb"),
        (good("NVIDIA X Y", communityPrice="cheap"), "communityPrice"),
        (good("NVIDIA X Y", securePrice=float("inf")), "securePrice"),
        (good("NVIDIA X Y", securePrice=-1), "securePrice"),
        (good("NVIDIA X Y", community1=[]), "community1"),
        (good("NVIDIA X Y", community1={"stockStatus": "Plenty"}), "Plenty"),
        (good("NVIDIA X Y", maxGpuCount=0), "maxGpuCount"),
        (good("NVIDIA X Y", displayName=None), "displayName"),
    ],
)
def test_a_malformed_entry_is_skipped_and_reported(bad: object, problem: str) -> None:
    cat = parse_gpu_types({"data": {"gpuTypes": [good(), bad]}})
    assert [g.id for g in cat.types] == ["NVIDIA GeForce RTX 3090"]
    assert len(cat.problems) == 1 and problem in cat.problems[0]


def test_nulls_mean_not_offered_or_no_stock() -> None:
    cat = parse_gpu_types(
        {
            "data": {
                "gpuTypes": [
                    good(
                        communityPrice=0,
                        secureSpotPrice=None,
                        secure1=None,
                        communityCloud=False,
                        community1={"stockStatus": None},
                    )
                ]
            }
        }
    )
    g = cat.types[0]
    assert g.community_price is None and g.secure_spot_price is None
    assert g.stock_for(Cloud.SECURE) is Stock.NONE and g.stock_for(Cloud.COMMUNITY) is Stock.NONE
    assert cat.problems == ()


def test_duplicates_are_reported() -> None:
    cat = parse_gpu_types({"data": {"gpuTypes": [good(), good()]}})
    assert len(cat.types) == 1 and "second entry" in cat.problems[0]


def test_malformed_entries_over_http_do_not_crash(api: SdkApi, sim: SimApiServer) -> None:
    body = {"data": {"gpuTypes": [good(), good("NVIDIA A100 80GB", memoryInGb="eighty"), 42]}}
    sim.faults.add("raw", json.dumps(body), times=1)
    cat = api.gpu_types()
    assert [g.display_name for g in cat.types] == ["RTX 3090"]
    assert len(cat.problems) == 2


@pytest.mark.parametrize("body", ['{"data": {"gpuTypes": null}}', '{"data": null}', '{"data": {"gpuTypes": {}}}'])
def test_no_list_at_all_is_a_clear_error(api: SdkApi, sim: SimApiServer, body: str) -> None:
    sim.faults.add("raw", body, times=1)
    with pytest.raises(ApiResponseError, match="list of GPU types"):
        api.gpu_types()
