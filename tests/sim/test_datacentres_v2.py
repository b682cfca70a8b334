"""The simulator's data centres over REST v2 (docs/runpod-facts.md#data-centres-and-stock): the list and one, with
each one's GPU and CPU availability when asked, the filters as the spec combines them, and every bad value refused
by name."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

R4090, H100SXM = "NVIDIA GeForce RTX 4090", "NVIDIA H100 80GB HBM3"


def centres(v2: httpx.Client, **params: str) -> dict[str, dict[str, Any]]:
    r = v2.get("/v2/catalog/datacenters", params=params)
    assert r.status_code == 200, r.text
    return {dc["id"]: dc for dc in r.json()["dataCenters"]}


def test_the_data_centres_and_what_each_offers(v2: httpx.Client) -> None:
    found = centres(v2)
    assert {"US-KS-2", "US-TX-3", "US-CA-2", "EU-RO-1", "EU-SE-1", "CA-MTL-1"} <= set(found)
    assert found["US-KS-2"] == {
        "id": "US-KS-2",
        "name": "US Kansas 2",
        "region": "NORTH_AMERICA",
        "networkVolumeTypes": ["HIGH_PERFORMANCE", "STANDARD"],
        "compliance": ["SOC_2_TYPE_2", "ISO_IEC_27001"],
        "globalNetwork": False,  # the simulator has no global network: no data centre offers one
    }
    assert found["CA-MTL-1"]["networkVolumeTypes"] == []  # the one without network volumes
    assert all("gpuAvailability" not in dc and "cpuAvailability" not in dc for dc in found.values())
    one = v2.get("/v2/catalog/datacenters/EU-RO-1")
    assert one.status_code == 200 and one.json() == found["EU-RO-1"]


def test_availability_when_asked(v2: httpx.Client) -> None:
    found = centres(v2, include="GPU_AVAILABILITY,CPU_AVAILABILITY")
    ks = {g["id"]: g for g in found["US-KS-2"]["gpuAvailability"]}
    assert ks[H100SXM] == {"id": H100SXM, "name": "H100 SXM", "availability": "HIGH"}  # 16 free
    assert R4090 not in ks  # not stocked there
    ro = {g["id"]: g["availability"] for g in found["EU-RO-1"]["gpuAvailability"]}
    assert ro[R4090] == "HIGH"  # 8 on community cloud
    assert {c["id"] for c in found["US-TX-3"]["cpuAvailability"]} >= {"cpu3c", "cpu5m"}
    one = v2.get("/v2/catalog/datacenters/US-KS-2", params={"include": "GPU_AVAILABILITY"}).json()
    assert one["gpuAvailability"] == found["US-KS-2"]["gpuAvailability"] and "cpuAvailability" not in one


def test_a_taken_type_shows_in_its_data_centre(v2: httpx.Client) -> None:
    body = {"name": "x", "image": "runpod/pytorch:2.4.0", "gpu": {"id": R4090, "count": 8}, "cloud": "COMMUNITY"}
    made = v2.post("/v2/pods", json=body)
    assert made.status_code == 201 and made.json()["dataCenterId"] == "EU-RO-1", made.text  # where most were free
    found = centres(v2, include="GPU_AVAILABILITY")
    assert {g["id"]: g["availability"] for g in found["EU-RO-1"]["gpuAvailability"]}[R4090] == "NONE"
    assert {g["id"]: g["availability"] for g in found["EU-SE-1"]["gpuAvailability"]}[R4090] == "LOW"


@pytest.mark.parametrize(
    ("params", "wanted"),
    [
        ({"regions": "EUROPE"}, {"EU-RO-1", "EU-SE-1"}),
        ({"regions": "EUROPE,NORTH_AMERICA"}, {"EU-RO-1", "EU-SE-1", "US-KS-2", "US-TX-3", "US-CA-2", "CA-MTL-1"}),
        ({"regions": "ASIA"}, set()),
        ({"networkVolumeTypes": "STANDARD,HIGH_PERFORMANCE"}, {"US-KS-2", "US-CA-2"}),  # both, not either
        ({"compliance": "GDPR,RENEWABLE"}, {"EU-SE-1"}),
        ({"globalNetwork": "true"}, set()),
        ({"globalNetwork": "false", "regions": "EUROPE"}, {"EU-RO-1", "EU-SE-1"}),  # families combine with AND
        ({"globalNetwork": "false", "compliance": "HIPAA"}, {"US-CA-2"}),
    ],
)
def test_filters(v2: httpx.Client, params: dict[str, str], wanted: set[str]) -> None:
    assert set(centres(v2, **params)) == wanted


def test_global_networking_is_had_exactly_where_it_is_advertised(v2: httpx.Client) -> None:
    # what a data centre says of itself holds when a pod asks for it there (docs/runpod-facts.md#data-centres-and-stock)
    for dc in centres(v2).values():
        body = {"name": "g", "image": "runpod/pytorch:2.4.0", "gpu": {"id": H100SXM}, "dataCenterIds": [dc["id"]]}
        r = v2.post("/v2/pods", json=body | {"globalNetworking": True})
        said = r.json().get("detail", "") if r.status_code >= 400 else ""
        assert ("global networking" in said) == (not dc["globalNetwork"]), (dc["id"], r.text)
        if r.status_code == 201:
            assert r.json()["globalNetworking"]["enabled"] is True


@pytest.mark.parametrize(
    ("route", "params", "named"),
    [
        ("/v2/catalog/datacenters", {"include": "AVAILABILITY"}, "AVAILABILITY"),
        ("/v2/catalog/datacenters", {"regions": "EUROPE,MARS"}, "MARS"),
        ("/v2/catalog/datacenters", {"networkVolumeTypes": "FAST"}, "FAST"),
        ("/v2/catalog/datacenters", {"compliance": "gdpr"}, "gdpr"),
        ("/v2/catalog/datacenters", {"globalNetwork": "yes"}, "yes"),
        ("/v2/catalog/datacenters/US-KS-2", {"include": "GPU"}, "GPU"),
    ],
)
def test_a_bad_value_is_refused_by_name(v2: httpx.Client, route: str, params: dict[str, str], named: str) -> None:
    r = v2.get(route, params=params)
    assert r.status_code == 400 and r.headers["content-type"] == "application/problem+json", r.text
    assert any(named in e for e in r.json()["errors"])


def test_an_unknown_data_centre_is_404(v2: httpx.Client) -> None:
    r = v2.get("/v2/catalog/datacenters/EU-XX-9")
    assert r.status_code == 404 and "EU-XX-9" in r.json()["detail"]
