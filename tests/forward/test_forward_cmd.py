"""`podtui forward` as a user runs it: in a real process until ctrl+c, with a request through it; --json; and the
refusals (gateway-only pod with its proxy URL, a pod not running, a mistaken port) said in one line."""

from __future__ import annotations

import io
import json
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from podtui.cli.main import main
from podtui.core.api import V2Api
from podtui.core.forward_memory import ForwardMemory, PortSpec
from podtui.core.paths import Paths
from podtui.core.services import Services
from podtui.core.ssh.connect import SshSettings
from podtui.sim.server import SimApiServer
from tests.forward.conftest import BODY, Fetch
from tests.helpers.sim import DEMO_IDS, DIRECT_POD, GATEWAY_POD, needs_sshd

# the target: the pod's own port (its localhost), or HOST:PORT via the pod where sshd names it by its address
LINE = re.compile(
    r"^forwarding 127\.0\.0\.1:(\d+) -> (?:llama-lora-3090:(\d+)|\S+:(\d+) via llama-lora-3090) \(ctrl\+c to stop\)$"
)


@needs_sshd
def test_forward_until_ctrl_c(
    full_cli_env: dict[str, str], service: int, fetch: Fetch, paths: Paths, pod_host: str
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "podtui", "forward", "--read-only", DIRECT_POD, f"{service}:0", "--host", pod_host],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_cli_env,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        m = LINE.match(first.rstrip("\n"))
        assert m is not None, (first, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        local = int(m.group(1))
        assert int(m.group(2) or m.group(3)) == service
        assert fetch(local) == (200, BODY)
        time.sleep(0.3)  # the connection's last bytes counted before the summary
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert re.search(rf"^stopped 127\.0\.0\.1:{local} -> .*: 1 connection, \d+ B in, \d+ B out$", out, re.M), out
    assert "interrupted" not in err and "Traceback" not in err
    memory = ForwardMemory.for_paths(paths)  # the same folders as the process's (the isolated home)
    assert memory.for_pod(DIRECT_POD) == [PortSpec(service, 0)]
    assert stat.S_IMODE(memory.path.stat().st_mode) == 0o600


@needs_sshd
def test_json_lines(
    sim_api: V2Api, ssh_settings: SshSettings, service: int, fetch: Fetch, tmp_path: Path, pod_host: str
) -> None:
    from podtui.cli.forward_cmd import cmd_forward

    session = Services(sim_api, ssh_settings=lambda: ssh_settings)
    out = io.StringIO()
    until = threading.Event()
    code: list[int] = []
    run = threading.Thread(
        target=lambda: code.append(
            cmd_forward(session, DEMO_IDS["train"], [PortSpec(service, 0)], pod_host, True, None, out, until)
        )
    )
    run.start()
    try:
        deadline = time.monotonic() + 15
        while "\n" not in out.getvalue():
            assert time.monotonic() < deadline and run.is_alive()
            time.sleep(0.02)
        started = json.loads(out.getvalue().splitlines()[0])
        assert started["event"] == "forwarding" and started["state"] == "listening"
        assert started["local_address"] == f"127.0.0.1:{started['local_port']}" and started["remote_port"] == service
        assert fetch(started["local_port"]) == (200, BODY)
        time.sleep(0.3)
    finally:
        until.set()
        run.join(15)
    assert code == [0]
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    summary = rows[-1]
    assert summary["event"] == "summary" and summary["state"] == "stopped"
    assert summary["connections_total"] == 1 and summary["bytes_in"] > len(BODY)


def test_a_gateway_only_pod_is_refused_with_its_proxy_url(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["forward", GATEWAY_POD, "8888"]) == 1
    err = capsys.readouterr().err
    assert "eval-a100 has no direct SSH" in err and "interactive shell only" in err
    assert f"https://{DEMO_IDS['idle']}-8888.proxy.runpod.net" in err
    assert len(err.splitlines()) == 1


def test_a_pod_that_is_not_running_is_refused(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forward", "notebook-4090", "8888"]) == 1
    assert "notebook-4090 is EXITED: a port can be forwarded once the pod is RUNNING" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("ports", "said"),
    [
        (["0"], "the pod's port must be from 1 to 65535, not 0"),
        (["8888:x"], "the local port must be a number"),
        (["8888", "9999:8888"], "local port 8888 is asked for twice"),
    ],
)
def test_port_mistakes_are_one_line_and_exit_2(
    cli_env: SimApiServer, capsys: pytest.CaptureFixture[str], ports: list[str], said: str
) -> None:
    assert main(["forward", DIRECT_POD, *ports]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.splitlines()) == 1


def test_an_unknown_pod(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forward", "no-such-pod", "8888"]) == 1
    assert "no-such-pod" in capsys.readouterr().err


def test_memory_is_left_alone_by_a_refusal(cli_env: SimApiServer, paths: Paths) -> None:
    assert main(["forward", GATEWAY_POD, "8888"]) == 1
    assert not ForwardMemory.for_paths(paths).path.exists()
