"""How the autostop watchdog stops its pod, end to end in a simulated pod: through REST v2 with the pod's own key
(curl, or python3 on an image without curl), confirmed by reading the pod back; runpodctl only when the API does
not answer, judged by what it prints (its legacy stop exits 0 when it failed), and again later when everything
failed. The pod's key is on no command line and never in the log (docs/runpod-facts.md#stopping-a-pod-from-inside-it).
Also the simulated runpodctl's pod commands, as runpodctl 2.7 behaves since REST v1 was retired."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from podtui.core import autostop
from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import RemoteShell
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator
from tests.helpers.autostop import (
    CommandLineWatch,
    closed_port,
    shell_on,
    spied_command_lines,
    spy_on_commands,
    wait_for,
    watchdog_log,
)
from tests.helpers.sim import DEMO_IDS

IDLE = "eval-a100"  # its GPU sits at 0%


def pod_key(sim: Simulator, pod_id: str) -> str:
    """The key in the pod's environment: its own, good for this pod only."""
    key = sim.gateway.machine(sim.world.pods[pod_id]).environment()["RUNPOD_API_KEY"]
    assert key and key != sim.api.api_key
    return key


@contextmanager
def authorizations(path_part: str) -> Iterator[list[str]]:
    """The Authorization header of every request the simulated API answers whose path holds `path_part`."""
    from podtui.sim import exchange

    seen: list[str] = []

    def listen(ex: exchange.Exchange) -> None:
        if path_part in ex.path:
            seen.append(next((v for k, v in ex.request_headers.items() if k.lower() == "authorization"), ""))

    exchange.listeners.append(listen)
    try:
        yield seen
    finally:
        exchange.listeners.remove(listen)


def stopped(sim: Simulator, pod_id: str) -> bool:
    return sim.world.pods[pod_id].status == "EXITED"


def done(sim: Simulator, pod_id: str) -> bool:
    return watchdog_log(sim, pod_id).rstrip().endswith(f"pod {pod_id} stopped")


def assert_key_kept_secret(sim: Simulator, pod_id: str, key: str, watch: CommandLineWatch | None = None) -> None:
    assert key not in watchdog_log(sim, pod_id)
    spied = spied_command_lines(sim, pod_id)
    assert spied and key not in spied  # the spies saw the watchdog's commands, and no key among their words
    if watch is not None:
        assert watch.scans > 0 and not watch.hits, watch.hits


def test_an_idle_pod_stops_itself_through_rest_v2_with_its_own_key(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    pid = DEMO_IDS["idle"]
    key = pod_key(full_sim, pid)
    with (
        authorizations(f"/v2/pods/{pid}") as used,
        CommandLineWatch(key) as watch,
        shell_on(sim_api, ssh_settings, IDLE) as shell,
    ):
        spy_on_commands(shell)
        autostop.install(shell, threshold_pct=5, limit_s=1, every_s=0.3)
        assert wait_for(lambda: stopped(full_sim, pid), 30)
        assert wait_for(lambda: done(full_sim, pid), 15), watchdog_log(full_sim, pid)
    log = watchdog_log(full_sim, pid)
    assert "RunPod accepted the stop (REST v2 through curl)" in log
    assert "RunPod shows the pod EXITED" in log and "runpodctl" not in log
    # the stop and the look back, each with the pod's own key, never the account's
    assert len(used) >= 2 and set(used) == {f"Bearer {key}"}, used
    spied = spied_command_lines(full_sim, pid)
    assert f"/v2/pods/{pid}/action" in spied and "runpodctl" not in spied
    assert_key_kept_secret(full_sim, pid, key, watch)


def without_curl(shell: RemoteShell) -> None:
    """The shell's PATH: the pod's own bin, then a folder with every command of /usr/bin and /bin but curl."""
    result = shell.run(
        'mkdir -p "$HOME/nocurl" && for f in /usr/bin/* /bin/*; do n=${f##*/}; '
        '[ "$n" = curl ] || [ -e "$HOME/nocurl/$n" ] || ln -s "$f" "$HOME/nocurl/$n"; done; '
        'PATH="${PATH%%:*}:$HOME/nocurl"; hash -r; command -v curl || echo no-curl; command -v python3',
        timeout_s=60,
    )
    assert "no-curl" in result.output and "python3" in result.output, result.output


def test_without_curl_the_watchdog_asks_through_python3(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    pid = DEMO_IDS["idle"]
    key = pod_key(full_sim, pid)
    with (
        authorizations(f"/v2/pods/{pid}/action") as used,
        CommandLineWatch(key) as watch,
        shell_on(sim_api, ssh_settings, IDLE) as shell,
    ):
        without_curl(shell)
        spy_on_commands(shell)
        autostop.install(shell, threshold_pct=5, limit_s=1, every_s=0.3)
        assert wait_for(lambda: stopped(full_sim, pid), 30)
        assert wait_for(lambda: done(full_sim, pid), 15), watchdog_log(full_sim, pid)
    log = watchdog_log(full_sim, pid)
    assert "RunPod accepted the stop (REST v2 through python3)" in log and "RunPod shows the pod EXITED" in log
    assert used == [f"Bearer {key}"]
    spied = spied_command_lines(full_sim, pid)
    assert "python3 - POST" in spied and "curl" not in spied
    assert_key_kept_secret(full_sim, pid, key, watch)


@pytest.mark.parametrize("dialect", ["v2", "v1"])
def test_an_api_that_does_not_answer_falls_back_on_runpodctl_judged_by_its_words(
    dialect: str, full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    full_sim.relay.dialect = dialect
    pid = DEMO_IDS["idle"]
    key = pod_key(full_sim, pid)
    # GraphQL answers the first podStop with the pod still RUNNING: runpodctl's legacy stop prints that the stop
    # failed and exits 0; the watchdog must count that as a failure and try again
    still_running = json.dumps({"data": {"podStop": {"id": pid, "desiredStatus": "RUNNING"}}})
    full_sim.api.faults.add("raw", still_running, times=1, only="podStop")
    with shell_on(sim_api, ssh_settings, IDLE) as shell:
        shell.run(f"export RUNPOD_API_BASE_URL=http://127.0.0.1:{closed_port()}")  # REST v2 unreachable
        spy_on_commands(shell)
        autostop.install(shell, threshold_pct=5, limit_s=1, every_s=0.3, retry_s=1)
        assert wait_for(lambda: stopped(full_sim, pid), 40), watchdog_log(full_sim, pid)
        assert wait_for(lambda: done(full_sim, pid), 15), watchdog_log(full_sim, pid)
    log = watchdog_log(full_sim, pid)
    assert "RunPod's API did not answer (REST v2 through curl): curl: (7)" in log
    assert f'runpodctl stop pod {pid} did not stop the pod (exit status 0): pod "{pid}" stop failed' in log
    if dialect == "v2":  # 2.7's own `pod stop` asks the retired REST v1
        assert f"runpodctl pod stop {pid} did not stop the pod (exit status 1): Error: " in log
    else:
        assert f'runpodctl pod stop {pid} did not stop the pod (exit status 1): Error: unknown command "pod"' in log
    assert "could not stop the pod; trying again in 1 s" in log
    assert f'runpodctl stop pod {pid}: pod "{pid}" stopped' in log
    assert log.index("trying again") < log.index(f'pod "{pid}" stopped')
    assert_key_kept_secret(full_sim, pid, key)


def test_a_refused_key_is_said_and_the_stop_tried_again_later(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    """A key RunPod refuses is no reason to fall back on runpodctl (it would send the same key); the watchdog says
    so, and tries again later; the pod keeps running."""
    pid = DEMO_IDS["idle"]
    with shell_on(sim_api, ssh_settings, IDLE) as shell:
        shell.run("export RUNPOD_API_KEY=not-a-key-RunPod-knows")
        autostop.install(shell, threshold_pct=5, limit_s=1, every_s=0.3, retry_s=0.5)
        assert wait_for(lambda: watchdog_log(full_sim, pid).count("trying again in 0.5 s") >= 2, 30)
        assert autostop.status(shell).running
        autostop.remove(shell)
    log = watchdog_log(full_sim, pid)
    assert "RunPod refused the pod's key (REST v2 through curl, HTTP 401)" in log and "runpodctl" not in log
    assert full_sim.world.pods[pid].status == "RUNNING" and "not-a-key" not in log


def test_a_pod_stopped_already_reads_as_stopped(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    """A stop that is not valid now (409) is looked up: a pod that reads EXITED is stopped."""
    pid = DEMO_IDS["idle"]
    with shell_on(sim_api, ssh_settings, IDLE) as shell:
        full_sim.stop_grace_s = 30.0  # its container runs on a while after the stop: time for the watchdog
        full_sim.world.stop(pid)
        autostop.install(shell, threshold_pct=5, limit_s=1, every_s=0.3)
        assert wait_for(lambda: done(full_sim, pid), 20), watchdog_log(full_sim, pid)
    log = watchdog_log(full_sim, pid)
    assert "RunPod says a stop is not valid now (REST v2 through curl, HTTP 409)" in log
    assert "RunPod shows the pod EXITED" in log


# --- the simulated runpodctl's pod commands ---------------------------------------------------------------------


def runpodctl(sim: SimApiServer, key: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "PODTUI_SIM"))}
    env.update(PODTUI_SIM_API=sim.url, RUNPOD_API_KEY=key)
    return subprocess.run(
        [sys.executable, "-m", "podtui.sim.runpodctl_standin", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )


def test_runpodctl_27s_pod_commands_fail_since_rest_v1_is_gone(sim: SimApiServer) -> None:
    idle, stopped_pod = DEMO_IDS["idle"], DEMO_IDS["stopped"]
    for args in (["pod", "stop", idle], ["pod", "start", stopped_pod], ["pod", "list"]):
        r = runpodctl(sim, sim.api_key, *args)
        assert r.returncode == 1 and r.stdout == "" and r.stderr.startswith("Error: "), (args, r)
    assert sim.world.pods[idle].status == "RUNNING" and sim.world.pods[stopped_pod].status == "EXITED"


def test_runpodctls_legacy_stop_exits_0_whether_or_not_the_pod_stopped(sim: SimApiServer) -> None:
    """With the pod's own key, as inside the pod: since GraphQL was retired the account's key may ask it only the
    balance (docs/runpod-facts.md#api-lifecycle), and the whole suite runs so."""
    idle = DEMO_IDS["idle"]
    key = sim.world.pods[idle].api_key
    assert key and key != sim.api_key
    still_running = json.dumps({"data": {"podStop": {"id": idle, "desiredStatus": "RUNNING"}}})
    sim.faults.add("raw", still_running, times=1, only="podStop")
    r = runpodctl(sim, key, "stop", "pod", idle)
    assert (r.returncode, r.stdout) == (0, f'pod "{idle}" stop failed; status is RUNNING\n')
    assert sim.world.pods[idle].status == "RUNNING"
    r = runpodctl(sim, key, "stop", "pod", idle)
    assert (r.returncode, r.stdout) == (0, f'pod "{idle}" stopped\n')
    assert sim.world.pods[idle].status == "EXITED"
    r = runpodctl(sim, "not-a-key", "stop", "pod", idle)  # what the API refuses: cobra's error, exit 1
    assert r.returncode == 1 and r.stderr.startswith("Error: ")
