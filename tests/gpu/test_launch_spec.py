"""Launching when GPUs are scarce, without a server: stock per data centre read from the catalogue, the candidates
in order (GPU types x clouds x data centres) with what is left out and why, a spec on a network volume or from a
template, what it becomes on the wire (checked against RunPod's contract) and what it shows and costs
(docs/launch.md)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from podtui.core.api.create import create_body
from podtui.core.gpu import Cloud, GpuType, Stock
from podtui.core.gpu.catalogue import DataCentreStock, GpuCatalogue
from podtui.core.pod_spec import (
    MAX_CHOICES,
    Candidates,
    Choice,
    PodSpec,
    SpecError,
    link_template,
    plan_candidates,
    spec_cost,
    spec_from_candidates,
    stocked_words,
    template_fill,
    unlinked_words,
)
from podtui.core.template import Template, parse_template
from podtui.core.volume import NetworkVolume
from tests.helpers.contract import check_request

R4090, R3090, A100 = "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090", "NVIDIA A100-PCIE-40GB"
C, S = Cloud.COMMUNITY, Cloud.SECURE


def gpu(
    gid: str,
    name: str,
    community: float | None,
    secure: float | None,
    where: dict[Cloud, list[tuple[str, Stock]]],
    failed: tuple[Cloud, ...] = (),
) -> GpuType:
    """A type whose one-GPU stock is the given data centres' (none where none is listed)."""
    stock = {}
    centres = {}
    for cloud in Cloud:
        if cloud in failed:
            stock[(cloud, 1)] = Stock.UNKNOWN
            continue
        listed = where.get(cloud, [])
        stock[(cloud, 1)] = min((s for _, s in listed), key=lambda s: s.order, default=Stock.NONE)
        if listed:
            centres[(cloud, 1)] = tuple(DataCentreStock(d, d.title(), s) for d, s in listed)
    return GpuType(gid, name, 24, secure, community, {C: 8, S: 8}, stock, centres)


G4090 = gpu(R4090, "RTX 4090", 0.40, 0.69, {C: [("EU-RO-1", Stock.LOW), ("US-KS-2", Stock.HIGH)]})
G3090 = gpu(R3090, "RTX 3090", 0.22, 0.43, {C: [("EU-SE-1", Stock.HIGH)], S: [("EU-RO-1", Stock.MEDIUM)]})
GA100 = gpu(A100, "A100 PCIe 40GB", None, 1.19, {}, failed=(S,))
CATALOGUE = GpuCatalogue((G3090, G4090, GA100))
VOLUME = NetworkVolume("vol1abc", "datasets", 100, "EU-RO-1", "STANDARD")
TEMPLATE = Template(
    "tpl42",
    "My LoRA",
    "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
    disk_gb=40,
    volume_gb=30,
    volume_path="/data",
    ports=("8888/http", "22/tcp", "6006/http"),
    env=(("HF_HOME", "/data/hf"), ("WANDB_MODE", "offline")),
    start_ssh=True,
)


def valid(body: dict[str, object]) -> list[str]:
    return check_request("POST", "/v2/pods", body=json.dumps(body), headers=None)


# --- stock per data centre ----------------------------------------------------------------------------------


def test_stock_in_one_data_centre() -> None:
    assert G4090.stock_in(C, 1, "US-KS-2") is Stock.HIGH
    assert G4090.stock_in(C, 1, "EU-RO-1") is Stock.LOW
    assert G4090.stock_in(C, 1, "EU-SE-1") is Stock.NONE  # not listed: dataCenters names only those that have it
    assert G4090.stock_in(S, 1, "US-KS-2") is Stock.NONE  # nowhere on secure cloud
    assert GA100.stock_in(S, 1, "US-TX-3") is Stock.UNKNOWN  # that answer failed: not known, never "none"
    assert GA100.stock_in(C, 1, "US-TX-3") is Stock.NONE  # community cloud does not carry it
    # a level without data centres says nothing about any one of them
    odd = dataclasses.replace(G4090, data_centres={})
    assert odd.stock_in(C, 1, "US-KS-2") is Stock.UNKNOWN and odd.where_words(C) == "data centres not said"


def test_where_words_list_the_most_stock_first() -> None:
    assert G4090.where_words(C) == "US-KS-2 high, EU-RO-1 low"
    assert G4090.where_words(C, most=1) == "US-KS-2 high +1 more"
    assert G4090.where_words(S) == "none free"
    assert GA100.where_words(C) == "not on community cloud" and GA100.where_words(S) == "stock not known"
    assert [g.display_name for g in CATALOGUE.stocked_in("EU-RO-1", C)] == ["RTX 4090"]
    assert stocked_words(CATALOGUE, "EU-RO-1") == (
        "free in EU-RO-1 now: on secure cloud RTX 3090 (medium); on community cloud RTX 4090 (low)"
    )
    assert stocked_words(CATALOGUE, "AP-JP-1") == "RunPod's catalogue shows no GPU type free in AP-JP-1 now"


# --- candidates ---------------------------------------------------------------------------------------------


def test_candidates_are_types_then_clouds_then_data_centres_in_the_order_given() -> None:
    planned = plan_candidates([G4090, G3090], [C, S], 1, ["US-KS-2", "EU-RO-1"])
    assert [c.label for c in planned.choices] == [
        f"1 x {R4090} (community cloud) in US-KS-2",
        f"1 x {R4090} (community cloud) in EU-RO-1",
        f"1 x {R3090} (secure cloud) in EU-RO-1",
    ]
    assert planned.skipped == (
        "1 x RTX 4090 (secure cloud) in US-KS-2: none free there now",
        "1 x RTX 4090 (secure cloud) in EU-RO-1: none free there now",
        "1 x RTX 3090 (community cloud) in US-KS-2: none free there now",
        "1 x RTX 3090 (community cloud) in EU-RO-1: none free there now",
        "1 x RTX 3090 (secure cloud) in US-KS-2: none free there now",
    )


def test_without_data_centres_every_offered_cloud_is_tried_stock_or_not() -> None:
    planned = plan_candidates([G4090, GA100, G4090], [C, S], 1)
    # the catalogue lags the market: a type without stock is still asked for, but never where it is not offered
    assert planned.choices == (Choice(R4090, 1, C), Choice(R4090, 1, S), Choice(A100, 1, S))
    assert planned.skipped == ("A100 PCIe 40GB is not offered on community cloud",)
    # more GPUs than one machine of that cloud has
    small = dataclasses.replace(G4090, max_counts={C: 2, S: 8})
    assert plan_candidates([small], [C, S], 4).skipped == (
        "RunPod offers at most 2 x RTX 4090 on one community cloud pod",
    )


def test_a_stock_not_known_is_tried() -> None:
    planned = plan_candidates([GA100], [S], 1, ["US-TX-3"])
    assert planned.choices == (Choice(A100, 1, S, "US-TX-3"),) and planned.skipped == ()


def test_the_spec_tries_its_candidates_in_order_and_names_each_data_centre() -> None:
    planned = plan_candidates([G4090, G3090], [C, S], 1, ["EU-RO-1"])
    spec = spec_from_candidates(PodSpec("p", "placeholder", volume_gb=0), planned).validate()
    assert spec.choices == planned.choices
    assert (spec.gpu_type_id, spec.cloud, spec.data_centre_id) == (R4090, C, "EU-RO-1")
    bodies = [create_body(spec, c) for c in spec.choices]
    assert [(b["gpu"], b["cloud"], b["dataCenterIds"]) for b in bodies] == [
        ({"id": R4090, "count": 1}, "COMMUNITY", ["EU-RO-1"]),
        ({"id": R3090, "count": 1}, "SECURE", ["EU-RO-1"]),
    ]
    assert all(valid(b) == [] for b in bodies)
    assert spec.lines()[1:3] == [
        f"gpu        1 x {R4090} (community cloud) in EU-RO-1",
        f"  or then  1 x {R3090} (secure cloud) in EU-RO-1",
    ]
    with pytest.raises(ValueError, match="no GPU choice"):
        spec_from_candidates(spec, Candidates(()))


def test_a_choice_without_its_own_data_centre_takes_the_specs() -> None:
    spec = PodSpec("p", R4090, data_centre_ids=("US-KS-2", "EU-RO-1"), fallbacks=(Choice(R3090, 1, C, "EU-SE-1"),))
    assert create_body(spec, spec.choices[0])["dataCenterIds"] == ["US-KS-2", "EU-RO-1"]  # any of them
    assert create_body(spec, spec.choices[1])["dataCenterIds"] == ["EU-SE-1"]


def test_every_candidates_data_centre_is_checked_and_there_is_a_limit() -> None:
    with pytest.raises(SpecError, match="data_centre_ids"):
        PodSpec("p", R4090, fallbacks=(Choice(R3090, 1, C, "EU RO 1"),)).validate()
    with pytest.raises(SpecError, match="data_centre_ids"):
        PodSpec("p", R4090, data_centre_id="../x").validate()
    many = tuple(Choice(R3090, 1, C, f"DC-{i}") for i in range(MAX_CHOICES))
    with pytest.raises(SpecError, match="choices"):
        PodSpec("p", R4090, fallbacks=many).validate()


# --- a network volume ---------------------------------------------------------------------------------------


def test_a_pod_on_a_network_volume() -> None:
    spec = PodSpec(
        "on-vol",
        R4090,
        volume_gb=0,
        volume_mount_path="/workspace",
        data_centre_ids=(VOLUME.data_centre,),
        network_volume_id=VOLUME.id,
    ).validate()
    body = create_body(spec, spec.choices[0])
    assert body["mounts"] == {"network": [{"volumeId": "vol1abc", "path": "/workspace"}]}
    assert body["dataCenterIds"] == ["EU-RO-1"] and "templateId" not in body and valid(body) == []
    lines = spec.lines(VOLUME)
    assert (
        "disk       container 20 GB, network volume datasets (vol1abc, 100 GB in EU-RO-1, $7.00/month) at "
        "/workspace" in lines
    )
    assert "where      EU-RO-1 (the network volume's)" in lines
    assert "network volume vol1abc at /workspace" in spec.lines()[3]  # the record not at hand: its id
    # a network volume or a volume of its own, never both; an id goes into the body as it is
    with pytest.raises(SpecError, match=r"network_volume_id.*no volume of its own"):
        dataclasses.replace(spec, volume_gb=50).validate()
    for bad in ("", "a b", "vol/../x", "v\n1", "x" * 65):
        with pytest.raises(SpecError, match="network_volume_id"):
            dataclasses.replace(spec, network_volume_id=bad).validate()


def test_the_cost_on_a_network_volume_says_its_monthly_price_apart() -> None:
    cost = spec_cost(G4090, C, 1, 20, 0, VOLUME)
    assert cost is not None
    assert cost.per_hr == pytest.approx(0.40 + 20 * 0.10 / 730) and cost.network_per_month == pytest.approx(7.0)
    assert cost.line().endswith("; network volume $7.00/month, with or without the pod")
    own = spec_cost(G4090, C, 1, 20, 50)
    assert own is not None and own.network_per_month == 0 and own.line().endswith("$0.33/day for the volume")


# --- a template ---------------------------------------------------------------------------------------------


def test_a_template_fills_the_fields_and_leaves_out_what_it_leaves_out() -> None:
    fill = template_fill(TEMPLATE)
    assert (fill.image, fill.container_gb, fill.volume_gb, fill.volume_mount_path) == (TEMPLATE.image, 40, 30, "/data")
    assert fill.ports == "8888/http,22/tcp,6006/http" and fill.env == TEMPLATE.env and fill.start_ssh
    bare = template_fill(Template("t0", "bare", "ubuntu:22.04"))
    assert (bare.volume_gb, bare.ports, bare.env, bare.container_gb) == (0, "", (), 20)  # no volume, no ports


@pytest.mark.parametrize(
    ("odd", "why"),
    [
        ({"serverless": True}, "serverless template"),
        ({"image": "Not An Image!"}, "not an image reference"),
        ({"ports": ("8888",)}, "write ports like"),
        ({"volume_gb": 5}, "RunPod's smallest volume"),
        ({"env": (("1BAD", "x"),)}, "not a variable name"),
    ],
)
def test_a_template_runpod_would_refuse_is_named(odd: dict[str, object], why: str) -> None:
    with pytest.raises(ValueError, match=rf"template My LoRA \(tpl42\): .*{why}"):
        template_fill(dataclasses.replace(TEMPLATE, **odd))  # type: ignore[arg-type]


def test_the_template_id_goes_with_the_values_taken_from_it() -> None:
    fill = template_fill(TEMPLATE)
    spec = PodSpec(
        "from-tpl",
        R4090,
        image=fill.image,
        container_gb=fill.container_gb,
        volume_gb=fill.volume_gb,
        volume_mount_path=fill.volume_mount_path,
        ports=fill.ports,
        env=fill.env,
        template_id=TEMPLATE.id,
    ).validate()
    body = create_body(spec, spec.choices[0])
    assert body["templateId"] == "tpl42" and body["mounts"] == {"persistent": {"size": 30, "path": "/data"}}
    assert body["env"] == {"HF_HOME": "/data/hf", "WANDB_MODE": "offline"} and valid(body) == []
    assert "template   My LoRA (tpl42)" in spec.lines(template=TEMPLATE)
    assert "template   tpl42" in spec.lines()
    assert link_template(spec, TEMPLATE) == (spec, ())  # every env key and the mount kept: linked as it is
    # on a network volume the template's volume gives way: still linked
    on_vol = dataclasses.replace(spec, volume_gb=0, network_volume_id=VOLUME.id, data_centre_ids=("EU-RO-1",))
    assert link_template(on_vol, TEMPLATE) == (on_vol, ())
    assert create_body(on_vol, on_vol.choices[0])["mounts"] == {"network": [{"volumeId": "vol1abc", "path": "/data"}]}
    with pytest.raises(SpecError, match="template_id"):
        dataclasses.replace(spec, template_id="tpl 42").validate()


def test_a_spec_that_drops_what_the_template_gives_is_sent_without_it() -> None:
    """RunPod merges the template's env per key and applies its mount when the body names none: a spec that
    removed an env key or the volume would get them back, so it goes whole, without templateId, and says so."""
    fill = template_fill(TEMPLATE)
    spec = PodSpec(
        "from-tpl",
        R4090,
        image=fill.image,
        volume_gb=fill.volume_gb,
        volume_mount_path=fill.volume_mount_path,
        env=fill.env,
        template_id=TEMPLATE.id,
    )
    for changed, removed in (
        (dataclasses.replace(spec, env=(("HF_HOME", "/data/hf"),)), ("env WANDB_MODE",)),
        (dataclasses.replace(spec, volume_gb=0), ("its 30 GB volume",)),
        (dataclasses.replace(spec, volume_gb=0, env=()), ("env HF_HOME", "env WANDB_MODE", "its 30 GB volume")),
    ):
        sent, said = link_template(changed, TEMPLATE)
        assert said == removed and sent.template_id is None
        body = create_body(sent.validate(), sent.choices[0])
        assert "templateId" not in body and valid(body) == []
        assert body["env"] == dict(changed.env) and ("mounts" in body) is bool(changed.volume_gb)
        line = unlinked_words(TEMPLATE, said)
        assert line.startswith("template   My LoRA (tpl42): not linked to the template: you removed ") and all(
            r in line for r in removed
        )
    # a value changed, a key added, a volume of another size: the body's win, the link stays
    kept = dataclasses.replace(spec, env=(("HF_HOME", "/x"), ("WANDB_MODE", "online"), ("MORE", "1")), volume_gb=99)
    assert link_template(kept, TEMPLATE) == (kept, ())
    # a template not at hand, or another one: nothing known, nothing changed
    assert link_template(dataclasses.replace(spec, env=()), None)[1] == ()
    assert link_template(spec, dataclasses.replace(TEMPLATE, id="other")) == (spec, ())


def test_a_templates_start_command_and_registry_stay_when_it_is_not_linked() -> None:
    """RunPod takes a template's args and registry only through templateId: a spec sent without it carries them,
    so unlinking changes only what the user removed."""
    parsed = parse_template(
        {"id": "tpl9", "name": "private", "image": "ghcr.io/me/img:1", "args": "--serve", "registry": "reg_abc"}, []
    )
    assert parsed is not None and (parsed.args, parsed.registry) == ("--serve", "reg_abc")
    problems: list[str] = []
    shared = parse_template({"id": "tpl8", "name": "n", "image": "ubuntu:22.04", "registry": None}, problems)
    assert shared is not None and shared.registry is None and problems == []  # RunPod hides others' registries
    template = dataclasses.replace(TEMPLATE, args="python serve.py --port 8000", registry="reg_abc")
    fill = template_fill(template)
    assert (fill.args, fill.registry) == ("python serve.py --port 8000", "reg_abc")
    spec = PodSpec("p", R4090, image=fill.image, volume_gb=0, env=fill.env, template_id=template.id)
    sent, removed = link_template(spec, template)
    assert removed == ("its 30 GB volume",) and sent.template_id is None
    body = create_body(sent.validate(), sent.choices[0])
    assert body["args"] == "python serve.py --port 8000" and body["registry"] == "reg_abc" and valid(body) == []
    lines = sent.lines(template=template)
    assert "command    python serve.py --port 8000" in lines
    assert "registry   reg_abc (the login RunPod pulls the image with)" in lines
    said = unlinked_words(template, removed)
    assert said.endswith(
        "the pod gets exactly the values above, the template's start command and registry login included"
    )
    # a template without them: neither is sent nor said
    plain = create_body(*(lambda s: (s, s.choices[0]))(link_template(spec, TEMPLATE)[0]))
    assert "args" not in plain and "registry" not in plain
    assert unlinked_words(TEMPLATE, removed).endswith("the pod gets exactly the values above")
    # what RunPod would refuse is refused first, with the template or the field named
    with pytest.raises(ValueError, match=r"template My LoRA \(tpl42\): 'reg abc' is not a registry credential id"):
        template_fill(dataclasses.replace(TEMPLATE, registry="reg abc"))
    with pytest.raises(ValueError, match="NUL byte"):
        template_fill(dataclasses.replace(TEMPLATE, args="a\0b"))
    with pytest.raises(SpecError, match="registry"):
        dataclasses.replace(sent, registry="a/b").validate()
    with pytest.raises(SpecError, match="args"):
        dataclasses.replace(sent, args="x" * 40_000).validate()


def test_a_templates_jupyter_and_cuda_are_sent_and_said() -> None:
    template = dataclasses.replace(TEMPLATE, start_jupyter=True, cuda_versions=("12.8", "12.6"))
    fill = template_fill(template)
    assert fill.start_jupyter and fill.cuda_versions == ("12.8", "12.6")
    spec = PodSpec("j", R4090, image=fill.image, volume_gb=30, env=fill.env, template_id=template.id)
    sent, removed = link_template(spec, template)
    assert removed == () and sent.start_jupyter and sent.cuda_versions == ("12.8", "12.6")
    body = create_body(sent.validate(), sent.choices[0])
    assert body["startJupyter"] is True and body["templateId"] == "tpl42" and valid(body) == []
    assert body["gpu"] == {"id": R4090, "count": 1, "allowedCudaVersions": ["12.8", "12.6"]}
    lines = sent.lines(template=template)
    assert "jupyter    started: RunPod puts a JUPYTER_PASSWORD in the pod's env" in lines
    assert any(line.startswith("cuda       needs CUDA 12.8 or 12.6 (the template's)") for line in lines)
    # a template that does not start Jupyter: said explicitly, its own setting cannot apply unseen
    plain = create_body(*(lambda s: (s, s.choices[0]))(link_template(spec, TEMPLATE)[0]))
    assert plain["startJupyter"] is False and "allowedCudaVersions" not in plain["gpu"]  # type: ignore[operator]
    assert "startJupyter" not in create_body(PodSpec("x", R4090), Choice(R4090))  # no template: RunPod's default
    with pytest.raises(ValueError, match="not a CUDA version"):
        template_fill(dataclasses.replace(TEMPLATE, cuda_versions=("12",)))
    with pytest.raises(SpecError, match="cuda_versions"):
        dataclasses.replace(sent, cuda_versions=("twelve",)).validate()
