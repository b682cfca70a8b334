"""Every fault switch of the simulated API ends in a clear error, never a crash or a wrong figure."""

from __future__ import annotations

import time

import pytest

from podtui.core.api import ApiAuthError, ApiQueryError, ApiResponseError, ApiUnavailable, SdkApi
from podtui.sim.server import SimApiServer


@pytest.mark.parametrize("status", [500, 502, 503])
def test_gateway_error_pages(api: SdkApi, sim: SimApiServer, status: int) -> None:
    sim.faults.add("status", status, times=1)
    with pytest.raises(ApiResponseError, match="not JSON"):
        api.fetch_snapshot()
    assert api.fetch_snapshot().pods  # next poll is fine


def test_timeout(sim: SimApiServer) -> None:
    api = SdkApi(sim.api_key, sim.url, timeout_s=1.0)
    sim.faults.add("hang", 2.5, times=1)
    t = time.monotonic()
    with pytest.raises(ApiUnavailable, match="did not answer within 1 s"):
        api.fetch_snapshot()
    assert time.monotonic() - t < 2.0


def test_latency_under_the_timeout_is_fine(api: SdkApi, sim: SimApiServer) -> None:
    sim.faults.add("latency", 0.3, times=1)
    assert len(api.fetch_snapshot().pods) == 5


def test_unauthorized(api: SdkApi, sim: SimApiServer) -> None:
    sim.faults.add("unauthorized", times=1)
    with pytest.raises(ApiAuthError, match="401") as e:
        api.fetch_snapshot()
    assert sim.api_key not in str(e.value)


def test_wrong_key(sim: SimApiServer) -> None:
    with pytest.raises(ApiAuthError):
        SdkApi("rpa_WRONGWRONGWRONGWRONG", sim.url).fetch_snapshot()


def test_graphql_errors(api: SdkApi, sim: SimApiServer) -> None:
    sim.faults.add("graphql_error", "Something went wrong. Please try again later.", times=1)
    with pytest.raises(ApiQueryError, match="Something went wrong"):
        api.fetch_snapshot()


def test_truncated_json(api: SdkApi, sim: SimApiServer) -> None:
    sim.faults.add("malformed", times=1)
    with pytest.raises(ApiResponseError, match="not JSON"):
        api.fetch_snapshot()


def test_partial_payload_keeps_what_it_can(api: SdkApi, sim: SimApiServer) -> None:
    sim.faults.add("partial", times=1)
    snap = api.fetch_snapshot()
    assert 0 < len(snap.pods) < 5  # the record without an id is dropped, the rest kept
    assert snap.account.balance is None
    assert any("costPerHr" in p for p in snap.problems)
    assert any("no id" in p for p in snap.problems)


def test_unknown_status(api: SdkApi, sim: SimApiServer) -> None:
    sim.faults.add("unknown_status", "HIBERNATING", times=1)
    snap = api.fetch_snapshot()
    assert any(p.state == "? HIBERNATING" for p in snap.pods)


def test_connection_refused() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(ApiUnavailable, match="cannot reach"):
        SdkApi("rpa_whateverwhateverwhat", f"http://127.0.0.1:{port}", timeout_s=5).fetch_snapshot()


def test_control_endpoint_needs_the_key(sim: SimApiServer) -> None:
    import json
    import urllib.error
    import urllib.request

    body = json.dumps({"add": [{"kind": "status", "value": 500, "times": 1}]}).encode()
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(urllib.request.Request(f"{sim.url}/_sim/faults", body))
    req = urllib.request.Request(f"{sim.url}/_sim/faults", body, {"Authorization": f"Bearer {sim.api_key}"})
    urllib.request.urlopen(req).read()
    bad = urllib.request.Request(
        f"{sim.url}/_sim/faults", b'{"add": [{"kind": "meteor"}]}', {"Authorization": f"Bearer {sim.api_key}"}
    )
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(bad)
    assert e.value.code == 400


@pytest.mark.parametrize(
    "body",
    [
        '{"errors": []}',
        '{"errors": "x"}',
        '{"errors": [{}]}',
        "null",
        "5",
        '{"data": {"myself": {"pods": [], "clientBalance": 1}}, "errors": [5]}',
    ],
)
def test_malformed_error_bodies(api: SdkApi, sim: SimApiServer, body: str) -> None:
    sim.faults.add("raw", body, times=1)
    with pytest.raises(ApiResponseError):
        api.fetch_snapshot()


def test_non_finite_numbers_do_not_blank_the_list(api: SdkApi, sim: SimApiServer) -> None:
    body = (
        '{"data": {"myself": {"clientBalance": NaN, "currentSpendPerHr": Infinity, "pods": ['
        '{"id": "a1", "name": "ok", "desiredStatus": "RUNNING", "costPerHr": "1e999", "gpuCount": NaN}]}}}'
    )
    sim.faults.add("raw", body, times=1)
    snap = api.fetch_snapshot()
    assert snap.pods[0].name == "ok" and snap.pods[0].cost_per_hr is None and snap.pods[0].gpu_count is None
    assert snap.account.balance is None and snap.account.spend_per_hr is None
    assert len(snap.problems) >= 3


def test_account_keys_missing_is_refused(api: SdkApi, sim: SimApiServer) -> None:
    from podtui.core.api import ApiResponseError as Err

    sim.faults.add("raw", '{"data": {"myself": {"id": "u"}}}', times=1)
    with pytest.raises(Err, match="did not include the account's SSH keys"):
        api.account_keys()
    sim.world.set_pub_key("ssh-ed25519 AAAA one")
    assert api.account_keys() == "ssh-ed25519 AAAA one"


def test_timeout_does_not_keep_the_process_alive(sim: SimApiServer) -> None:
    import subprocess
    import sys

    sim.faults.add("hang", 20, times=1)
    code = (
        "import time, sys\nfrom podtui.core.api import SdkApi\nfrom podtui.core.api.errors import ApiUnavailable\n"
        f"api = SdkApi({sim.api_key!r}, {sim.url!r}, timeout_s=1)\n"
        "try:\n    api.fetch_snapshot()\nexcept ApiUnavailable:\n    print('gave up')\n"
    )
    t = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == "gave up" and time.monotonic() - t < 8


def test_rate_limited_page(api: SdkApi, sim: SimApiServer) -> None:
    from podtui.core.api.errors import ApiRateLimited

    sim.faults.add("status", 429, times=1)  # the HTML page carries Retry-After: 2
    with pytest.raises(ApiRateLimited, match="429") as e:
        api.fetch_snapshot()
    assert e.value.retry_after_s == 2
    assert api.fetch_snapshot().pods
