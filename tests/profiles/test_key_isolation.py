"""Two accounts on one simulated address: every request made on a profile carries that profile's key and no other
(the Authorization header the simulator received, not only what came back), each profile's files stay its own,
and `podtui profiles` asks each account with its own key (docs/profiles.md#key-isolation)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from podtui.cli.main import main
from podtui.core import profiles
from podtui.core.paths import Paths
from tests.profiles.conftest import TwoAccounts


def test_the_simulator_answers_each_key_with_its_own_account(accounts: TwoAccounts) -> None:
    from podtui.core.api import V2Api

    a = V2Api(accounts.a.api_key, accounts.url, timeout_s=10)
    b = V2Api(accounts.b.api_key, accounts.url, timeout_s=10)
    names_a = {p.name for p in a.fetch_snapshot().pods}
    names_b = {p.name for p in b.fetch_snapshot().pods}
    assert names_a and names_b and not names_a & names_b
    assert b.fetch_snapshot().account.balance == pytest.approx(412.50, abs=0.01)
    assert accounts.b.rest_requests and accounts.a.rest_requests  # each answered its own
    a.close()
    b.close()


def test_every_request_on_a_profile_carries_its_key_only(
    two_profiles: TwoAccounts, sent_keys: Callable[[], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["pods"], ["cost", "--json"], ["volumes"]):
        assert main([*argv, "--profile", "b"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "team-finetune-a100" in out and "profile b · balance $412.50" in out
    assert set(sent_keys()) == {two_profiles.b.api_key}
    before = len(sent_keys())
    assert main(["pods"]) == 0  # the default profile, a
    assert "llama-lora-3090" in (out := capsys.readouterr().out) and "profile a · balance" in out
    assert set(sent_keys()[before:]) == {two_profiles.a.api_key}


def test_an_action_on_one_profile_never_reaches_the_other(
    two_profiles: TwoAccounts, sent_keys: Callable[[], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """A's pod named on profile b is not found there: b's key asks b's account, which has no such pod."""
    assert main(["stop", "llama-lora-3090", "--yes", "--profile", "b"]) != 0
    assert "llama-lora-3090" in capsys.readouterr().err
    assert set(sent_keys()) == {two_profiles.b.api_key}
    assert two_profiles.a.world.pods["q7x2m9fk4r8t1a"].status == "RUNNING"


def test_podtui_profile_env_chooses_the_profile(
    two_profiles: TwoAccounts,
    sent_keys: Callable[[], list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PODTUI_PROFILE", "b")
    assert main(["pods", "--json"]) == 0
    assert {p["name"] for p in json.loads(capsys.readouterr().out)} >= {"team-inference-l40s"}
    assert set(sent_keys()) == {two_profiles.b.api_key}


def test_a_missing_key_is_said_and_no_other_key_is_tried(
    two_profiles: TwoAccounts,
    sent_keys: Callable[[], list[str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With a's variable unset and B's key file gone, RUNPOD_API_KEY (a working key) is there: nothing uses it."""
    monkeypatch.delenv("KEY_A")
    monkeypatch.setenv("RUNPOD_API_KEY", two_profiles.b.api_key)
    assert main(["pods"]) == 1
    assert "environment variable KEY_A, which is not set" in capsys.readouterr().err
    profiles.key_file(Paths.default(), "b").unlink()
    monkeypatch.setenv("RUNPOD_API_KEY", two_profiles.a.api_key)
    assert main(["pods", "--profile", "b"]) == 1
    assert "does not exist yet" in capsys.readouterr().err
    assert sent_keys() == []  # not one request


def test_each_profile_remembers_its_own_launches(two_profiles: TwoAccounts, capsys: pytest.CaptureFixture[str]) -> None:
    """`podtui pods` feeds the launch memory: a's in podtui's data folder, b's in its own."""
    assert main(["pods"]) == 0 and main(["pods", "--profile", "b"]) == 0
    base = Paths.default().data_dir
    a_file = next(base.glob("launch*.json"))
    b_file = base / "profiles" / "b" / a_file.name
    assert "llama-lora-3090" in a_file.read_text() and "team-" not in a_file.read_text()
    assert "team-finetune-a100" in b_file.read_text() and "llama-lora" not in b_file.read_text()


def test_podtui_profiles_asks_each_account_with_its_own_key(
    two_profiles: TwoAccounts,
    sent_keys: Callable[[], list[str]],
    write_config: Callable[[str], Paths],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_config(
        'default_profile = "a"\n[profiles.a]\nkey_env = "KEY_A"\n[profiles.b]\nkey_file = true\n'
        '[profiles.gone]\nkey_env = "KEY_GONE"\n[profiles.bad]\nkey_env = "KEY_BAD"\n'
    )
    monkeypatch.setenv("KEY_BAD", "rpa_notakeyanyaccounthas0000000000")
    assert main(["profiles", "--json"]) == 1  # two profiles could not be read
    got = json.loads(capsys.readouterr().out)
    rows = {r["profile"]: r for r in got["profiles"]}
    assert rows["a"]["in_use"] and rows["a"]["balance"] == pytest.approx(23.87, abs=0.01)
    assert rows["b"]["balance"] == pytest.approx(412.50, abs=0.01) and rows["b"]["running"] == 2
    assert "KEY_GONE, which is not set" in rows["gone"]["error"]
    assert rows["bad"]["error"].startswith("key refused")
    total = got["total"]
    assert total["balance"] == pytest.approx(23.87 + 412.50, abs=0.02)
    assert total["burn_per_hr"] == pytest.approx(rows["a"]["burn_per_hr"] + rows["b"]["burn_per_hr"])
    assert total["runway_s"] == pytest.approx(min(rows["a"]["runway_s"], rows["b"]["runway_s"]))
    keys = set(sent_keys())
    assert keys == {two_profiles.a.api_key, two_profiles.b.api_key, "rpa_notakeyanyaccounthas0000000000"}
    assert main(["profiles"]) == 1
    out = capsys.readouterr().out
    assert "a *" in out and "total" in out and "KEY_GONE" in out and "not counted" not in out
