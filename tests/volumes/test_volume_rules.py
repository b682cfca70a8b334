"""The rules a network volume change is checked by before anything is sent: sizes, names, tiers, growing only,
and no delete while a pod mounts it; and which failures of a create leave it uncertain, looked for afterwards."""

from __future__ import annotations

import pytest

from podtui.core.api.errors import (
    ApiAuthError,
    ApiConflict,
    ApiError,
    ApiQueryError,
    ApiRateLimited,
    ApiResponseError,
    ApiUnavailable,
    InvalidInput,
)
from podtui.core.lost_answer import answer_lost, look_for_created
from podtui.core.pod import Pod, PodStatus
from podtui.core.volume import (
    NetworkVolume,
    check_grow,
    check_volume_name,
    check_volume_size,
    check_volume_type,
    delete_refusal,
    find_created_volume,
    find_volume,
    totals,
)

VOLUME = NetworkVolume("vol1", "datasets", 100, "EU-RO-1", "STANDARD")


@pytest.mark.parametrize(("typed", "size"), [("10", 10), (" 4096 ", 4096), ("50GB", 50), (200, 200)])
def test_sizes_in_range_are_taken(typed: object, size: int) -> None:
    assert check_volume_size(typed) == size


@pytest.mark.parametrize("typed", ["9", "4097", "0", "-5", "ten", "", "1e3", "\uff15\uff10", 9, 5000, True, 12.5, None])
def test_sizes_out_of_range_or_not_whole_are_refused_in_words(typed: object) -> None:
    with pytest.raises(ValueError, match="a whole number of GB from 10 to 4096"):
        check_volume_size(typed)


def test_names_are_checked() -> None:
    assert check_volume_name("  my data ") == "my data"
    for bad, said in (("", "give the volume a name"), ("x" * 101, "at most 100"), ("a\nb", "no newlines")):
        with pytest.raises(ValueError, match=said):
            check_volume_name(bad)


def test_types() -> None:
    assert check_volume_type(None) is None and check_volume_type(" ") is None
    assert check_volume_type("high-performance") == "HIGH_PERFORMANCE"
    with pytest.raises(ValueError, match="STANDARD or HIGH_PERFORMANCE"):
        check_volume_type("fast")


def test_a_volume_only_grows() -> None:
    assert check_grow(VOLUME, "150") == 150
    with pytest.raises(ValueError, match="cannot shrink"):
        check_grow(VOLUME, "50")
    with pytest.raises(ValueError, match="is 100 GB already"):
        check_grow(VOLUME, 100)
    with pytest.raises(ValueError, match="from 10 to 4096"):
        check_grow(VOLUME, 5000)


def _pod(name: str, volume: str | None) -> Pod:
    return Pod(id=f"id-{name}", name=name, status=PodStatus.RUNNING, network_volume=volume)


def test_delete_is_refused_while_pods_mount_it_naming_them() -> None:
    assert delete_refusal(VOLUME, [_pod("other", "vol2"), _pod("plain", None)]) is None
    one = delete_refusal(VOLUME, [_pod("trainer", "vol1")])
    assert one is not None and "in use by pod trainer (id-trainer)" in one and "terminate it first" in one
    two = delete_refusal(VOLUME, [_pod("a", "vol1"), _pod("b", "vol1")])
    assert two is not None and "pods a (id-a), b (id-b)" in two and "terminate them first" in two


def test_cost_and_totals() -> None:
    assert VOLUME.cost_per_month == pytest.approx(7.0)
    gb, money = totals([VOLUME, NetworkVolume("v2", "b", 50, "US-KS-2")])
    assert gb == 150 and money == pytest.approx(10.5)


def test_find_by_id_or_name_and_ambiguous_names() -> None:
    twin = NetworkVolume("vol9", "datasets", 10, "US-KS-2")
    assert find_volume([VOLUME], "vol1") is VOLUME and find_volume([VOLUME], "datasets") is VOLUME
    assert find_volume([VOLUME, twin], "vol9") is twin
    with pytest.raises(LookupError, match="2 network volumes are called 'datasets'"):
        find_volume([VOLUME, twin], "datasets")
    with pytest.raises(LookupError, match="no network volume"):
        find_volume([VOLUME], "nope")


@pytest.mark.parametrize(
    ("error", "lost"),
    [
        (ApiResponseError("cut off"), True),
        (ApiUnavailable("no answer within 15 s"), True),  # a timeout: the request went out
        (ApiUnavailable("gateway page", status=502), True),
        (ApiUnavailable("RunPod's own 500 problem", status=500, by_runpod=True), False),
        (ApiUnavailable("connection refused", not_sent=True), False),
        (ApiRateLimited("slow down", 5.0), False),
        (ApiQueryError("refused", 400), False),
        (ApiConflict("conflict", 409), False),
        (ApiAuthError("bad key"), False),
        (InvalidInput("a quote in the id"), False),
    ],
)
def test_which_failures_leave_a_create_uncertain(error: ApiError, lost: bool) -> None:
    assert answer_lost(error) is lost


def test_the_volume_made_after_a_lost_answer_is_the_new_one_of_that_name_there() -> None:
    older = NetworkVolume("vol0", "models", 20, "EU-RO-1")
    new = NetworkVolume("vol9", "models", 20, "EU-RO-1")
    elsewhere = NetworkVolume("vol8", "models", 20, "US-KS-2")
    looks = [(older, elsewhere), (older, elsewhere, new)]
    slept: list[float] = []
    found = find_created_volume(lambda: looks.pop(0), "models", "EU-RO-1", {"vol0", "vol8"}, (0.0, 3.0), slept.append)
    assert found == new and slept == [0.0, 3.0]
    assert find_created_volume(lambda: (older,), "models", "EU-RO-1", {"vol0"}, (0.0,), slept.append) is None
    # the list before creating unknown: any volume of that name there counts
    assert find_created_volume(lambda: (older,), "models", "EU-RO-1", None, (0.0,), slept.append) == older


def test_a_failed_last_look_raises_rather_than_saying_none() -> None:
    def listing() -> tuple[NetworkVolume, ...]:
        raise ApiUnavailable("no answer")

    with pytest.raises(ApiUnavailable):
        look_for_created(listing, lambda v: True, (0.0, 0.0), lambda s: None)
