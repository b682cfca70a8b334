"""The GPU tests' own fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.scripted_api import ScriptedApi


@pytest.fixture
def scripted() -> Iterator[ScriptedApi]:
    api = ScriptedApi().start()
    yield api
    api.stop()
    assert not api.violations, "requests that break the REST v2 contract:\n" + "\n".join(api.violations)
