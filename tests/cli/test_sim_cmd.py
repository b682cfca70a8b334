"""`podtui sim` as a user runs it: a real process whose first line is the shell's exports, other podtui processes
working against it with nothing else, a clean end on SIGTERM (nothing left running, its temporary folder gone),
--state carrying the world across a restart, and usage errors (a taken port, a corrupt state) as exit 2.
Each test points TMPDIR at a folder of its own, so whatever still names that folder belongs to the run under test."""

from __future__ import annotations

import json
import os
import select
import shlex
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from podtui.sim.hub_seed import PUBLIC_MODEL
from podtui.sim.sim_folder import PREFIX
from tests.helpers.processes import settle
from tests.helpers.sim import DEMO_IDS

EXPORTED = ("RUNPOD_API_BASE_URL", "RUNPOD_API_KEY", "HF_ENDPOINT")


@pytest.fixture
def temp(tmp_path: Path) -> Path:
    folder = tmp_path / "temp"
    folder.mkdir()
    return folder


def env_for(temp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (*EXPORTED, "PODTUI_SSH_GATEWAY")}
    return {**env, "TMPDIR": str(temp), **extra}


class Sim:
    def __init__(self, proc: subprocess.Popen[bytes], seen: bytes) -> None:
        self.proc = proc
        first, self.rest = seen.split(b"\n", 1)  # the rest: what was read with the first line
        self.first_line = first.decode()
        self.stdout, self.stderr = "", ""
        words = shlex.split(self.first_line)
        assert words[0] == "export", first_line
        self.exports = dict(w.split("=", 1) for w in words[1:])

    def call(self, method: str, path: str, body: object = None) -> object:
        """A REST v2 request over plain HTTP, as any client of RunPod makes it."""
        request = urllib.request.Request(
            self.exports["RUNPOD_API_BASE_URL"] + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.exports['RUNPOD_API_KEY']}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read() or b"null")

    def statuses(self) -> dict[str, str]:
        listed = self.call("GET", "/v2/pods")
        assert isinstance(listed, dict)
        return {p["id"]: p["status"] for p in listed["pods"]}


def first_line(proc: subprocess.Popen[bytes], timeout_s: float = 60.0) -> bytes:
    """The process's stdout up to its first line's end, as soon as that is written (the process runs on)."""
    assert proc.stdout is not None
    seen, end = b"", time.monotonic() + timeout_s
    while b"\n" not in seen:
        assert time.monotonic() < end and proc.poll() is None, (seen, proc.poll(), proc.stderr and proc.stderr.read())
        if select.select([proc.stdout], [], [], 0.2)[0]:
            chunk = os.read(proc.stdout.fileno(), 65536)
            assert chunk, seen
            seen += chunk
    return seen


@contextmanager
def running_sim(temp: Path, *args: str) -> Iterator[Sim]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "podtui", "sim", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env_for(temp),
        start_new_session=True,
    )
    try:
        yield Sim(proc, first_line(proc))
    finally:
        if proc.poll() is None:
            proc.kill()
        if proc.stdout is not None and not proc.stdout.closed:
            proc.communicate()


def end(sim: Sim) -> int:
    """SIGTERM, as a service manager ends it; its exit status (what it printed meanwhile kept in `sim`)."""
    sim.proc.send_signal(signal.SIGTERM)
    out, err = sim.proc.communicate(timeout=30)
    sim.stdout, sim.stderr = (sim.rest + out).decode(), err.decode()
    return sim.proc.returncode


def podtui(sim: Sim, temp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Another podtui, given nothing but the simulator's exports."""
    return subprocess.run(
        [sys.executable, "-m", "podtui", *args],
        capture_output=True,
        text=True,
        env=env_for(temp, **sim.exports),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_the_first_line_is_the_exports_and_sigterm_leaves_nothing(temp: Path) -> None:
    with running_sim(temp) as sim:
        assert set(sim.exports) == set(EXPORTED), sim.first_line
        assert sim.exports["RUNPOD_API_BASE_URL"].startswith("http://127.0.0.1:")
        assert sim.exports["HF_ENDPOINT"].startswith("http://127.0.0.1:")
        script = 'eval "$(head -1)"; printf "%s\\n" "$RUNPOD_API_KEY"'  # as a shell takes it
        evaluated = subprocess.run(["bash", "-c", script], input=sim.first_line + "\n", capture_output=True, text=True)
        assert evaluated.stdout.strip() == sim.exports["RUNPOD_API_KEY"]
        assert set(sim.statuses()) == set(DEMO_IDS.values())  # the demo account, over plain HTTP
        with urllib.request.urlopen(f"{sim.exports['HF_ENDPOINT']}/api/models/{PUBLIC_MODEL}", timeout=10) as hub:
            assert json.loads(hub.read())["id"] == PUBLIC_MODEL  # the Hub, where HF_ENDPOINT says
        assert [p for p in temp.iterdir() if p.name.startswith(PREFIX)]  # its folder, while it runs
        assert end(sim) == 0
    assert "SSH gateway" in sim.stdout and "ctrl+c" in sim.stdout  # the lines after the first say what runs
    assert sim.exports["RUNPOD_API_KEY"] not in sim.stdout + sim.stderr  # the first line alone holds the key
    assert settle(str(temp)) == []
    assert list(temp.iterdir()) == []


def test_podtui_commands_work_against_it_with_its_exports_alone(temp: Path) -> None:
    with running_sim(temp) as sim:
        pods = podtui(sim, temp, "pods", "--json")
        assert pods.returncode == 0, pods.stderr
        assert {p["id"] for p in json.loads(pods.stdout)} == set(DEMO_IDS.values())
        cost = podtui(sim, temp, "cost", "--json")
        assert cost.returncode == 0, cost.stderr
        spend = json.loads(cost.stdout)
        assert spend["pods"] and {p["id"] for p in spend["pods"]} <= set(DEMO_IDS.values())
        assert spend["balance"] == pytest.approx(23.87, abs=0.5)
        assert end(sim) == 0


def test_state_keeps_a_stopped_pod_and_the_key_across_a_restart(temp: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    pod = DEMO_IDS["train"]
    with running_sim(temp, "--state", str(state)) as sim:
        assert sim.statuses()[pod] == "RUNNING"
        stopped = sim.call("POST", f"/v2/pods/{pod}/action", {"action": "stop"})
        assert isinstance(stopped, dict) and stopped["status"] == "EXITED"
        (state / "pods" / pod / "workspace" / "mine.txt").write_text("kept\n")  # a file on the pod's volume
        assert end(sim) == 0
        key = sim.exports["RUNPOD_API_KEY"]
    assert settle(str(state)) == []
    for name in ("world.json", "api_key"):
        assert stat.S_IMODE((state / name).stat().st_mode) == 0o600, name
    assert "hf_demoDemoDemo" in (state / "world.json").read_text()  # pods' env is in it: hence 0600

    with running_sim(temp, "--state", str(state)) as again:
        assert again.exports["RUNPOD_API_KEY"] == key
        statuses = again.statuses()
        assert statuses[pod] == "EXITED"
        assert statuses[DEMO_IDS["idle"]] == "RUNNING"
        assert (state / "pods" / pod / "workspace" / "mine.txt").read_text() == "kept\n"
        assert end(again) == 0
    assert settle(str(state)) == [] and settle(str(temp)) == []
    assert list(temp.iterdir()) == []


def test_a_killed_run_with_state_leaves_the_next_start_free(temp: Path, tmp_path: Path) -> None:
    """SIGKILL: no clean-up at all. The folder's lock goes with the process; what its pods ran ends with it."""
    state = tmp_path / "state"
    with running_sim(temp, "--state", str(state)) as sim:
        sim.proc.kill()
        sim.proc.wait(30)
    with running_sim(temp, "--state", str(state)) as again:
        assert set(again.statuses()) == set(DEMO_IDS.values())
        assert end(again) == 0
    assert settle(str(state)) == [] and list(temp.iterdir()) == []


def test_a_taken_port_is_refused(temp: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run(
            [sys.executable, "-m", "podtui", "sim", "--port", str(port)],
            capture_output=True,
            text=True,
            env=env_for(temp),
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
    assert r.returncode == 2, r.stderr
    assert f"port {port}" in r.stderr and "taken" in r.stderr
    assert r.stdout == ""
    assert settle(str(temp)) == [] and list(temp.iterdir()) == []


def test_a_corrupt_state_is_refused_and_left_as_it_is(temp: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "world.json").write_text('{"version": 1, "pods": [')
    r = subprocess.run(
        [sys.executable, "-m", "podtui", "sim", "--state", str(state)],
        capture_output=True,
        text=True,
        env=env_for(temp),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert "world.json" in r.stderr and "left as it is" in r.stderr
    assert r.stdout == ""
    assert (state / "world.json").read_text() == '{"version": 1, "pods": ['
