"""The create-pod spec: every field checked and refused by name, its choices in order, and the cost computed
before anything is sent. (What it becomes on the wire: test_create_request.py.)"""

from __future__ import annotations

import dataclasses

import pytest

from podtui.core.api import InvalidInput
from podtui.core.gpu import Cloud, GpuType
from podtui.core.pod_spec import (
    DEFAULT_IMAGE,
    IMAGES,
    MAX_CHOICES,
    Choice,
    PodSpec,
    SpecError,
    check_count,
    check_gb,
    check_image,
    check_mount,
    check_name,
    check_volume_gb,
    parse_env,
    parse_ports,
    spec_cost,
)

HOSTILE = ['quote " and \\" backslash', "braces } { ) ( ] [", "ünïcödé 名前 🚀", "$var @dir ... on Pod"]


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
    assert s.image == DEFAULT_IMAGE and s.ports == "8888/http,22/tcp" and s.start_ssh
    assert s.direct_ssh and s.cloud is Cloud.COMMUNITY and s.port_list == ["8888/http", "22/tcp"]
    # direct SSH is 22/tcp published (docs/runpod-facts.md#ssh-direct); no public-IP flag in v2
    assert not spec(ports="8888/http").direct_ssh and spec(ports="").port_list == []
    assert not hasattr(s, "support_public_ip")


def test_volumes_below_runpods_floor_are_refused() -> None:
    assert check_volume_gb("0") == 0 and check_volume_gb(10) == 10 and check_volume_gb("4000") == 4000
    for bad in ("1", 9, "4001", "-1"):
        with pytest.raises(ValueError, match=r"10 to 4000|whole number"):
            check_volume_gb(bad)
    with pytest.raises(SpecError, match="volume_gb"):
        spec(volume_gb=5).validate()


def test_choices_in_order_without_repeats() -> None:
    s = spec(
        gpu_count=2,
        fallbacks=(
            Choice("NVIDIA GeForce RTX 3090", 2, Cloud.COMMUNITY),  # the first choice again
            Choice("NVIDIA GeForce RTX 3090", 2, Cloud.SECURE),
            Choice("NVIDIA RTX A5000", 2, Cloud.COMMUNITY),
        ),
    )
    assert [c.label for c in s.choices] == [
        "2 x NVIDIA GeForce RTX 3090 (community cloud)",
        "2 x NVIDIA GeForce RTX 3090 (secure cloud)",
        "2 x NVIDIA RTX A5000 (community cloud)",
    ]
    assert s.lines()[1:4] == [
        "gpu        2 x NVIDIA GeForce RTX 3090 (community cloud)",
        "  or then  2 x NVIDIA GeForce RTX 3090 (secure cloud)",
        "  or then  2 x NVIDIA RTX A5000 (community cloud)",
    ]
    too_many = tuple(Choice(f"GPU {i}") for i in range(MAX_CHOICES))
    with pytest.raises(SpecError, match="choices"):
        spec(fallbacks=too_many).validate()
    with pytest.raises(SpecError) as e:
        spec(fallbacks=(Choice(" "), Choice("X", 9))).validate()
    assert {"gpu", "count"} <= set(e.value.problems)


def test_data_centres() -> None:
    assert spec(data_centre_ids=("US-KS-2", "EU-RO-1")).validate().lines()[-2] == (
        "where      US-KS-2, EU-RO-1 (RunPod picks one)"
    )
    for bad in ("", "a b", "x/y", "../x", "US-KS-2?x=1", "é"):
        with pytest.raises(SpecError, match="data_centre_ids"):
            spec(data_centre_ids=(bad,)).validate()


def test_cost_before_creating() -> None:
    gpu = GpuType("NVIDIA GeForce RTX 3090", "RTX 3090", 24, secure_price=0.43, community_price=0.22)
    c = spec_cost(gpu, Cloud.COMMUNITY, 2, 20, 50)
    assert c is not None
    # 2 x $0.22 + (20 GB container + 50 GB volume) x $0.10/GB/month over 730 hours
    assert c.gpu_per_hr == pytest.approx(0.44)
    assert c.storage_per_hr == pytest.approx(7.0 / 730)
    assert c.per_hr == pytest.approx(0.44 + 7.0 / 730) and c.per_day == pytest.approx(c.per_hr * 24)
    assert c.stopped_per_hr == pytest.approx(50 * 0.20 / 730)
    assert c.line().startswith("$0.450/hr, $10.79/day while running")
    secure_only = GpuType("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB", 40, secure_price=1.19)
    assert spec_cost(secure_only, Cloud.COMMUNITY, 1, 20, 0) is None
