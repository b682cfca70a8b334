"""GET /v2/catalog/gpus: the simulated market's GPU types, with prices per cloud and, when asked, pod stock.

Availability is for one GPU count and one cloud (`count`, default 1; `cloud`, default SECURE) and is given only
with include=AVAILABILITY, which needs `product` (docs/runpod-facts.md#rest-v2); the filters are refused without
it, as RunPod refuses them. Stock is the market's free GPUs: the same levels GraphQL's stockStatus gives.
"""

from __future__ import annotations

import re
from typing import Any

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
        for gpu in call.world.gpu_types.values():
            entry = _record(gpu)
            # the simulated market stocks pods only; its machines are in every country asked for
            level = gpu.availability(cloud, count) if "POD" in products and cuda else "NONE"
            entry["availability"] = level
            entry["cudaVersions"] = [{"version": CUDA_VERSION, "available": level != "NONE"}] if cuda else []
            gpus.append(entry)
    return json_answer(200, {"gpus": gpus})
