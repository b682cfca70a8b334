"""Launching when GPUs are scarce, end to end against the simulator: a pod on a network volume lands in the
volume's data centre, candidates are tried in order and the refused ones said, the no_capacity fault, a low
balance, templates, and `podtui create` / `podtui gpus` with stock per data centre, in text and --json
(docs/launch.md)."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys

import pytest

from podtui.cli.create_cmd import cmd_create
from podtui.cli.gpus_cmd import cmd_gpus
from podtui.cli.main import build_parser
from podtui.cli.session import UsageError
from podtui.core.api import ApiPaymentRequired, ApiQueryError, V2Api
from podtui.core.config import Config
from podtui.core.gpu import Cloud, Stock
from podtui.core.paths import Paths
from podtui.core.pod_spec import Choice, PodSpec, link_template
from podtui.core.services import Services
from podtui.core.ssh.connect import SshSettings
from podtui.core.volume import NetworkVolume
from podtui.sim.server import SimApiServer

R4090, R3090 = "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090"
TEMPLATE = "Runpod Pytorch 2.4.0"  # one of the simulator's public official templates


def session_for(api: V2Api, paths: Paths) -> Services:
    return Services(
        api,
        config=Config(),
        paths=paths,
        clock=api.clock,
        ssh_settings=lambda: SshSettings(known_hosts=paths.data_dir / "kh"),
        key_path=lambda: paths.data_dir / "key",
    )


def posts(sim: SimApiServer) -> int:
    return sim.rest_requests.count("POST /v2/pods")


def free_somewhere(api: V2Api, gpu_id: str, cloud: Cloud) -> str:
    """A data centre where the simulator's catalogue shows that type free now."""
    found = api.gpu_types().find(gpu_id).where(cloud)
    assert found, f"{gpu_id} is free nowhere on {cloud.label} cloud in the simulator"
    return found[0].id


@pytest.fixture
def volume(api: V2Api) -> NetworkVolume:
    """A network volume where an RTX 4090 is free on community cloud now."""
    return api.create_network_volume("scratch", 100, free_somewhere(api, R4090, Cloud.COMMUNITY))


def run(api: V2Api, paths: Paths, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = cmd_create(session_for(api, paths), build_parser().parse_args(["create", *argv]), False, out)
    return code, out.getvalue()


# --- the API ------------------------------------------------------------------------------------------------


def test_a_pod_on_a_network_volume_lands_in_its_data_centre(api: V2Api, volume: NetworkVolume) -> None:
    spec = PodSpec(
        "on-vol", R4090, volume_gb=0, data_centre_ids=(volume.data_centre,), network_volume_id=volume.id
    ).validate()
    created = api.create_pod(spec)
    assert created.data_centre_id == volume.data_centre and created.candidate == spec.choices[0]
    pod = api.fetch_snapshot().find(created.id)
    assert (pod.location, pod.network_volume, pod.volume_gb or 0) == (volume.data_centre, volume.id, 0)
    assert [p.id for p in volume.users(api.fetch_snapshot().pods)] == [created.id]


def test_the_first_candidate_without_capacity_gets_the_second_and_says_why(api: V2Api, sim: SimApiServer) -> None:
    centre = free_somewhere(api, R4090, Cloud.COMMUNITY)
    sim.faults.add("no_capacity", f"{R4090}@{centre}", only="POST /v2/pods")
    spec = PodSpec("second", R4090, data_centre_id=centre, fallbacks=(Choice(R4090, 1, Cloud.COMMUNITY),))
    created = api.create_pod(spec)
    assert created.candidate == Choice(R4090, 1, Cloud.COMMUNITY) and created.data_centre_id != centre
    assert len(created.refused) == 1
    assert created.refused[0].startswith(f"1 x {R4090} (community cloud) in {centre}: (400)")
    assert posts(sim) == 2


def test_no_capacity_anywhere_refuses_every_candidate_with_runpods_words(api: V2Api, sim: SimApiServer) -> None:
    sim.faults.add("no_capacity", only="POST /v2/pods")
    spec = PodSpec("none", R4090, fallbacks=(Choice(R3090, 1, Cloud.COMMUNITY), Choice(R3090, 1, Cloud.SECURE)))
    with pytest.raises(ApiQueryError) as e:
        api.create_pod(spec)
    assert "placed none of the 3 choices" in str(e.value) and e.value.status == 400
    assert f"1 x {R3090} (secure cloud)" in str(e.value)
    assert posts(sim) == 3 and not [p for p in sim.world.pods.values() if p.name == "none"]


def test_a_low_balance_stops_at_the_first_candidate(api: V2Api, sim: SimApiServer, volume: NetworkVolume) -> None:
    sim.world.set_balance(0.05)
    spec = PodSpec(
        "poor",
        R4090,
        volume_gb=0,
        data_centre_id=volume.data_centre,
        network_volume_id=volume.id,
        fallbacks=(Choice(R3090, 1, Cloud.SECURE, volume.data_centre),),
    )
    with pytest.raises(ApiPaymentRequired, match=r"balance does not cover it\. Add credit"):
        api.create_pod(spec)
    assert posts(sim) == 1


def test_a_template_by_id_is_resolved_by_runpod_and_what_podtui_says_wins(api: V2Api, sim: SimApiServer) -> None:
    template = next(t for t in api.public_templates("official") if t.name == TEMPLATE)
    assert template.volume_gb
    kept = PodSpec("tpl", R3090, image=template.image, volume_gb=30, ports="22/tcp", template_id=template.id)
    spec, removed = link_template(kept, template)
    assert removed == () and spec.template_id == template.id
    pod = sim.world.pods[api.create_pod(spec).id]
    assert pod.image == template.image and pod.ports == "22/tcp" and pod.volume_gb == 30
    assert pod.template == template.id
    # no volume: RunPod would give the template's, so the spec goes whole without the template
    spec, removed = link_template(dataclasses.replace(kept, name="tpl-novol", volume_gb=0), template)
    assert removed == (f"its {template.volume_gb} GB volume",) and spec.template_id is None
    pod = sim.world.pods[api.create_pod(spec).id]
    assert pod.volume_gb == 0 and pod.template is None and pod.image == template.image


def test_env_removed_from_a_template_does_not_come_back(api: V2Api, sim: SimApiServer, paths: Paths) -> None:
    """RunPod merges a template's env per key: a key the user left out is sent without the template."""
    made = api.create_template({"name": "with-env", "image": "ubuntu:22.04", "env": {"KEEP": "1", "DROP": "2"}})
    code, out = run(api, paths, "--gpu", "RTX 3090", "--template", made.id, "--name", "linked", "--yes")
    assert code == 0 and "not linked" not in out
    linked = next(p for p in sim.world.pods.values() if p.name == "linked")
    assert linked.template == made.id and linked.env["DROP"] == "2"
    spec = PodSpec("unlinked", R3090, image="ubuntu:22.04", volume_gb=0, env=(("KEEP", "1"),), template_id=made.id)
    spec, removed = link_template(spec, made)
    assert removed == ("env DROP",)
    pod = sim.world.pods[api.create_pod(spec).id]
    assert "DROP" not in pod.env and pod.env["KEEP"] == "1" and pod.template is None


def test_a_template_unlinked_keeps_its_start_command(api: V2Api, sim: SimApiServer, paths: Paths) -> None:
    """A spec sent without its template (it left out the template's volume) still gets the template's start
    command: unlinking takes away only what the user removed."""
    command = "--model Qwen/Qwen2.5-7B-Instruct --max-model-len 8192"
    made = api.create_template(
        {"name": "serve", "image": "vllm/vllm-openai:v0.6.3", "args": command, "mounts": {
            "persistent": {"size": 60, "path": "/workspace"}}}
    )  # fmt: skip
    assert made.args == command
    code, out = run(api, paths, "--gpu", "RTX 3090", "--template", made.id, "--volume-gb", "0", "--name", "nv", "--yes")
    assert code == 0
    assert f"command    {command}" in out
    assert "you removed its 60 GB volume" in out and "the template's start command included" in out
    pod = next(p for p in sim.world.pods.values() if p.name == "nv")
    assert pod.template is None and pod.volume_gb == 0 and pod.docker_args == command
    # linked, RunPod gives the pod the template's command itself; the spec says it all the same
    code, out = run(api, paths, "--gpu", "RTX 3090", "--template", made.id, "--name", "linked", "--yes")
    linked = next(p for p in sim.world.pods.values() if p.name == "linked")
    assert code == 0 and linked.template == made.id and linked.docker_args == command
    assert f"command    {command}" in out and "not linked" not in out


def test_a_templates_cuda_constraint_is_said_and_explains_the_refusal(
    api: V2Api, sim: SimApiServer, paths: Paths
) -> None:
    template = api.create_template({"name": "cuda-12.8", "image": "ubuntu:22.04", "allowedCudaVersions": ["12.8"]})
    assert template.cuda_versions == ("12.8",)  # the simulated machines' drivers report 12.4
    out = io.StringIO()
    args = build_parser().parse_args(["create", "--gpu", "RTX 3090", "--template", template.id, "--yes"])
    with pytest.raises(ApiQueryError) as refused:
        cmd_create(session_for(api, paths), args, False, out)
    versions = " or ".join(template.cuda_versions)
    assert f"cuda       needs CUDA {versions} (the template's)" in out.getvalue()
    assert f"the pod may only go to a machine with CUDA {versions} (the template's constraint)" in str(refused.value)
    assert posts(sim) == 1


# --- podtui create --------------------------------------------------------------------------------------------


def test_cli_on_a_volume_skips_what_is_not_free_there_and_says_which_candidate_it_got(
    api: V2Api, sim: SimApiServer, paths: Paths, volume: NetworkVolume, capsys: pytest.CaptureFixture[str]
) -> None:
    catalogue = api.gpu_types()
    not_there = next(
        g for g in catalogue.types if all(g.stock_in(c, 1, volume.data_centre) is Stock.NONE for c in Cloud)
    )
    code, out = run(api, paths, "--gpu", f"{not_there.display_name},RTX 4090", "--volume", "scratch", "--yes", "--json")
    assert code == 0
    shown = capsys.readouterr().err  # with --json the summary goes to stderr
    assert f"skipped    1 x {not_there.display_name} (community cloud) in {volume.data_centre}: none free" in shown
    assert f"gpu        1 x {R4090} (community cloud) in {volume.data_centre}" in shown
    assert f"network volume scratch ({volume.id}, 100 GB in {volume.data_centre}, $7.00/month)" in shown
    assert f"where      {volume.data_centre} (the network volume's)" in shown
    assert "network volume $7.00/month, with or without the pod" in shown
    assert f"stock      1 x {R4090} (community cloud) in {volume.data_centre}: " in shown
    data = json.loads(out)
    assert data["candidate"] == {
        "index": 0,
        "gpu_type_id": R4090,
        "gpu_count": 1,
        "cloud": "COMMUNITY",
        "data_centre_id": volume.data_centre,
    }
    assert data["refused"] == [] and data["data_centre_id"] == volume.data_centre
    assert data["spec"]["network_volume_id"] == volume.id and data["spec"]["volume_gb"] == 0
    assert sim.world.pods[data["id"]].location == volume.data_centre


def test_cli_json_names_the_refused_candidates(
    api: V2Api, sim: SimApiServer, paths: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    sim.faults.add("no_capacity", f"{R4090}", only="POST /v2/pods")
    code, out = run(api, paths, "--gpu", "RTX 4090,RTX 3090", "--yes", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["candidate"]["index"] == 1 and data["candidate"]["gpu_type_id"] == R3090
    assert len(data["refused"]) == 1 and data["refused"][0].startswith(f"1 x {R4090} (community cloud): (400)")
    err = capsys.readouterr().err
    assert f"not placed: 1 x {R4090} (community cloud): (400)" in err
    assert f"placed:    candidate 2 of 2, 1 x {R3090} (community cloud)" in err
    assert sim.world.pods[data["id"]].location == data["data_centre_id"]


def test_cli_data_centres_are_tried_in_the_order_given(api: V2Api, sim: SimApiServer, paths: Paths) -> None:
    where = [d.id for d in api.gpu_types().find(R3090).where(Cloud.COMMUNITY)]
    assert len(where) >= 2
    first, second = where[1], where[0]
    sim.faults.add("no_capacity", f"{R3090}@{first}", only="POST /v2/pods")
    code, out = run(api, paths, "--gpu", "RTX 3090", "--data-centre", f"{first},{second}", "--yes")
    assert code == 0
    assert f"gpu        1 x {R3090} (community cloud) in {first}" in out
    assert f"  or then  1 x {R3090} (community cloud) in {second}" in out
    assert f"not placed: 1 x {R3090} (community cloud) in {first}: (400)" in out
    assert f"(community cloud, {second})" in out
    assert [p.location for p in sim.world.pods.values() if p.name == "podtui-rtx-3090"] == [second]


def test_cli_volume_where_no_candidate_is_free_says_what_is(
    api: V2Api, sim: SimApiServer, paths: Paths, volume: NetworkVolume
) -> None:
    catalogue = api.gpu_types()
    not_there = next(
        g for g in catalogue.types if all(g.stock_in(c, 1, volume.data_centre) is Stock.NONE for c in Cloud)
    )
    with pytest.raises(UsageError) as e:
        run(api, paths, "--gpu", not_there.display_name, "--volume", volume.id, "--yes")
    text = str(e.value)
    assert f"no GPU choice can go where scratch is in {volume.data_centre}" in text
    assert f"free in {volume.data_centre} now: " in text and "RTX 4090 (" in text
    assert posts(sim) == 0
    with pytest.raises(UsageError, match="a pod on it can only be there"):
        run(api, paths, "--gpu", "RTX 4090", "--volume", "scratch", "--data-centre", "XX-NO-1", "--yes")
    with pytest.raises(UsageError, match="no volume of its own"):
        run(api, paths, "--gpu", "RTX 4090", "--volume", "scratch", "--volume-gb", "50", "--yes")
    with pytest.raises(UsageError, match="no network volume is called or has the id 'nope'"):
        run(api, paths, "--gpu", "RTX 4090", "--volume", "nope", "--yes")
    assert posts(sim) == 0


def test_cli_template_fills_and_flags_win(
    api: V2Api, sim: SimApiServer, paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    template = next(t for t in api.public_templates("official") if t.name == TEMPLATE)
    code, out = run(
        api,
        paths,
        "--gpu",
        "RTX 3090",
        "--template",
        TEMPLATE,
        "--ports",
        "22/tcp",
        "--env",
        "EXTRA=1",
        "--name",
        "from-template",
        "--yes",
    )
    assert code == 0, out
    assert f"template   {TEMPLATE} ({template.id})" in out
    assert f"image      {template.image}" in out and "ports      22/tcp" in out
    pod = next(p for p in sim.world.pods.values() if p.name == "from-template")
    assert pod.image == template.image and pod.ports == "22/tcp"
    assert pod.env.get("EXTRA") == "1" and all(pod.env.get(k) == v for k, v in template.env)
    with pytest.raises(UsageError, match="neither your templates nor RunPod's public ones"):
        run(api, paths, "--gpu", "RTX 3090", "--template", "no such template", "--yes")
    serverless = next(t for t in api.public_templates("official") if t.serverless)
    with pytest.raises(UsageError, match="serverless template"):
        run(api, paths, "--gpu", "RTX 3090", "--template", serverless.id, "--yes")


def podtui(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "podtui", *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=60
    )


def test_cli_help_says_how_candidates_work(sim: SimApiServer) -> None:
    r = podtui({}, "create", "--help")
    assert r.returncode == 0
    assert "--data-centre EU-RO-1,US-KS-2" in r.stdout and "--volume NAME|ID" in r.stdout
    assert "--template NAME|ID" in r.stdout and '--gpu "RTX 4090,RTX 3090"' in r.stdout


# --- podtui gpus ----------------------------------------------------------------------------------------------


def test_cli_gpus_says_where_each_type_is_free(api: V2Api, paths: Paths) -> None:
    out = io.StringIO()
    assert cmd_gpus(session_for(api, paths), None, "lora", None, None, False, out) == 0
    text = out.getvalue()
    g4090 = api.gpu_types().find(R4090)
    line = next(x for x in text.split("where each is free now")[1].splitlines() if x.startswith("RTX 4090"))
    assert g4090.where_words(Cloud.COMMUNITY, 1, 4) in line and g4090.where_words(Cloud.SECURE, 1, 4) in line
    out = io.StringIO()
    assert cmd_gpus(session_for(api, paths), None, "lora", None, None, True, out) == 0
    data = json.loads(out.getvalue())
    entry = next(t for t in data["gpu_types"] if t["id"] == R4090)
    assert entry["data_centres"]["community"] == {d.id: d.stock.value for d in g4090.data_centres_for(Cloud.COMMUNITY)}
