"""The demo leaves nothing behind: no process (a pod's shell or what it started, an sshd, a child stuck between fork
and exec) and no temporary folder, however it ends: done, SIGHUP (its terminal closed), SIGTERM, ctrl+c, or
killed outright, in which case the next start clears up after it. Each test points TMPDIR at a folder of its own,
so whatever still names that folder belongs to the runs under test."""

from __future__ import annotations

import ast
import os
import select
import shlex
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from podtui.sim.sim_folder import PREFIX
from tests.helpers.processes import processes_naming, settle
from tests.helpers.repo import REPO
from tests.helpers.tmux import Tmux

PACKAGE = REPO / "podtui"


@pytest.fixture
def temp(tmp_path: Path) -> Path:
    folder = tmp_path / "temp"
    folder.mkdir()
    return folder


def demo(*args: str) -> list[str]:
    return [sys.executable, "-m", "podtui", "--demo", *args]


def env_for(temp: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(temp)}


def sim_folders(temp: Path) -> list[Path]:
    return sorted(temp.glob(PREFIX + "*"))


def started(proc: subprocess.Popen[bytes], text: bytes = b"started", timeout_s: float = 60.0) -> None:
    """Wait until the pod's command has printed `text`: the simulator, SSH and the pod's shell are all up."""
    assert proc.stdout is not None
    seen, end = b"", time.monotonic() + timeout_s
    while text not in seen:
        assert time.monotonic() < end and proc.poll() is None, (seen, proc.poll())
        if select.select([proc.stdout], [], [], 0.2)[0]:
            seen += os.read(proc.stdout.fileno(), 65536)


def test_no_preexec_fn_anywhere() -> None:
    """A preexec_fn runs Python between fork and exec in a process with threads, where a lock some other thread
    held stays held forever: the child hangs, holding its copies of every socket (subprocess's own warning)."""
    offenders = [
        f"{p.relative_to(PACKAGE)}:{node.lineno}"
        for p in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and any(k.arg == "preexec_fn" for k in node.keywords)
    ]
    assert offenders == []


def test_many_demo_commands_leave_nothing_behind(temp: Path) -> None:
    commands = [["pods"], ["exec", "llama-lora-3090", "--", "true"], ["exec", "eval-a100", "--", "true"]]
    runs = [commands[i % len(commands)] for i in range(24)]

    def run(args: list[str]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            demo(*args), capture_output=True, timeout=120, env=env_for(temp), stdin=subprocess.DEVNULL
        )

    # two at a time: each start sweeps the temp folder while the other run is alive (and must keep its folder)
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(run, runs))
    assert [r.returncode for r in results] == [0] * len(runs), [r.stderr[-300:] for r in results if r.returncode]
    assert settle(str(temp)) == []
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
@pytest.mark.parametrize("pod", ["llama-lora-3090", "eval-a100"])  # direct SSH (a real sshd), the gateway
def test_a_signal_ends_a_demo_exec_and_its_simulator(sig: signal.Signals, pod: str, temp: Path) -> None:
    proc = subprocess.Popen(
        demo("exec", pod, "--", "nohup sleep 300 >/dev/null 2>&1 & echo started; sleep 30"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env_for(temp),
        start_new_session=True,
    )
    try:
        started(proc)
        assert len(sim_folders(temp)) == 1 and processes_naming(str(temp))
        proc.send_signal(sig)
        code = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert code == 128 + sig  # SIGINT: podtui's "interrupted", 130
    assert settle(str(temp)) == []
    assert list(temp.iterdir()) == []


@pytest.mark.tmux
@pytest.mark.parametrize("how", ["terminal closed", "SIGTERM"])
def test_the_demo_app_cleans_up_when_its_terminal_closes(how: str, temp: Path, tmux: Tmux) -> None:
    tmux.start(
        f"env TMPDIR={shlex.quote(str(temp))} {shlex.quote(sys.executable)} -m podtui --demo", width=120, height=30
    )
    tmux.wait_for("llama-lora-3090")
    tmux.keys("c")  # a console: a pod shell behind SSH
    tmux.wait_for("/workspace#", timeout=30)
    tmux.type("nohup sleep 300 >/dev/null 2>&1 &")
    tmux.keys("Enter")
    end = time.monotonic() + 10
    while not any("sleep 300" in p for p in processes_naming(str(temp))) and time.monotonic() < end:
        time.sleep(0.1)
    assert len(sim_folders(temp)) == 1 and any("sleep 300" in p for p in processes_naming(str(temp)))
    if how == "terminal closed":
        tmux.kill()  # the pane's terminal goes: SIGHUP
    else:
        pane = int(tmux.run("list-panes", "-F", "#{pane_pid}").split()[0])
        app = next(
            int(p.split()[0])
            for p in processes_naming(str(temp))
            if " -m podtui --demo" in p and _parent(int(p.split()[0])) == pane
        )
        os.kill(app, signal.SIGTERM)
        tmux.wait_for("EXIT=143", timeout=30)
        tmux.kill()  # its shell, whose command line names the folder too
    assert settle(str(temp), timeout_s=30) == []
    assert list(temp.iterdir()) == []


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[1])


def test_the_next_start_clears_up_after_a_killed_demo(temp: Path) -> None:
    killed = subprocess.Popen(
        demo("exec", "eval-a100", "--", "nohup sleep 300 >/dev/null 2>&1 & echo started; sleep 30"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=env_for(temp),
        start_new_session=True,
    )
    started(killed)
    [folder] = sim_folders(temp)
    killed.kill()
    killed.communicate()
    # nothing could clean up: the folder stays; what its pod started ends with the pod's container (its init's
    # pipe to the simulator closed), and its sshds die with it
    assert folder.exists() and settle(str(folder)) == []
    running = subprocess.Popen(
        demo("exec", "eval-a100", "--", "echo started; sleep 30"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=env_for(temp),
        start_new_session=True,
    )
    try:
        started(running)  # its start swept the killed run's folder, and kept its own
        assert not folder.exists() and processes_naming(str(folder)) == []
        [own] = sim_folders(temp)
        r = subprocess.run(demo("pods"), capture_output=True, timeout=120, env=env_for(temp))
        assert r.returncode == 0 and own.exists()  # a live run's folder is never taken
        running.terminate()
        assert running.wait(30) == 128 + signal.SIGTERM
    finally:
        if running.poll() is None:
            running.kill()
        running.communicate()
    assert settle(str(temp)) == []
    assert list(temp.iterdir()) == []


def commands_with(text: str) -> list[str]:
    """This machine's processes whose command line starts with `text` (whatever their environment): "pid command"."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if command.startswith(text):
            found.append(f"{entry.name} {command}")
    return found


def until_none_with(text: str, timeout_s: float = 20.0) -> list[str]:
    end = time.monotonic() + timeout_s
    while (left := commands_with(text)) and time.monotonic() < end:
        time.sleep(0.1)
    return left


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("pod", ["llama-lora-3090", "eval-a100"])
def test_a_pod_process_with_no_trace_of_the_demo_ends_with_it(how: str, pod: str, temp: Path) -> None:
    """A process that clears its environment and leaves its session names nothing of the demo: it ends all the same,
    with its pod's container, however the demo ends."""
    tag = str(time.monotonic_ns() % 10**6 + 10**6)
    proc = subprocess.Popen(
        demo("exec", pod, "--", f"(env -i setsid sleep 77{tag} </dev/null >/dev/null 2>&1 &); echo started; sleep 30"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env_for(temp),
        start_new_session=True,
    )
    try:
        started(proc)
        end = time.monotonic() + 10
        while not commands_with(f"sleep 77{tag}") and time.monotonic() < end:
            time.sleep(0.1)
        [left] = commands_with(f"sleep 77{tag}")
        assert left.split()[0] not in [p.split()[0] for p in processes_naming(str(temp))]
        proc.send_signal(getattr(signal, how))
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert until_none_with(f"sleep 77{tag}") == []
