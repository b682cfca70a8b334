"""Several pods at once, without a screen: which of them a verb applies to and why not, what it saves, and the CLI's
`podtui stop|terminate|resume|restart POD...`: one question, each pod's result, the exit status, JSON."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from podtui.cli.main import main
from podtui.core import actions
from podtui.core.pod import Pod, PodStatus
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS


def mk(pod_id: str, status: PodStatus = PodStatus.RUNNING, **kw: Any) -> Pod:
    offers = {
        PodStatus.RUNNING: {"stop", "restart", "terminate"},
        PodStatus.EXITED: {"start", "terminate"},
    }.get(status, set())
    pod = Pod(id=pod_id, name=f"pod-{pod_id}", status=status, actions=frozenset(offers), cost_per_hr=0.5, volume_gb=73)
    return replace(pod, **kw)


def test_a_plan_says_which_pods_and_why_not() -> None:
    running, stopped = mk("a"), mk("b", PodStatus.EXITED, cost_per_hr=0.0)
    locked = mk("c", locked=True, actions=frozenset({"terminate"}))
    plan = actions.bulk_plan("stop", [running, stopped, locked, running])  # one pod named twice counts once
    assert [p.id for p in plan.acting] == ["a"]
    why = {i.pod.id: i.refused for i in plan.refused}
    assert "nothing to stop" in (why["b"] or "") and "is locked" in (why["c"] or "")
    # 73 GB of volume bill $0.02/hr once stopped: stopping saves the rest
    assert plan.per_hr == 0.5 and plan.saves_per_hr == pytest.approx(0.5 - 73 * 0.2 / 730)
    assert plan.summary() == "Stop 1 pod: they cost $0.500/hr now; this saves $0.480/hr."
    term = actions.bulk_plan("terminate", [running, stopped, locked])
    assert len(term.acting) == 3  # a lock does not stop a terminate
    assert term.saves_per_hr == pytest.approx(0.5 + 0.02 + 0.02 + 0.5 + 0.02)  # a stopped pod's volume too
    assert actions.bulk_plan("stop", [stopped]).summary() == "None of these pods can be stopped now."


def test_what_survives() -> None:
    assert "the 73 GB volume is kept" in actions.survives("stop", mk("a"))
    assert "network volume vol_1 is kept" in actions.survives("stop", mk("a", volume_gb=None, network_volume="vol_1"))
    assert "nothing of its files is kept" in actions.survives("stop", mk("a", volume_gb=None))
    assert "73 GB volume are deleted" in actions.survives("terminate", mk("a"))
    assert "network volume vol_1 survives" in actions.survives("terminate", mk("a", network_volume="vol_1"))
    assert actions.loses_data_at_zero(mk("a")) and not actions.loses_data_at_zero(mk("a", network_volume="v"))
    assert not actions.loses_data_at_zero(mk("a", PodStatus.TERMINATED))


def test_stop_several_with_json(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["stop", "llama-lora", "eval-a100", "notebook-4090", "nope", "--yes", "--json"])
    results = json.loads(capsys.readouterr().out)
    assert code == 1  # two did not stop
    by = {r["ref"]: r for r in results}
    assert by[DEMO_IDS["train"]]["ok"] and by[DEMO_IDS["idle"]]["ok"]
    assert "nothing to stop" in by[DEMO_IDS["stopped"]]["error"]
    assert "no pod with id or name 'nope'" in by["nope"]["error"]
    world = cli_env.world.pods
    assert world[DEMO_IDS["train"]].status == world[DEMO_IDS["idle"]].status == "EXITED"


def test_each_result_is_printed_and_failures_named(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["stop", "llama-lora", "sweep-h100x2", "--yes"])
    captured = capsys.readouterr()
    assert code == 1
    assert f'pod "{DEMO_IDS["train"]}" (llama-lora-3090) stopping' in captured.out
    assert "stop h1j4k8l2m6n0pq (sweep-h100x2) failed: sweep-h100x2 is locked" in captured.err


def test_a_refusal_from_runpod_is_said_with_the_pods_name(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cli_env.faults.add("conflict", "the pod is busy", times=1, only=f"POST /v2/pods/{DEMO_IDS['idle']}")
    assert main(["stop", "eval-a100", "llama-lora-3090", "--yes"]) == 1
    captured = capsys.readouterr()
    assert "stop b3n8v1c6z0p5we (eval-a100) failed" in captured.err and "the pod is busy" in captured.err
    assert "(llama-lora-3090) stopping" in captured.out  # the others still sent


def test_terminate_several_needs_whole_names_and_the_count(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["terminate", "eval", "llama-lora-3090", "--yes"]) == 2
    assert "whole id or name" in capsys.readouterr().err
    assert {p.status for p in cli_env.world.pods.values()} != {"TERMINATED"}
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    answers = iter(["3"])  # the wrong count: nothing terminated
    monkeypatch.setattr("builtins.input", lambda _prompt: next(answers))
    assert main(["terminate", "eval-a100", "llama-lora-3090"]) == 1
    captured = capsys.readouterr()
    assert "cancelled; nothing changed" in captured.out
    assert "network volume models-vol survives" in captured.err and "volume at /workspace are deleted" in captured.err
    assert cli_env.world.pods[DEMO_IDS["idle"]].status == "RUNNING"
    answers = iter(["2"])
    assert main(["terminate", "eval-a100", "llama-lora-3090"]) == 0
    assert cli_env.world.pods[DEMO_IDS["idle"]].status == "TERMINATED"
    assert cli_env.world.pods[DEMO_IDS["train"]].status == "TERMINATED"


def test_one_question_for_all_refused_on_a_pipe(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stop", "llama-lora", "eval-a100"]) == 2
    assert "--yes" in capsys.readouterr().err
    assert cli_env.world.pods[DEMO_IDS["train"]].status == "RUNNING"


def test_pods_shows_locks_and_what_is_lost_at_zero(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pods"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "h1j4k8l2m6n0pq  PROVISIONING" in out and " locked " in out
    assert "net models-vol" in out and "50 GB $0!" in out
    assert "Locked pods cannot be stopped or reset" in out and "data deleted at $0" in out and captured.err == ""
    assert main(["pods", "--json"]) == 0
    by = {p["name"]: p for p in json.loads(capsys.readouterr().out)}
    assert by["eval-a100"]["network_volume"] == "models-vol" and not by["eval-a100"]["data_deleted_at_zero"]
    assert by["llama-lora-3090"]["network_volume"] is None and by["llama-lora-3090"]["data_deleted_at_zero"]


def test_resume_without_a_free_gpu_says_what_to_do(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    cli_env.faults.add("no_capacity")
    assert main(["resume", "notebook-4090", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "not enough free GPUs" in err and "`podtui resume notebook-4090`" in err
    assert "no network volume" in err and len(err.strip().splitlines()) == 1
    assert cli_env.world.pods[DEMO_IDS["stopped"]].status == "EXITED"


@pytest.mark.parametrize(
    "argv",
    [
        ["terminate", "eval-a100", "llama-lora-3090"],  # the count typed
        ["stop", "eval-a100", "llama-lora-3090"],  # y/N
        ["terminate", "eval-a100"],  # one pod: its name typed (confirm_terminate = "name", the default)
        ["stop", "eval-a100"],  # one pod: y/N
    ],
)
def test_ctrl_d_at_a_prompt_cancels(
    argv: list[str], cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)

    def end_of_input(_prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", end_of_input)
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "cancelled; nothing changed" in captured.out and "unexpected" not in captured.err
    assert cli_env.world.pods[DEMO_IDS["idle"]].status == "RUNNING"
    assert cli_env.world.pods[DEMO_IDS["train"]].status == "RUNNING"


def test_what_to_do_quotes_a_name_with_a_space() -> None:
    from podtui.core.resume import what_to_do

    pod = mk("abc", PodStatus.EXITED, network_volume="vol1")
    said = " ".join(what_to_do(pod, "my pod"))
    assert "`podtui resume 'my pod'`" in said and "`podtui recreate 'my pod' --gpu TYPE`" in said
    assert "`podtui resume abc`" in " ".join(what_to_do(pod))  # an id needs no quotes


def test_fate_in_a_few_words() -> None:
    network = mk("a", network_volume="vol1", volume_gb=None)
    own, none = mk("b"), mk("c", volume_gb=None)
    assert [actions.fate("terminate", p) for p in (network, own, none)] == [
        "net volume vol1 kept",
        "73 GB volume deleted",
        "no volume: its files deleted",
    ]
    assert [actions.fate("stop", p) for p in (network, own, none)] == [
        "net volume vol1 kept",
        "73 GB volume kept",
        "no volume: its files wiped",
    ]
