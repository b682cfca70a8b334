"""Nothing unsafe is ever interpolated into a GraphQL document."""

from __future__ import annotations

import pytest

from podtui.core.api import InvalidInput, queries


@pytest.mark.parametrize("good", ["abc123", "q7x2m9fk4r8t1a", "pod-1_x"])
def test_good_ids(good: str) -> None:
    assert queries.pod_id(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        'a"b',
        "a'b",
        "a}b",
        "a{b",
        "a\nb",
        "",
        " abc",
        "abc ",
        "a\\b",
        "ü123",
        "-abc",
        "a" * 65,
        None,
        5,
        'x") { id } podTerminate(input: {podId: "y',
    ],
)
def test_bad_ids(bad: object) -> None:
    with pytest.raises(InvalidInput, match="refused"):
        queries.pod_id(bad)


@pytest.mark.parametrize("bad", [-1, 17, 1.5, True, "2", None])
def test_bad_gpu_counts(bad: object) -> None:
    with pytest.raises(InvalidInput):
        queries.gpu_count(bad)


def test_pods_query_asks_for_what_the_list_needs() -> None:
    q = queries.PODS_QUERY
    for name in (
        "clientBalance",
        "currentSpendPerHr",
        "spendLimit",
        "podHostId",
        "gpuUtilPercent",
        "memoryUtilPercent",
        "cpuPercent",
        "uptimeInSeconds",
        "isIpPublic",
        "lastStatusChange",
    ):
        assert name in q
