"""The token reaches the pod without appearing in its shell history, its process list, any log or the history."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.sim.hub_seed import GATED_MODEL
from podtui.sim.simulator import Simulator
from podtui.transfer.queue import TransferQueue
from tests.helpers.hf import checked, hub_job
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, find_pod, pod_root


def _processes_showing(token: bytes) -> list[str]:
    """Every process on this machine (the simulated pods' included) whose argv or environment holds the token."""
    hits = []
    for entry in Path("/proc").glob("[0-9]*"):
        for part in ("cmdline", "environ"):
            try:
                if token in (entry / part).read_bytes():
                    hits.append(f"{entry.name}/{part}")
            except OSError:
                continue
    return hits


def _files_holding(root: Path, token: bytes) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink() and token in path.read_bytes():
                hits.append(str(path))
        except OSError:
            continue
    return hits


@pytest.mark.parametrize("pod_name", [GATEWAY_POD, DIRECT_POD])
def test_the_token_leaves_no_trace(
    full_sim: Simulator,
    sim_api: V2Api,
    make_queue: Callable[..., TransferQueue],
    history_path: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    pod_name: str,
) -> None:
    pod = find_pod(sim_api, pod_name)
    if pod_name == DIRECT_POD and pod.id not in full_sim.sshds:
        pytest.skip("no sshd here: the direct-SSH (exec channel) path is not simulated")
    token = full_sim.hub.token("read").encode()
    caplog.set_level(logging.DEBUG)
    report = checked(full_sim, GATED_MODEL)
    full_sim.hub.rate_bytes_per_s = 150_000  # a few seconds of download to look at the pod's processes
    q = make_queue().start()
    job = q.add(hub_job(report, pod, "secret-test"))
    seen_running, scans = False, 0
    while not q.wait([job.id], 0.1):
        current = q.get(job.id)
        if current is not None and current.state == "transferring":
            seen_running = True
            assert _processes_showing(token) == []
            scans += 1
    done = q.get(job.id)
    assert done is not None and done.state == "verified", done.log
    assert seen_running and scans > 3
    home = pod_root(full_sim, sim_api, pod_name) / "root"
    history = home / ".bash_history"
    assert not history.exists() or token not in history.read_bytes()
    assert _files_holding(tmp_path, token) == []  # the pods' sandboxes (logs, job folders), the history file, …
    assert history_path.exists() and token not in history_path.read_bytes()
    assert not [r for r in caplog.records if token.decode() in r.getMessage()]
    token_files = list((home / ".podtui" / "hf").glob("*/token"))
    assert token_files == []


def test_the_token_file_is_private_while_it_exists(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue]
) -> None:
    report = checked(full_sim, GATED_MODEL)
    full_sim.hub.rate_bytes_per_s = 300_000
    pod = find_pod(sim_api, GATEWAY_POD)
    q = make_queue().start()
    job = q.add(hub_job(report, pod, "private"))
    folder = pod_root(full_sim, sim_api, GATEWAY_POD) / "root" / ".podtui" / "hf" / job.id
    end = time.monotonic() + 20
    while not (folder / "token").exists() and time.monotonic() < end:
        time.sleep(0.02)
    assert (folder / "token").stat().st_mode & 0o777 == 0o600  # private from the moment it exists
    assert folder.stat().st_mode & 0o777 == 0o700
    while not (folder / "token").read_text().strip() and time.monotonic() < end:  # made first, then written
        time.sleep(0.02)
    assert (folder / "token").read_text().strip() == full_sim.hub.token("read")
    assert q.wait([job.id], 60)
    assert not (folder / "token").exists()
