"""The simulator's templates over REST v2 (docs/runpod-facts.md#templates): the account's own (made with the spec's
defaults, changed, deleted, names unique, a network mount refused), RunPod's public catalogue by source, pods made
from either (the body over the template, env merged per key), and the account's secrets: referenced in every answer,
their values only in the pod's container."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from podtui.sim.demo import DEMO_SECRETS
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator

R3090 = "NVIDIA GeForce RTX 3090"
LORA, VLLM = "lt7r2m9x4k", "vs3k8p1q6n"  # the demo account's own templates
TORCH = "runpod-torch-v240"  # RunPod's official PyTorch 2.4 template
SECRET_REF = "{{ RUNPOD_SECRET_hf_token }}"


def problem(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["content-type"] == "application/problem+json"
    detail: str = r.json()["detail"]
    return detail


def own(v2: httpx.Client) -> dict[str, dict[str, Any]]:
    r = v2.get("/v2/templates")
    assert r.status_code == 200, r.text
    return {t["id"]: t for t in r.json()["templates"]}


def test_the_accounts_templates(v2: httpx.Client) -> None:
    found = own(v2)
    assert set(found) == {LORA, VLLM}
    lora = found[LORA]
    assert lora["name"] == "lora-finetune" and lora["env"]["HF_TOKEN"] == SECRET_REF  # the reference, never the value
    assert lora["mounts"] == {"persistent": {"size": 50, "path": "/workspace"}} and lora["registry"] is None
    assert v2.get(f"/v2/templates/{LORA}").json() == lora


def test_a_template_is_made_with_the_specs_defaults(v2: httpx.Client) -> None:
    r = v2.post("/v2/templates", json={"name": "bare", "image": "ubuntu:22.04"})
    assert r.status_code == 201, r.text
    made = r.json()
    assert (made["startSsh"], made["startJupyter"], made["category"], made["public"], made["serverless"]) == (
        True,
        True,
        "NVIDIA",
        False,
        False,
    )
    assert made["mounts"] == {} and made["env"] == {} and made["allowedCudaVersions"] == []
    assert own(v2)[made["id"]] == made


def test_a_template_is_changed_and_deleted(v2: httpx.Client) -> None:
    made = v2.post("/v2/templates", json={"name": "t", "image": "ubuntu:22.04", "env": {"A": "1"}}).json()
    changes = {"name": "t2", "env": {"B": "2"}, "ports": ["22/tcp"], "allowedCudaVersions": ["12.4"], "disk": 9}
    r = v2.patch(f"/v2/templates/{made['id']}", json=changes)
    assert r.status_code == 200, r.text
    assert {k: r.json()[k] for k in changes} == changes  # env replaced, not merged
    grown = v2.patch(f"/v2/templates/{made['id']}", json={"mounts": {"persistent": {"size": 20, "path": "/w"}}})
    assert grown.json()["mounts"] == {"persistent": {"size": 20, "path": "/w"}}
    kept = v2.patch(f"/v2/templates/{made['id']}", json={"mounts": {}})  # {}: the mount it has is unchanged
    assert kept.status_code == 200 and kept.json()["mounts"] == {"persistent": {"size": 20, "path": "/w"}}
    cleared = v2.patch(f"/v2/templates/{made['id']}", json={"allowedCudaVersions": []})
    assert cleared.json()["allowedCudaVersions"] == [] and cleared.json()["mounts"] == grown.json()["mounts"]
    assert v2.delete(f"/v2/templates/{made['id']}").status_code == 204
    assert made["id"] not in own(v2)
    assert "not found" in problem(v2.get(f"/v2/templates/{made['id']}"), 404)


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"name": "lora-finetune", "image": "ubuntu:22.04"}, 400, "already exists"),
        ({"name": "n", "image": "ubuntu:22.04", "mounts": {"network": [{"volumeId": "v", "path": "/d"}]}}, 422, ""),
        ({"name": "n", "image": "ubuntu:22.04", "mounts": {"persistent": {"size": 20}}}, 422, ""),
        ({"name": "n", "image": "ubuntu:22.04", "mounts": {"persistent": {"size": 5, "path": "/w"}}}, 400, ""),
        ({"name": "n"}, 400, "schema"),
        ({"name": "", "image": "ubuntu:22.04"}, 400, "schema"),
        ({"name": "n", "image": "ubuntu:22.04", "category": "TPU"}, 400, "schema"),
        ({"name": "n", "image": "ubuntu:22.04", "allowedCudaVersions": ["12"]}, 400, "schema"),
        ({"name": "n", "image": "ubuntu:22.04", "gpu": {"id": R3090}}, 400, "schema"),
        ({"name": "n", "image": "not an image!"}, 400, "invalid image"),
        ({"name": "n", "image": "ubuntu:22.04", "registry": "cred1"}, 400, "cred1"),
    ],
)
def test_a_template_runpod_refuses_is_not_made(v2: httpx.Client, body: dict[str, Any], status: int, said: str) -> None:
    before = own(v2)
    assert said in problem(v2.post("/v2/templates", json=body), status)
    assert own(v2) == before


@pytest.mark.parametrize(
    ("template", "body", "status", "said"),
    [
        (VLLM, {"name": "lora-finetune"}, 400, "already exists"),
        (VLLM, {"mounts": {"network": []}}, 422, ""),
        (VLLM, {"serverless": "yes"}, 400, "schema"),
        (VLLM, {"id": "other"}, 400, "schema"),
        (TORCH, {"name": "mine now"}, 404, "RunPod's"),  # the catalogue is read-only
        ("nosuchtpl", {"name": "x"}, 404, "not found"),
    ],
)
def test_a_change_runpod_refuses_changes_nothing(
    v2: httpx.Client, template: str, body: dict[str, Any], status: int, said: str
) -> None:
    before = own(v2)
    assert said in problem(v2.patch(f"/v2/templates/{template}", json=body), status)
    assert own(v2) == before


def test_the_public_catalogue(v2: httpx.Client) -> None:
    def listed(**params: str) -> dict[str, dict[str, Any]]:
        r = v2.get("/v2/catalog/templates", params=params)
        assert r.status_code == 200, r.text
        return {t["name"]: t for t in r.json()["templates"]}

    official = listed()
    assert official == listed(source="official")
    assert {"Runpod Pytorch 2.8.0", "Runpod Pytorch 2.4.0", "ComfyUI", "vLLM Worker"} <= set(official)
    assert official["vLLM Worker"]["serverless"] is True and official["ComfyUI"]["serverless"] is False
    assert all(t["public"] and t["registry"] is None for t in official.values())
    assert {"text-generation-webui (oobabooga)", "Axolotl (fine-tuning)"} <= set(listed(source="verified"))
    assert "Ollama" in listed(source="community")
    assert v2.get(f"/v2/templates/{TORCH}").json() == official["Runpod Pytorch 2.4.0"]  # readable by id
    assert "catalogue" not in problem(v2.get("/v2/catalog/templates", params={"source": "mine"}), 400)
    assert "public" not in {t["name"] for t in own(v2).values()}  # the catalogue is not the account's
    assert "RunPod's" in problem(v2.delete(f"/v2/templates/{TORCH}"), 404)


def create(v2: httpx.Client, **body: Any) -> httpx.Response:
    return v2.post("/v2/pods", json={"name": "from-template", "gpu": {"id": R3090}} | body)


def test_a_pod_from_a_template(v2: httpx.Client, sim: SimApiServer) -> None:
    r = create(v2, templateId=LORA, env={"WANDB_PROJECT": "mine", "EXTRA": "1"}, disk=45)
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["image"] == "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04"  # the template's
    assert made["disk"] == 45  # the body's over the template's 30
    assert made["mounts"] == {"persistent": {"size": 50, "path": "/workspace"}} and made["ports"] == [
        "8888/http",
        "22/tcp",
    ]
    env = made["env"]
    assert env["WANDB_PROJECT"] == "mine" and env["EXTRA"] == "1" and env["HF_HOME"] == "/workspace/hf"  # merged
    assert env["HF_TOKEN"] == SECRET_REF and DEMO_SECRETS["hf_token"] not in str(made)  # the reference only
    assert "JUPYTER_PASSWORD" in env  # the template starts Jupyter
    assert made["template"] == LORA and v2.get(f"/v2/pods/{made['id']}").json()["template"] == LORA
    # a template in use stays until its pod is gone
    assert made["id"] in problem(v2.delete(f"/v2/templates/{LORA}"), 400)
    assert v2.delete(f"/v2/pods/{made['id']}").status_code == 204
    assert v2.delete(f"/v2/templates/{LORA}").status_code == 204


def test_every_public_pod_template_makes_a_pod(v2: httpx.Client) -> None:
    # RunPod's own PyTorch template constrains no CUDA version (docs/runpod-facts.md#templates): none here does, so
    # the catalogue's stock is what a pod from any of them gets
    for source in ("official", "verified", "community"):
        for template in v2.get("/v2/catalog/templates", params={"source": source}).json()["templates"]:
            if template["serverless"] or template["category"] == "CPU":
                continue
            assert template["allowedCudaVersions"] == [], template["name"]
            r = create(v2, templateId=template["id"])
            assert r.status_code == 201, (template["name"], r.text)
            assert r.json()["image"] == template["image"] and r.json()["template"] == template["id"]


def test_a_templates_cuda_versions_apply_unless_the_body_names_its_own(v2: httpx.Client) -> None:
    made = v2.post("/v2/templates", json={"name": "cu128", "image": "ubuntu:22.04", "allowedCudaVersions": ["12.8"]})
    assert made.status_code == 201, made.text
    tid = made.json()["id"]
    # the template's CUDA 12.8, which the simulated machines (12.4) do not meet: no stock...
    assert "no longer any instances" in problem(create(v2, templateId=tid), 400)
    # ... unless the body names its own CUDA, which replaces the template's
    r = create(v2, templateId=tid, gpu={"id": R3090, "minCudaVersion": "12.0"})
    assert r.status_code == 201, r.text
    assert r.json()["image"] == "ubuntu:22.04" and r.json()["template"] == tid


def test_a_cpu_pod_from_a_template(v2: httpx.Client) -> None:
    cpu = v2.post("/v2/pods", json={"name": "cpu", "templateId": LORA, "cpu": {"id": "cpu3c", "vcpuCount": 2}})
    assert cpu.status_code == 201, cpu.text
    assert cpu.json()["mounts"] == {}  # a CPU pod takes no persistent mount from its template


@pytest.mark.parametrize(
    ("mounts", "wanted"),
    [
        (None, {"persistent": {"size": 50, "path": "/workspace"}}),  # the template's
        ({}, {"persistent": {"size": 50, "path": "/workspace"}}),  # {}: no change, so the template's too
        ({"persistent": {"size": 20, "path": "/w"}}, {"persistent": {"size": 20, "path": "/w"}}),  # the body's
    ],
)
def test_a_templates_mount_applies_unless_the_body_names_one(
    v2: httpx.Client, mounts: dict[str, Any] | None, wanted: dict[str, Any]
) -> None:
    body: dict[str, Any] = {} if mounts is None else {"mounts": mounts}
    r = create(v2, templateId=LORA, **body)
    assert r.status_code == 201, r.text
    assert r.json()["mounts"] == wanted and v2.get(f"/v2/pods/{r.json()['id']}").json()["mounts"] == wanted


def test_a_network_mount_replaces_a_templates_mount(v2: httpx.Client) -> None:
    volume = next(v for v in v2.get("/v2/network-volumes").json()["networkVolumes"] if v["name"] == "datasets")
    mount = {"network": [{"volumeId": volume["id"], "path": "/data"}]}
    r = create(v2, templateId=LORA, mounts=mount, cloud="COMMUNITY")
    assert r.status_code == 201, r.text
    assert r.json()["mounts"] == mount and r.json()["dataCenterId"] == volume["dataCenter"]


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"templateId": "nosuchtpl"}, 404, "nosuchtpl"),
        ({"templateId": "runpod-worker-vllm"}, 422, "serverless"),
        ({"templateId": ""}, 400, "schema"),
        ({}, 400, "schema"),  # no image and no template
    ],
)
def test_a_pod_from_a_template_refused(
    v2: httpx.Client, sim: SimApiServer, body: dict[str, Any], status: int, said: str
) -> None:
    before = set(sim.world.pods)
    assert said in problem(create(v2, **body), status)
    assert set(sim.world.pods) == before


def test_the_container_sees_the_secrets_values(full_sim: Simulator) -> None:
    with httpx.Client(
        base_url=full_sim.api.url, headers={"Authorization": f"Bearer {full_sim.api.api_key}"}, timeout=10
    ) as v2:
        made = create(v2, templateId=LORA, env={"TYPO": "{{ RUNPOD_SECRET_hf_tokn }}"}).json()
        assert v2.get(f"/v2/pods/{made['id']}").json()["env"]["HF_TOKEN"] == SECRET_REF
    machine = full_sim.gateway.machine(full_sim.world.pods[made["id"]])
    proc = machine.spawn_exec('printf "%s|%s|%s" "$HF_TOKEN" "$WANDB_API_KEY" "${TYPO-unset}"')
    out, _ = proc.communicate(timeout=30)
    assert out.decode().split("|") == [
        DEMO_SECRETS["hf_token"],
        DEMO_SECRETS["wandb_key"],
        "unset",  # no such secret: the variable is not set
    ]
    # a secret changed later reaches the container when it starts again, not before
    full_sim.world.secrets["hf_token"] = "hf_rotated"
    again = machine.spawn_exec('printf "%s" "$HF_TOKEN"').communicate(timeout=30)[0].decode()
    assert again == DEMO_SECRETS["hf_token"]
    full_sim.world.clock.advance(60)
    full_sim.world.restart(made["id"])
    assert machine.spawn_exec('printf "%s" "$HF_TOKEN"').communicate(timeout=30)[0].decode() == "hf_rotated"
