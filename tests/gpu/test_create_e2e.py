"""Creating pods end to end over REST v2: the real client and the real CLI against the simulator, through
PROVISIONING to RUNNING, into `podtui pods`, and over direct SSH; choices tried in order; RunPod's refusals shown
plainly; read-only refuses."""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from podtui.cli.create_cmd import cmd_create
from podtui.cli.gpus_cmd import cmd_gpus
from podtui.cli.main import build_parser
from podtui.core.actions import ReadOnly
from podtui.core.api import ApiPaymentRequired, ApiQueryError, V2Api
from podtui.core.api.create import create_pod
from podtui.core.config import Config
from podtui.core.gpu import Cloud, Stock
from podtui.core.paths import Paths
from podtui.core.pod import PodStatus
from podtui.core.pod_spec import Choice, CreateUncertain, PodSpec
from podtui.core.services import Services
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.remote import open_remote
from podtui.sim.gpu_market import NO_STOCK as SIM_NO_STOCK
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator
from tests.helpers.sim import needs_sshd

R3090 = "NVIDIA GeForce RTX 3090"
H100_SXM = "NVIDIA H100 80GB HBM3"
NO_STOCK = SIM_NO_STOCK.rstrip(".")  # RunPod's detail, as podtui quotes it
HOSTILE = ['quote " and \\" backslash', "braces } { ) ( ] [", "ünïcödé 名前 🚀", "$var @dir ... on Pod"]


def session_for(api: V2Api, paths: Paths) -> Services:
    return Services(
        api,
        config=Config(),
        paths=paths,
        clock=api.clock,
        ssh_settings=lambda: SshSettings(known_hosts=paths.data_dir / "kh"),
        key_path=lambda: paths.data_dir / "key",
    )


def creates(sim: SimApiServer) -> int:
    return sim.rest_requests.count("POST /v2/pods")


def test_created_then_running_and_billed_only_once_running(api: V2Api, sim: SimApiServer) -> None:
    sim.world.clock.advance(31)  # the demo's own starting pod is running by now: its cost is in burn0
    burn0 = api.fetch_snapshot().account.spend_per_hr or 0
    c = api.create_pod(PodSpec(name="lora-run", gpu_type_id=R3090, volume_gb=50, container_gb=20))
    assert c.status == "PROVISIONING" and c.cost_per_hr == pytest.approx(0.22) and c.refused == ()
    assert (c.gpu_type_id, c.gpu_count, c.cloud) == (R3090, 1, "COMMUNITY")
    snap = api.fetch_snapshot()
    pod = snap.find("lora-run")
    assert pod.is_starting and pod.runtime is None
    assert pod.image == "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04"
    assert pod.ports_spec == "8888/http,22/tcp"
    assert snap.account.spend_per_hr == pytest.approx(burn0)  # not billed while it boots
    sim.world.clock.advance(31)
    snap = api.fetch_snapshot()
    pod = snap.find("lora-run")
    assert pod.status is PodStatus.RUNNING and pod.live_runtime is not None and pod.gpu_util is not None
    assert pod.volume_gb == 50 and pod.container_disk_gb == 20 and pod.gpu_name == R3090
    assert (snap.account.spend_per_hr or 0) - burn0 == pytest.approx(0.22 + 70 * 0.10 / 730, abs=1e-4)


def test_no_stock_is_refused_with_runpods_message(api: V2Api) -> None:
    with pytest.raises(ApiQueryError) as e:
        api.create_pod(PodSpec(name="x", gpu_type_id=H100_SXM))  # no community stock
    assert NO_STOCK in str(e.value) and "try the other cloud" in str(e.value) and e.value.status == 400
    # stock runs out as pods take the GPUs: H100 PCIe has 2 free on community cloud
    assert api.gpu_types().find("H100 PCIe").stock_for(Cloud.COMMUNITY) is Stock.LOW
    api.create_pod(PodSpec(name="a", gpu_type_id="NVIDIA H100 PCIe", gpu_count=2))
    assert api.gpu_types().find("H100 PCIe").stock_for(Cloud.COMMUNITY) is Stock.NONE
    with pytest.raises(ApiQueryError, match="no longer any instances"):
        api.create_pod(PodSpec(name="b", gpu_type_id="NVIDIA H100 PCIe"))
    # secure cloud still has them
    assert api.create_pod(PodSpec(name="b", gpu_type_id="NVIDIA H100 PCIe", cloud=Cloud.SECURE)).cost_per_hr == 2.39


def test_low_balance_stops_at_the_first_choice(api: V2Api, sim: SimApiServer) -> None:
    sim.world.set_balance(0.5)
    spec = PodSpec("big", "NVIDIA A100 80GB PCIe", fallbacks=(Choice(H100_SXM, 1, Cloud.SECURE),))
    with pytest.raises(ApiPaymentRequired, match=r"\(402\): Your balance is too low.*Add credit"):
        api.create_pod(spec)
    assert creates(sim) == 1  # no other choice can do better: not tried
    assert not [p for p in sim.world.pods.values() if p.name == "big"]


def test_a_gateways_error_page_leaves_the_create_uncertain(api: V2Api, sim: SimApiServer) -> None:
    """A 502 page says the answer was lost on the way, not that RunPod failed: the next choice is not asked."""
    sim.faults.add("status", 502, times=1, only="POST /v2/pods")
    with pytest.raises(CreateUncertain, match="may have been created"):
        api.create_pod(PodSpec("x", R3090, fallbacks=(Choice(R3090, 1, Cloud.SECURE),)))
    assert creates(sim) == 1


def test_a_server_error_moves_to_the_next_choice(api: V2Api, sim: SimApiServer) -> None:
    sim.faults.add("server_error", 502, times=1, only="POST /v2/pods")
    created = api.create_pod(PodSpec("x", R3090, fallbacks=(Choice(R3090, 1, Cloud.SECURE),)))
    assert created.cloud == "SECURE" and len(created.refused) == 1 and "(502)" in created.refused[0]
    assert creates(sim) == 2 and [p.name for p in sim.world.pods.values()].count("x") == 1


def test_choices_in_order_until_one_is_placed(api: V2Api, sim: SimApiServer) -> None:
    spec = PodSpec("h100", H100_SXM, fallbacks=(Choice(H100_SXM, 1, Cloud.SECURE), Choice(R3090)))
    created = api.create_pod(spec)  # no H100 SXM on community cloud: placed on secure, the 3090 never asked
    assert (created.gpu_type_id, created.cloud, created.cost_per_hr) == (H100_SXM, "SECURE", 2.99)
    assert len(created.refused) == 1 and NO_STOCK in created.refused[0]
    assert created.refused[0].startswith(f"1 x {H100_SXM} (community cloud): (400)")
    assert creates(sim) == 2


def test_a_429_is_waited_out(api: V2Api, sim: SimApiServer) -> None:
    sim.faults.add("retry_after", 7, times=1, only="POST /v2/pods")
    waits: list[float] = []
    created = create_pod(api.rest, PodSpec("patient", R3090), sleep=waits.append)
    assert waits == [7.0] and created.name == "patient" and creates(sim) == 2


def test_unknown_gpu_type_from_the_api(api: V2Api) -> None:
    with pytest.raises(ApiQueryError, match="no GPU types matching"):
        api.create_pod(PodSpec(name="x", gpu_type_id="NVIDIA RTX 9090"))


def test_cli_wait_until_running(api: V2Api, sim: SimApiServer, paths: Paths) -> None:
    args = build_parser().parse_args(
        ["create", "--gpu", "rtx 3090", "--name", "waited", "--env", "A=1", "--yes", "--wait", "--volume-gb", "0"]
    )
    out = io.StringIO()
    code = cmd_create(session_for(api, paths), args, False, out, sleep=lambda s: sim.world.clock.advance(10))
    text = out.getvalue()
    assert code == 0, text
    assert "cost       $0.223/hr, $5.35/day while running" in text
    assert "created pod " in text and f"on 1 x {R3090} (community cloud" in text
    assert "waiting: " in text
    # the API alone: no gateway and no sshd, so RunPod names no SSH endpoint (the full simulator's test has them)
    assert text.rstrip().endswith("running; no SSH yet")


def test_cli_read_only_refuses_before_anything_is_sent(api: V2Api, sim: SimApiServer, paths: Paths) -> None:
    args = build_parser().parse_args(["create", "--gpu", "RTX 3090", "--yes"])
    before = len(sim.rest_requests)
    with pytest.raises(ReadOnly, match="creating a pod"):
        cmd_create(session_for(api, paths), args, True, io.StringIO())
    assert len(sim.rest_requests) == before


def test_cli_gpus_json_with_advice(api: V2Api, paths: Paths) -> None:
    out = io.StringIO()
    assert cmd_gpus(session_for(api, paths), "7B", "full", None, None, True, out) == 0
    data = json.loads(out.getvalue())
    assert len(data["gpu_types"]) == 10 and data["estimate"]["total_gb"] == pytest.approx(146.6)
    assert data["advice"]["best"] == {
        "gpu_type_id": "NVIDIA A100 80GB PCIe",
        "gpu": "A100 80GB PCIe",
        "count": 2,
        "cloud": "community",
        "price_per_hr": 2.38,
        "vram_gb": 160,
        "stock": "HIGH",
    }
    a100 = next(g for g in data["gpu_types"] if g["display_name"] == "A100 80GB PCIe")
    assert a100["gpu_count"] == 2 and a100["stock"] == {"secure": "HIGH", "community": "HIGH"}
    assert a100["max_count"] == {"secure": 8, "community": 8} and "community_spot_price" not in a100


def test_cli_gpus_table(api: V2Api, paths: Paths) -> None:
    out = io.StringIO()
    assert cmd_gpus(session_for(api, paths), None, "lora", None, 8, False, out) == 0
    text = out.getvalue()
    assert "SPOT" not in text and "STOCK C/S" in text and "prices ($/hr) and stock are for 8 GPUs" in text
    h100 = next(line for line in text.splitlines() if "H100 PCIe" in line)
    assert "15.92" in h100 and "none/low" in h100  # 8 x $1.99; no 8-GPU machine free on community cloud


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_reach_the_simulator_intact(api: V2Api, sim: SimApiServer, text: str) -> None:
    created = api.create_pod(PodSpec(text, R3090, env=(("NOTE", text + "\n{x}"), ("HF_TOKEN", "hf_" + "s" * 30))))
    pod = sim.world.pods[created.id]
    assert pod.name == text and created.name == text
    assert pod.env == {"NOTE": text + "\n{x}", "HF_TOKEN": "hf_" + "s" * 30}
    assert api.fetch_snapshot().find(created.id).env == (("NOTE", text + "\n{x}"), ("HF_TOKEN", "hf_" + "s" * 30))


def podtui(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "podtui", *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=60
    )


def test_cli_errors_are_one_line(sim: SimApiServer) -> None:
    env = {"RUNPOD_API_KEY": sim.api_key, "RUNPOD_API_BASE_URL": sim.url}
    r = podtui(env, "create", "--gpu", "H100 SXM", "--yes")
    assert r.returncode == 1 and NO_STOCK in r.stderr and "Traceback" not in r.stderr
    assert "warning    RunPod shows no stock" in r.stdout  # said before asking
    r = podtui(env, "create", "--gpu", "RTX 3090", "--count", "9", "--env", "1X=y", "--ports", "22", "--yes")
    assert r.returncode == 2 and "--count" in r.stderr and "--env" in r.stderr and "--ports" in r.stderr
    r = podtui(env, "create", "--gpu", "RTX 9090", "--yes")
    assert r.returncode == 2 and "no GPU type 'RTX 9090'" in r.stderr
    r = podtui(env, "create", "--gpu", "A100 PCIe 40GB", "--yes")
    assert r.returncode == 2 and "not offered on community cloud" in r.stderr
    r = podtui(env, "create", "--gpu", "RTX 3090", "--volume-gb", "5", "--data-centre", "a b", "--yes")
    assert r.returncode == 2 and "--volume-gb" in r.stderr and "--data-centre" in r.stderr


def test_cli_tries_the_choices_and_says_which_was_placed(sim: SimApiServer) -> None:
    env = {"RUNPOD_API_KEY": sim.api_key, "RUNPOD_API_BASE_URL": sim.url}
    r = podtui(env, "create", "--gpu", "H100 SXM", "--gpu", "RTX 3090", "--cloud", "any", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    assert f"gpu        1 x {H100_SXM} (community cloud)" in r.stderr
    assert f"  or then  1 x {H100_SXM} (secure cloud)" in r.stderr
    assert "note       RunPod shows no stock of 1 x NVIDIA H100 80GB HBM3 (community cloud)" in r.stderr
    assert "up to $3.000/hr if RunPod places a later choice" in r.stderr  # $2.99 + the disks
    assert f"not placed: 1 x {H100_SXM} (community cloud): (400): {NO_STOCK}" in r.stderr
    out = json.loads(r.stdout)
    assert (out["gpu_type_id"], out["cloud"], out["status"]) == (H100_SXM, "SECURE", "PROVISIONING")
    assert len(out["refused"]) == 1 and len(out["spec"]["fallbacks"]) == 3
    assert creates(sim) == 2


def _prompted(env: dict[str, str], answer: str, *args: str) -> tuple[str, int]:
    """Run `podtui create` on a terminal, answer its question, return everything it showed and its exit code."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "podtui", "create", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, **env},
        close_fds=True,
    )
    os.close(slave)
    seen, answered = b"", False
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            if not answered and b"Create? [y/N]" in seen:
                os.write(master, answer.encode() + b"\n")
                answered = True
            if proc.poll() is not None and not ready:
                break
        return seen.decode(errors="replace").replace("\r\n", "\n"), proc.wait(timeout=10)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()


def test_cli_shows_the_cost_then_asks(sim: SimApiServer) -> None:
    env = {"RUNPOD_API_KEY": sim.api_key, "RUNPOD_API_BASE_URL": sim.url}
    text, code = _prompted(env, "n", "--gpu", "RTX 4090", "--count", "2", "--name", "asked", "--volume-gb", "100")
    before_question = text.split("Create? [y/N]")[0]
    # 2 x $0.40 + (20 + 100 GB) x $0.10/GB/month / 730 h
    assert "cost       $0.816/hr, $19.59/day while running" in before_question
    assert "gpu        2 x NVIDIA GeForce RTX 4090 (community cloud)" in before_question
    assert code == 1 and "cancelled; nothing was created" in text
    assert not creates(sim)
    text, code = _prompted(env, "y", "--gpu", "RTX 4090", "--name", "asked")
    assert code == 0 and 'created pod "' in text, text
    assert [p.name for p in sim.world.pods.values() if p.name == "asked"] == ["asked"]


@needs_sshd
def test_cli_create_then_pods_then_exec_over_direct_ssh(full_sim: Simulator, ssh_settings: SshSettings) -> None:
    host, port = full_sim.gateway.address
    env = {
        "RUNPOD_API_KEY": full_sim.api.api_key,
        "RUNPOD_API_BASE_URL": full_sim.api.url,
        "PODTUI_SSH_GATEWAY": f"{host}:{port}",
        "HOME": os.environ["HOME"],
    }
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "podtui"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "config.toml").write_text(f'ssh_key = "{ssh_settings.key_path}"\n')
    r = podtui(env, "create", "--gpu", "RTX 3090", "--name", "fresh-3090", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    pod_id = json.loads(r.stdout)["id"]
    r = podtui(env, "pods", "--json")
    listed = {p["id"]: p for p in json.loads(r.stdout)}
    assert listed[pod_id]["status"] in ("PROVISIONING", "STARTING") and listed[pod_id]["ssh"]["direct"] is None
    deadline = time.monotonic() + 10
    while pod_id not in full_sim.sshds and time.monotonic() < deadline:  # its sshd starts in the background
        time.sleep(0.05)
    full_sim.world.clock.advance(31)
    listed = {p["id"]: p for p in json.loads(podtui(env, "pods", "--json").stdout)}
    assert listed[pod_id]["status"] == "RUNNING"
    assert listed[pod_id]["ssh"]["direct"] == f"ssh root@127.0.0.1 -p {full_sim.sshds[pod_id].port}"
    r = podtui(env, "exec", "fresh-3090", "--", "echo", "hi", "$RUNPOD_POD_ID")
    assert r.returncode == 0 and r.stdout == f"hi {pod_id}\n", r.stderr
    pod = V2Api(full_sim.api.api_key, full_sim.api.url).fetch_snapshot().find(pod_id)
    with open_remote(pod, ssh_settings) as sh:
        assert sh.kind == "exec"  # direct SSH: an exec channel, which RunPod's gateway never gives


def test_a_pod_without_22_tcp_gets_no_sshd(full_sim: Simulator) -> None:
    api = V2Api(full_sim.api.api_key, full_sim.api.url)
    c = api.create_pod(PodSpec(name="gw-only", gpu_type_id=R3090, ports="8888/http"))
    full_sim.world.clock.advance(31)
    time.sleep(0.2)
    pod = api.fetch_snapshot().find(c.id)
    assert pod.status is PodStatus.RUNNING and pod.direct_ssh is None and pod.reach == ("proxy",)
    assert c.id not in full_sim.sshds
