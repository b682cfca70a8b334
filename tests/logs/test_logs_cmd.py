"""`podtui logs` as a user runs it (docs/architecture.md#logs): the last lines and exit 0, JSON lines, the sources,
mistakes said in one line, hostile lines made harmless, and --follow across a dropped connection."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from podtui.cli.main import main
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

POD = "llama-lora-3090"


def test_the_last_lines_and_exit_0(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    cli_env.world.clock.advance(60)
    assert main(["logs", POD, "--tail", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and all(" container " in line and "loss" in line for line in out)


def test_json_lines(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", POD, "--tail", "5", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == 5 and all(set(row) == {"ts", "source", "line"} for row in rows)


def test_one_source_drops_its_column(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", POD, "--source", "system", "--tail", "100"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out and any(line.endswith("start container") for line in out)
    assert not any(" system " in line for line in out)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--tail", "9999"], "tail must be from 0 to 5000"),
        (["--tail", "-3"], "tail must be from 0 to 5000"),
        (["--since", "last tuesday"], "since must be like 10m"),
        (["--source", "stdout"], "invalid choice"),
        (["--tail", "ten"], "invalid int value"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    code: int | str | None
    try:
        code = main(["logs", POD, *args])
    except SystemExit as e:  # argparse's own
        code = e.code
    assert code == 2
    err = capsys.readouterr().err
    assert said in err.splitlines()[-1]  # argparse's usage, then the one line that says what is wrong


def test_an_unknown_pod(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["logs", "no-such-pod"]) == 1
    assert "no-such-pod" in capsys.readouterr().err


def test_hostile_lines_reach_the_terminal_harmless(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    world = cli_env.world
    pod = world.get(DEMO_IDS["train"])
    now = world.clock.now()
    with world.logs.changed:
        world.logs.entries(pod, now)  # the training loop's lines up to now, then these
        log = world.logs._log(pod.id)
        for line in (
            "\x1b]0;owned\x07title",
            "\x1b[2J\x1b[Hwiped",
            "\x1b]52;c;ZXZpbA==\x07clip",
            "\u202eevil",
            "\x9b1m",
        ):
            log.add(now, "container", line)
    assert main(["logs", POD, "--tail", "5"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\x9b" not in out
    assert "\\x1b]0;owned\\x07title" in out and "<U+202E>evil" in out


def test_follow_goes_on_across_a_drop_until_ctrl_c(cli_env: SimApiServer) -> None:
    env = {**os.environ, "RUNPOD_API_KEY": cli_env.api_key, "RUNPOD_API_BASE_URL": cli_env.url}
    cli_env.faults.add("drop_stream", 3, times=1, only="/logs")  # the first stream is cut after 3 lines
    proc = subprocess.Popen(
        [sys.executable, "-m", "podtui", "logs", POD, "--tail", "5", "--follow", "--source", "container"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        seen: list[str] = []
        deadline = time.monotonic() + 60
        assert proc.stdout is not None
        while len(seen) < 8 and time.monotonic() < deadline:
            cli_env.world.clock.advance(5)  # a training step's line every 5 s
            with cli_env.world.logs.changed:
                cli_env.world.logs.changed.notify_all()
            line = proc.stdout.readline()
            if line:
                seen.append(line)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert len(seen) >= 8
    stamps = [line.split()[0] for line in seen]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps), seen  # none lost, none twice
    assert "the log stream is down" in err and "the log stream is back" in err
    assert proc.returncode == 130 and "interrupted" in err


def test_without_follow_a_drop_is_said_too(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    cli_env.faults.add("drop_stream", 2, times=1, only="/logs")
    assert main(["logs", POD, "--tail", "6"]) == 0
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 6
    assert "the log stream is down" in err and "the log stream is back" in err


def test_tail_0_without_follow_prints_nothing_at_once(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["logs", POD, "--tail", "0"]) == 0
    assert capsys.readouterr().out == ""
