"""The token's bytes are read by `head -c N` whatever fails, a token never outlives a download that did not
start, and a token found on this machine is never sent unless the caller says so."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.errors import ShellClosed
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.sim.hub_seed import GATED_MODEL
from podtui.sim.simulator import Simulator
from podtui.transfer import hf_download
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext, TransferFailed
from tests.helpers.hf import checked, hub_job
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, find_pod, pod_root


class _Notes:
    lock = threading.Lock()

    def __init__(self) -> None:
        self.lines: list[str] = []

    def note(self, line: str) -> None:
        self.lines.append(line)


def _pod_for(full_sim: Simulator, sim_api: V2Api, via: str, name: str) -> object:
    pod = find_pod(sim_api, name)
    if via == "exec" and pod.id not in full_sim.sshds:
        pytest.skip("no sshd here: the direct-SSH (exec channel) path is not simulated")
    return pod


@pytest.mark.parametrize("breaks", ["job folder", "run.sh"])
@pytest.mark.parametrize("via,name", [("pty", GATEWAY_POD), ("exec", DIRECT_POD)])
def test_a_failed_setup_never_hands_the_token_to_the_shell(
    full_sim: Simulator,
    sim_api: V2Api,
    ssh_settings: SshSettings,
    context: TransferContext,
    tmp_path: Path,
    via: str,
    name: str,
    breaks: str,
) -> None:
    pod = _pod_for(full_sim, sim_api, via, name)
    home = pod_root(full_sim, sim_api, name) / "root"
    job = TransferJob(pod.id, "hub", "tiny/model", "models/x")  # type: ignore[attr-defined]
    if breaks == "job folder":  # no folder for the job at all (a file in the way, a full disk)
        (home / ".podtui").write_text("a file where podtui wants a folder\n")
    else:  # the folder is there, but run.sh cannot be written: the step that also reads the token fails
        (home / ".podtui" / "hf" / job.id / "run.sh").mkdir(parents=True)
    pwned = tmp_path / "PWNED"
    token = f"hf_x;touch${{IFS}}{pwned};echo${{IFS}}ran"  # what bash would run if it read the token
    context.hf_token = lambda: token
    with open_remote(pod, ssh_settings, via) as shell:  # type: ignore[arg-type]
        with pytest.raises(TransferFailed) as failed:
            hf_download.start(shell, job, _Notes(), context)  # type: ignore[arg-type]
        assert failed.value.kind == {"job folder": "setup", "run.sh": "start"}[breaks]
        assert token not in str(failed.value)
        assert shell.run("echo next-command").output == "next-command\n"  # nothing left in the shell's input
        history = shell.run("history 5 2>/dev/null; echo end").output
    assert token not in history and "touch" not in history
    assert not pwned.exists()
    assert not (home / ".bash_history").exists() or token.encode() not in (home / ".bash_history").read_bytes()


@pytest.mark.parametrize("via,name", [("pty", GATEWAY_POD), ("exec", DIRECT_POD)])
def test_an_odd_token_is_data_not_code(
    full_sim: Simulator,
    sim_api: V2Api,
    ssh_settings: SshSettings,
    context: TransferContext,
    tmp_path: Path,
    via: str,
    name: str,
) -> None:
    pod = _pod_for(full_sim, sim_api, via, name)
    pwned = tmp_path / "PWNED"
    token = f"hf_a'b\"c$(touch${{IFS}}{pwned})`id`;&|<>*?~#!\\x%{{}}"
    context.hf_token = lambda: token
    job = TransferJob(pod.id, "hub", "tiny/model", "models/odd")  # type: ignore[attr-defined]
    with open_remote(pod, ssh_settings, via) as shell:  # type: ignore[arg-type]
        hf_download.start(shell, job, _Notes(), context)  # type: ignore[arg-type]
        assert shell.run("echo next-command").output == "next-command\n"
    assert not pwned.exists()


def test_a_launch_that_fails_removes_the_token_in_the_same_command(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, context: TransferContext
) -> None:
    pod = find_pod(sim_api, GATEWAY_POD)
    root = pod_root(full_sim, sim_api, GATEWAY_POD)
    setsid = root / "bin" / "setsid"  # first on the pod's PATH: run.sh cannot start
    setsid.write_text("#!/bin/sh\nexit 1\n")
    setsid.chmod(0o755)
    job = TransferJob(pod.id, "hub", "tiny/model", "models/x")
    with open_remote(pod, ssh_settings, "pty") as shell, pytest.raises(TransferFailed) as failed:
        hf_download.start(shell, job, _Notes(), context)  # type: ignore[arg-type]
    assert failed.value.kind == "start" and "nothing runs there" in str(failed.value)
    assert (root / "root" / ".podtui" / "hf" / job.id / "run.sh").exists()
    assert not (root / "root" / ".podtui" / "hf" / job.id / "token").exists()


def test_every_connect_removes_a_token_left_behind(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue]
) -> None:
    base = pod_root(full_sim, sim_api, GATEWAY_POD) / "root" / ".podtui" / "hf"
    old, fresh = base / "lostjob" / "token", base / "startingjob" / "token"
    for t in (old, fresh):
        t.parent.mkdir(parents=True)
        t.write_text("hf_leftBehind000000000000\n")
    (old.parent / "pid").write_text("1\n")  # a pid that runs something else: not this job's run.sh
    hour_ago = time.time() - 3600
    os.utime(old, (hour_ago, hour_ago))
    report = checked(full_sim, GATED_MODEL)
    q = make_queue().start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "models/sweep"))
    assert q.wait([job.id], 60)
    assert q.get(job.id).state == "verified"  # type: ignore[union-attr]
    assert not old.exists()
    assert fresh.exists()  # another job may be between writing its token and starting run.sh: left alone


@pytest.mark.parametrize(
    "drop_on,says",
    [
        ("podtui-started", "may or may not have started on the pod"),
        ("podtui-hf status=", "nothing was started on the pod"),
    ],
)
def test_a_lost_connection_says_what_runs_on_the_pod(
    full_sim: Simulator,
    sim_api: V2Api,
    make_queue: Callable[..., TransferQueue],
    monkeypatch: pytest.MonkeyPatch,
    drop_on: str,
    says: str,
) -> None:
    real = RemoteShell.run

    def run(self: RemoteShell, command: str, *a: object, **kw: object) -> object:
        if drop_on in command:
            raise ShellClosed("the connection dropped")
        return real(self, command, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(RemoteShell, "run", run)
    report = checked(full_sim, GATED_MODEL)
    q = make_queue(backoff_s=()).start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "models/x"))
    assert q.wait([job.id], 60)
    done = q.get(job.id)
    assert done is not None and done.state == "failed" and done.error_kind == "connection"
    assert says in (done.error or "") and "goes on on the pod" not in (done.error or ""), done.error
    home = pod_root(full_sim, sim_api, GATEWAY_POD) / "root"
    assert not list((home / ".podtui" / "hf").glob("*/token"))


def test_no_token_is_sent_unless_the_caller_gives_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_thisMachinesOwnToken00001")
    ctx = TransferContext(lambda ref: None, lambda: None, tmp_path)  # type: ignore[arg-type,return-value]
    assert ctx.hf_token() is None
