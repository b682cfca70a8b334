"""GET /v2/catalog/gpus from the simulated market (prices per cloud, stock for a count and a cloud, refused filters)
and the account's SSH keys over REST v2 (GET, and PUT replacing the whole set), docs/runpod-facts.md#rest-v2."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from podtui.sim.server import SimApiServer

R3090, R4090, H100SXM = "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090", "NVIDIA H100 80GB HBM3"
A100_40 = "NVIDIA A100-PCIE-40GB"
KEY_A = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGZvcmNhdGFsb2d0ZXN0c29ubHkwMTIzNDU2Nzg5YWJj alice@laptop"
KEY_B = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTY="
KEY_C = "sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29t"


@pytest.fixture
def http(sim: SimApiServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sim.url, headers={"Authorization": f"Bearer {sim.api_key}"}, timeout=10) as client:
        yield client


def gpus(http: httpx.Client, **params: Any) -> dict[str, dict[str, Any]]:
    r = http.get("/v2/catalog/gpus", params=params)
    assert r.status_code == 200, r.text
    return {g["id"]: g for g in r.json()["gpus"]}


def availability(http: httpx.Client, cloud: str, count: int, **more: str) -> dict[str, str]:
    found = gpus(http, **{"include": "AVAILABILITY", "product": "POD", "cloud": cloud, "count": count, **more})
    return {gid: g["availability"] for gid, g in found.items()}


def test_the_catalog_has_every_type_with_its_prices(http: httpx.Client, sim: SimApiServer) -> None:
    found = gpus(http)
    assert set(found) == set(sim.world.gpu_types)
    r3090 = found[R3090]
    assert r3090["name"] == "RTX 3090" and r3090["memory"] == 24 and r3090["manufacturer"] == "NVIDIA"
    assert r3090["price"] == {"secure": 0.43, "community": 0.22} and r3090["maxCount"] == {"secure": 8, "community": 8}
    assert r3090["secure"] is True and r3090["community"] is True and "availability" not in r3090
    a100 = found[A100_40]  # secure cloud only
    assert a100["community"] is False and a100["price"]["community"] == 0 and a100["maxCount"]["community"] == 0


def test_availability_follows_the_stock_for_a_count_and_a_cloud(http: httpx.Client) -> None:
    # 10 RTX 4090s free on community cloud, none on secure; 64 RTX 3090s on community
    assert [availability(http, "COMMUNITY", n)[R4090] for n in (1, 2, 4, 8, 16)] == [
        "HIGH",
        "MEDIUM",
        "LOW",
        "LOW",
        "NONE",
    ]
    assert availability(http, "SECURE", 1)[R4090] == "NONE"
    assert gpus(http, include="AVAILABILITY", product="POD")[R4090]["availability"] == "NONE"  # secure, 1
    assert availability(http, "COMMUNITY", 1)[R3090] == "HIGH" and availability(http, "COMMUNITY", 1)[H100SXM] == "NONE"
    entry = gpus(http, include="AVAILABILITY", product="POD", cloud="COMMUNITY")[R4090]
    assert entry["cudaVersions"] == [{"version": "12.4", "available": True}]
    assert availability(http, "COMMUNITY", 1, product="SERVERLESS")[R4090] == "NONE"  # the market stocks pods only


def test_new_pods_use_up_the_stock(http: httpx.Client) -> None:
    body = {"name": "x", "image": "runpod/pytorch:2.4.0", "gpu": {"id": R4090, "count": 8}, "cloud": "COMMUNITY"}
    assert http.post("/v2/pods", json=body).status_code == 201
    assert availability(http, "COMMUNITY", 2)[R4090] == "LOW"
    assert availability(http, "COMMUNITY", 4)[R4090] == "NONE"


def test_cuda_filters(http: httpx.Client) -> None:
    assert availability(http, "COMMUNITY", 1, cudaVersions="12.4,12.8")[R3090] == "HIGH"
    assert availability(http, "COMMUNITY", 1, minCudaVersion="12")[R3090] == "HIGH"
    assert set(availability(http, "COMMUNITY", 1, cudaVersions="12.8").values()) == {"NONE"}
    assert set(availability(http, "COMMUNITY", 1, minCudaVersion="12.6").values()) == {"NONE"}
    assert gpus(http, include="AVAILABILITY", product="POD", cudaVersions="12.8")[R3090]["cudaVersions"] == []


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"count": "2"}, 400),  # a filter without include=AVAILABILITY
        ({"cloud": "SECURE"}, 400),
        ({"product": "POD"}, 400),
        ({"include": "AVAILABILITY"}, 400),  # include without product
        ({"include": "EVERYTHING", "product": "POD"}, 400),
        ({"include": "AVAILABILITY", "product": "DESKTOP"}, 400),
        ({"include": "AVAILABILITY", "product": "POD", "count": "0"}, 400),
        ({"include": "AVAILABILITY", "product": "POD", "count": "two"}, 400),
        ({"include": "AVAILABILITY", "product": "POD", "cloud": "ALL"}, 400),
        ({"include": "AVAILABILITY", "product": "POD", "cudaVersions": "12.4", "minCudaVersion": "12"}, 400),
        ({"include": "AVAILABILITY", "product": "POD", "cudaVersions": "12"}, 422),
        ({"include": "AVAILABILITY", "product": "POD", "countryCodes": "france"}, 422),
    ],
)
def test_filters_are_refused_as_runpod_refuses(http: httpx.Client, params: dict[str, str], status: int) -> None:
    r = http.get("/v2/catalog/gpus", params=params)
    assert r.status_code == status and r.headers["content-type"] == "application/problem+json", r.text


def test_ssh_keys_are_the_accounts_and_put_replaces_them_whole(http: httpx.Client, sim: SimApiServer) -> None:
    sim.world.set_pub_key(f"{KEY_A}\n\n{KEY_B}\n")  # as GraphQL's updateUserSettings(pubKey) keeps them
    assert http.get("/v2/account/ssh-keys").json() == {"keys": [KEY_A, KEY_B]}
    r = http.put("/v2/account/ssh-keys", json={"keys": [KEY_C]})
    assert r.status_code == 200 and r.json() == {"keys": [KEY_C]}
    assert sim.world.pub_key == KEY_C  # not merged: A and B are gone
    assert http.put("/v2/account/ssh-keys", json={"keys": []}).json() == {"keys": []}
    assert http.get("/v2/account/ssh-keys").json() == {"keys": []}


@pytest.mark.parametrize(
    "bad",
    ["not a key", "ssh-ed25519", "ssh-ed25519 AAAA\nssh-rsa BBBB", f"{KEY_A}\n", "rsa-sha2 AAAA", " ssh-rsa AAAA"],
)
def test_a_key_that_is_not_a_public_key_line_is_refused(http: httpx.Client, sim: SimApiServer, bad: str) -> None:
    sim.world.set_pub_key(KEY_A)
    r = http.put("/v2/account/ssh-keys", json={"keys": [KEY_B, bad]})
    assert r.status_code == 400 and r.headers["content-type"] == "application/problem+json"
    assert any(e.startswith("$.keys[1]: does not match pattern") for e in r.json()["errors"])
    assert sim.world.pub_key == KEY_A  # nothing changed
