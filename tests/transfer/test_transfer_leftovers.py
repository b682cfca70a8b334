"""runpodctl processes a killed podtui left behind: killed only if they are still that runpodctl and their podtui
is gone; the pod's cleanup line quotes what it must."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from podtui.transfer import leftovers
from podtui.transfer.history import TransferHistory
from podtui.transfer.job import TransferJob


@pytest.fixture
def fake_runpodctl(tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A process whose command line says runpodctl, in a session of its own as podtui starts them."""
    exe = tmp_path / "runpodctl"
    exe.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    exe.chmod(0o755)
    proc = subprocess.Popen([str(exe), "send", "./x"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def dead_owner() -> dict[str, object]:
    p = subprocess.Popen(["true"])
    p.wait()
    return {"owner": p.pid, "owner_started": "1"}


def test_a_leftover_of_a_dead_podtui_is_killed(fake_runpodctl: subprocess.Popen[bytes]) -> None:
    entry = {**leftovers.here(fake_runpodctl.pid), **dead_owner()}
    assert leftovers.kill_here(entry)
    assert fake_runpodctl.wait(10) == -9


def test_a_live_podtuis_runpodctl_is_left_alone(fake_runpodctl: subprocess.Popen[bytes]) -> None:
    entry = leftovers.here(fake_runpodctl.pid)  # owner: this process, alive
    assert not leftovers.kill_here(entry) and fake_runpodctl.poll() is None


def test_a_reused_pid_is_left_alone(fake_runpodctl: subprocess.Popen[bytes]) -> None:
    entry = {**leftovers.here(fake_runpodctl.pid), **dead_owner(), "started": "12345"}  # another start time
    assert not leftovers.kill_here(entry) and fake_runpodctl.poll() is None
    me = {**leftovers.here(os.getpid()), **dead_owner()}  # alive, but not runpodctl
    assert not leftovers.kill_here(me)
    assert not leftovers.kill_here({"where": "here", "pid": "1; rm -rf ~"})


def test_the_history_kills_leftovers_here_and_keeps_the_pods(
    fake_runpodctl: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    job = TransferJob("pod1", "push", "/x", "incoming/", route_choice="runpodctl", state="waiting_for_code")
    on_pod = leftovers.on_pod("4242", "/tmp/podtui-runpodctl-x.log")
    job.leftovers = [{**leftovers.here(fake_runpodctl.pid), **dead_owner()}, on_pod]
    history = TransferHistory(tmp_path / "transfers.json")
    history.save([job])
    (loaded,) = history.load()
    assert fake_runpodctl.wait(10) == -9
    assert loaded.state == "failed" and loaded.leftovers == [on_pod]
    assert any("left running here" in line for line in loaded.log)


def test_pod_cleanup_line() -> None:
    assert leftovers.pod_cleanup_command([]) is None
    assert leftovers.pod_cleanup_command([{"where": "pod", "pid": "1; reboot", "log": "/tmp/x"}]) is None
    line = leftovers.pod_cleanup_command([leftovers.on_pod("4242", "/tmp/a b.log")])
    assert line == (
        "if grep -q runpodctl /proc/4242/cmdline 2>/dev/null; then kill 4242; fi; rm -f -- '/tmp/a b.log'; true"
    )
