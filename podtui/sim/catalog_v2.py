"""The simulator's catalogue: GET /v2/catalog/gpus (the market's GPU types, with prices per cloud and, when asked,
pod stock) and GET /v2/catalog/datacenters (where pods and volumes live, with each one's GPU stock when asked).

Availability is for one GPU count and one cloud (`count`, default 1; `cloud`, default SECURE) and is given only
with include=AVAILABILITY, which needs `product` (docs/runpod-facts.md#rest-v2); the filters are refused without
it, as RunPod refuses them. Stock is the market's free GPUs: the same levels GraphQL's stockStatus gives, overall
and per data centre (docs/runpod-facts.md#data-centres-and-stock).
"""

from __future__ import annotations

import re
from typing import Any

from podtui.sim import datacentres
from podtui.sim.datacentres import VOLUME_TYPES, SimDataCentre
from podtui.sim.deploy import CPU_FLAVORS
from podtui.sim.gpu_market import CLOUDS as MARKET_CLOUDS
from podtui.sim.gpu_market import SimGpuType
from podtui.sim.pod_v2 import CUDA_VERSION
from podtui.sim.problem import Answer, json_answer
from podtui.sim.v2_request import CLOUDS, Call, refuse

PRODUCTS = ("POD", "CLUSTER", "SERVERLESS")
_FILTERS = ("product", "count", "cloud", "countryCodes", "cudaVersions", "minCudaVersion")
_COUNTRY = re.compile(r"[A-Z]{2}")
_VERSION = re.compile(r"\d+\.\d+")
_FLOOR = re.compile(r"\d+(\.\d+)?")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _list(call: Call, name: str) -> list[str]:
    text = call.one(name)
    return [] if text is None else [part.strip() for part in text.split(",")]


def _count(call: Call) -> int:
    text = call.one("count")
    if text is None:
        return 1
    if not re.fullmatch(r"[+-]?\d+", text.strip()) or int(text) < 1:
        raise refuse(400, "count must be a whole number, 1 or more", [f"count: {text!r} is not an integer >= 1"])
    return int(text)


def _cuda_offered(call: Call) -> bool:
    """Whether the simulated machines' CUDA version passes the cudaVersions or minCudaVersion filter."""
    exact = _list(call, "cudaVersions")
    floor = call.one("minCudaVersion")
    if exact and floor is not None:
        raise refuse(400, "cudaVersions and minCudaVersion cannot both be given")
    bad = [f"cudaVersions: {v!r} is not major.minor" for v in exact if not _VERSION.fullmatch(v)]
    if floor is not None and not _FLOOR.fullmatch(floor):
        bad.append(f"minCudaVersion: {floor!r} is not major or major.minor")
    if bad:
        raise refuse(422, "a CUDA version is malformed", bad)
    if exact:
        return CUDA_VERSION in exact
    if floor is not None:
        mine, wanted = _version(CUDA_VERSION), _version(floor)
        return mine[: len(wanted)] >= wanted
    return True


def _record(gpu: SimGpuType) -> dict[str, Any]:
    return {
        "id": gpu.id,
        "name": gpu.display_name,
        "pool": None,
        "manufacturer": "NVIDIA",
        "memory": gpu.memory_gb,
        "secure": gpu.secure is not None,
        "community": gpu.community is not None,
        # a cloud that does not carry the type: price 0 and no machines of it
        "price": {"secure": gpu.secure or 0.0, "community": gpu.community or 0.0},
        "maxCount": {
            "secure": gpu.max_count if gpu.secure is not None else 0,
            "community": gpu.max_count if gpu.community is not None else 0,
        },
    }


def list_gpus(call: Call) -> Answer:
    include = _list(call, "include")
    if any(i != "AVAILABILITY" for i in include) or len(include) > 1:
        raise refuse(400, "include takes AVAILABILITY only", [f"include: {i!r} is not AVAILABILITY" for i in include])
    given = [name for name in _FILTERS if name in call.query]
    if not include:
        if given:
            raise refuse(400, f"{', '.join(given)} can be used only with include=AVAILABILITY")
        with call.world.lock:
            return json_answer(200, {"gpus": [_record(g) for g in call.world.gpu_types.values()]})
    products = _list(call, "product")
    if not products:
        raise refuse(400, "include=AVAILABILITY needs product (POD, CLUSTER or SERVERLESS)")
    if any(p not in PRODUCTS for p in products):
        raise refuse(400, "product takes POD, CLUSTER or SERVERLESS", [f"product: {p!r}" for p in products])
    count = _count(call)
    cloud = call.one("cloud") or "SECURE"
    if cloud not in CLOUDS:
        raise refuse(400, "cloud takes SECURE or COMMUNITY", [f"cloud: {cloud!r} is not SECURE or COMMUNITY"])
    countries = _list(call, "countryCodes")
    if any(not _COUNTRY.fullmatch(c) for c in countries):
        raise refuse(422, "a country code is malformed", [f"countryCodes: {c!r}" for c in countries])
    cuda = _cuda_offered(call)
    gpus = []
    with call.world.lock:
        call.world.advance()  # other tenants' pods came and went meanwhile
        for gpu in call.world.gpu_types.values():
            entry = _record(gpu)
            # the simulated market stocks pods only, in the data centres of the countries asked for
            centres = [c for c in gpu.centres(cloud) if not countries or _country(c) in countries]
            level = gpu.availability(cloud, count, centres) if "POD" in products and cuda else "NONE"
            entry["availability"] = level
            entry["cudaVersions"] = [{"version": CUDA_VERSION, "available": level != "NONE"}] if cuda else []
            if level != "NONE":  # left out when the configuration can be had nowhere
                entry["dataCenters"] = [
                    {"id": c, "name": _name(c), "availability": gpu.centre_availability(cloud, count, c)}
                    for c in centres
                ]
            gpus.append(entry)
    return json_answer(200, {"gpus": gpus})


def _country(centre: str) -> str:
    found = datacentres.find(centre)
    return found.country if found is not None else ""


def _name(centre: str) -> str:
    found = datacentres.find(centre)
    return found.name if found is not None else centre


# --- data centres ----------------------------------------------------------------------------------------------

INCLUDES = ("GPU_AVAILABILITY", "CPU_AVAILABILITY")
REGIONS = (
    "NORTH_AMERICA",
    "SOUTH_AMERICA",
    "EUROPE",
    "ASIA",
    "MIDDLE_EAST",
    "AFRICA",
    "OCEANIA",
    "ANTARCTICA",
    "UNKNOWN",
)
COMPLIANCE = (
    "GDPR",
    "ISO_IEC_27001",
    "ISO_14001",
    "PCI_DSS",
    "HITRUST",
    "SOC_1_TYPE_2",
    "SOC_2_TYPE_2",
    "SOC_3_TYPE_2",
    "ITAR",
    "FISMA_HIGH",
    "HIPAA",
    "RENEWABLE",
)
CPU_NAMES = {"c": "Compute-Optimized", "g": "General Purpose", "m": "Memory-Optimized"}


def _choices(call: Call, name: str, allowed: tuple[str, ...]) -> list[str]:
    """A comma-separated list of enum values, each one known (400 naming those that are not)."""
    given = [v for v in _list(call, name) if v]
    bad = [v for v in given if v not in allowed]
    if bad:
        raise refuse(400, f"{name} takes {', '.join(allowed)}", [f"{name}: {v!r} is not one of them" for v in bad])
    return given


def _includes(call: Call) -> list[str]:
    return _choices(call, "include", INCLUDES)


def _gpu_availability(call: Call, centre: SimDataCentre) -> list[dict[str, Any]]:
    """Each GPU type the data centre stocks, for one GPU: its best level over the clouds it is offered in."""
    order = ["NONE", "LOW", "MEDIUM", "HIGH"]
    out = []
    for gpu in call.world.gpu_types.values():
        clouds = [c for c in MARKET_CLOUDS if centre.id in gpu.centres(c)]
        if clouds:
            level = max((gpu.centre_availability(c, 1, centre.id) for c in clouds), key=order.index)
            out.append({"id": gpu.id, "name": gpu.display_name, "availability": level})
    return out


def _cpu_availability() -> list[dict[str, Any]]:
    """Every data centre runs CPU pods of every flavour: the simulator keeps no CPU stock."""
    return [
        {"id": flavor, "name": f"{CPU_NAMES[flavor[-1]]} (gen {flavor[3]})", "availability": "HIGH"}
        for flavor in CPU_FLAVORS
    ]


def _centre_record(call: Call, centre: SimDataCentre, include: list[str]) -> dict[str, Any]:
    out = centre.record()
    if "GPU_AVAILABILITY" in include:
        gpus = _gpu_availability(call, centre)
        if gpus:  # left out when the data centre offers no GPUs
            out["gpuAvailability"] = gpus
    if "CPU_AVAILABILITY" in include:
        out["cpuAvailability"] = _cpu_availability()
    return out


def list_datacentres(call: Call) -> Answer:
    include = _includes(call)
    regions = _choices(call, "regions", REGIONS)
    volume_types = _choices(call, "networkVolumeTypes", VOLUME_TYPES)
    compliance = _choices(call, "compliance", COMPLIANCE)
    flag = call.one("globalNetwork")
    if flag not in (None, "true", "false"):
        raise refuse(400, "globalNetwork is true or false", [f"globalNetwork: {flag!r} is not a boolean"])
    found = []
    with call.world.lock:
        call.world.advance()
        for centre in datacentres.DATA_CENTRES:
            # regions: any of them; volume types and compliance: all of them
            if regions and centre.region not in regions:
                continue
            if not set(volume_types) <= set(centre.volume_types) or not set(compliance) <= set(centre.compliance):
                continue
            if flag is not None and centre.global_network != (flag == "true"):
                continue
            found.append(_centre_record(call, centre, include))
    return json_answer(200, {"dataCenters": found})


def get_datacentre(call: Call) -> Answer:
    include = _includes(call)
    centre = datacentres.find(call.params["id"])
    if centre is None:
        raise refuse(404, f"data center {call.params['id']!r} not found")
    with call.world.lock:
        call.world.advance()
        return json_answer(200, _centre_record(call, centre, include))
