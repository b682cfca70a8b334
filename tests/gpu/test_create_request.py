"""What a PodSpec becomes on the wire: a CreatePodRequest with every field the spec defines and nothing else, valid
against RunPod's schema (tests/contract/runpod-v2.contract.json, checked with jsonschema), strings carried
intact as JSON; and the v2 pod RunPod answers with, read into a CreatedPod."""

from __future__ import annotations

import json

import pytest

from podtui.core.api.create import create_body, parse_created
from podtui.core.gpu import Cloud
from podtui.core.pod_spec import Choice, PodSpec
from tests.helpers.contract import check_request

R3090 = "NVIDIA GeForce RTX 3090"
HOSTILE = ['quote " and \\" backslash', "braces } { ) ( ] [", "ünïcödé 名前 🚀", "new\nline\ttab", "\u202eevil"]


def valid(body: dict[str, object]) -> list[str]:
    return check_request("POST", "/v2/pods", body=json.dumps(body), headers=None)


def test_every_field_the_spec_knows_and_nothing_else() -> None:
    spec = PodSpec(
        name="lora-run",
        gpu_type_id=R3090,
        gpu_count=2,
        cloud=Cloud.SECURE,
        image="runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
        container_gb=40,
        volume_gb=100,
        volume_mount_path="/data",
        ports="8888/http,22/tcp,6006/http",
        env=(("HF_HOME", "/data/hf"), ("HF_TOKEN", "hf_" + "x" * 30)),
        start_ssh=True,
        data_centre_ids=("US-KS-2", "EU-RO-1"),
    )
    body = create_body(spec, spec.choices[0])
    assert body == {
        "name": "lora-run",
        "image": "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
        "gpu": {"id": R3090, "count": 2},
        "cloud": "SECURE",
        "dataCenterIds": ["US-KS-2", "EU-RO-1"],
        "disk": 40,
        "mounts": {"persistent": {"size": 100, "path": "/data"}},
        "ports": ["8888/http", "22/tcp", "6006/http"],  # a list, not RunPod's old comma string
        "env": {"HF_HOME": "/data/hf", "HF_TOKEN": "hf_" + "x" * 30},  # an object, not [{key, value}]
        "startSsh": True,
    }
    assert valid(body) == []


def test_the_smallest_spec() -> None:
    spec = PodSpec("n", R3090, volume_gb=0, ports="", start_ssh=False)
    body = create_body(spec, spec.choices[0])
    assert "mounts" not in body and "dataCenterIds" not in body  # no volume: no mount; no preference: RunPod picks
    assert body["ports"] == [] and body["env"] == {} and body["startSsh"] is False
    assert valid(body) == []


def test_no_public_ip_or_spot_field() -> None:
    # v2 has neither (docs/runpod-facts.md#rest-v2): direct SSH is 22/tcp in ports
    spec = PodSpec("n", R3090)
    body = create_body(spec, spec.choices[0])
    assert not {"supportPublicIp", "interruptible", "bidPerGpu", "cloudType", "gpuTypeId"} & body.keys()
    assert "22/tcp" in body["ports"]  # type: ignore[operator]


def test_each_choice_changes_only_the_gpu_and_cloud() -> None:
    spec = PodSpec("n", R3090, fallbacks=(Choice("NVIDIA RTX A5000", 1, Cloud.SECURE),))
    first, second = (create_body(spec, c) for c in spec.choices)
    assert {k: v for k, v in first.items() if k not in ("gpu", "cloud")} == {
        k: v for k, v in second.items() if k not in ("gpu", "cloud")
    }
    assert (second["gpu"], second["cloud"]) == ({"id": "NVIDIA RTX A5000", "count": 1}, "SECURE")
    assert valid(first) == [] and valid(second) == []


def test_the_contract_check_catches_a_field_runpod_would_refuse() -> None:
    # the check is a real one: RunPod refuses unknown fields and a volume under its floor
    spec = PodSpec("n", R3090)
    body = create_body(spec, spec.choices[0])
    assert valid({**body, "supportPublicIp": True})
    assert valid({**body, "mounts": {"persistent": {"size": 5, "path": "/workspace"}}})


@pytest.mark.parametrize("text", HOSTILE)
def test_strings_are_carried_intact(text: str) -> None:
    spec = PodSpec(name=text.replace("\n", " ").replace("\t", " "), gpu_type_id=R3090, env=(("NOTE", text),))
    body = create_body(spec, spec.choices[0])
    again = json.loads(json.dumps(body))
    assert again["name"] == spec.name and again["env"] == {"NOTE": text}
    assert valid(body) == []


POD = {
    "id": "7h9k2m4n6p",
    "name": "pytorch-training",
    "image": "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
    "status": "PROVISIONING",
    "gpu": {"id": R3090, "count": 2},
    "cloud": "SECURE",
    "dataCenterId": "US-KS-2",
    "cost": 0.86,
    "ssh": {
        "proxy": {"host": "ssh.runpod.io", "port": 22, "username": "7h9k2m4n6p-64411eb2", "command": "ssh x"},
        "direct": None,
    },
    "env": {"HF_TOKEN": "hf_secret"},
    "runtime": None,
    "somethingNew": {"x": 1},
}


def test_the_created_pod() -> None:
    c = parse_created(POD)
    assert (c.id, c.name, c.status, c.cost_per_hr, c.pod_host_id) == (
        "7h9k2m4n6p",
        "pytorch-training",
        "PROVISIONING",
        0.86,
        "7h9k2m4n6p-64411eb2",
    )
    assert (c.gpu_type_id, c.gpu_count, c.cloud, c.data_centre_id, c.refused) == (R3090, 2, "SECURE", "US-KS-2", ())


@pytest.mark.parametrize(
    "odd",
    [
        {"id": "p1"},
        {"id": "p1", "name": None, "status": 3, "cost": "0.2", "ssh": None, "gpu": [], "dataCenterId": None},
        {"id": "p1", "cost": True, "ssh": {"proxy": "ssh.runpod.io"}, "gpu": {"count": "2"}},
        {"id": "p1", "cost": -1, "ssh": {"proxy": None, "direct": None}},
    ],
)
def test_a_created_pod_with_odd_fields_still_says_which_pod(odd: dict[str, object]) -> None:
    c = parse_created(odd)
    assert c.id == "p1" and c.cost_per_hr is None and c.pod_host_id is None and c.gpu_count is None


@pytest.mark.parametrize("payload", [None, [], "p1", {}, {"id": ""}, {"id": 7}, {"pod": {"id": "p1"}}])
def test_an_answer_that_names_no_pod(payload: object) -> None:
    with pytest.raises(ValueError, match="which pod"):
        parse_created(payload)
