"""The RunPod API key and the Hugging Face token never show: not on any screen (the welcome screen while the key
is typed included), not in the log file, CLI output or error messages, not in any process's command line while
podtui transfers or runs commands, and not in the pods' shell histories."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Input

from podtui.core import secret
from podtui.core.api import V2Api
from podtui.core.hf.token import found
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.keys import KeyFile
from podtui.sim.hub import SimHub
from podtui.sim.relay import install_runpodctl
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator
from podtui.sim.sshd import sshd_available
from podtui.transfer.history import TransferHistory
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.welcome import WelcomeScreen
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS

HF_TOKEN = "hf_SECRETSECRETSECRETSECRETSECRET12"


def podtui(*args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "podtui", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )


# --- screens -----------------------------------------------------------------------------------------------


async def test_no_screen_shows_the_key_or_the_token(
    sim: SimApiServer, hub: SimHub, make_app: Callable[..., PodtuiApp]
) -> None:
    secret.register(sim.api_key)
    # the worst case: both secrets in a pod's environment under names that do not look secret
    for pod in sim.world.pods.values():
        pod.env = {"NOTE": sim.api_key, "OTHER": HF_TOKEN, "hf": HF_TOKEN}
    app = make_app(
        hf_endpoint=lambda: hub.endpoint,
        hf_token=lambda: found(HF_TOKEN, "HF_TOKEN"),
        save_key=lambda value: Path("/nonexistent"),
    )
    shots: dict[str, str] = {}

    async def shoot(name: str) -> None:
        await pilot.pause(0.05)
        shots[name] = app.export_screenshot()

    async with app.run_test(size=(130, 40)) as pilot:
        await loaded(pilot, app)
        await shoot("list")
        for key, name in (
            ("enter", "details"),
            ("question_mark", "help"),
            ("P", "gpus"),
            ("n", "create"),
            ("t", "transfers"),
            ("u", "add transfer"),
            ("s", "stop question"),
            ("T", "terminate question"),
            ("H", "hf check"),
            ("K", "keys"),
        ):
            await pilot.press(key)
            await shoot(name)
            if name == "details":  # the environment is at the bottom
                for widget in app.screen.query("*"):
                    if widget.allow_vertical_scroll:
                        widget.scroll_end(animate=False)
                await shoot("details, environment")
            while len(app.screen_stack) > 2:
                app.pop_screen()
            await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.press(*"open")
        await wait_until(
            pilot, lambda: "Open pod" in "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        )
        await shoot("palette")
        await pilot.press("escape")
        app.navigator.open_welcome()
        await wait_until(pilot, lambda: isinstance(app.screen, WelcomeScreen) and bool(app.screen.query("#key")))
        box = app.screen.query_one("#key", Input)
        box.focus()
        await pilot.press(*sim.api_key[:12])  # typing
        await shoot("welcome typing")
        box.insert_text_at_cursor(sim.api_key[12:])  # pasted, the whole key in the box
        await shoot("welcome typed")
    assert len(shots) == 15
    for name, svg in shots.items():
        assert sim.api_key not in svg and sim.api_key[:12] not in svg, name
        assert HF_TOKEN not in svg, name
    assert "NOTE" in shots["details, environment"]  # the variable is listed, its value is not


# --- log file, CLI output, error messages -------------------------------------------------------------------


def test_cli_output_errors_and_log_never_hold_the_key(sim: SimApiServer, isolated_home: Path) -> None:
    key = sim.api_key
    env = {"RUNPOD_API_BASE_URL": sim.url, "HF_TOKEN": HF_TOKEN}
    runs = [
        podtui("config", "set-key", "--stdin", env=env, stdin=key + "\n"),
        podtui("config", "show", env=env),
        podtui("pods", env=env),
        podtui("stop", "no-such-pod", "--yes", env=env),
        podtui("pods", env={**env, "RUNPOD_API_KEY": key[:-3] + "xyz"}),  # refused: 401
        podtui("hf", "check", "x/[/]", env=env),
        podtui("exec", DEMO_IDS["train"], "--", "true", env={**env, "PODTUI_SSH_GATEWAY": "127.0.0.1:9"}),
    ]
    assert [r.returncode for r in runs[:3]] == [0, 0, 0] and all(r.returncode != 0 for r in runs[3:])
    for r in runs:
        assert "Traceback" not in r.stderr
        for s in (key, key[:-3] + "xyz", HF_TOKEN):
            assert s not in r.stdout and s not in r.stderr
    logs = list((isolated_home / "state").rglob("*.log*"))
    assert logs, "the log file was not written"
    for log in logs:
        text = log.read_text()
        assert key not in text and key[:-3] + "xyz" not in text and HF_TOKEN not in text


# --- process command lines and the pods' shell histories --------------------------------------------------


class CmdlineWatch:
    """Reads every process's command line, over and over, while something runs; notes any secret seen."""

    def __init__(self, secrets: list[str]) -> None:
        self.secrets = [s.encode() for s in secrets]
        self.hits: list[str] = []
        self.scans = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for entry in Path("/proc").glob("[0-9]*"):
                try:
                    argv = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                self.hits += [argv.decode(errors="replace")[:200] for s in self.secrets if s in argv]
            self.scans += 1

    def __enter__(self) -> CmdlineWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def test_transfers_and_exec_leave_no_secret_in_process_lists_or_histories(
    full_sim: Simulator,
    sim_api: V2Api,
    ssh_settings: SshSettings,
    user_key: KeyFile,
    tmp_path: Path,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = full_sim.api.api_key
    secret.register(key)
    monkeypatch.setattr("podtui.transfer.routes.runpodctl.JOIN_PAUSE_S", 0.1)
    context = TransferContext(
        lambda ref: sim_api.fetch_snapshot().find(ref),
        lambda: ssh_settings,
        tmp_path / "work",
        hf_token=lambda: HF_TOKEN,
    )
    context.runpodctl = str(install_runpodctl(tmp_path / "bin", full_sim.relay.address))
    full_sim.relay.rate_bytes_per_s = 2_000_000  # slow enough for the watcher to see the processes
    snap = sim_api.fetch_snapshot()
    gateway_pod, direct_pod = snap.find("eval-a100"), snap.find("llama-lora-3090")
    up = tmp_path / "up.bin"
    up.write_bytes(os.urandom(1_000_000))
    jobs = [
        TransferJob(gateway_pod.id, "push", str(up), "a/", route_choice="console"),
        TransferJob(gateway_pod.id, "push", str(up), "b/", route_choice="runpodctl"),
        TransferJob(gateway_pod.id, "pull", "a/up.bin", str(tmp_path / "down1"), route_choice="runpodctl"),
    ]
    if sshd_available():
        jobs.append(TransferJob(direct_pod.id, "push", str(up), "c/", route_choice="sftp"))
    config = isolated_home / "config" / "podtui" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'ssh_key = "{user_key.path}"\n')
    host, port = ssh_settings.gateway
    env = {"RUNPOD_API_KEY": key, "RUNPOD_API_BASE_URL": full_sim.api.url, "PODTUI_SSH_GATEWAY": f"{host}:{port}"}
    queue = TransferQueue(context, TransferHistory(tmp_path / "data" / "transfers.json"), backoff_s=(0.2,) * 3)
    try:
        with CmdlineWatch([key, HF_TOKEN]) as watch:
            for j in jobs:
                queue.add(j)
            queue.start()
            exec_run = podtui("exec", "eval-a100", "--", "sleep 0.5; echo ran-$((6*7))", env=env)
            assert queue.wait([j.id for j in jobs], 90)
    finally:
        queue.close()
    assert exec_run.returncode == 0 and "ran-42" in exec_run.stdout, exec_run.stderr
    assert [queue.get(j.id).state for j in jobs] == ["verified"] * len(jobs)  # type: ignore[union-attr]
    assert watch.scans > 5 and watch.hits == []
    homes = list((full_sim.root / "pods").glob("*/root"))
    assert homes
    for home in homes:
        history = home / ".bash_history"
        if history.exists():
            data = history.read_bytes()
            assert key.encode() not in data and HF_TOKEN.encode() not in data
