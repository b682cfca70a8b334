"""The download runs on the pod (its own `hf download`, in the background) and is verified file by file."""

from __future__ import annotations

from collections.abc import Callable

from podtui.core.api import V2Api
from podtui.sim.hub_seed import GATED_MODEL, PUBLIC_MODEL
from podtui.sim.simulator import Simulator
from podtui.transfer.queue import TransferQueue
from tests.helpers.hf import checked, hub_job, run_sh_processes, wait_for_job
from tests.helpers.sim import GATEWAY_POD, find_pod, pod_root


def test_a_gated_model_lands_on_the_pod_verified(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue]
) -> None:
    report = checked(full_sim, GATED_MODEL)
    pod = find_pod(sim_api, GATEWAY_POD)
    q = make_queue().start()
    job = q.add(hub_job(report, pod, "models/llama-mini"))
    assert q.wait([job.id], 60)
    done = q.get(job.id)
    assert done is not None
    assert done.state == "verified", (done.error, done.log)
    folder = pod_root(full_sim, sim_api, GATEWAY_POD) / "workspace" / "models" / "llama-mini"
    repo = full_sim.hub.repo(GATED_MODEL)
    for f in repo.files:
        assert (folder / f.path).read_bytes() == f.data
    assert done.done_bytes == done.total_bytes == sum(f.size for f in repo.files)
    assert not list((pod_root(full_sim, sim_api, GATEWAY_POD) / "root" / ".podtui" / "hf").glob("*/token"))


def test_public_model_via_demo_pod(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue]
) -> None:
    report = checked(full_sim, PUBLIC_MODEL)
    pod = find_pod(sim_api, GATEWAY_POD)
    q = make_queue().start()
    job = q.add(hub_job(report, pod, "tiny"))
    assert q.wait([job.id], 60)
    done = q.get(job.id)
    assert done is not None and done.state == "verified", (done and done.error, done and done.log)


def test_cancel_stops_the_download_on_the_pod(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue]
) -> None:
    report = checked(full_sim, GATED_MODEL)
    full_sim.hub.rate_bytes_per_s = 40_000  # ten seconds for the weights: time to cancel mid-way
    q = make_queue().start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "slow"))
    wait_for_job(q, job.id, lambda j: j.state == "transferring" and j.done_bytes > 0)
    assert run_sh_processes(job.id)
    assert q.cancel(job.id)
    assert q.wait([job.id], 30)
    done = q.get(job.id)
    assert done is not None and done.state == "cancelled"
    assert run_sh_processes(job.id) == []
    job_dir = pod_root(full_sim, sim_api, GATEWAY_POD) / "root" / ".podtui" / "hf" / job.id
    assert not (job_dir / "token").exists() and (job_dir / "status").exists()


def test_a_file_damaged_on_the_way_is_never_verified(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue]
) -> None:
    report = checked(full_sim, PUBLIC_MODEL)
    full_sim.hub.corrupt = {"config.json", "model.safetensors"}  # same sizes, other bytes: hf itself notices nothing
    q = make_queue(backoff_s=()).start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "damaged"))
    assert q.wait([job.id], 60)
    done = q.get(job.id)
    assert done is not None and done.state == "failed" and done.error_kind == "checksum"
    assert "config.json (git-sha1 differs)" in (done.error or "") and "model.safetensors (sha256 differs)" in (
        done.error or ""
    )
    folder = pod_root(full_sim, sim_api, GATEWAY_POD) / "workspace" / "damaged"
    assert not (folder / "config.json").exists()  # removed, so a retry fetches it again
    full_sim.hub.corrupt = set()
    assert q.retry(job.id)
    assert q.wait([job.id], 60)
    again = q.get(job.id)
    assert again is not None and again.state == "verified", again.log


def test_a_refusal_on_the_pod_gets_the_checks_remedy(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue], hf_token_box: list[str | None]
) -> None:
    report = checked(full_sim, GATED_MODEL)
    hf_token_box[0] = full_sim.hub.token("no_gated_scope")  # the token changed since the check
    q = make_queue().start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "refused"))
    assert q.wait([job.id], 60)
    done = q.get(job.id)
    assert done is not None and done.state == "failed", done.log
    assert done.error_kind == "gated_scope" and "settings/tokens" in (done.error or ""), done.error


def test_closing_podtui_leaves_the_download_running_and_the_next_start_reattaches(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue]
) -> None:
    report = checked(full_sim, GATED_MODEL)
    full_sim.hub.rate_bytes_per_s = 100_000
    first = make_queue().start()
    job = first.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "survives"))
    wait_for_job(first, job.id, lambda j: j.state == "transferring" and j.done_bytes > 0)
    first.close()
    running = run_sh_processes(job.id)
    assert len(running) == 1  # podtui closed; the pod goes on
    full_sim.hub.rate_bytes_per_s = None
    second = make_queue().start()  # the same history file: the job comes back queued and re-attaches
    assert second.wait([job.id], 60)
    done = second.get(job.id)
    assert done is not None and done.state == "verified", done.log
    assert any("re-attached" in line or "finished on the pod" in line for line in done.log), done.log
    assert sum(1 for line in done.log if "started on the pod" in line) == 1  # never started twice
