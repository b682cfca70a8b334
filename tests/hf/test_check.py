"""Every Hugging Face outcome, with huggingface_hub pointed at the Hub stand-in through its endpoint setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from podtui.core import secret
from podtui.core.hf import token as hf_token
from podtui.core.hf.check import check_repo
from podtui.core.hf.gate import SETTINGS_URL, classify
from podtui.core.hf.repo import BadRepoId, validate_repo_id
from podtui.sim.hub import SimHub
from podtui.sim.hub_seed import GATED_MODEL, MISSING_MODEL, PUBLIC_DATASET, PUBLIC_MODEL


def statuses(report: object) -> list[str]:
    return [line.status for line in report.lines]  # type: ignore[attr-defined]


def test_valid_token_and_a_public_repo(hub: SimHub) -> None:
    r = check_repo(PUBLIC_MODEL, hub.token("read"), hub.endpoint)
    assert r.ok and r.token_valid and r.user == "alice" and r.token_role == "read"
    assert r.gated is False and r.access == "ok" and r.exists
    repo = hub.repo(PUBLIC_MODEL)
    assert {f.path: f.size for f in r.files} == {f.path: f.size for f in repo.files}
    weights = next(f for f in r.files if f.path == "model.safetensors")
    assert weights.sha256 == repo.file("model.safetensors").sha256  # type: ignore[union-attr]
    readme = next(f for f in r.files if f.path == "README.md")
    assert readme.expected == ("git-sha1", repo.file("README.md").blob_id)  # type: ignore[union-attr]
    assert r.total_bytes == sum(f.size for f in repo.files)
    assert r.eta_s == pytest.approx(r.total_bytes / 50e6)
    assert statuses(r) == ["pass"] * 4


def test_invalid_token(hub: SimHub) -> None:
    r = check_repo(PUBLIC_MODEL, "hf_thisTokenDoesNotExist0000", hub.endpoint)
    assert not r.ok and r.token_valid is False
    assert "invalid or revoked" in r.lines[0].title and r.lines[0].link == SETTINGS_URL
    assert r.exists  # the repo is still checked, anonymously


def test_no_token_public_repo_is_a_warning_only(hub: SimHub) -> None:
    r = check_repo(PUBLIC_MODEL, None, hub.endpoint)
    assert r.ok and statuses(r)[0] == "warn" and "no Hugging Face token" in r.lines[0].title


def test_gated_with_access(hub: SimHub) -> None:
    r = check_repo(GATED_MODEL, hub.token("read"), hub.endpoint)
    assert r.ok and r.gated == "manual" and r.access == "ok"


def test_gated_license_not_accepted_is_the_401_case(hub: SimHub) -> None:
    r = check_repo(GATED_MODEL, hub.token("no_license"), hub.endpoint)
    assert not r.ok and r.access == "license"
    fail = next(line for line in r.lines if line.status == "fail")
    assert "401" in fail.title and "license is not accepted" in fail.title
    assert fail.link == f"{hub.endpoint}/{GATED_MODEL}" and "Agree and access repository" in fail.remedy
    assert r.files  # a gated repo's file list is public: the size is known all the same


def test_gated_license_as_the_real_hub_says_it(hub: SimHub) -> None:
    hub.real_license_reply = True  # huggingface.co: 403 "not in the authorized list" for a logged-in user
    r = check_repo(GATED_MODEL, hub.token("no_license"), hub.endpoint)
    assert r.access == "license"


def test_gated_token_without_scope_is_the_403_case(hub: SimHub) -> None:
    r = check_repo(GATED_MODEL, hub.token("no_gated_scope"), hub.endpoint)
    assert not r.ok and r.access == "scope" and r.can_read_gated is False
    fail = next(line for line in r.lines if line.status == "fail")
    assert "403" in fail.title and fail.link == SETTINGS_URL


def test_gated_without_token(hub: SimHub) -> None:
    r = check_repo(GATED_MODEL, None, hub.endpoint)
    assert r.access == "login" and not r.ok


def test_missing_repo(hub: SimHub) -> None:
    r = check_repo(MISSING_MODEL, hub.token("read"), hub.endpoint)
    assert r.exists is False and not r.ok
    assert "no model repo" in r.lines[-1].title and "--repo-type dataset" in r.lines[-1].remedy


def test_dataset_needs_its_repo_type(hub: SimHub) -> None:
    assert check_repo(PUBLIC_DATASET, None, hub.endpoint).exists is False
    r = check_repo(PUBLIC_DATASET, None, hub.endpoint, repo_type="dataset")
    assert r.ok and any(f.path == "data/train.parquet" and f.sha256 for f in r.files)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a/b/c",
        "has space/x",
        "owner/na--me",
        "owner/name.git",
        "-owner/x",
        "o/" + "x" * 100,
        "owner/..",
        "owner/ümlaut",
    ],
)
def test_malformed_repo_ids(text: str) -> None:
    with pytest.raises(BadRepoId):
        validate_repo_id(text)


def test_a_pasted_url_means_its_repo() -> None:
    assert validate_repo_id("https://huggingface.co/meta-llama/Llama-3.2-1B/tree/main") == "meta-llama/Llama-3.2-1B"
    assert validate_repo_id(" gpt2 ") == "gpt2"


def test_hub_unreachable() -> None:
    r = check_repo(PUBLIC_MODEL, "hf_someTokenThatIsLongEnough1234", "http://127.0.0.1:9")
    assert not r.ok and "cannot reach the Hub" in r.lines[-1].title
    assert "hf_someToken" not in json.dumps(r.to_json())


def test_garbage_json(hub: SimHub) -> None:
    hub.garbage_next = 1
    r = check_repo(PUBLIC_MODEL, hub.token("read"), hub.endpoint)
    assert not r.ok and "not the Hub's JSON" in r.lines[-1].title
    hub.garbage_next = 5
    r = check_repo(PUBLIC_MODEL, None, hub.endpoint)
    assert not r.ok and "not the Hub's JSON" in r.lines[-1].title


def test_the_report_never_holds_the_token(hub: SimHub) -> None:
    token = hub.token("no_license")
    r = check_repo(GATED_MODEL, token, hub.endpoint)
    text = json.dumps(r.to_json())
    assert token not in text and token[-4:] in text and r.token_masked == f"hf_…{token[-4:]}"


def test_classify_uses_every_signal() -> None:
    scope = (
        "Please enable access to public gated repositories in your fine-grained token settings to view this repository."
    )
    assert classify(403, scope, has_token=True) == "scope"
    assert (
        classify(
            403,
            "Access to model x/y is restricted and you are not in the authorized list. Visit "
            "https://huggingface.co/x/y to ask for access.",
            has_token=True,
        )
        == "license"
    )
    assert classify(401, "You must have access to it and be authenticated to access it.", has_token=True) == "license"
    assert classify(401, "You must be authenticated. Please log in.", has_token=False) == "login"
    assert classify(None, None, has_token=True, can_read_gated=False) == "scope"
    assert classify(403, None, has_token=True) == "scope"
    assert (
        classify(403, "Your request to access model x/y is awaiting a review from the repo authors.", has_token=True)
        == "pending"
    )


def test_token_discovery_follows_huggingface_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_HOME"):
        monkeypatch.delenv(var, raising=False)
    assert hf_token.discover() is None
    home_file = tmp_path / "home" / "cache" / "huggingface" / "token"  # $XDG_CACHE_HOME/huggingface/token
    home_file.parent.mkdir(parents=True)
    home_file.write_text("hf_fromTheDefaultFile00001\n")
    found = hf_token.discover()
    assert found is not None and found.value == "hf_fromTheDefaultFile00001" and found.source == str(home_file)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hfhome"))
    (tmp_path / "hfhome").mkdir()
    (tmp_path / "hfhome" / "token").write_text("hf_fromHfHome000000000002")
    assert hf_token.discover().source == str(tmp_path / "hfhome" / "token")  # type: ignore[union-attr]
    monkeypatch.setenv("HF_TOKEN_PATH", str(tmp_path / "explicit"))
    (tmp_path / "explicit").write_text("hf_explicitPath0000000003")
    assert hf_token.discover().value == "hf_explicitPath0000000003"  # type: ignore[union-attr]
    monkeypatch.setenv("HUGGING_FACE_HUB_TOKEN", "hf_legacyVariable000000004")
    assert hf_token.discover().source == "HUGGING_FACE_HUB_TOKEN"  # type: ignore[union-attr]
    monkeypatch.setenv("HF_TOKEN", "  hf_fromTheEnvironment0005\n")
    found = hf_token.discover()
    assert found is not None and found.value == "hf_fromTheEnvironment0005" and found.source == "HF_TOKEN"
    assert repr(found) == "FoundToken(hf_…0005, source='HF_TOKEN')"
    assert "hf_fromTheEnvironment0005" not in secret.redact("token hf_fromTheEnvironment0005 leaked")


def test_a_pasted_dataset_url_is_a_dataset(hub: SimHub) -> None:
    from podtui.core.hf.repo import parse_repo

    assert parse_repo("https://huggingface.co/datasets/owner/name/tree/main") == ("owner/name", "dataset")
    assert parse_repo("hf://datasets/owner/name") == ("owner/name", "dataset")
    assert parse_repo("https://huggingface.co/owner/name") == ("owner/name", "model")
    assert parse_repo("owner/name") == ("owner/name", None)
    with pytest.raises(BadRepoId, match="a Space"):
        parse_repo("https://huggingface.co/spaces/owner/name")
    with pytest.raises(BadRepoId):
        parse_repo("https://huggingface.co/datasets/")
    r = check_repo(f"https://huggingface.co/datasets/{PUBLIC_DATASET}", None, hub.endpoint)  # asked as a model
    assert r.ok and r.repo_type == "dataset" and r.repo_id == PUBLIC_DATASET


def test_a_refused_token_on_a_gated_repo_is_one_failure(hub: SimHub) -> None:
    r = check_repo(GATED_MODEL, "hf_thisTokenDoesNotExist0000", hub.endpoint)
    fails = [line for line in r.lines if line.status == "fail"]
    assert len(fails) == 1 and "invalid or revoked" in fails[0].title
    gated = next(line for line in r.lines if line.title.startswith("gated"))
    assert gated.status == "warn" and "not checked" in gated.title and "fix the token" in gated.remedy
    assert r.access is None
