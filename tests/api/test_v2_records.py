"""RunPod's network volume, template and data-centre records: a malformed record is skipped and noted, a missing
list is an error in words, and nothing odd crashes the client (docs/architecture.md#runpods-api)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import pytest

from podtui.core.api import ApiResponseError, V2Api
from podtui.core.data_centre import parse_data_centres
from podtui.core.pod import PayloadError
from podtui.core.template import find_template, parse_template, parse_templates
from podtui.core.volume import find_volume, parse_volume, parse_volumes
from podtui.sim.server import SimApiServer

GOOD_VOLUME = {"id": "vol1", "name": "datasets", "size": 100, "dataCenter": "EU-RO-1", "type": "STANDARD"}
GOOD_TEMPLATE = {
    "id": "tpl1",
    "name": "trainer",
    "image": "runpod/pytorch:2.8.0",
    "args": "",
    "disk": 40,
    "mounts": {"persistent": {"size": 50, "path": "/workspace"}},
    "ports": ["8888/http", "22/tcp"],
    "env": {"HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}", "MODE": "train"},
    "registry": None,
    "serverless": False,
    "public": False,
    "category": "NVIDIA",
    "startSsh": True,
    "startJupyter": False,
    "allowedCudaVersions": ["12.8"],
}
# Each is wrong in one way a server, a proxy or a future RunPod could send.
ODD_RECORDS: list[object] = [
    None,
    "vol",
    7,
    [],
    {},
    {"id": ""},
    {"id": 5, "name": "x"},
    {"id": "x", "size": "big", "dataCenter": "EU-RO-1"},
    {"id": "x", "size": 10},
    {"id": "x", "size": 10, "dataCenter": ["EU"]},
    {"id": "x", "image": None},
    {"id": "x", "image": 3},
]


def test_a_good_volume_and_its_cost_and_users() -> None:
    problems: list[str] = []
    volume = parse_volume(GOOD_VOLUME, problems)
    assert volume is not None and not problems
    assert (volume.id, volume.name, volume.size_gb, volume.data_centre, volume.type) == (
        "vol1",
        "datasets",
        100,
        "EU-RO-1",
        "STANDARD",
    )
    assert volume.cost_per_month == pytest.approx(7.0)


def test_a_good_template() -> None:
    problems: list[str] = []
    template = parse_template(GOOD_TEMPLATE, problems)
    assert template is not None and not problems
    assert template.volume_gb == 50 and template.volume_path == "/workspace"
    assert template.ports == ("8888/http", "22/tcp") and template.cuda_versions == ("12.8",)
    assert dict(template.env)["HF_TOKEN"] == "{{ RUNPOD_SECRET_hf_token }}"
    assert "RUNPOD_SECRET" not in repr(template)  # env stays out of tracebacks


@pytest.mark.parametrize("raw", ODD_RECORDS)
def test_odd_records_are_skipped_with_a_note(raw: object) -> None:
    for parse in (parse_volume, parse_template):
        problems: list[str] = []
        assert parse(raw, problems) is None  # type: ignore[operator]
        assert problems and all(isinstance(p, str) and p for p in problems)


@pytest.mark.parametrize(
    ("parse", "key", "good"),
    [(parse_volumes, "networkVolumes", GOOD_VOLUME), (parse_templates, "templates", GOOD_TEMPLATE)],
)
def test_lists_keep_the_good_records(parse: Callable[[object], Any], key: str, good: dict[str, object]) -> None:
    items, problems = parse({key: [*ODD_RECORDS, good]})
    assert [i.id for i in items] == [good["id"]]
    assert len(problems) >= len(ODD_RECORDS)
    for payload in (None, [], {}, {key: None}, {key: "x"}, "<html>"):
        with pytest.raises(PayloadError):
            parse(payload)


def test_template_env_that_is_not_text_is_left_out_and_said() -> None:
    problems: list[str] = []
    template = parse_template({**GOOD_TEMPLATE, "env": {"A": "1", "B": 2, "C": None}}, problems)
    assert template is not None and dict(template.env) == {"A": "1"}
    assert any("env value is not text" in p for p in problems)


def test_data_centres() -> None:
    payload = {
        "dataCenters": [
            {"id": "EU-RO-1", "name": "Europe Romania 1", "region": "EUROPE", "networkVolumeTypes": ["STANDARD"]},
            {"id": "US-X", "name": "US X", "region": 5, "networkVolumeTypes": []},
            {"name": "no id"},
            None,
        ]
    }
    centres, problems = parse_data_centres(payload)
    assert [(c.id, c.takes_volumes, c.region) for c in centres] == [("EU-RO-1", True, "EUROPE"), ("US-X", False, None)]
    assert len(problems) == 3
    with pytest.raises(PayloadError):
        parse_data_centres({"dataCenters": {}})


def test_finding_by_id_or_name_says_what_is_wrong() -> None:
    a = parse_volume(GOOD_VOLUME, [])
    b = parse_volume({**GOOD_VOLUME, "id": "vol2"}, [])
    assert a is not None and b is not None
    assert find_volume((a, b), "vol2") is b
    with pytest.raises(LookupError, match="2 network volumes are called 'datasets' \\(vol1, vol2\\)"):
        find_volume((a, b), "datasets")
    with pytest.raises(LookupError, match="no network volume is called or has the id 'nope'"):
        find_volume((a, b), "nope")
    t = parse_template(GOOD_TEMPLATE, [])
    assert t is not None and find_template((t,), "trainer") is t
    with pytest.raises(LookupError, match="no template"):
        find_template((t,), "x")


@pytest.mark.parametrize(
    ("call", "what"),
    [
        (lambda api: api.network_volumes(), "network volumes"),
        (lambda api: api.templates(), "templates"),
        (lambda api: api.public_templates(), "public templates"),
        (lambda api: api.data_centres(), "data centres"),
    ],
)
def test_a_list_answer_without_its_list_is_an_error_in_words(
    api: V2Api, sim: SimApiServer, call: Callable[[V2Api], object], what: str
) -> None:
    sim.faults.add("raw", json.dumps({"pods": []}), times=1)
    with pytest.raises(ApiResponseError, match=f"RunPod's answer listing {what} was incomplete"):
        call(api)


def test_odd_records_in_a_list_answer_are_logged_once_each(
    api: V2Api, sim: SimApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    sim.faults.add("raw", json.dumps({"networkVolumes": [GOOD_VOLUME, {"id": "bad\x1b[2J"}]}), times=1)
    with caplog.at_level(logging.WARNING):
        volumes = api.network_volumes()
    assert [v.id for v in volumes] == ["vol1"]
    assert any("network volume bad" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "call",
    [
        lambda api: api.create_network_volume("x", 10, "EU-RO-1"),
        lambda api: api.update_network_volume("vol1", name="y"),
        lambda api: api.template("tpl1"),
        lambda api: api.create_template({"name": "x", "image": "y"}),
        lambda api: api.update_pod("abc", {"name": "y"}),
    ],
)
def test_a_single_record_answer_that_is_not_one_is_an_error_in_words(
    api: V2Api, sim: SimApiServer, call: Callable[[V2Api], object]
) -> None:
    sim.faults.add("raw", json.dumps({"unexpected": True}), times=1)
    with pytest.raises(ApiResponseError, match="RunPod's answer"):
        call(api)


def test_refused_before_sending(api: V2Api) -> None:
    from podtui.core.api import InvalidInput

    with pytest.raises(InvalidInput, match="nothing to change"):
        api.update_network_volume("vol1")
    with pytest.raises(InvalidInput, match="refused to send id"):
        api.delete_network_volume("../pods")
    with pytest.raises(InvalidInput, match="refused to send id"):
        api.update_pod("a/b", {"name": "x"})
