"""The create-pod spec: every field checked, every string reaching the simulator intact or refused by name, and
the cost computed before anything is sent."""

from __future__ import annotations

import dataclasses

import pytest
from graphql import parse
from graphql.language import ObjectValueNode, OperationDefinitionNode, print_ast

from podtui.core.api import InvalidInput, SdkApi
from podtui.core.api.queries import create_pod_mutation
from podtui.core.gpu import Cloud
from podtui.core.pod_spec import (
    DEFAULT_IMAGE,
    IMAGES,
    PodSpec,
    SpecError,
    check_count,
    check_gb,
    check_image,
    check_mount,
    check_name,
    parse_env,
    parse_ports,
    spec_cost,
)
from podtui.sim.server import SimApiServer

HOSTILE = [
    'quote " and \\" backslash',
    "braces } { ) ( ] [",
    '"}) { podTerminate(input: {podId: "q7x2m9fk4r8t1a"}) } #',
    "ünïcödé 名前 🚀",
    "$var @dir ... on Pod",
]


def spec(**kw: object) -> PodSpec:
    base = PodSpec(name="t", gpu_type_id="NVIDIA GeForce RTX 3090")
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "image",
    [
        *IMAGES,
        "ubuntu",
        "ubuntu:22.04",
        "ghcr.io/org/repo/img:v1.2-cu121",
        "localhost:5000/a_b/c__d:x",
        "nvcr.io/nvidia/pytorch:24.01-py3",
        "runpod/pytorch@sha256:" + "a" * 64,
        "localhost/img",
        "Registry.Example.com/x",
        "registry:5000/team/img:1",
    ],
)
def test_image_references_that_are_fine(image: str) -> None:
    assert check_image(image) == image


@pytest.mark.parametrize(
    "image",
    [
        "",
        "Runpod/PyTorch",
        "runpod/pytorch:",
        "a b",
        'x"y',
        "img:ta\ng",
        "-img",
        "img:" + "t" * 200,
        "ftp://x/y",
        "a//b",
        "img:tag{1}",
        # review: an uppercase first component is not a registry (no "." or ":")
        "Runpod/pytorch",
        "MyOrg/img:1",
        "LOCALHOST/img",
        # review: non-ASCII letters and digits in a tag or a path
        "runpod/pytorch:tägé",
        "runpod/pytorch:\uff12",
        "rünpod/pytorch",
        "\uff52unpod/x",
    ],
)
def test_image_references_that_are_refused(image: str) -> None:
    with pytest.raises(ValueError):
        check_image(image)


def test_names() -> None:
    for name in HOSTILE:
        assert check_name(name) == name
    assert check_name("  padded  ") == "padded"
    for bad, why in (("", "name"), ("a\nb", "newlines"), ("tab\there", "control"), ("x" * 101, "100")):
        with pytest.raises(ValueError, match=why):
            check_name(bad)


def test_counts_and_disks() -> None:
    assert check_count("2") == 2 and check_count(8) == 8
    for bad in ("0", "9", "two", "1.5", True, -1, ""):
        with pytest.raises(ValueError, match="1 to 8"):
            check_count(bad)
    assert check_gb("50GB", (0, 100)) == 50 and check_gb(0, (0, 100)) == 0
    for bad in ("-1", "101", "ten", "1e3", 2.5):
        with pytest.raises(ValueError, match="whole number of GB"):
            check_gb(bad, (0, 100))
    assert check_mount("/workspace") == "/workspace"
    for bad in ("workspace", "/a b", "/x/../etc", '/x"'):
        with pytest.raises(ValueError):
            check_mount(bad)


def test_ports() -> None:
    assert parse_ports(" 8888/http, 22/TCP ,") == "8888/http,22/tcp"
    assert parse_ports("") == ""
    for bad, why in (
        ("22", "like"),
        ("22/udp", "like"),
        ("70000/tcp", "65535"),
        ("0/tcp", "65535"),
        ("22/tcp,22/http", "twice"),
        ('22/tcp"}', "like"),
    ):
        with pytest.raises(ValueError, match=why):
            parse_ports(bad)


def test_env() -> None:
    assert parse_env(["A=1", "B=x=y", "EMPTY="]) == (("A", "1"), ("B", "x=y"), ("EMPTY", ""))
    assert parse_env("HF_HOME=/workspace/hf\n\nWANDB_MODE=offline\n") == (
        ("HF_HOME", "/workspace/hf"),
        ("WANDB_MODE", "offline"),
    )
    for bad, why in (
        ("1A=x", "variable name"),
        ("A-B=x", "variable name"),
        ("NOEQUALS", "KEY=value"),
        ('A"=x', "variable name"),
        ("A=\0", "NUL"),
    ):
        with pytest.raises(ValueError, match=why):
            parse_env([bad])
    with pytest.raises(ValueError, match="twice"):
        parse_env(["A=1", "A=2"])


def test_validate_names_every_bad_field() -> None:
    bad = spec(
        name="",
        image="x y",
        gpu_count=9,
        container_gb=1,
        volume_gb=-5,
        ports="22",
        env=(("1", "x"),),
        volume_mount_path="rel",
        gpu_type_id=" ",
    )
    with pytest.raises(SpecError) as e:
        bad.validate()
    assert set(e.value.problems) == {
        "name",
        "image",
        "count",
        "container_gb",
        "volume_gb",
        "ports",
        "env",
        "volume_mount_path",
        "gpu",
    }
    assert isinstance(e.value, InvalidInput)


def test_defaults_ask_for_direct_ssh() -> None:
    s = spec()
    assert s.image == DEFAULT_IMAGE and s.ports == "8888/http,22/tcp" and s.support_public_ip and s.start_ssh
    assert s.direct_ssh and s.cloud is Cloud.COMMUNITY
    assert not spec(support_public_ip=False).direct_ssh and not spec(ports="8888/http").direct_ssh


def _input_fields(document: str) -> dict[str, object]:
    op = parse(document).definitions[0]
    assert isinstance(op, OperationDefinitionNode)
    field = op.selection_set.selections[0]
    assert len(op.selection_set.selections) == 1  # one mutation, nothing smuggled in beside it
    arg = field.arguments[0].value  # type: ignore[attr-defined]
    assert isinstance(arg, ObjectValueNode)
    return {f.name.value: f.value for f in arg.fields}


@pytest.mark.parametrize("text", HOSTILE)
def test_the_document_holds_hostile_strings_as_plain_values(text: str) -> None:
    doc = create_pod_mutation(spec(name=text, env=(("V", text + "\nsecond line\t\\"),)))
    fields = _input_fields(doc)
    assert fields["name"].value == text  # type: ignore[attr-defined]
    env = fields["env"].values[0]  # type: ignore[attr-defined]
    assert {f.name.value: f.value.value for f in env.fields} == {"key": "V", "value": text + "\nsecond line\t\\"}
    assert print_ast(fields["cloudType"]) == "COMMUNITY"  # an enum, not a string


def test_the_document_refuses_an_invalid_spec_before_building() -> None:
    with pytest.raises(SpecError, match="name"):
        create_pod_mutation(spec(name="two\nlines"))


def test_cost_before_creating(api: SdkApi) -> None:
    gpu = api.gpu_types().find("RTX 3090")
    c = spec_cost(gpu, Cloud.COMMUNITY, 2, 20, 50)
    assert c is not None
    # 2 x $0.22 + (20 GB container + 50 GB volume) x $0.10/GB/month over 730 hours
    assert c.gpu_per_hr == pytest.approx(0.44)
    assert c.storage_per_hr == pytest.approx(7.0 / 730)
    assert c.per_hr == pytest.approx(0.44 + 7.0 / 730) and c.per_day == pytest.approx(c.per_hr * 24)
    assert c.stopped_per_hr == pytest.approx(50 * 0.20 / 730)
    assert c.line().startswith("$0.450/hr, $10.79/day while running")
    assert spec_cost(api.gpu_types().find("A100 PCIe 40GB"), Cloud.COMMUNITY, 1, 20, 0) is None


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_reach_the_simulator_intact(api: SdkApi, sim: SimApiServer, text: str) -> None:
    created = api.create_pod(spec(name=text, env=(("NOTE", text + "\n{x}"), ("HF_TOKEN", "hf_" + "s" * 30))))
    pod = sim.world.pods[created.id]
    assert pod.name == text and created.name == text
    assert pod.env == {"NOTE": text + "\n{x}", "HF_TOKEN": "hf_" + "s" * 30}
    assert api.fetch_snapshot().find(created.id).env == (("NOTE", text + "\n{x}"), ("HF_TOKEN", "hf_" + "s" * 30))
    assert "q7x2m9fk4r8t1a" in sim.world.pods  # the pod named in the injection attempt is untouched
    assert sim.world.pods["q7x2m9fk4r8t1a"].status == "RUNNING"


def test_a_bad_spec_never_reaches_the_api(api: SdkApi, sim: SimApiServer) -> None:
    before = len(sim.requests)
    with pytest.raises(SpecError, match="env"):
        api.create_pod(spec(env=(("BAD KEY", "x"),)))
    assert len(sim.requests) == before
