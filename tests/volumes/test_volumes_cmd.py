"""`podtui volumes` and `podtui volume create|grow|rename|delete` as a user runs them against the simulated RunPod:
the table and its totals, --json, the cost shown before creating, sizes and names checked before anything is sent,
RunPod's refusals in words, delete refused while a pod mounts the volume (--yes too), and read-only mode."""

from __future__ import annotations

import io
import json
import sys

import pytest

from podtui.cli.main import main
from podtui.sim.server import SimApiServer
from tests.volumes.conftest import CHECKPOINTS, DATASETS


def test_the_table_names_the_pods_and_totals(
    volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["volumes"]) == 0
    out = capsys.readouterr().out
    datasets = next(line for line in out.splitlines() if line.startswith("datasets"))
    assert "vol0datasets" in datasets and "200 GB" in datasets and "EU-RO-1" in datasets
    assert "$14.00" in datasets and datasets.rstrip().endswith("llama-lora-3090")
    checkpoints = next(line for line in out.splitlines() if line.startswith("checkpoints"))
    assert "HIGH_PERFORMANCE" in checkpoints and checkpoints.rstrip().endswith("—")
    assert "2 volumes · 250 GB · $17.50/month" in out


def test_json(volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["volumes", "--json"]) == 0
    listed = {v["name"]: v for v in json.loads(capsys.readouterr().out)}
    assert listed["datasets"]["pods"] == [{"id": "q7x2m9fk4r8t1a", "name": "llama-lora-3090"}]
    assert listed["checkpoints"] == {
        "id": CHECKPOINTS.id,
        "name": "checkpoints",
        "size_gb": 50,
        "data_centre": "US-KS-2",
        "type": "HIGH_PERFORMANCE",
        "cost_per_month": 3.5,
        "pods": [],
    }


def test_no_volumes_says_how_to_make_one(
    no_volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["volumes"]) == 0
    assert "no network volumes" in capsys.readouterr().out


def test_create_shows_the_cost_then_creates(
    no_volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["volume", "create", "models", "--size", "100", "--dc", "US-KS-2", "--type", "standard", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "100 GB in US-KS-2, STANDARD: $7.00/month, billed until it is deleted" in out
    assert "created network volume models (" in out
    made = [v for v in cli_env.world.volumes.values() if v.name == "models"]
    assert len(made) == 1 and made[0].size_gb == 100 and made[0].type == "STANDARD"


def test_create_json_keeps_stdout_one_object(
    no_volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["volume", "create", "models", "--size", "20", "--dc", "EU-RO-1", "--yes", "--json"]) == 0
    captured = capsys.readouterr()
    made = json.loads(captured.out)
    assert made["name"] == "models" and made["size_gb"] == 20 and made["type"] == "STANDARD"
    assert "$1.40/month" in captured.err


def test_create_asks_and_a_no_creates_nothing(
    no_volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = io.StringIO("n\n")
    answer.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stdin", answer)
    assert main(["volume", "create", "models", "--size", "20", "--dc", "EU-RO-1"]) == 1
    assert "cancelled; nothing was created" in capsys.readouterr().out
    assert not cli_env.world.volumes


def test_create_will_not_ask_a_script(
    no_volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["volume", "create", "models", "--size", "20", "--dc", "EU-RO-1"]) == 2
    assert "add --yes to create the volume" in capsys.readouterr().err
    assert not cli_env.world.volumes


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["bad\tname", "--size", "20", "--dc", "EU-RO-1"], "NAME: a volume name holds no newlines"),
        (["ok", "--size", "5", "--dc", "EU-RO-1"], "--size: a whole number of GB from 10 to 4096"),
        (["ok", "--size", "5000", "--dc", "EU-RO-1"], "--size: a whole number of GB from 10 to 4096"),
        (["ok", "--size", "20", "--dc", "MARS-1"], "--dc: RunPod has no data centre 'MARS-1'"),
        (["ok", "--size", "20", "--dc", "CA-MTL-1"], "--dc: CA-MTL-1 offers no network volumes"),
        (["ok", "--size", "20", "--dc", "EU-RO-1", "--type", "HIGH_PERFORMANCE"], "--type: EU-RO-1 offers STANDARD"),
        (["ok", "--size", "20", "--dc", "EU-RO-1", "--type", "turbo"], "--type: 'turbo' is not a volume type"),
    ],
)
def test_create_mistakes_are_said_before_anything_is_sent(
    no_volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    assert main(["volume", "create", *args, "--yes"]) == 2
    assert said in capsys.readouterr().err
    assert not cli_env.world.volumes


def test_grow_and_rename(volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["volume", "grow", "checkpoints", "--size", "80", "--yes"]) == 0
    assert "grew network volume checkpoints" in capsys.readouterr().out
    assert main(["volume", "rename", CHECKPOINTS.id, "ckpts", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "ckpts"
    v = cli_env.world.volumes[CHECKPOINTS.id]
    assert (v.name, v.size_gb) == ("ckpts", 80)


def test_grow_shows_the_new_cost_and_asks(
    volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Growing is for good (a volume never shrinks): the cost a month, was and now, is shown and asked about."""
    answer = io.StringIO("n\n")
    answer.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stdin", answer)
    assert main(["volume", "grow", "checkpoints", "--size", "80"]) == 1
    out = capsys.readouterr().out
    assert "from 50 GB to 80 GB: $5.60/month, was $3.50/month" in out and "Grow it? [y/N]" in out
    assert "cancelled; nothing was changed" in out
    assert cli_env.world.volumes[CHECKPOINTS.id].size_gb == 50
    answer = io.StringIO("y\n")
    answer.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setattr(sys, "stdin", answer)
    assert main(["volume", "grow", "checkpoints", "--size", "80", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["size_gb"] == 80 and "$5.60/month, was $3.50/month" in captured.err
    assert cli_env.world.volumes[CHECKPOINTS.id].size_gb == 80


def test_grow_will_not_ask_a_script(
    volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["volume", "grow", "checkpoints", "--size", "80"]) == 2
    assert "add --yes to grow the volume" in capsys.readouterr().err
    assert cli_env.world.volumes[CHECKPOINTS.id].size_gb == 50


def _lookups_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from podtui.cli import volume_cmd

    monkeypatch.setattr(volume_cmd, "LOOKUP_DELAYS", (0.0,))


@pytest.mark.parametrize("as_json", [False, True])
def test_a_lost_answer_finds_the_volume_made_after_all(
    no_volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    """The answer to the create is cut off but RunPod made the volume: said as made, and made once."""
    cli_env.faults.add("malformed", times=1, only="POST /v2/network-volumes")
    args = ["volume", "create", "models", "--size", "20", "--dc", "EU-RO-1", "--yes"]
    assert main(args + (["--json"] if as_json else [])) == 0
    captured = capsys.readouterr()
    made = [v for v in cli_env.world.volumes.values() if v.name == "models"]
    assert len(made) == 1
    if as_json:
        assert json.loads(captured.out)["id"] == made[0].id and "answer was lost" in captured.err
    else:
        assert f"created after all: network volume models ({made[0].id})" in captured.out
    assert "did not" not in captured.out + captured.err


@pytest.mark.parametrize(
    ("fault", "value"),
    [("status", 502), ("status", 504), ("raw", "{}")],
    ids=["bad-gateway", "timeout", "not-a-volume"],
)
def test_a_lost_answer_never_says_not_created(
    no_volumes: SimApiServer,
    cli_env: SimApiServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    value: object,
) -> None:
    """No usable answer and no volume listed yet: it may still appear, so podtui says to look before trying again."""
    _lookups_at_once(monkeypatch)
    cli_env.faults.add(fault, value, times=1, only="POST /v2/network-volumes")  # type: ignore[arg-type]
    assert main(["volume", "create", "models", "--size", "20", "--dc", "EU-RO-1", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "models may have been created" in err and "before trying again" in err
    assert "did not create" not in err and "nothing was created" not in err


def test_a_lost_answer_and_no_list_says_to_look(
    no_volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _lookups_at_once(monkeypatch)
    cli_env.faults.add("malformed", times=1, only="POST /v2/network-volumes")
    cli_env.faults.add("status", 502, times=2, only="GET /v2/network-volumes")  # before the create, and after
    assert main(["volume", "create", "models", "--size", "20", "--dc", "EU-RO-1", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "may have been created, and podtui could not look" in err and "`podtui volumes`" in err
    assert len(cli_env.world.volumes) == 1  # made once; nothing tried again


@pytest.mark.parametrize(
    ("args", "said", "code"),
    [
        (["grow", "checkpoints", "--size", "40"], "cannot shrink", 2),
        (["grow", "checkpoints", "--size", "50"], "is 50 GB already", 2),
        (["grow", "nothing", "--size", "90"], "no network volume is called or has the id 'nothing'", 1),
        (["rename", "checkpoints", ""], "NEW: give the volume a name", 2),
    ],
)
def test_grow_and_rename_mistakes(
    volumes: SimApiServer,
    cli_env: SimApiServer,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    said: str,
    code: int,
) -> None:
    assert main(["volume", *args]) == code
    assert said in capsys.readouterr().err
    assert cli_env.world.volumes[CHECKPOINTS.id].size_gb == 50


def test_delete_is_refused_while_a_pod_mounts_it_even_with_yes(
    volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["volume", "delete", "datasets", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "datasets is in use by pod llama-lora-3090 (q7x2m9fk4r8t1a): terminate it first" in err
    assert DATASETS.id in cli_env.world.volumes


def test_delete_asks_for_the_name(
    volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for typed, code in (("checkpoint\n", 1), ("checkpoints\n", 0)):
        answer = io.StringIO(typed)
        answer.isatty = lambda: True  # type: ignore[method-assign]
        monkeypatch.setattr(sys, "stdin", answer)
        assert main(["volume", "delete", "checkpoints"]) == code
    out = capsys.readouterr().out
    assert "that is not the volume's name; nothing was deleted" in out
    assert f"deleted network volume checkpoints ({CHECKPOINTS.id})" in out
    assert CHECKPOINTS.id not in cli_env.world.volumes


def test_delete_json(volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["volume", "delete", CHECKPOINTS.id, "--yes", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"deleted": {"id": CHECKPOINTS.id, "name": "checkpoints"}}


def test_runpods_refusal_is_said_in_its_words(
    volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pod that started mounting the volume after podtui looked: RunPod's 409 is said as RunPod put it, exit 1."""
    detail = "network volume vol1checkpts is mounted by pod eval-a100: terminate the pod first"
    cli_env.faults.add("conflict", detail, times=1, only="DELETE /v2/network-volumes/")
    assert main(["volume", "delete", "checkpoints", "--yes"]) == 1
    assert detail in capsys.readouterr().err
    assert CHECKPOINTS.id in cli_env.world.volumes


@pytest.mark.parametrize(
    "args",
    [
        ["create", "x", "--size", "20", "--dc", "EU-RO-1", "--yes"],
        ["grow", "checkpoints", "--size", "60"],
        ["rename", "checkpoints", "y"],
        ["delete", "checkpoints", "--yes"],
    ],
)
def test_read_only_refuses_every_change(
    volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    assert main(["volume", *args, "--read-only"]) == 1
    assert "read-only mode" in capsys.readouterr().err
    assert cli_env.world.volumes[CHECKPOINTS.id].size_gb == 50 and len(cli_env.world.volumes) == 2


def test_hostile_names_are_shown_inert(
    no_volumes: SimApiServer, cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from podtui.sim.volumes import SimVolume

    cli_env.world.volumes["volx"] = SimVolume("volx", "evil\x1b]52;c;aGk=\x07name", 20, "EU-RO-1")
    assert main(["volumes"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b]52" in out
