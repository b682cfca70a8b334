from __future__ import annotations

import pytest

from podtui.core import units


@pytest.mark.parametrize(
    ("v", "s"), [(None, "—"), (0.0, "$0.000"), (0.505, "$0.505"), (8.287, "$8.29"), (1234.5, "$1,234.50")]
)
def test_money(v: float | None, s: str) -> None:
    assert units.money(v) == s


@pytest.mark.parametrize(
    ("v", "s"),
    [
        (None, "—"),
        (0, "0s"),
        (59, "59s"),
        (61, "1m 01s"),
        (3600 * 2 + 17 * 60, "2h 17m"),
        (86400 * 3 + 3600 * 5, "3d 05h"),
        (-5, "0s"),
    ],
)
def test_duration(v: float | None, s: str) -> None:
    assert units.duration(v) == s


def test_rate_and_percent() -> None:
    assert units.rate(0.22) == "$0.220/hr"
    assert units.rate(None) == "—"
    assert units.percent(93.6) == "94%"
