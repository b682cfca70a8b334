"""The on-pod autostop watchdog, end to end in the simulator: installed through the gateway's shell, it reads the
simulated nvidia-smi and stops an idle pod; a busy pod keeps running, and so does an idle one while a podtui job
runs on it; removing it stops the watchdog; a pod that lacks what it needs is refused in words. How it stops the
pod (REST v2, the fallback on runpodctl, the pod's key kept secret) is tested in test_autostop_stop.py."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from podtui.core import autostop
from podtui.core.api import V2Api
from podtui.core.jobs.job import JobSpec
from podtui.core.jobs.remote_jobs import cancel_job, start_job
from podtui.core.ssh.connect import SshSettings
from podtui.sim.simulator import Simulator
from tests.helpers.autostop import closed_port, shell_on, wait_for, watchdog_log


def test_an_idle_pod_stops_itself(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pid = next(p.id for p in full_sim.world.pods.values() if p.name == "eval-a100")  # GPU at 0%
    with shell_on(sim_api, ssh_settings, "eval-a100") as shell:
        st = autostop.install(shell, threshold_pct=5, limit_s=2, every_s=0.3)
        assert st.installed and st.running and st.pid
        assert wait_for(lambda: full_sim.world.pods[pid].status == "EXITED", 20)
        # the container ends a moment after the stop: the log is read from the pod's disk, kept on this machine
        assert wait_for(lambda: watchdog_log(full_sim, pid).rstrip().endswith(f"pod {pid} stopped"), 10)
        assert "stopping pod " + pid in watchdog_log(full_sim, pid)


def test_a_pod_without_what_the_watchdog_needs_is_refused_in_words(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    with shell_on(sim_api, ssh_settings, "eval-a100") as shell:
        # no key, and a PATH without nvidia-smi, curl, python3 and runpodctl (but the shell's own tools)
        shell.run(
            'unset RUNPOD_API_KEY; mkdir -p "$HOME/bare" && for f in /usr/bin/* /bin/*; do case ${f##*/} in '
            'curl | python3* | runpodctl | nvidia-smi) ;; *) ln -sf "$f" "$HOME/bare/";; esac; done; '
            'PATH="$HOME/bare"; hash -r',
            timeout_s=60,
        )
        with pytest.raises(autostop.AutostopError) as refused:
            autostop.install(shell, threshold_pct=5, limit_s=60)
        said = str(refused.value)
        assert "nvidia-smi" in said and "RUNPOD_API_KEY" in said and "curl, python3 or runpodctl" in said
        assert "RUNPOD_POD_ID" not in said  # it is there
        shell.run("PATH=/usr/bin:/bin")  # curl and python3 are back; nvidia-smi (and the key) still missing
        with pytest.raises(autostop.AutostopError, match="nvidia-smi") as refused:
            autostop.install(shell, threshold_pct=5, limit_s=60)
        assert "curl" not in str(refused.value)
        assert not autostop.status(shell).installed


def test_a_busy_pod_keeps_running_and_remove_stops_the_watchdog(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
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


def _cmdline(p: Path) -> bytes:
    try:
        return (p / "cmdline").read_bytes()
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
    # RunPod's API does not answer here (a closed port), so a stop shows as the fallback's runpodctl call
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "RUNPOD_POD_ID": "pod123",
        "RUNPOD_API_KEY": "pod-key-not-used",
        "RUNPOD_API_BASE_URL": f"http://127.0.0.1:{closed_port()}",
        "HOME": str(tmp_path),
    }
    proc = subprocess.Popen(["bash", str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        proc.wait(timeout=4)
    except subprocess.TimeoutExpired:
        proc.kill()
    calls = (tmp_path / "calls").read_text() if (tmp_path / "calls").exists() else ""
    assert calls.startswith("stop pod pod123\n") is stops, calls


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="needs shellcheck")
def test_the_watchdog_script_passes_shellcheck(tmp_path: Path) -> None:
    import subprocess

    script = tmp_path / "autostop.sh"
    script.write_text(autostop.watchdog_script(5, 60))
    r = subprocess.run(["shellcheck", "-s", "bash", str(script)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout


def test_a_running_job_keeps_an_idle_pod_in_use(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pid = next(p.id for p in full_sim.world.pods.values() if p.name == "eval-a100")  # GPU at 0%
    with shell_on(sim_api, ssh_settings, "eval-a100") as shell:
        job = start_job(shell, pid, JobSpec("echo working; while :; do sleep 0.2; done"), now=time.time())
        assert job.state == "running"
        st = autostop.install(shell, threshold_pct=5, limit_s=1, every_s=0.3)
        assert st.running
        assert wait_for(lambda: "a podtui job is running" in watchdog_log(full_sim, pid), 30)
        time.sleep(3)  # ten samples and more, past the 1 s limit: an idle pod without the job would have stopped
        assert full_sim.world.pods[pid].status == "RUNNING"
        assert cancel_job(shell, pid, job.id, grace_s=1).state == "cancelled"
        assert wait_for(lambda: full_sim.world.pods[pid].status == "EXITED", 30)
    said = watchdog_log(full_sim, pid)
    assert said.index("a podtui job is running") < said.index("no podtui job running any more")
    assert said.index("no podtui job running any more") < said.index("idle clock started")


@pytest.mark.parametrize(
    ("record", "stops"),
    [
        ("alive", False),  # its group alive, its leader the job's own: in use
        ("ended", True),  # an end recorded: whatever runs under that pid is not the job
        ("other-process", True),  # the pid is another process's now (a pod restarted): its start time differs
        ("gone", True),  # nothing of its group is left
        ("leaderless", False),  # its leader exited, what it started goes on: in use
        ("leaderless-restarted", True),  # a group without its leader, but the job started before the pod did
    ],
)
def test_the_watchdog_counts_a_job_by_its_process_group(record: str, stops: bool, tmp_path: Path) -> None:
    """The watchdog's reading of podtui's job records (docs/jobs.md#the-watchdog-counts-jobs), run here on a GPU
    that reads 0%: the API does not answer, so a stop shows as the fallback's runpodctl call."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 0\n")
    (bin_dir / "runpodctl").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/calls\n')
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    job = tmp_path / "sandbox" / "workspace" / ".podtui" / "jobs" / "20261202-155301-k3f9"
    job.mkdir(parents=True)
    if record.startswith("leaderless"):  # the group's leader exits at once, its sleep goes on in the group
        group = subprocess.Popen(["setsid", "sh", "-c", "sleep 60 </dev/null >/dev/null 2>&1 & exit"])
    else:
        group = subprocess.Popen(["setsid", "sleep", "60"])  # a process group of its own, as a job's
    try:
        start = _start_ticks(group.pid)
        if record == "gone":
            group.kill()
        if record == "gone" or record.startswith("leaderless"):
            group.wait()  # a leader that exits by itself has started its sleep before
        (job / "pgid").write_text(f"{group.pid} {start + 1 if record == 'other-process' else start}\n")
        # when the job started: before this machine (the pod's pid 1 here) booted, or now
        started = _boot_time() - 60 if record == "leaderless-restarted" else int(time.time())
        (job / "started").write_text(f"{started}\n")
        if record == "ended":
            (job / "end").write_text("0 1796227000\n")
        script = tmp_path / "autostop.sh"
        script.write_text(autostop.watchdog_script(5, 1, 0.2))
        env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "RUNPOD_POD_ID": "pod123",
            "RUNPOD_API_KEY": "pod-key-not-used",
            "RUNPOD_API_BASE_URL": f"http://127.0.0.1:{closed_port()}",
            "HOME": str(tmp_path),
            "PODTUI_DEMO_SANDBOX": str(tmp_path / "sandbox"),  # where the jobs' folder is, as on a demo pod
        }
        with (tmp_path / "watchdog.log").open("wb") as log:
            proc = subprocess.Popen(
                ["bash", str(script)], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        try:
            proc.wait(timeout=4)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # and its sleep, which would outlive it
            proc.wait()
        said = (tmp_path / "watchdog.log").read_text()
    finally:
        group.kill()
        group.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group.pid, signal.SIGKILL)
    calls = (tmp_path / "calls").read_text() if (tmp_path / "calls").exists() else ""
    assert calls.startswith("stop pod pod123\n") is stops, said
    assert ("a podtui job is running" in said) is not stops, said


def _boot_time() -> int:
    lines = Path("/proc/stat").read_text().splitlines()
    return next(int(line.split()[1]) for line in lines if line.startswith("btime "))


def _start_ticks(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2 :].split()[19])
