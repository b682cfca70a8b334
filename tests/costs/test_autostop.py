"""The on-pod autostop watchdog, end to end in the simulator: installed through the gateway's shell, it reads the
simulated nvidia-smi and stops an idle pod with the pod's own runpodctl, in both dialects; a busy pod keeps
running; removing it stops the watchdog."""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from podtui.core import autostop
from podtui.core.api import SdkApi
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.sim.simulator import Simulator


@contextmanager
def shell_on(api: SdkApi, settings: SshSettings, name: str) -> Iterator[RemoteShell]:
    pod = api.fetch_snapshot().find(name)
    assert pod is not None
    with open_remote(pod, settings, "gateway") as sh:
        yield sh


def wait_for(condition: object, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize("dialect", ["v2", "v1"])
def test_an_idle_pod_stops_itself(
    dialect: str, full_sim: Simulator, sim_api: SdkApi, ssh_settings: SshSettings
) -> None:
    full_sim.relay.dialect = dialect
    pid = next(p.id for p in full_sim.world.pods.values() if p.name == "eval-a100")  # GPU at 0%
    with shell_on(sim_api, ssh_settings, "eval-a100") as shell:
        st = autostop.install(shell, threshold_pct=5, limit_s=2, every_s=0.3)
        assert st.installed and st.running and st.pid
        assert wait_for(lambda: full_sim.world.pods[pid].status == "EXITED", 20)
        assert wait_for(lambda: not autostop.status(shell).running, 10)  # it exits once it has stopped the pod
        log = autostop.status(shell).log_tail
        assert "stopping pod " + pid in log and log.rstrip().endswith("stopped")


def test_a_busy_pod_keeps_running_and_remove_stops_the_watchdog(
    full_sim: Simulator, sim_api: SdkApi, ssh_settings: SshSettings
) -> None:
    pid = next(p.id for p in full_sim.world.pods.values() if p.name == "llama-lora-3090")  # GPU at ~93%
    with shell_on(sim_api, ssh_settings, "llama-lora-3090") as shell:
        st = autostop.install(shell, threshold_pct=5, limit_s=1, every_s=0.3)
        assert st.running
        time.sleep(3)
        assert full_sim.world.pods[pid].status == "RUNNING" and autostop.status(shell).running
        autostop.remove(shell)
        st = autostop.status(shell)
        assert not st.installed and not st.running and st.label == "not installed"


def test_bad_settings_are_refused() -> None:
    with pytest.raises(autostop.AutostopError):
        autostop.watchdog_script(150, 60)


def test_cli_in_the_demo_leaves_nothing_running() -> None:
    import subprocess
    import sys
    from pathlib import Path

    r = subprocess.run(
        [sys.executable, "-m", "podtui", "--demo", "autostop", "eval-a100", "install", "--idle-min", "30"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "watchdog running" in r.stdout and "after 30 min under 5% GPU" in r.stdout
    # the demo's own pods (its sandbox is a podtui-sim-* temporary folder; other tests' simulators live elsewhere)
    left = [p for p in Path("/proc").glob("[0-9]*") if b"autostop.sh" in _cmdline(p) and b"/podtui-sim-" in _cmdline(p)]
    assert not left  # the simulated pod's processes ended with the demo, as a real container's would
    r = subprocess.run(
        [sys.executable, "-m", "podtui", "--demo", "--read-only", "autostop", "eval-a100", "install"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1 and "read-only mode" in r.stderr


def _cmdline(p: object) -> bytes:
    try:
        return (p / "cmdline").read_bytes()  # type: ignore[operator]
    except OSError:
        return b""


@pytest.mark.parametrize(
    ("readings", "stops"),
    [
        ("0\n0", True),  # two idle GPUs
        ("0\n35", False),  # one busy GPU of two: the pod is busy
        ("[N/A]", False),  # MIG mode: no reading is no evidence
        ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", False),
        ("", False),
    ],
)
def test_the_watchdog_reads_nvidia_smi_carefully(readings: str, stops: bool, tmp_path: Path) -> None:
    import subprocess

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text(f"#!/bin/sh\nprintf '%s\\n' {shlex.quote(readings)}\n")
    (bin_dir / "runpodctl").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/calls\n')
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    script = tmp_path / "autostop.sh"
    script.write_text(autostop.watchdog_script(5, 1, 0.2))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "RUNPOD_POD_ID": "pod123", "HOME": str(tmp_path)}
    proc = subprocess.Popen(["bash", str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        proc.wait(timeout=4)
    except subprocess.TimeoutExpired:
        proc.kill()
    calls = (tmp_path / "calls").read_text() if (tmp_path / "calls").exists() else ""
    assert (calls == "pod stop pod123\n") is stops, calls
