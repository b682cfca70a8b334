"""`podtui edit` as a user runs it against the simulated RunPod: the diff, what is sent (only what changes, the env
whole), the lock, JSON, and every refusal said in words with nothing sent."""

from __future__ import annotations

import json

import pytest

from podtui.cli.main import main
from podtui.sim.exchange import Exchange
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

TRAIN = DEMO_IDS["train"]  # llama-lora-3090: HF_TOKEN, HF_HOME, WANDB_PROJECT in its env


def patches(exchanges: list[Exchange]) -> list[Exchange]:
    return [e for e in exchanges if e.method == "PATCH"]


def test_rename_and_env_keep_every_other_key(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], exchanges: list[Exchange]
) -> None:
    token = cli_env.world.pods[TRAIN].env["HF_TOKEN"]
    code = main(["edit", "llama-lora", "--name", "llama-2", "--env", "EPOCHS=3", "--unset-env", "WANDB_PROJECT", "-y"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "name           llama-lora-3090 -> llama-2" in out and "env +EPOCHS" in out and "env -WANDB_PROJECT" in out
    assert "running processes end" in out and "50 GB at /workspace" in out  # the env change restarts it
    assert token not in out
    pod = cli_env.world.pods[TRAIN]
    assert pod.name == "llama-2"
    assert pod.env == {"HF_HOME": "/workspace/hf", "HF_TOKEN": token, "EPOCHS": "3"}  # nothing else lost
    (sent,) = patches(exchanges)
    assert set(json.loads(sent.request_body)) == {"name", "env"}


def test_a_bare_env_key_comes_from_this_machines_environment(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret_value = "hf_" + "k" * 30
    monkeypatch.setenv("HF_TOKEN", secret_value)
    assert main(["edit", TRAIN, "--env", "HF_TOKEN", "--yes"]) == 0
    assert secret_value not in capsys.readouterr().out
    assert cli_env.world.pods[TRAIN].env["HF_TOKEN"] == secret_value
    monkeypatch.delenv("NOT_SET_HERE", raising=False)
    assert main(["edit", TRAIN, "--env", "NOT_SET_HERE", "--yes"]) == 2
    assert "NOT_SET_HERE is not set in this machine's environment" in capsys.readouterr().err


def test_nothing_to_change_sends_nothing(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], exchanges: list[Exchange]
) -> None:
    assert main(["edit", TRAIN, "--name", "llama-lora-3090", "--container-gb", "20"]) == 0
    assert "nothing to change" in capsys.readouterr().out and not patches(exchanges)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--volume-gb", "20"], "cannot shrink"),
        (["--ports", "8888"], "write ports like"),
        (["--image", "Bad Image"], "not an image reference"),
        (["--unset-env", "NOPE"], "NOPE is not set on the pod"),
        (["--name", ""], "give the pod a name"),
        (["--container-gb", "0"], "from 5 to 1000"),
    ],
)
def test_refusals_are_said_and_nothing_is_sent(
    cli_env: SimApiServer,
    capsys: pytest.CaptureFixture[str],
    exchanges: list[Exchange],
    args: list[str],
    words: str,
) -> None:
    assert main(["edit", TRAIN, *args, "--yes"]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1 and not patches(exchanges)


def test_a_network_volume_cannot_be_grown_here(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["edit", "eval-a100", "--volume-gb", "500", "--yes"]) == 2  # its data is on a network volume
    assert "grow it with `podtui volume`" in capsys.readouterr().err


def test_lock_and_unlock(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["edit", TRAIN, "--lock", "--yes"]) == 0
    assert cli_env.world.pods[TRAIN].locked
    capsys.readouterr()
    assert main(["stop", TRAIN, "--yes"]) == 1
    assert "Locked pods cannot be stopped or reset" in capsys.readouterr().err.replace("locked pods", "Locked pods")
    assert main(["edit", TRAIN, "--unlock", "--yes", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["sent"] and result["changes"] == [{"what": "locked", "old": "yes", "new": "no"}]
    assert not result["restarts"] and result["pod"]["locked"] is False
    assert not cli_env.world.pods[TRAIN].locked


def test_json_masks_secrets(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    new = "hf_" + "w" * 30
    assert main(["edit", TRAIN, "--env", f"HF_TOKEN={new}", "--json", "--yes"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert new not in captured.out and new not in captured.err
    assert result["restarts"] and result["changes"][0]["what"] == "env HF_TOKEN"


def test_without_yes_on_a_pipe_nothing_is_sent(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], exchanges: list[Exchange]
) -> None:
    assert main(["edit", TRAIN, "--name", "other"]) == 2
    assert "--yes" in capsys.readouterr().err and not patches(exchanges)


def test_read_only_refuses(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["edit", TRAIN, "--name", "other", "--yes", "--read-only"]) == 1
    assert "read-only mode" in capsys.readouterr().err and cli_env.world.pods[TRAIN].name == "llama-lora-3090"


def test_runpods_refusal_is_said(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    cli_env.faults.add("conflict", "pod belongs to a cluster", only="PATCH /v2/pods/")
    assert main(["edit", TRAIN, "--name", "other", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "RunPod refused the change to llama-lora-3090" in err and "pod belongs to a cluster" in err


def test_a_locked_running_pods_restarting_change_is_refused_unless_it_unlocks(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = cli_env.world.pods[TRAIN]
    pod.locked = True
    image = pod.image
    new = "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04"
    assert main(["edit", "llama-lora-3090", "--image", new, "--yes"]) == 2
    err = capsys.readouterr().err
    assert "nothing sent" in err and "--unlock" in err and "unexpected" not in err
    assert pod.image == image and pod.locked
    assert main(["edit", "llama-lora-3090", "--image", new, "--unlock", "--yes"]) == 0  # the same edit unlocks it
    assert pod.image == new and not pod.locked
