"""Where the download lands on the pod, which Hub the pod's hf asks, and what its progress counts."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.core.api import V2Api
from podtui.core.hf.check import check_repo
from podtui.core.hf.repo import RepoFile
from podtui.sim.hub_seed import GATED_MODEL, GATED_NOT_ACCEPTED, PUBLIC_MODEL
from podtui.sim.simulator import Simulator
from podtui.transfer import hf_download
from podtui.transfer.queue import TransferQueue
from podtui.transfer.runner import TransferContext
from tests.helpers.hf import checked, hub_job, wait_for_job
from tests.helpers.sim import DIRECT_POD, GATEWAY_POD, find_pod, pod_root


@pytest.mark.parametrize("name", [GATEWAY_POD, DIRECT_POD])
def test_folders_home_odd_names_and_the_volume(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue], name: str
) -> None:
    pod = find_pod(sim_api, name)
    if name == DIRECT_POD and pod.id not in full_sim.sshds:
        pytest.skip("no sshd here: the direct-SSH (exec channel) path is not simulated")
    root = pod_root(full_sim, sim_api, name)
    report = checked(full_sim, PUBLIC_MODEL)
    q = make_queue(backoff_s=(), concurrency=4).start()
    wanted = {
        "~/models/tiny": root / "root" / "models" / "tiny",
        'my models/it\'s "x" ünï': root / "workspace" / "my models" / 'it\'s "x" ünï',
        "-dash/$(id)`x`": root / "workspace" / "-dash" / "$(id)`x`",
    }
    jobs = {target: q.add(hub_job(report, pod, target)) for target in wanted}
    assert q.wait([j.id for j in jobs.values()], 90)
    for target, folder in wanted.items():
        done = q.get(jobs[target].id)
        assert done is not None and done.state == "verified", (target, done and done.error)
        assert (folder / "model.safetensors").exists(), (target, done.final_path)
    assert not (root / "workspace" / "~").exists()


def test_a_relative_folder_is_under_the_pods_volume(
    full_sim: Simulator,
    sim_api: V2Api,
    tmp_path: Path,
    context: TransferContext,
    make_queue: Callable[..., TransferQueue],
) -> None:
    """An SSH exec session starts in $HOME, on the container disk: relative folders go to the volume instead."""
    machine = full_sim.gateway.machine(full_sim.world.pods[find_pod(sim_api, GATEWAY_POD).id])
    volume = machine.home / "volume"  # a folder the pod's shell does not start in, as the pod sees it
    volume.mkdir()
    real = context.lookup
    context.lookup = lambda ref: dataclasses.replace(real(ref), volume_mount_path=machine.view.inside(volume))
    report = checked(full_sim, PUBLIC_MODEL)
    q = make_queue(backoff_s=()).start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "models/tiny-gpt2"))
    assert q.wait([job.id], 60)
    done = q.get(job.id)
    assert done is not None and done.state == "verified", done.error
    assert done.final_path == machine.view.inside(volume / "models" / "tiny-gpt2")
    assert (volume / "models" / "tiny-gpt2" / "model.safetensors").exists()


def test_progress_counts_only_the_repos_files(
    full_sim: Simulator, sim_api: V2Api, make_queue: Callable[..., TransferQueue]
) -> None:
    report = checked(full_sim, GATED_MODEL)
    folder = pod_root(full_sim, sim_api, GATEWAY_POD) / "workspace" / "models" / "shared"
    folder.mkdir(parents=True)
    (folder / "other-model.safetensors").write_bytes(b"\0" * 2_000_000)  # something already there
    full_sim.hub.rate_bytes_per_s = 40_000  # ten seconds for the weights
    q = make_queue().start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "models/shared"))
    wait_for_job(q, job.id, lambda j: j.state == "transferring" and j.done_bytes > 0)
    now = q.get(job.id)
    assert now is not None and 0 < now.done_bytes < now.total_bytes * 0.8, now.done_bytes
    full_sim.hub.rate_bytes_per_s = None
    assert q.wait([job.id], 60)
    done = q.get(job.id)
    assert done is not None and done.state == "verified" and done.done_bytes == done.total_bytes


def test_the_pods_hf_asks_the_hub_podtui_checked(
    full_sim: Simulator, sim_api: V2Api, context: TransferContext, make_queue: Callable[..., TransferQueue]
) -> None:
    report = checked(full_sim, PUBLIC_MODEL)
    # not a Hub (the simulated RunPod API answers 404 at once, where a closed port costs hf's retries): the
    # download fails, though the pod's own HF_ENDPOINT would work
    other = full_sim.api.url.rstrip("/")
    context.hf_endpoint = lambda: other
    q = make_queue(backoff_s=()).start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "elsewhere"))
    assert q.wait([job.id], 90)
    done = q.get(job.id)
    assert done is not None and done.state == "failed", done.log
    run_sh = pod_root(full_sim, sim_api, GATEWAY_POD) / "root" / ".podtui" / "hf" / job.id / "run.sh"
    assert f"export HF_ENDPOINT={other}\n" in run_sh.read_text()
    assert hf_download.endpoint_line("https://huggingface.co/") == ""
    assert hf_download.endpoint_line("https://hf-mirror.com/x y") == "export HF_ENDPOINT='https://hf-mirror.com/x y'\n"


@pytest.mark.parametrize("real", [False, True])
def test_a_refusal_on_the_pod_links_to_the_hub_in_use(
    full_sim: Simulator, sim_api: V2Api, real: bool, make_queue: Callable[..., TransferQueue]
) -> None:
    full_sim.hub.real_license_reply = real
    report = check_repo(GATED_NOT_ACCEPTED, full_sim.hub.token("read"), full_sim.hub.endpoint)
    report.lines.clear()  # as if the license was accepted when checked, and withdrawn since
    q = make_queue(backoff_s=()).start()
    job = q.add(hub_job(report, find_pod(sim_api, GATEWAY_POD), "lic"))
    assert q.wait([job.id], 60)
    done = q.get(job.id)
    assert done is not None and done.error_kind == "gated_license", done.error
    assert f"{full_sim.hub.endpoint}/{GATED_NOT_ACCEPTED}" in (done.error or "")
    assert "https://huggingface.co/podtui-sim" not in (done.error or "")


def test_diagnose_without_a_token_asks_for_one() -> None:
    failed = hf_download.diagnose(
        "Error: Access denied. Model 'o/r' requires approval.", "1", "https://hf.co/o/r", has_token=False
    )
    assert failed.kind == "gated_login" and "needs a token" in str(failed)


def test_verify_batches_by_size() -> None:
    small = [RepoFile(f"f{i}", 1000, blob_id="0" * 40) for i in range(100)]
    assert [len(b) for b in hf_download._batches(small)] == [40, 40, 20]
    big = [RepoFile("a", 5 * 2**30, "0" * 64), RepoFile("b", 10), RepoFile("c", 2**30), RepoFile("d", 2**30)]
    assert hf_download._batches(big) == [[0], [1, 2], [3]]
