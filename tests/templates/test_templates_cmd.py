"""`podtui templates` and `podtui template create|delete` as a user runs them against the simulated RunPod: the
account's own and the public catalogue, --json, a template from a pod with its token as a secret reference (never
in clear), --secrets omit, --public asked first, delete asked first, mistakes in words, and read-only mode."""

from __future__ import annotations

import io
import json
import sys

import pytest

from podtui.cli.main import main
from podtui.sim.server import SimApiServer

POD = "llama-lora-3090"  # HF_HOME, HF_TOKEN (hf_...), WANDB_PROJECT
TOKEN = "hf_demoDemoDemoDemoDemoDemo0000"


def _own(sim: SimApiServer) -> dict[str, object]:
    return {t.name: t for t in sim.world.templates.values()}


def _answer(monkeypatch: pytest.MonkeyPatch, typed: str) -> None:
    answer = io.StringIO(typed)
    answer.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stdin", answer)


def test_public_catalogue_and_json(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["templates", "--public"]) == 0
    out = capsys.readouterr().out
    assert "Runpod Pytorch 2.4.0" in out and "serverless" in out
    assert main(["templates", "--public", "--source", "community", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed and all(t["public"] for t in listed)
    assert set(listed[0]) >= {"id", "name", "image", "disk_gb", "ports", "env_keys", "category", "kind", "public"}
    assert all("env" not in t for t in listed)  # keys only: a public template's values may hold a token


def test_source_needs_public(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["templates", "--source", "verified"]) == 2
    assert "--source goes with --public" in capsys.readouterr().err


def test_a_template_from_a_pod_refers_to_its_token(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["template", "create", "lora-setup", "--from", POD]) == 0
    captured = capsys.readouterr()
    assert TOKEN not in captured.out + captured.err
    assert "secret     HF_TOKEN = {{ RUNPOD_SECRET_hf_token }}" in captured.out
    assert "created template lora-setup (" in captured.out
    assert "need these RunPod secrets on the account: hf_token" in captured.out
    made = _own(cli_env)["lora-setup"]
    assert made.env == {  # type: ignore[attr-defined]
        "HF_HOME": "/workspace/hf",
        "HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}",
        "WANDB_PROJECT": "llama-lora",
    }
    assert made.public is False and made.ports == ["8888/http", "22/tcp"]  # type: ignore[attr-defined]
    assert main(["templates"]) == 0
    assert "lora-setup" in capsys.readouterr().out


def test_omit_and_json(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["template", "create", "lora-bare", "--from", POD, "--secrets", "omit", "--json"]) == 0
    captured = capsys.readouterr()
    made = json.loads(captured.out)
    assert made["name"] == "lora-bare" and made["left_out"] == ["HF_TOKEN"] and made["secrets_needed"] == []
    assert "HF_TOKEN" not in _own(cli_env)["lora-bare"].env  # type: ignore[attr-defined]
    assert TOKEN not in captured.out + captured.err


def test_public_is_asked_first(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _answer(monkeypatch, "n\n")
    assert main(["template", "create", "shared", "--from", POD, "--public"]) == 1
    assert "cancelled; no template was made" in capsys.readouterr().out and "shared" not in _own(cli_env)
    assert main(["template", "create", "shared", "--from", POD, "--public", "--yes"]) == 0
    assert _own(cli_env)["shared"].public is True  # type: ignore[attr-defined]


def test_runpods_refusal_in_its_words(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["template", "create", "twice", "--from", POD]) == 0
    capsys.readouterr()
    assert main(["template", "create", "twice", "--from", POD]) == 1
    assert "a template called 'twice' already exists" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "said", "code"),
    [
        (["create", "", "--from", POD], "give the template a name", 2),
        (["create", "x", "--from", "no-such-pod"], "no pod with id or name 'no-such-pod'", 1),
        (["create", "x", "--from", POD, "--secrets", "clear"], "invalid choice", 2),
        (["delete", "nothing-here", "--yes"], "has the id 'nothing-here' among your templates", 1),
    ],
)
def test_mistakes(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], args: list[str], said: str, code: int
) -> None:
    before = set(cli_env.world.templates)
    try:
        got = main(["template", *args])
    except SystemExit as e:
        got = int(e.code or 0)
    assert got == code
    assert said in capsys.readouterr().err
    assert set(cli_env.world.templates) == before


def test_delete_asks_first(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["template", "create", "gone-soon", "--from", POD]) == 0
    _answer(monkeypatch, "\n")
    assert main(["template", "delete", "gone-soon"]) == 1
    assert "gone-soon" in _own(cli_env) and "cancelled; nothing was deleted" in capsys.readouterr().out
    assert main(["template", "delete", "gone-soon", "--yes", "--json"]) == 0
    deleted = json.loads(capsys.readouterr().out)["deleted"]
    assert deleted["name"] == "gone-soon"
    assert "gone-soon" not in _own(cli_env)


@pytest.mark.parametrize("args", [["create", "x", "--from", POD], ["delete", "x", "--yes"]])
def test_read_only(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    before = set(cli_env.world.templates)
    assert main(["template", *args, "--read-only"]) == 1
    assert "read-only mode" in capsys.readouterr().err
    assert set(cli_env.world.templates) == before


def test_keep_keeps_a_key_named_like_a_credential_in_clear(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers.sim import DEMO_IDS

    with cli_env.world.lock:
        cli_env.world.pods[DEMO_IDS["train"]].env = {
            "TOKENIZERS_PARALLELISM": "false",
            "GRADER_TOKEN": "alpha-beta",
            "HF_TOKEN": TOKEN,
        }
    assert main(["template", "create", "graded", "--from", POD, "--keep", "GRADER_TOKEN"]) == 0
    out = capsys.readouterr().out
    assert "in clear   GRADER_TOKEN: they look like credentials, kept in clear as asked" in out and TOKEN not in out
    assert _own(cli_env)["graded"].env == {  # type: ignore[attr-defined]
        "TOKENIZERS_PARALLELISM": "false",
        "GRADER_TOKEN": "alpha-beta",
        "HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}",
    }
    assert main(["template", "create", "leaky", "--from", POD, "--keep", "HF_TOKEN"]) == 2  # shaped like a token
    assert "HF_TOKEN holds a known kind of token" in capsys.readouterr().err and "leaky" not in _own(cli_env)


def test_a_lost_answer_is_looked_up(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from podtui.cli import template_cmd

    monkeypatch.setattr(template_cmd, "LOOKUP_DELAYS", (0.0,))
    cli_env.faults.add("malformed", times=1, only="POST /v2/templates")
    assert main(["template", "create", "lost-one", "--from", POD]) == 0
    out = capsys.readouterr().out
    made = _own(cli_env)["lost-one"]
    assert f"created after all: template lost-one ({made.id})" in out  # type: ignore[attr-defined]
    cli_env.faults.add("status", 502, times=1, only="POST /v2/templates")
    assert main(["template", "create", "lost-two", "--from", POD]) == 1
    err = capsys.readouterr().err
    assert "the template lost-two may have been created" in err and "did not create" not in err
