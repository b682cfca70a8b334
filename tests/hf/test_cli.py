"""`podtui hf check` and `podtui hf download`, run as a user would (main([...])) against the demo's simulator."""

from __future__ import annotations

import json

import pytest

from podtui.cli.main import main
from podtui.sim.hub import SimHub
from podtui.sim.hub_seed import GATED_MODEL, MISSING_MODEL, PUBLIC_MODEL


def test_check_text_against_the_demo_hub(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hf", "check", GATED_MODEL, "--demo"]) == 0
    out = capsys.readouterr().out
    assert "✓ token valid: alice" in out and "(from demo, hf_…" in out
    assert "gated (manual), and alice has access" in out and "model.safetensors" in out and "(LFS)" in out


def test_check_json_and_exit_status_for_a_problem(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hf", "check", MISSING_MODEL, "--demo", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["exists"] is False and report["ok"] is False
    assert report["lines"][-1]["status"] == "fail" and "--repo-type dataset" in report["lines"][-1]["remedy"]


def test_check_uses_this_machines_token_and_endpoint(
    hub: SimHub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    token = hub.token("no_gated_scope")
    monkeypatch.setenv("HF_TOKEN", token)
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)  # read when asked, not when huggingface_hub was imported
    assert main(["hf", "check", GATED_MODEL]) == 1
    out = capsys.readouterr().out
    assert "✗ gated (manual): the token may not read public gated repos" in out
    assert "→ at https://huggingface.co/settings/tokens" in out
    assert "from HF_TOKEN" in out and token not in out
    assert main(["hf", "check", PUBLIC_MODEL, "--json", "--bandwidth", "0.1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["bandwidth_bytes_per_s"] == 100_000 and report["eta_s"] == report["total_bytes"] / 100_000


def test_a_malformed_repo_id_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hf", "check", "not a/repo id/at all"]) == 2
    assert "repo id" in capsys.readouterr().err


def test_download_on_a_demo_pod(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hf", "download", "eval-a100", PUBLIC_MODEL, "--demo"]) == 0
    out = capsys.readouterr().out
    assert "/models/tiny-gpt2  5 files" in out and "matching the Hub's checksum" in out


def test_download_json_events(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hf", "download", "eval-a100", GATED_MODEL, "--local-dir", "llm", "--demo", "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[-1]["event"] == "verified" and events[-1]["path"].endswith("/llm")
    assert any(e.get("state") == "transferring" for e in events)


def test_download_refused_in_read_only_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hf", "download", "eval-a100", PUBLIC_MODEL, "--demo", "--read-only"]) == 1
    assert "read-only mode" in capsys.readouterr().err


@pytest.mark.parametrize("speed", ["0", "-5", "nan", "fast"])
def test_bandwidth_must_be_a_positive_number(speed: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["hf", "check", PUBLIC_MODEL, "--demo", "--bandwidth", speed])
    assert exited.value.code == 2 and "--bandwidth" in capsys.readouterr().err
