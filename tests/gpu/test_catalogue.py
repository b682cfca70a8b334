"""REST v2's GPU catalogue: parsing that keeps every good entry, shows an unknown availability as unknown and skips
a malformed entry with a note; and the requests per cloud and count, over real HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from podtui.core.api import ApiAuthError, ApiResponseError, ApiUnavailable
from podtui.core.api.catalog import fetch_catalogue
from podtui.core.gpu import Cloud, Stock, parse_answer
from podtui.core.gpu.catalogue import STOCK_COUNTS, Answer, merge_answers
from tests.helpers.scripted_api import Reply, ScriptedApi, Sent, problem

R3090 = "NVIDIA GeForce RTX 3090"
H100 = "NVIDIA H100 80GB HBM3"


def good(gid: str = R3090, **extra: Any) -> dict[str, Any]:
    """A GPU type as RunPod's catalogue answers it with include=AVAILABILITY."""
    entry: dict[str, Any] = {
        "id": gid,
        "name": " ".join(gid.split()[-2:]),
        "pool": "AMPERE_24",
        "manufacturer": "NVIDIA",
        "memory": 24,
        "secure": True,
        "community": True,
        "price": {"secure": 0.43, "community": 0.22, "serverless": 0.9},
        "maxCount": {"secure": 8, "community": 8},
        "availability": "HIGH",
        "dataCenters": [{"id": "EU-RO-1", "name": "Romania 1", "availability": "HIGH"}],
    }
    entry.update(extra)
    return entry


def test_a_good_entry() -> None:
    answer = parse_answer({"gpus": [good()]})
    (entry,) = answer.entries
    g = entry.gpu
    assert (g.id, g.display_name, g.memory_gb, g.community_price, g.secure_price) == (R3090, "RTX 3090", 24, 0.22, 0.43)
    assert g.max_counts == {Cloud.SECURE: 8, Cloud.COMMUNITY: 8} and g.max_count == 8
    assert entry.stock is Stock.HIGH and entry.stock.available
    assert [(d.id, d.name, d.stock) for d in entry.data_centres] == [("EU-RO-1", "Romania 1", Stock.HIGH)]
    assert answer.problems == ()


def test_unknown_fields_are_ignored() -> None:
    answer = parse_answer({"gpus": [good(cudaVersions=[{"version": "12.8"}], futureField={"x": 1})], "next": "p2"})
    assert len(answer.entries) == 1 and answer.problems == ()


def test_nulls_mean_not_offered_or_not_known() -> None:
    answer = parse_answer(
        {
            "gpus": [
                good(
                    price={"secure": None, "community": 0},
                    maxCount=None,
                    availability=None,
                    dataCenters=None,
                    pool=None,
                ),
                good("NVIDIA A100-PCIE-40GB", community=False, price={"secure": 1.19, "community": 0.99}),
            ]
        }
    )
    first, second = (e.gpu for e in answer.entries)
    assert first.secure_price is None and first.community_price is None  # 0 is not free: not offered
    assert first.max_counts == {} and first.max_count is None
    assert answer.entries[0].stock is Stock.UNKNOWN and answer.entries[0].data_centres == ()
    assert second.community_price is None and second.secure_price == 1.19  # community: false wins over a price
    assert answer.problems == ()


@pytest.mark.parametrize("level", ["PLENTY", "", 3, ["HIGH"], {"level": "HIGH"}])
def test_an_unknown_availability_is_shown_as_unknown(level: object) -> None:
    answer = parse_answer({"gpus": [good(availability=level)]})
    assert answer.entries[0].stock is Stock.UNKNOWN and not answer.entries[0].stock.available
    assert len(answer.problems) == 1 and "shown as unknown" in answer.problems[0]


def test_levels_are_read_whatever_their_case_and_spacing() -> None:
    answer = parse_answer({"gpus": [good(availability=" low ")]})
    assert answer.entries[0].stock is Stock.LOW


def test_odd_data_centres_are_dropped_or_unknown() -> None:
    centres = [{"id": "US-KS-2", "availability": "SOME"}, {"name": "no id"}, "US-TX-3", {"id": "  "}]
    (entry,) = parse_answer({"gpus": [good(dataCenters=centres)]}).entries
    assert [(d.id, d.name, d.stock) for d in entry.data_centres] == [("US-KS-2", "US-KS-2", Stock.UNKNOWN)]


@pytest.mark.parametrize(
    ("bad", "problem_text"),
    [
        ("not an object", "not an object"),
        ({"name": "X", "memory": 24}, "no id"),
        (good("NVIDIA X Y", memory="24"), "memory"),
        (good("NVIDIA X Y", memory=True), "memory"),
        (good("NVIDIA X Y", memory=0), "memory"),
        (good("NVIDIA X Y", price={"secure": 0.5, "community": "cheap"}), "price.community"),
        (good("NVIDIA X Y", price={"secure": float("inf"), "community": 0.2}), "price.secure"),
        (good("NVIDIA X Y", price={"secure": -1, "community": 0.2}), "price.secure"),
        (good("NVIDIA X Y", price=[0.2, 0.4]), "price is list"),
        (good("NVIDIA X Y", maxCount=8), "maxCount is int"),
        (good("NVIDIA X Y", maxCount={"secure": "8", "community": 8}), "maxCount.secure"),
        (good("NVIDIA X Y", name=None), "name"),
    ],
)
def test_a_malformed_entry_is_skipped_and_reported(bad: object, problem_text: str) -> None:
    answer = parse_answer({"gpus": [good(), bad]})
    assert [e.gpu.id for e in answer.entries] == [R3090]
    assert len(answer.problems) == 1 and problem_text in answer.problems[0], answer.problems


@pytest.mark.parametrize("payload", [{"gpus": None}, {}, [], "gpus", None, {"gpus": {"a": 1}}])
def test_no_list_at_all_is_an_error(payload: object) -> None:
    with pytest.raises(ValueError, match="no list of GPU types"):
        parse_answer(payload)


def test_duplicates_are_reported() -> None:
    answer = parse_answer({"gpus": [good(), good(availability="LOW")]})
    assert len(answer.entries) == 1 and answer.entries[0].stock is Stock.HIGH and "second entry" in answer.problems[0]


def test_merged_stock_per_cloud_and_count() -> None:
    def answer(*entries: dict[str, Any]) -> Answer:
        return parse_answer({"gpus": list(entries)})

    answers = {
        (Cloud.COMMUNITY, 1): answer(good(availability="HIGH"), good(H100, availability="NONE")),
        (Cloud.SECURE, 1): answer(good(availability="LOW"), good(H100, availability="MEDIUM")),
        (Cloud.COMMUNITY, 2): answer(good(availability="MEDIUM")),  # the H100 is not in this one: none
        (Cloud.COMMUNITY, 8): answer(good(availability="LOW"), good(H100, availability="HIGH")),
    }
    cat = merge_answers(answers, failed=[(Cloud.SECURE, 2)], problems=["a note"])
    r3090, h100 = cat.find("RTX 3090"), cat.find(H100)
    assert r3090.stock_for(Cloud.COMMUNITY) is Stock.HIGH and r3090.stock_for(Cloud.SECURE) is Stock.LOW
    assert r3090.stock_for(Cloud.COMMUNITY, 2) is Stock.MEDIUM
    assert r3090.stock_for(Cloud.COMMUNITY, 3) is Stock.LOW  # judged by the next count asked: 8
    assert r3090.stock_for(Cloud.SECURE, 2) is Stock.UNKNOWN  # that request failed
    assert h100.stock_for(Cloud.COMMUNITY, 2) is Stock.NONE
    assert h100.stock_for(Cloud.COMMUNITY, 1) is Stock.NONE and h100.stock_for(Cloud.SECURE) is Stock.MEDIUM
    assert r3090.data_centres_for(Cloud.COMMUNITY, 2)[0].id == "EU-RO-1"
    assert cat.problems == ("a note",)


def test_beyond_the_max_count_there_is_no_stock() -> None:
    entry = good(maxCount={"secure": 8, "community": 2}, availability="HIGH")
    cat = merge_answers({(c, n): parse_answer({"gpus": [entry]}) for c in Cloud for n in STOCK_COUNTS})
    g = cat.types[0]
    assert g.stock_for(Cloud.COMMUNITY, 2) is Stock.HIGH and g.stock_for(Cloud.COMMUNITY, 4) is Stock.NONE
    assert g.stock_for(Cloud.SECURE, 8) is Stock.HIGH and g.max_count == 8 and g.max_count_for(Cloud.COMMUNITY) == 2


def test_find_by_partial_name_and_ambiguity() -> None:
    cat = merge_answers(
        {(Cloud.SECURE, 1): parse_answer({"gpus": [good(), good("NVIDIA H100 PCIe"), good(H100, name="H100 SXM")]})}
    )
    assert cat.find("rtx 3090").id == R3090 and cat.find(R3090.lower()).id == R3090
    with pytest.raises(LookupError, match="several"):
        cat.find("H100")
    with pytest.raises(LookupError, match="no GPU type 'RTX 9090'"):
        cat.find("RTX 9090")


# --- the requests, over HTTP -------------------------------------------------------------------------------------


def by_filters(market: dict[tuple[str, int], list[dict[str, Any]]]) -> Any:
    """A catalogue that answers per cloud and count, as RunPod's does."""

    def answer(sent: Sent) -> Reply:
        key = (sent.query["cloud"][0], int(sent.query["count"][0]))
        return Reply(200, {"gpus": market.get(key, [])})

    return answer


def test_one_request_per_cloud_and_count_with_the_filters(scripted: ScriptedApi) -> None:
    market = {
        (cloud.value, n): [good(availability="HIGH" if n < 8 else "LOW"), good(H100, availability="NONE")]
        for cloud in Cloud
        for n in STOCK_COUNTS
    }
    scripted.script = by_filters(market)
    cat = fetch_catalogue(scripted.rest())
    assert len(scripted.sent) == 8  # 2 clouds x 4 counts, one after another
    assert {(s.query["cloud"][0], s.query["count"][0]) for s in scripted.sent} == {
        (c.value, str(n)) for c in Cloud for n in STOCK_COUNTS
    }
    for s in scripted.sent:
        assert (s.method, s.path, s.query["include"], s.query["product"]) == (
            "GET",
            "/v2/catalog/gpus",
            ["AVAILABILITY"],
            ["POD"],
        )
    assert [s.query["count"][0] for s in scripted.sent[:2]] == ["1", "1"]  # single GPUs first
    r3090 = cat.find("RTX 3090")
    assert r3090.stock_for(Cloud.COMMUNITY, 4) is Stock.HIGH and r3090.stock_for(Cloud.SECURE, 8) is Stock.LOW
    assert cat.find(H100).stock_for(Cloud.SECURE) is Stock.NONE and cat.problems == ()


def test_counts_no_type_offers_are_not_asked(scripted: ScriptedApi) -> None:
    small = good(maxCount={"secure": 2, "community": 1})
    scripted.answer(Reply(200, {"gpus": [small]}))
    fetch_catalogue(scripted.rest())
    asked = sorted((s.query["cloud"][0], int(s.query["count"][0])) for s in scripted.sent)
    assert asked == [("COMMUNITY", 1), ("SECURE", 1), ("SECURE", 2)]


def test_only_the_counts_asked_for(scripted: ScriptedApi) -> None:
    scripted.answer(Reply(200, {"gpus": [good()]}))
    fetch_catalogue(scripted.rest(), counts=(2,))
    assert sorted(int(s.query["count"][0]) for s in scripted.sent) == [1, 1, 2, 2]


@pytest.mark.parametrize(
    ("reply", "error", "words"),
    [
        (Reply(401, problem(401, "Unauthorized")), ApiAuthError, "refused the API key"),
        (Reply(500, problem(500, "upstream")), ApiUnavailable, "server error"),
        (Reply(200, {"gpus": None}), ApiResponseError, "list of GPU types was unreadable"),
        (Reply(200, b"<html>502</html>"), ApiResponseError, "not JSON"),
    ],
)
def test_when_the_first_request_fails_that_is_the_answer(
    scripted: ScriptedApi, reply: Reply, error: type[Exception], words: str
) -> None:
    scripted.answer(reply)
    with pytest.raises(error, match=words):
        fetch_catalogue(scripted.rest())
    assert len(scripted.sent) == 1


def test_a_later_refusal_leaves_that_stock_unknown(scripted: ScriptedApi) -> None:
    def answer(sent: Sent) -> Reply:
        if sent.query["cloud"] == ["SECURE"] and sent.query["count"] == ["4"]:
            return Reply(400, problem(400, "count not supported here"))
        return Reply(200, {"gpus": [good()]})

    scripted.script = answer
    cat = fetch_catalogue(scripted.rest())
    g = cat.types[0]
    assert len(scripted.sent) == 8  # the others were still asked
    assert g.stock_for(Cloud.SECURE, 4) is Stock.UNKNOWN and g.stock_for(Cloud.SECURE, 8) is Stock.HIGH
    assert g.stock_for(Cloud.SECURE, 3) is Stock.UNKNOWN
    assert len(cat.problems) == 1 and "stock of 4 GPUs on secure cloud not known" in cat.problems[0]


def test_a_429_stops_the_remaining_requests(scripted: ScriptedApi) -> None:
    ok = Reply(200, {"gpus": [good()]})
    scripted.answer(ok, ok, Reply(429, problem(429, "Too Many Requests"), {"Retry-After": "7"}))
    cat = fetch_catalogue(scripted.rest())
    assert len(scripted.sent) == 3  # not another request after the 429
    g = cat.types[0]
    assert g.stock_for(Cloud.COMMUNITY) is Stock.HIGH and g.stock_for(Cloud.SECURE) is Stock.HIGH
    assert {g.stock_for(c, n) for c in Cloud for n in (2, 4, 8)} == {Stock.UNKNOWN}
    assert len(cat.problems) == 1 and "429" in cat.problems[0]
