"""A hub job cancelled or removed outside its attempt (waiting to retry, failed, queued again after a restart)
is stopped on the pod too: its process group ends and its token goes; and the CLI says only what it did."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from podtui.cli.hf_cmd import _stopped
from podtui.core.api import V2Api
from podtui.core.ssh.errors import ShellClosed
from podtui.core.ssh.remote import RemoteShell
from podtui.sim.hub_seed import GATED_MODEL
from podtui.sim.simulator import Simulator
from podtui.transfer.hf_download import STOPPED_ON_POD
from podtui.transfer.job import TransferJob
from podtui.transfer.queue import TransferQueue
from tests.helpers.hf import checked, hub_job, run_sh_processes, wait_for_job
from tests.helpers.sim import GATEWAY_POD, find_pod, pod_root


def _drop_polls(monkeypatch: pytest.MonkeyPatch, after: int) -> list[bool]:
    """The connection dies at the `after`-th poll of the download and at every one after it, until the flag
    returned is set to False."""
    real = RemoteShell.run
    polls: list[int] = []
    dropping = [True]

    def run(self: RemoteShell, command: str, *a: object, **kw: object) -> object:
        if "podtui-hf status=" in command and dropping[0]:
            polls.append(1)
            if len(polls) >= after:
                raise ShellClosed("the connection dropped")
        return real(self, command, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(RemoteShell, "run", run)
    return dropping


def _tokens(full_sim: Simulator, sim_api: V2Api) -> list[str]:
    home = pod_root(full_sim, sim_api, GATEWAY_POD) / "root"
    return [p.parent.name for p in (home / ".podtui" / "hf").glob("*/token")]


def test_cancel_while_waiting_to_retry_stops_it_on_the_pod(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue], monkeypatch: pytest.MonkeyPatch
) -> None:
    report = checked(full_sim, GATED_MODEL)
    full_sim.hub.rate_bytes_per_s = 40_000
    dropping = _drop_polls(monkeypatch, after=4)  # mid-download
    q = make_queue(backoff_s=(30.0,)).start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "slow"))
    wait_for_job(q, job.id, lambda j: j.state == "queued" and j.attempts == 1 and bool(j.error))
    assert run_sh_processes(job.id)  # the download goes on on the pod, with its token
    dropping[0] = False  # the connection is back
    assert q.cancel(job.id)
    assert q.wait([job.id], 20)
    done = q.get(job.id)
    assert done is not None and done.state == "cancelled"
    assert any(STOPPED_ON_POD in line for line in done.log), done.log
    assert run_sh_processes(job.id) == [] and job.id not in _tokens(full_sim, sim_api)


def test_removing_a_failed_job_stops_it_on_the_pod(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue], monkeypatch: pytest.MonkeyPatch
) -> None:
    report = checked(full_sim, GATED_MODEL)
    full_sim.hub.rate_bytes_per_s = 40_000
    dropping = _drop_polls(monkeypatch, after=3)
    q = make_queue(backoff_s=()).start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "slow"))
    assert q.wait([job.id], 30)
    failed = q.get(job.id)
    assert failed is not None and failed.state == "failed" and "goes on on the pod" in (failed.error or "")
    assert run_sh_processes(job.id)
    dropping[0] = False
    assert q.remove(job.id)
    assert q.wait([job.id], 20)  # waits for the stop on the pod too
    assert run_sh_processes(job.id) == [] and job.id not in _tokens(full_sim, sim_api)


def test_cancelling_a_job_queued_again_after_a_restart_stops_it_on_the_pod(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue]
) -> None:
    report = checked(full_sim, GATED_MODEL)
    full_sim.hub.rate_bytes_per_s = 40_000
    first = make_queue().start()
    job = first.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "slow"))
    wait_for_job(first, job.id, lambda j: j.state == "transferring" and j.done_bytes > 0)
    first.close()  # podtui quits: the download goes on
    assert run_sh_processes(job.id)
    second = make_queue()  # not started: the job waits in the queue
    assert second.cancel(job.id)
    assert second.wait([job.id], 20)
    assert run_sh_processes(job.id) == [] and job.id not in _tokens(full_sim, sim_api)


def test_the_cli_claims_a_stop_only_when_it_happened() -> None:
    job = TransferJob("pod1", "hub", "o/r", "models/r")
    assert _stopped(job, True, "pod") == "nothing was started on the pod"
    job.final_path = "/workspace/models/r"
    unsure = _stopped(job, True, "pod")
    assert "could not confirm" in unsure and f"~/.podtui/hf/{job.id}/pid" in unsure
    job.note(STOPPED_ON_POD)
    assert "could not confirm" in _stopped(job, False, "pod")  # the wait timed out
    assert _stopped(job, True, "pod") == "the download on the pod was stopped and its token removed"
