"""`podtui recreate REF` as a user runs it against the simulated RunPod: a pod on the account made again (said to
be a second one), a terminated one made again from what podtui remembered, its token from this machine's
environment or a secret reference (never from the file), another GPU, the spec and cost shown first, --json, and
what cannot be recreated said in words."""

from __future__ import annotations

import json

import pytest

from podtui.cli.main import main
from podtui.core.api import V2Api
from podtui.core.gpu import Cloud, Stock
from podtui.core.launch_memory import LaunchMemory
from podtui.core.paths import Paths
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

TRAIN = DEMO_IDS["train"]  # llama-lora-3090: RTX 3090, HF_TOKEN in its env
TOKEN = "hf_demoDemoDemoDemoDemoDemo0000"


def _new_pods(sim: SimApiServer, before: set[str]) -> list:  # type: ignore[type-arg]
    return [p for pid, p in sim.world.pods.items() if pid not in before and p.status != "TERMINATED"]


def _remember_then_terminate(api: V2Api, sim: SimApiServer, pod_id: str) -> None:
    snap = api.fetch_snapshot()
    LaunchMemory.for_paths(Paths.default()).remember(snap.pods, snap.fetched_at)
    sim.world.terminate(pod_id)


def test_a_pod_on_the_account_is_made_again(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = set(cli_env.world.pods)
    monkeypatch.setenv("HF_TOKEN", "hf_fromthismachine1234567890")
    assert main(["recreate", "llama-lora-3090", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "on the account now" in out and "this makes a second one" in out
    assert "cost       $" in out and "/hr" in out
    assert "secret      HF_TOKEN from this machine's environment" in out
    assert TOKEN not in out and "hf_fromthismachine" not in out  # shown hidden, as create shows env
    (made,) = _new_pods(cli_env, before)
    original = cli_env.world.pods[TRAIN]
    assert made.name == "llama-lora-3090" and made.gpu_type == original.gpu_type and made.image == original.image
    # --secrets applies to a pod on the account as to a remembered one: never copied from RunPod's answer
    assert made.env.get("HF_TOKEN") == "hf_fromthismachine1234567890" and made.env["HF_HOME"] == "/workspace/hf"
    assert f'created pod "{made.id}"' in out


@pytest.mark.parametrize(
    ("source", "value", "said"),
    [
        ("omit", None, "HF_TOKEN left out (--secrets omit)"),
        ("reference", "{{ RUNPOD_SECRET_hf_token }}", "HF_TOKEN = {{ RUNPOD_SECRET_hf_token }}"),
        ("env", None, "HF_TOKEN left out (not set here)"),
    ],
)
def test_a_pod_on_the_account_follows_secrets_too(
    cli_env: SimApiServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    source: str,
    value: str | None,
    said: str,
) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    before = set(cli_env.world.pods)
    assert main(["recreate", TRAIN, "--secrets", source, "--yes"]) == 0
    out = capsys.readouterr().out
    assert said in out and TOKEN not in out
    (made,) = _new_pods(cli_env, before)
    assert made.env.get("HF_TOKEN") == value


def test_a_pod_on_a_network_volume_is_planned_in_its_data_centre(
    api: V2Api, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """As `create --volume`: the volume's data centre is the only one, and its stock there is what counts."""
    idle = cli_env.world.pods[DEMO_IDS["idle"]]  # eval-a100, on the network volume models-vol
    snap = api.fetch_snapshot()
    pod = snap.find(idle.id)
    assert pod.network_volume and pod.location and pod.cloud
    gpu = api.gpu_types().find(pod.gpu_name or "")
    centre, cloud = pod.location, Cloud(pod.cloud.upper())
    other = next(c for c in Cloud if c is not cloud)
    assert gpu.stock_in(cloud, 1, centre) is Stock.NONE and gpu.stock_in(other, 1, centre) is not Stock.NONE
    assert gpu.stock_for(cloud, 1) is not Stock.NONE  # free elsewhere: stock "for everywhere" would mislead
    before = set(cli_env.world.pods)
    assert main(["recreate", "eval-a100", "--yes"]) == 1
    err = capsys.readouterr().err
    assert f"in {centre}: none free there now" in err and f"free in {centre} now: " in err
    assert "choose another GPU type with --gpu, or another cloud with --cloud" in err
    assert not _new_pods(cli_env, before)
    assert main(["recreate", "eval-a100", "--cloud", "any", "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"skipped    1 x {gpu.display_name} ({cloud.label} cloud) in {centre}: none free there now" in out
    assert f"stock      1 x {gpu.id} ({other.label} cloud) in {centre}: " in out
    (made,) = _new_pods(cli_env, before)
    assert made.location == centre and made.network_volume == pod.network_volume


def test_a_terminated_pod_from_memory_its_token_from_here(
    api: V2Api, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _remember_then_terminate(api, cli_env, TRAIN)
    text = (Paths.default().data_dir / "launches.json").read_text()
    assert TOKEN not in text and "HF_TOKEN" in text
    before = set(cli_env.world.pods)
    monkeypatch.setenv("HF_TOKEN", "hf_fromthismachine1234567890")
    assert main(["recreate", TRAIN, "--yes"]) == 0
    out = capsys.readouterr().out
    assert "last seen" in out and "secret      HF_TOKEN from this machine's environment" in out
    (made,) = _new_pods(cli_env, before)
    assert made.env["HF_TOKEN"] == "hf_fromthismachine1234567890" and made.env["HF_HOME"] == "/workspace/hf"


def test_a_token_not_set_here_is_left_out_and_said(
    api: V2Api, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _remember_then_terminate(api, cli_env, TRAIN)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    before = set(cli_env.world.pods)
    assert main(["recreate", "llama-lora-3090", "--yes"]) == 0
    assert "HF_TOKEN left out (not set here)" in capsys.readouterr().out
    (made,) = _new_pods(cli_env, before)
    assert "HF_TOKEN" not in made.env


def test_secret_references_and_another_gpu(
    api: V2Api, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _remember_then_terminate(api, cli_env, TRAIN)
    before = set(cli_env.world.pods)
    assert main(["recreate", TRAIN, "--secrets", "reference", "--gpu", "RTX 4090", "--yes", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["spec"]["env"]["HF_TOKEN"] == "•••••• (hidden)"  # as create shows a credential-like key
    (made,) = _new_pods(cli_env, before)
    assert made.env["HF_TOKEN"] == "{{ RUNPOD_SECRET_hf_token }}" and "4090" in made.gpu_type
    assert "RUNPOD_SECRET_hf_token" in captured.err


@pytest.mark.parametrize(
    ("args", "said", "code"),
    [
        (["no-such-pod", "--yes"], "podtui remembers no pod called or with the id 'no-such-pod'", 1),
        (["llama-lora-3090", "--gpu", "Voodoo 5", "--yes"], "--gpu: no GPU type 'Voodoo 5'", 2),
        (["llama-lora-3090", "--name", "bad\nname", "--yes"], "the spec cannot be created as it is", 1),
        (["llama-lora-3090"], "not asking on a non-interactive input", 2),
        (["llama-lora-3090", "--yes", "--read-only"], "read-only mode", 1),
    ],
)
def test_what_cannot_be_recreated_is_said(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], args: list[str], said: str, code: int
) -> None:
    before = set(cli_env.world.pods)
    assert main(["recreate", *args]) == code
    assert said in capsys.readouterr().err
    assert not _new_pods(cli_env, before)


def test_a_gone_network_volume_is_refused(
    api: V2Api, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_env.world.pods[TRAIN].network_volume = "volgone1234"
    _remember_then_terminate(api, cli_env, TRAIN)
    before = set(cli_env.world.pods)
    assert main(["recreate", TRAIN, "--yes"]) == 1
    assert "network volume volgone1234 is no longer on the account" in capsys.readouterr().err
    assert not _new_pods(cli_env, before)
